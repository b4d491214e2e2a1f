"""Run the fake vLLM server in its own process for a benchmark, so its CPU is not counted as ours.

    python benchmarks/serve.py SCENARIO N LOG [THINK]  -> prints the base URL, serves until stdin closes

Scenarios: "turns" (N requests: N-1 `read` calls, then an answer), "execs" (N-1 `exec` calls of `cat`,
then an answer), "answer" (one answer), "reads" (N-1 reads of f0.txt, f1.txt, ... on an 8,192-token
window, compaction summaries answered outside the script), and the peers' own protocols: "mini"
(mini-swe-agent: one bash block a reply, then its submit command) and "aider" (N prose answers, one
for each message piped to it).

When stdin closes, every request is written to LOG as a JSON line {"t": arrival, "done": end of the
answer, "path": ..., "body": ... (chat requests only)}: the time an agent takes between two model
requests is `t` of one minus `done` of the one before, whatever the agent. The records are kept in
memory until then, so writing them never delays reading the next request. THINK (seconds, default 0)
is how long the "model" takes before it answers each chat request, as a real model does; the gaps
above never include it.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import common  # noqa: F401  (puts src/ on sys.path)

from vllm_bot.testing import fake_vllm, wire
from vllm_bot.testing.script import Call, Reply

MINI_SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


def script(scenario: str, n: int) -> list[Reply]:
    if scenario == "answer":
        return [Reply(content="Done.")]
    if scenario == "aider":
        return [Reply(content=f"Answer {i}: nothing to change.") for i in range(n)]
    if scenario == "mini":
        steps = [f"THOUGHT: step {i}.\n\n```bash\ncat notes/n{i % 7}.txt\n```" for i in range(n - 1)]
        return [Reply(content=s) for s in [*steps, f"THOUGHT: done.\n\n```bash\n{MINI_SUBMIT}\n```"]]
    if scenario == "execs":
        replies = [
            Reply(content=f"Step {i}.", calls=[Call("exec", {"command": f"cat notes/n{i % 7}.txt"})])
            for i in range(n - 1)
        ]
    else:
        path = (lambda i: f"f{i}.txt") if scenario == "reads" else (lambda i: f"notes/n{i % 7}.txt")
        replies = [
            Reply(content=f"Step {i}: reading.", calls=[Call("read", {"path": path(i)})])
            for i in range(n - 1)
        ]
    return [*replies, Reply(content="All done.")]


def summary(body: dict[str, Any]) -> Reply | None:
    if "You compress a coding agent" in body["messages"][0]["content"]:
        return Reply(content="Summary: read the files; nothing changed.")
    return None


class TimedServer(fake_vllm.FakeVLLM):
    """The fake server, noting when each request arrived and when its answer was sent in full."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.records: list[dict[str, Any]] = []

    def start(self) -> TimedServer:
        handler = type("Handler", (_TimedHandler,), {"fake": self})
        self._httpd = wire.QuietServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        import threading

        threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True).start()
        return self


class _TimedHandler(wire.Handler):
    fake: TimedServer

    def parse_request(self) -> bool:
        self.arrived = time.time()  # the request line is in: the client has sent its request
        self.read_body: dict[str, Any] | None = None
        return super().parse_request()

    def _body(self) -> dict[str, Any]:
        self.read_body = super()._body()
        return self.read_body

    def do_POST(self) -> None:
        super().do_POST()
        self._note()

    def do_GET(self) -> None:
        super().do_GET()
        self._note()

    def _note(self) -> None:
        record: dict[str, Any] = {"t": self.arrived, "done": time.time(), "path": self.path}
        if self.path == "/v1/chat/completions" and self.read_body is not None:
            record["body"] = self.read_body
        self.fake.records.append(record)


def main() -> None:
    scenario, n, log = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
    think = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
    window = 8192 if scenario == "reads" else 131072
    replies = script(scenario, n)
    server = TimedServer(
        replies, model="bench/model", max_model_len=window, auto_reply=summary, turn_latency=think
    )
    with server:
        print(server.base_url, flush=True)
        sys.stdin.read()  # serve until the parent closes our stdin
        records = list(server.records)
    with log.open("a") as f:
        f.writelines(json.dumps(r) + "\n" for r in records)


if __name__ == "__main__":
    main()
