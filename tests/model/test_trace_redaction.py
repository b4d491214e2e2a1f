"""The DEBUG trace never holds the API key, whatever characters it has: the trace is JSON lines, where
a `"` or `\\` in the key is escaped, so the key as written never appears there to be replaced."""

from __future__ import annotations

import pytest

from vllm_bot.model.trace import REDACTED, Trace


@pytest.mark.parametrize("key", ["sk-plain-key-123", 'sk-with"quote', "sk-with\\backslash", "sk-tab\there"])
def test_the_key_is_redacted_as_the_json_line_spells_it(tmp_path, key):
    trace = Trace(tmp_path / "trace.jsonl", secrets=[key])
    trace.record("request", {"headers": {"Authorization": f"Bearer {key}"}, "echo": key})
    text = (tmp_path / "trace.jsonl").read_text()
    assert text.count(REDACTED) == 2, text
    assert key not in text and key.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t") not in text
