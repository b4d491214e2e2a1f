"""Rendering prompts/*.yaml (strict: a missing variable is an error): the system prompt, and every other
text the model reads (`message`)."""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

from .config import SystemPromptConfig
from .tools.definitions import signature


class PromptError(Exception):
    """A prompt file is missing, malformed, or uses an undefined variable (a user-facing error)."""


def prompts_dir() -> Path:
    """`prompts/` in a checkout, or the copy shipped inside the installed package."""
    installed = Path(__file__).resolve().parent / "prompts"
    if installed.is_dir():
        return installed
    return Path(__file__).resolve().parents[2] / "prompts"


class YamlError(ValueError):
    """A YAML file that does not parse (PyYAML's message)."""


def load_yaml(text: str) -> Any:
    """yaml.safe_load; raises YamlError."""
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise YamlError(str(e)) from None


def read_yaml(path: Path) -> Any:
    """The data of a YAML file; raises OSError or YamlError."""
    return load_yaml(path.read_text(encoding="utf-8"))


def load_template(name: str, required: str = "system") -> dict[str, str]:
    """The string parts of prompts/NAME (or an absolute path); `required` must be one of them."""
    path = Path(name) if Path(name).is_absolute() else prompts_dir() / name
    try:
        data = read_yaml(path)
    except OSError as e:
        raise PromptError(f"prompt file {path} cannot be read ({e.strerror})") from None
    except YamlError as e:
        raise PromptError(f"prompt file {path} is not valid YAML: {e}") from None
    if not isinstance(data, dict) or not isinstance(data.get(required), str):
        raise PromptError(f"prompt file {path} must define a '{required}' string")
    return {k: v for k, v in data.items() if isinstance(v, str)}


def render(template: str, variables: dict[str, Any], source: str = "prompt") -> str:
    try:
        return string.Template(template).substitute(variables)
    except KeyError as e:
        raise PromptError(f"{source}: variable ${{{e.args[0]}}} is not defined") from None
    except ValueError as e:
        raise PromptError(f"{source}: {e}") from None


def message(name: str, /, file: str = "messages.yaml", **variables: Any) -> str:
    """The text `name` of prompts/FILE, rendered strictly; messages.yaml holds what the model is told
    about its calls besides the system prompt (refusals, notes, advice)."""
    return render(load_template(file, required=name)[name], variables, f"{file}: {name}")


def tool_listing(definitions: list[dict[str, Any]]) -> str:
    """One Markdown line per tool: `- **read(path: string, offset?: integer)**: description. offset: ...`
    (types, enums and nested shapes come from the schema: tools/definitions.signature)."""
    lines = []
    for d in definitions:
        fn = d["function"]
        params = (fn.get("parameters") or {}).get("properties") or {}
        notes = [
            f"{p}: {s['description']}" for p, s in params.items() if p != "path" and s.get("description")
        ]
        line = f"- **{signature(d)}**: {fn.get('description', '').strip()}"
        lines.append(line + (" " + " ".join(notes) if notes else ""))
    return "\n".join(lines)


def system_prompt(
    template_name: str,
    *,
    role: str,
    workspace: str,
    definitions: list[dict[str, Any]],
    text_mode: bool,
    instructions: str = "",
) -> str:
    """The system prompt for one request: the template, the project's instructions (AGENTS.md,
    instructions.py), and the text-mode tool sections only when `text_mode`."""
    parts = load_template(template_name)
    variables = {"role": role, "workspace": workspace, "tool_list": tool_listing(definitions)}
    text = render(parts["system"], variables, f"{template_name}: system")
    if instructions:
        text = text.rstrip() + "\n\n" + instructions
    if text_mode:
        if "text_tools" not in parts:
            raise PromptError(f"prompt file {template_name} must define 'text_tools' for text mode")
        text += render(parts["text_tools"], variables, f"{template_name}: text_tools")
    return text.rstrip() + "\n"


class SystemPrompts:
    """The model client's `system_prompt(text_mode, definitions)`: rendered once per (mode, tool set),
    so an unchanged prefix keeps vLLM's prefix cache hitting. The tool set is the definitions' content,
    not only their names: an MCP server that changes a tool's parameters changes the prompt too."""

    def __init__(self, config: SystemPromptConfig, workspace: str, instructions: str = "") -> None:
        self.config = config
        self.workspace = config.workspace or workspace
        self.instructions = instructions
        self._rendered: dict[tuple[bool, str], str] = {}

    def set_instructions(self, instructions: str) -> None:
        """New project instructions (an AGENTS.md added or changed): the next request renders anew."""
        self.instructions = instructions
        self._rendered.clear()

    def __call__(self, text_mode: bool, definitions: list[dict[str, Any]]) -> str:
        key = (text_mode, json.dumps(definitions, sort_keys=True))
        if key not in self._rendered:
            self._rendered[key] = system_prompt(
                self.config.template,
                role=self.config.role,
                workspace=self.workspace,
                definitions=definitions,
                text_mode=text_mode,
                instructions=self.instructions,
            )
        return self._rendered[key]
