"""The trust question and --trust-project say which files that configure the agent changed since the
workspace was last trusted, and whether the agent wrote them (issue 32), in a lived-in home."""

from __future__ import annotations

import json

from lived_in_home import Home

from vllm_bot.config import ToolsConfig
from vllm_bot.config.layers import load_layers
from vllm_bot.config.trust import TrustPolicy
from vllm_bot.tools import ToolExecutor


def servers(name: str) -> str:
    return json.dumps({"mcpServers": {name: {"command": "echo", "args": [name]}}})


def test_the_trust_question_names_what_changed_and_who_wrote_it(lived_in: Home):
    ws = lived_in.proj
    (ws / ".mcp.json").write_text(servers("first"))
    asked = []

    def yes(request):
        asked.append(list(request.changes))
        return True

    load_layers(None, lived_in.env, None, ws, TrustPolicy(ask=yes))
    assert asked == [[]]  # never trusted before: the question shows every setting, nothing more
    # the agent writes it (the user approved the call), as the write tool does it
    executor = ToolExecutor(ws, ToolsConfig())
    assert executor.execute("write", {"path": ".mcp.json", "content": servers("second")}).kind == "text"
    load_layers(None, lived_in.env, None, ws, TrustPolicy(ask=yes))
    assert len(asked) == 2 and len(asked[1]) == 1
    assert asked[1][0].startswith(".mcp.json: changed since you trusted this workspace on ")
    assert "written by the agent, with your approval, on " in asked[1][0]
    # changed again by someone else
    (ws / ".mcp.json").write_text(servers("third"))
    cfg = load_layers(None, lived_in.env, None, ws, TrustPolicy(explicit=True))
    warning = [w for w in cfg.provenance.warnings if "apply for this run" in w]
    assert warning and ".mcp.json: changed since you trusted" in warning[0], cfg.provenance.warnings
    assert "not as the agent last wrote it" in warning[0]
