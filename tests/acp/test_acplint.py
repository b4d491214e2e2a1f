"""acplint (PyPI), an ACP linter we did not write, against `vllm-bot acp` and the scripted server.

It runs offline (about a minute here), but acplint 0.1.0 checks its own reading of the protocol, which
differs from the schema both official SDKs implement in three places; every one of its other checks
passes. The three (docs/acp.md says the same):
- it sends and expects `protocolVersion` as the string "1"; ACP's is the integer 1;
- it wants a `label` in each session config option; ACP's field is `name`;
- it sends a prompt's blocks as `content`; ACP's field is `prompt`, so the SDK answers "invalid
  params" and acplint sees no streamed reply (its streaming checks fail for that reason alone).
"""

import sys

import pytest
from acp_support import agent_command, make_workspace

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Reply

if sys.version_info < (3, 11):
    pytest.skip("acplint needs Python 3.11 or later", allow_module_level=True)

from acplint import ConformanceRunner
from acplint.report import TestStatus as Status

NOT_THE_SPEC = {  # acplint's check -> why it fails for an agent that follows ACP's schema
    "initialize_v1": "protocolVersion as a string",
    "protocol_version_returned": "protocolVersion as a string",
    "schema_initialize": "protocolVersion as a string",
    "new_session": "config options with `label`",
    "schema_session_new": "config options with `label`",
    "session_update_received": "the prompt sent as `content`",
    "agent_message_chunk_received": "the prompt sent as `content`",
    "prompt_stop_reason": "the prompt sent as `content`",
}


def test_acplint_passes_every_check_that_follows_the_protocols_schema(tmp_path):
    ws = make_workspace(tmp_path)
    with FakeVLLM([], auto_reply=lambda body: Reply(content="Hello.", reasoning="Thinking.")) as server:
        runner = ConformanceRunner(agent_command=agent_command(server.base_url), cwd=str(ws), timeout=30)
        report = runner.run_all()
    outcomes = {r.name: (r.status, r.message) for r in report.results}
    assert len(outcomes) == 45, outcomes
    failed = {name: message for name, (status, message) in outcomes.items() if status != Status.PASS}
    assert set(failed) == set(NOT_THE_SPEC), failed
    assert "Input should be '1' (got 1)" in failed["initialize_v1"]
    assert "label: Field required" in failed["new_session"]
