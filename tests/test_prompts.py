import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vllm_bot.prompts import PromptError, render, system_prompt, tool_listing
from vllm_bot.tools.definitions import TOOL_DEFINITIONS


def build(text_mode, definitions=TOOL_DEFINITIONS):
    return system_prompt(
        "system.yaml", role="ROLE-LINE", workspace="/w/s", definitions=definitions, text_mode=text_mode
    )


def test_native_prompt_has_role_and_workspace_but_no_text_sections():
    text = build(False)
    assert "ROLE-LINE" in text and "/w/s" in text
    assert "Available Tools" not in text and "TOOL_CALL" not in text


def test_text_prompt_lists_every_tool_from_definitions_and_teaches_format():
    text = build(True)
    assert "## Available Tools" in text and "## Tool Call Format" in text
    assert "- **read(path: string, offset?: integer, limit?: integer)**: Read" in text
    assert "- **edit(path: string, oldText: string, newText: string, replace_all?: boolean)**" in text
    assert 'TOOL_CALL: {"name": "read", "args": {' in text


def test_listing_follows_the_definitions():
    extra = {
        "type": "function",
        "function": {
            "name": "grep",
            "description": "Search.",
            "parameters": {
                "type": "object",
                "properties": {"pattern": {"type": "string"}},
                "required": ["pattern"],
            },
        },
    }
    listing = tool_listing([*TOOL_DEFINITIONS, extra])
    assert "- **grep(pattern: string)**: Search." in listing


def test_missing_variable_is_an_error():
    with pytest.raises(PromptError, match="nope"):
        render("hello ${nope}", {}, "test")


def test_custom_template_file(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("system: 'I am ${role} in ${undefined_thing}'\n")
    with pytest.raises(PromptError, match="undefined_thing"):
        system_prompt(str(path), role="r", workspace="w", definitions=TOOL_DEFINITIONS, text_mode=False)


def test_the_fast_yaml_loader_reads_every_shipped_file_as_safe_load_does():
    import yaml

    from vllm_bot.model.profiles import RESOURCES
    from vllm_bot.prompts import YamlError, load_yaml, prompts_dir, read_yaml

    files = [*prompts_dir().glob("*.yaml"), RESOURCES / "profiles.yaml"]
    assert len(files) > 2
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert load_yaml(text) == yaml.safe_load(text), path
        assert read_yaml(path) == read_yaml(path) == yaml.safe_load(text), path  # parsed, then kept
    with pytest.raises(YamlError):
        load_yaml("a: [unclosed")


def kept_files() -> list[Path]:
    from vllm_bot.statedir import user_state_dir

    return sorted((user_state_dir(create=False) / "cache" / "yaml").glob("*.json"))


def test_a_yaml_file_is_read_from_its_kept_json_while_unchanged_and_parsed_again_when_changed(tmp_path):
    """Start-up reads the system prompt and the model profiles without importing PyYAML."""
    from vllm_bot.prompts import read_yaml

    path = tmp_path / "p.yaml"
    path.write_text("system: first\nnumbers: [1, 2.5, true, null]\n")
    assert read_yaml(path) == {"system": "first", "numbers": [1, 2.5, True, None]}
    [kept] = kept_files()
    stamp = json.loads(kept.read_text())["stamp"]
    # what is read while the file is unchanged is the kept copy (planted here, to tell them apart)
    kept.write_text(json.dumps({"stamp": stamp, "data": {"system": "from the kept copy"}}))
    assert read_yaml(path) == {"system": "from the kept copy"}
    path.write_text("system: second\n")  # another size: parsed again, and kept again
    os.utime(path, ns=(stamp[1], stamp[1]))  # even with the same modification time
    assert read_yaml(path) == {"system": "second"}
    assert json.loads(kept.read_text())["data"] == {"system": "second"}


def test_yaml_that_json_cannot_hold_is_not_kept_and_stays_exact(tmp_path):
    import datetime

    from vllm_bot.prompts import read_yaml

    path = tmp_path / "d.yaml"
    path.write_text("when: 2026-11-27\n1: one\n")
    for _ in range(2):
        assert read_yaml(path) == {"when": datetime.date(2026, 11, 27), 1: "one"}
    assert kept_files() == []


def test_a_corrupt_kept_copy_is_ignored_and_replaced(tmp_path):
    from vllm_bot.prompts import read_yaml

    path = tmp_path / "p.yaml"
    path.write_text("system: right\n")
    read_yaml(path)
    [kept] = kept_files()
    kept.write_text("{not json")
    assert read_yaml(path) == {"system": "right"}
    assert json.loads(kept.read_text())["data"] == {"system": "right"}


def test_starting_a_session_a_second_time_imports_no_yaml(tmp_path):
    src = Path(__file__).resolve().parents[1] / "src"
    code = (
        f"import sys; sys.path.insert(0, {str(src)!r})\n"
        "from vllm_bot.config import SystemPromptConfig\n"
        "from vllm_bot.model.profiles import resolve\n"
        "from vllm_bot.prompts import SystemPrompts\n"
        "from vllm_bot.tools.definitions import TOOL_DEFINITIONS\n"
        "resolve(['Qwen/Qwen3-Coder-30B-A3B-Instruct'])\n"
        "SystemPrompts(SystemPromptConfig(), '/w')(True, TOOL_DEFINITIONS)\n"
        "print('yaml' in sys.modules)\n"
    )
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path)}
    runs = [
        subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True) for _ in "12"
    ]
    assert [r.stdout.strip() for r in runs] == ["True", "False"], [r.stderr for r in runs]
