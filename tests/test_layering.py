"""Which wing may import which (issue 18): one table, checked against every import under src/.

A module's *unit* is its wing (`agent`, `model`, ... the first package under vllm_bot), or, for a
module at the package top, `shared` (the vocabulary every wing speaks: calls, conversation, events,
errors, the config wing (settings, rules, layers, trust, instructions, statedir), prompts, cliargs,
printable, and the package's own `__init__`),
`session` (assembles one session from the wings) or `app` (the command line; nothing imports it). Imports inside functions count too: a lazy import is still a
dependency, and so is a `"module:function"` string that is imported by name (`"vllm_bot.batch.cli:command"`
in app's SUBCOMMANDS); `python -m vllm_bot.app` in a child's command line is a process, not an import.
ARCHITECTURE.md explains the table.
"""

import ast
import re
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "src" / "vllm_bot"
IMPORT_BY_NAME = re.compile(r"vllm_bot(\.\w+)+:\w+")

SHARED = {
    "calls",
    "conversation",
    "events",
    "errors",
    "prompts",
    "cliargs",
    "printable",
}

# Wings that belong to the shared vocabulary: the config (its settings, rules, layers, trust, the
# AGENTS.md instructions and our state directory).
SHARED_WINGS = {"config"}

# unit -> the units it may import (besides itself). `shared` is allowed everywhere.
MAY_IMPORT = {
    "shared": set(),
    "parsing": {"tools"},
    "safety": set(),
    "tools": {"safety"},
    "model": {"parsing"},
    "agent": {"model", "tools"},
    "history": {"safety"},
    "mcp": {"tools", "safety"},  # safety: the PATH its stdio servers start with (host_search_path)
    "doctor": {"model", "parsing", "tools", "mcp", "safety"},
    "testing": set(),
    "ui": {"agent", "history", "safety", "tools", "mcp", "doctor", "model", "parsing"},
    "session": {"agent", "model", "tools", "safety", "history", "mcp", "ui", "parsing", "doctor"},
    "demo": {"session", "ui", "testing"},
    "batch": {"model", "ui", "history", "safety"},
    "eval": {"batch", "ui", "safety"},
    "acp": {"session", "agent", "ui", "safety", "tools", "history"},
    "app": {"session", "demo", "mcp", "history", "doctor", "batch", "eval", "acp"},
}
# The shared vocabulary reads three pure-data modules of the wings (the tool declarations, for config
# validation and the text-mode prompt; the MCP name rules, for config validation; the Claude-style
# `.mcp.json` format, for the config layers) and nothing else.
SHARED_MAY_READ = {"tools.definitions", "mcp.names", "mcp.claude"}


def unit_of(module: str) -> str:
    """`vllm_bot.agent.loop` -> agent; `vllm_bot.config.layers` -> shared; `vllm_bot.app` -> app."""
    parts = module.split(".")[1:]
    if not parts or (len(parts) == 1 and parts[0] in SHARED) or parts[0] in SHARED_WINGS:
        return "shared"
    return parts[0]


def module_name(path: Path, pkg: Path = PKG) -> str:
    parts = list(path.relative_to(pkg.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, pkg: Path = PKG) -> set[str]:
    """Every vllm_bot module `path` imports, at top level or inside a function."""
    name = module_name(path, pkg)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found |= {f"{target}.{alias.name}" for alias in node.names}
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and IMPORT_BY_NAME.fullmatch(node.value)
        ):
            found.add(node.value.partition(":")[0])  # imported by name: importlib.import_module
    return {m for m in found if m.startswith("vllm_bot.") and is_module(m, pkg)}


def is_module(dotted: str, pkg: Path) -> bool:
    path = pkg.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def allowed(unit: str, target: str) -> bool:
    other = unit_of(target)
    if other in (unit, "shared"):
        return True
    if unit == "shared":
        return target.removeprefix("vllm_bot.") in SHARED_MAY_READ
    return other in MAY_IMPORT[unit]


def violations(pkg: Path = PKG) -> list[str]:
    found = []
    for path in sorted(pkg.rglob("*.py")):
        source = module_name(path, pkg)
        unit = unit_of(source)
        # `from .tools.definitions import x` also names the package on the way (vllm_bot.tools)
        targets = imported_modules(path, pkg)
        targets -= {t.rsplit(".", 1)[0] for t in targets if "." in t.removeprefix("vllm_bot.")}
        for target in sorted(targets):
            other = unit_of(target)
            if not allowed(unit, target):
                found.append(f"{source} ({unit}) imports {target} ({other})")
    return found


def test_every_import_follows_the_wing_table():
    assert violations() == []


def test_the_table_names_every_unit_that_exists():
    units = {unit_of(module_name(p)) for p in PKG.rglob("*.py")}
    assert units == set(MAY_IMPORT)


def test_the_table_is_acyclic():
    """No two wings may import each other, directly or through others."""
    seen: dict[str, int] = {}

    def visit(unit: str, stack: tuple[str, ...]) -> None:
        assert unit not in stack, " -> ".join((*stack, unit))
        if seen.get(unit):
            return
        for other in MAY_IMPORT[unit]:
            visit(other, (*stack, unit))
        seen[unit] = 1

    for unit in MAY_IMPORT:
        visit(unit, ())


def test_the_check_catches_a_forbidden_import(tmp_path):
    """The checker is not vacuous: an agent -> ui import is reported, an agent -> model one is not."""
    fake = tmp_path / "vllm_bot"
    (fake / "agent").mkdir(parents=True)
    (fake / "ui").mkdir()
    for init in (fake / "__init__.py", fake / "agent" / "__init__.py", fake / "ui" / "__init__.py"):
        init.write_text("")
    (fake / "ui" / "rich_ui.py").write_text("")
    (fake / "model").mkdir()
    (fake / "model" / "__init__.py").write_text("")
    (fake / "model" / "client.py").write_text("")
    (fake / "agent" / "loop.py").write_text("from ..ui import rich_ui\nfrom ..model.client import x\n")
    (fake / "agent" / "lazy.py").write_text('LATER = {"ui": "vllm_bot.ui.rich_ui:show"}\n')
    assert violations(fake) == [
        "vllm_bot.agent.lazy (agent) imports vllm_bot.ui.rich_ui (ui)",
        "vllm_bot.agent.loop (agent) imports vllm_bot.ui.rich_ui (ui)",
    ]


def test_the_sub_commands_app_loads_by_name_are_seen():
    targets = imported_modules(PKG / "app.py")
    assert {"vllm_bot.batch.cli", "vllm_bot.eval.cli", "vllm_bot.doctor", "vllm_bot.history.cli"} <= targets


def test_the_contracts_stay_importable():
    """What users' scripts import keeps working after the move into wings."""
    from vllm_bot.parsing import parse_tool_calls
    from vllm_bot.tools import TOOL_DEFINITIONS
    from vllm_bot.tools.definitions import TOOL_DEFINITIONS as declared

    assert TOOL_DEFINITIONS is declared and callable(parse_tool_calls)
    assert 'vllm-bot = "vllm_bot.app:main"' in (PKG.parents[1] / "pyproject.toml").read_text()
