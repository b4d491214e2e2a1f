"""`vllm-bot acp` driven by the official TypeScript SDK's client (`@agentclientprotocol/sdk` from npm,
tests/acp/ts_client.mjs), against the scripted vLLM server: initialize, a new session, a prompt that
reads, edits (asked and granted), runs a command and answers; a refusal whose "do this instead" the
editor's form answers, reaching the model verbatim; a cancel mid-stream; the saved session loaded in a
new process. .ci/run installs the SDK into .acp-clients/npm (git-ignored); CI=true makes it required."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from acp_support import (
    ANSWER,
    COMMAND,
    ROOT,
    agent_command,
    agent_env,
    make_workspace,
    slow_reply,
    task_script,
)

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

MODULES = ROOT / ".acp-clients" / "npm" / "node_modules"
SCRIPT = Path(__file__).with_name("ts_client.mjs")
INSTEAD = "Use `pytest -q` instead, and keep the output short."


def editor(scenario: dict) -> dict:
    """Run the TypeScript editor with `scenario`; what it saw."""
    if not (MODULES / "@agentclientprotocol" / "sdk").is_dir() or shutil.which("node") is None:
        if os.environ.get("CI"):
            pytest.fail("the TypeScript ACP SDK is missing: .ci/run installs it into .acp-clients/npm")
        pytest.skip(
            "no node or @agentclientprotocol/sdk (npm install --prefix .acp-clients/npm @agentclientprotocol/sdk)"
        )
    proc = subprocess.run(
        ["node", str(SCRIPT), str(MODULES), json.dumps(scenario)],
        capture_output=True,
        text=True,
        timeout=180,
        env=agent_env(),
    )
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    assert seen["exitCode"] == 0, proc.stderr
    return seen


def updates(seen: dict, kind: str) -> list[dict]:
    return [n["update"] for n in seen["updates"] if n["update"]["sessionUpdate"] == kind]


def text(seen: dict, kind: str = "agent_message_chunk") -> str:
    return "".join(u["content"]["text"] for u in updates(seen, kind))


def said_instead(body: dict) -> None:
    refusal = body["messages"][-1]["content"]  # the call's result, as the model reads it
    assert refusal.endswith(f"the user declined this exec call. The user said: {INSTEAD}")


def test_typescript_editor_prompts_edits_refuses_with_a_form_cancels_and_loads(tmp_path):
    ws = make_workspace(tmp_path)
    script = [
        *task_script(),
        Reply(calls=[Call("exec", {"command": "rm -rf build"})]),
        Reply(content="Understood: pytest -q.", expect=said_instead),
        slow_reply(),
    ]
    with FakeVLLM(script) as server:
        steps = [
            {"do": "new"},
            {"do": "mode", "mode": "ask"},
            {"do": "prompt", "text": "fix add", "answers": ["yes", "yes"]},
            {"do": "prompt", "text": "clean up", "answers": ["instead"], "instead": INSTEAD},
            {"do": "cancel_prompt", "text": "explain"},
        ]
        seen = editor({"command": agent_command(server.base_url), "cwd": str(ws), "steps": steps})
        server.assert_done()

    caps = seen["initialize"]["agentCapabilities"]
    assert seen["initialize"]["protocolVersion"] == 1 and caps["loadSession"] is True
    assert caps["promptCapabilities"] == {"image": False, "audio": False, "embeddedContext": True}
    new, mode, fixed, refused, cancelled = seen["results"]
    assert new["modes"]["currentModeId"] == "auto-edit" and mode == {}
    assert [o["id"] for o in new["configOptions"]] == ["mode", "model"]
    assert [r["stopReason"] for r in (fixed, refused, cancelled)] == ["end_turn", "end_turn", "cancelled"]
    assert (ws / "app.py").read_text() == "def add(a, b):\n    return a + b\n"

    edit, run, clean = seen["questions"]
    diff = edit["toolCall"]["content"][0]
    assert diff == {
        "type": "diff",
        "path": str(ws / "app.py"),
        "oldText": "def add(a, b):\n    return a - b\n",
        "newText": "def add(a, b):\n    return a + b\n",
    }
    assert [o["optionId"] for o in edit["options"]] == ["yes", "always", "instead", "no"]
    assert (
        run["toolCall"]["title"] == "Run this command?"
        and COMMAND in run["toolCall"]["content"][0]["content"]["text"]
    )
    assert seen["forms"][0]["toolCallId"] == clean["toolCall"]["toolCallId"]
    assert seen["forms"][0]["requestedSchema"]["required"] == ["instead"]

    assert "Look first." in text(seen, "agent_thought_chunk")
    assert text(seen).startswith(f"Reading.{ANSWER}Understood: pytest -q.")
    final = [u for u in updates(seen, "tool_call_update") if u.get("status") in ("completed", "failed")]
    assert [u["status"] for u in final] == ["completed", "completed", "completed", "failed"]
    assert any(c.get("type") == "diff" for c in final[1]["content"])
    assert updates(seen, "usage_update")

    with FakeVLLM([]) as server:
        steps = [{"do": "load", "sessionId": seen["sessionId"]}]
        loaded = editor({"command": agent_command(server.base_url), "cwd": str(ws), "steps": steps})
    result = loaded["results"][0]
    assert result["modes"]["currentModeId"] == "auto-edit"
    assert [u["content"]["text"] for u in updates(loaded, "user_message_chunk")] == [
        "fix add",
        "clean up",
        "explain",
    ]
    assert ANSWER in text(loaded)
