"""Issue 34's bar for the history's bytes: against real vLLM with `--enable-prompt-tokens-details`
(server C), every request of a session after the first is served from the prefix cache for every full
block of the previous request's prompt. That holds only while the earlier messages render to the same
bytes turn after turn (clipping a result once, appending notes, never re-rendering the past).

The file read is small, so no request has more than 2,048 tokens to compute (a compaction's summary
request, uncached, would): vLLM 0.32's CPU build crashes its engine (`RuntimeError: CPU Generator does
not use offset`) on a seeded request whose uncached part is prefilled in more than one chunk (2,048
tokens a chunk), and the seed is what keeps `reasoning_then` repeatable."""

from __future__ import annotations

import re
from pathlib import Path

from agent_runs import hermes, reasoning_then, run_agent
from servers import VllmServer, http

TURNS = 5


def block_size(server: VllmServer) -> int:
    """The KV cache's block size, from vLLM's own /metrics (`vllm:cache_config_info`)."""
    metrics = http(server.url + "/metrics").text
    found = re.search(r'vllm:cache_config_info\{[^}]*block_size="(\d+)"', metrics)
    assert found, "no vllm:cache_config_info with a block_size in /metrics"
    return int(found.group(1))


def test_every_request_reuses_every_full_block_of_the_request_before(server_c, tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("".join(f"line {i} of the notes\n" for i in range(8)))
    profile = reasoning_then(server_c, hermes("read", {"path": "notes.txt"}))
    run = run_agent(
        ws, server_c, "Read notes.txt.", profile, "--max-iterations", str(TURNS), output="stream-json",
        agent={"loop_stop_after": 50},
    )  # fmt: skip
    assert run.code == 3 and run.result["exit_reason"] == "max_iterations", run.describe()
    usage = [e["usage"] for e in run.of_type("usage_reported")]
    assert len(usage) == TURNS, usage
    block = block_size(server_c)
    wanted = [before["prompt_tokens"] // block * block for before in usage[:-1]]
    cached = [after["cached_tokens"] for after in usage[1:]]
    assert all(c is not None and c >= w for c, w in zip(cached, wanted, strict=True)), (
        block,
        wanted,
        cached,
        usage,
    )
