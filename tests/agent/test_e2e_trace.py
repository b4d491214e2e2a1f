"""The DEBUG trace through `python cli.py -p --debug` and the fake vLLM server (issue 16): it records the
exact JSON body each chat request carried, and every other request (/v1/models, /tokenize, /metrics)
the same way, never the API key."""

import json

from test_e2e import run_cli

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply

KEY = "sekrit-key-4711"
GAUGES = {"vllm:num_requests_running": 1, "vllm:num_requests_waiting": 2}


def test_the_trace_records_each_body_as_sent_and_the_side_endpoints(tmp_path):
    workspace = tmp_path / "project"
    workspace.mkdir()
    (workspace / "app.py").write_text("x = 1\n")
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"telemetry": {"slow_first_token": 0.001}}))  # read /metrics every turn
    script = [Reply(calls=[Call("read", {"path": "app.py"})]), Reply(content="x is 1.")]
    with FakeVLLM(script, api_key=KEY, metrics=GAUGES) as server:
        args = ["--config", str(config), "--api-key", KEY, "-p", "what is x?", "--debug"]
        proc = run_cli(workspace, server, *args)
        server.assert_done()
        sent = server.requests
    assert proc.returncode == 0, proc.stderr
    (trace,) = (workspace / ".vllm-bot" / "traces").glob("trace-*.jsonl")
    text = trace.read_text()
    assert KEY not in text
    records = [json.loads(line) for line in text.splitlines()]
    bodies = [r["data"] for r in records if r["kind"] == "request"]
    assert bodies == sent  # what the server received, extra_body fields (top_k, …) at the top level
    assert "top_k" in bodies[0] and "extra_body" not in bodies[0]
    calls = [r["data"] for r in records if r["kind"] == "http"]
    assert {c["url"].rsplit("/", 1)[-1] for c in calls} == {"models", "tokenize", "metrics"}
    tokenize = next(c for c in calls if c["url"].endswith("/tokenize"))
    assert (
        tokenize["status"] == 200
        and isinstance(tokenize["answer"]["count"], int)
        and "prompt" in tokenize["sent"]
    )
