import pytest

from vllm_bot.prompts import PromptError, load_template, render, system_prompt, tool_listing
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


def test_a_prompt_file_that_is_not_yaml_is_a_prompt_error(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("system: [unclosed\n")
    with pytest.raises(PromptError, match="not valid YAML"):
        load_template(str(path))
