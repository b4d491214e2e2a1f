"""`vllm-bot acp` at the wire: raw JSON-RPC lines in, and only protocol messages out.

Bad input (a malformed line, an unknown method, a prompt before session/new) each gets a JSON-RPC
error, the process stays up and nothing of the workspace changes; an unreachable server is the
terminal's own one-line message; the editor's MCP servers join ours; a load replays before it replies;
images are refused; without the SDK the command says how to install it."""

import json
import subprocess
import sys
from pathlib import Path

from acp_support import ROOT, agent_command, agent_env, make_workspace

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

SERVERS = ROOT / "tests" / "mcp_servers"


class Agent:
    """The agent as a subprocess, spoken to one raw line at a time."""

    def __init__(self, base_url: str, cwd: Path, *extra: str) -> None:
        self.proc = subprocess.Popen(
            agent_command(base_url, *extra),
            cwd=cwd,
            env=agent_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.seen: list[dict] = []  # every message the agent sent, in order

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def call(self, request_id: int, method: str, params: dict) -> dict:
        self.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}))
        return self.reply(request_id)

    def reply(self, request_id) -> dict:
        """Messages up to the reply to `request_id` (every stdout line must be a JSON-RPC message)."""
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            assert line, f"the agent exited: {self.close()[1]}"
            message = json.loads(line)
            assert message["jsonrpc"] == "2.0"
            self.seen.append(message)
            if "method" not in message and message.get("id") == request_id:
                return message

    def close(self) -> tuple[int, str]:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=60)
        return code, self.proc.stderr.read()


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_bad_input_is_answered_with_errors_and_changes_nothing(tmp_path):
    ws = make_workspace(tmp_path)
    before = snapshot(ws)
    with FakeVLLM([]) as server:
        agent = Agent(server.base_url, ws)
        agent.send("{this is not json")
        assert agent.reply(None)["error"]["code"] == -32700
        agent.send('{"jsonrpc": "2.0", "id": 3, "result": 1, "method": 7}')
        assert agent.reply(3)["error"]["code"] == -32600
        unknown = agent.call(4, "session/teleport", {"sessionId": "x"})
        assert unknown["error"]["code"] == -32601
        prompt = [{"type": "text", "text": "delete every file"}]
        early = agent.call(5, "session/prompt", {"sessionId": "made-up", "prompt": prompt})
        assert early["error"]["code"] == -32002 and "session/new" in early["error"]["message"]
        assert agent.call(6, "initialize", {"protocolVersion": 1})["result"]["protocolVersion"] == 1
        again = agent.call(7, "session/prompt", {"sessionId": "made-up", "prompt": prompt})
        assert again["error"]["code"] == -32002  # still up, still refusing
        code, stderr = agent.close()
        assert server.requests == []
    assert code == 0, stderr
    assert snapshot(ws) == before and not (ws / ".vllm-bot").exists()


def test_an_unreachable_server_is_the_terminals_one_line_message(tmp_path):
    ws = make_workspace(tmp_path)
    dead = "http://127.0.0.1:9/v1"
    terminal = subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), "-p", "hi", "--base-url", dead],
        cwd=ws,
        env=agent_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    line = terminal.stderr.strip().splitlines()[-1]
    assert line.startswith("vllm-bot: Cannot reach the vLLM server") and "vllm serve" in line
    agent = Agent(dead, ws)
    agent.call(1, "initialize", {"protocolVersion": 1})
    session = agent.call(2, "session/new", {"cwd": str(ws), "mcpServers": []})["result"]  # opens offline
    failed = agent.call(
        3, "session/prompt", {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "hi"}]}
    )
    assert failed["error"]["message"] == line
    assert failed["error"]["data"] == {"exitCode": terminal.returncode}
    assert agent.close()[0] == 0


def test_editor_mcp_servers_join_ours_and_images_are_refused(tmp_path):
    ws = make_workspace(tmp_path)

    def offers_echo(body: dict) -> None:
        names = [t["function"]["name"] for t in body["tools"]]
        assert "mcp__editors__echo" in names, names

    with FakeVLLM([Reply(content="Done.", expect=offers_echo)]) as server:
        agent = Agent(server.base_url, ws, "--debug")
        agent.call(1, "initialize", {"protocolVersion": 1})
        editors = {
            "name": "editors",
            "command": sys.executable,
            "args": [str(SERVERS / "basic.py")],
            "env": [],
        }
        sse = {"type": "sse", "name": "old", "url": "http://127.0.0.1:9/sse", "headers": []}
        session = agent.call(2, "session/new", {"cwd": str(ws), "mcpServers": [editors, sse]})["result"]
        sid = session["sessionId"]
        image = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
        refused = agent.call(3, "session/prompt", {"sessionId": sid, "prompt": [image]})
        assert refused["error"]["code"] == -32602 and "takes no image" in refused["error"]["message"]
        done = agent.call(4, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "hi"}]})
        assert done["result"] == {"stopReason": "end_turn"}
        shown = "".join(
            m["params"]["update"]["content"]["text"]
            for m in agent.seen
            if m.get("method") == "session/update"
            and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
        )
        assert "speaks sse" in shown and shown.endswith("Done.")  # the start-up warning, in the first turn
        code, stderr = agent.close()
        server.assert_done()
    assert code == 0 and "[DEBUG]" in stderr  # --debug writes to stderr, never into the protocol


def test_a_load_replays_the_whole_session_before_it_replies(tmp_path):
    ws = make_workspace(tmp_path)
    script = [Reply(calls=[Call("read", {"path": "app.py"})]), Reply(content="It subtracts.")]
    with FakeVLLM(script) as server:
        agent = Agent(server.base_url, ws)
        agent.call(1, "initialize", {"protocolVersion": 1})
        sid = agent.call(2, "session/new", {"cwd": str(ws), "mcpServers": []})["result"]["sessionId"]
        agent.call(
            3, "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "what does add do?"}]}
        )
        agent.close()
        again = Agent(server.base_url, ws)
        again.call(1, "initialize", {"protocolVersion": 1})
        loaded = again.call(2, "session/load", {"cwd": str(ws), "sessionId": sid, "mcpServers": []})
        assert again.close()[0] == 0
    assert "result" in loaded
    kinds = [
        m["params"]["update"]["sessionUpdate"] for m in again.seen if m.get("method") == "session/update"
    ]
    assert kinds == ["user_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk"]
    assert again.seen[-1] is loaded  # every update came before the reply


def test_without_the_sdk_the_command_says_how_to_install_it(tmp_path):
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT / 'src')!r}); sys.modules['acp'] = None\n"
        "from vllm_bot.app import main\nsys.exit(main(['acp']))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert proc.returncode == 1 and proc.stdout == ""
    assert "pip install 'vllm-bot[acp]'" in proc.stderr
