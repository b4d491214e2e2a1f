"""The approval policy: a pure decision over (call, mode, grants) -> allow | ask | deny. No I/O.

`ask` confirms every write, edit, command and external tool (reads run); `auto-edit` lets file
changes run unless their path is written oddly (absolute, `..`, `~`) and lets read-only commands run;
`full-auto` (the explicit --yes flag) allows everything that is not denied.

Approvals cut down prompts; they are not the security boundary (the sandbox is). So the read-only
shortcut and the "always" prefix grants for commands apply only when commands run sandboxed; without
the sandbox every command asks in `ask` and `auto-edit` unless the user allowed that exact line.
Denied in every mode: malformed calls, file-tool writes the session's boundary refuses (`rule`: into
`.git/` or `.vllm-bot/`, outside the workspace, ...; boundary.py decides, before), commands that
remove or move the workspace's `.git` (see gitguard), and commands that wipe the machine or the home
directory (`rm -rf /`, `rm -rf ~`, `mkfs`, `dd of=/dev/sda`, ...). Asked in every mode, --yes included:
commands that may remove `.git` but cannot be judged before they run (`rm -rf "$X"`, `eval "$y"`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePath, PurePosixPath
from typing import Literal

from vllm_bot.calls import ToolCall
from vllm_bot.config import ApprovalMode
from vllm_bot.prompts import message
from vllm_bot.safety.boundary import Rule
from vllm_bot.safety.gitguard import git_removal_risk
from vllm_bot.safety.grants import Grants, GrantScope
from vllm_bot.safety.readonly import (
    is_read_only_command,
    why_line_not_read_only,
    why_part_not_read_only,
    why_redirect_not_read_only,
)
from vllm_bot.safety.shellsplit import SimpleCommand
from vllm_bot.safety.shellwalk import ShellLine, as_line, parse_line
from vllm_bot.safety.wrappers import OPEN_ENDED, program_of, words

__all__ = [
    "TOOL_KINDS",
    "Decision",
    "GrantScope",
    "Grants",
    "Verdict",
    "decide",
    "grant_scope",
    "is_read_only_command",
    "remember",
]

Decision = Literal["allow", "ask", "deny"]
TOOL_KINDS: dict[str, str] = {
    "read": "read", "write": "edit", "edit": "edit", "exec": "exec",
    # issue 37's tools change nothing of the user's: the task list, the plan shown, a read-only sub-agent
    "update_plan": "read", "present_plan": "read", "delegate": "read",
}  # fmt: skip

# Tools whose second word names what they do (`git commit`, `npm test`): a grant covers both words.
# `python -m NAME` granted like the tool NAME itself; any other module is an interpreter (`-m runpy`,
# `-m code`, `-m timeit '<code>'`) and is approved only as the exact line.
MODULE_TOOLS = frozenset(words("pytest unittest mypy ruff black isort flake8 pylint pyflakes pycodestyle"))
_SUBCOMMAND_TOOLS = set(
    words(
        "git npm pnpm yarn npx cargo go pip pip3 uv poetry make "
        "docker podman kubectl dotnet mvn gradle bun deno"
    )
)
_SYSTEM_DIRS = set(
    words("bin boot dev etc home lib lib32 lib64 opt proc root sbin srv sys usr var mnt media run snap nix")
)
_HOME_TARGET = re.compile(r"(~|\$HOME|\$\{HOME\})/?\*?")


@dataclass(frozen=True)
class Verdict:
    decision: Decision
    reason: str


def tool_kind(name: str) -> str:
    """read | edit | exec | external (unknown tools are external)."""
    return TOOL_KINDS.get(name, "external")


def decide(
    call: ToolCall,
    mode: ApprovalMode,
    grants: Grants,
    *,
    sandboxed: bool = True,
    workspace: str | PurePath | None = None,
    rule: Rule | None = None,
    line: ShellLine | None = None,
) -> Verdict:
    """Whether `call` runs now (allow), needs the user (ask) or must never run (deny). `workspace` (its
    absolute path, no I/O) lets absolute paths and `cd ..` in commands be matched against its `.git`;
    `rule` is the boundary's rule for a file tool's path, found before (boundary.py: the I/O); `line`
    the command already split (`command_line`), else it is split here."""
    if call.error:
        return Verdict("deny", f"the call is malformed: {call.error}")
    kind = tool_kind(call.name)
    if kind == "read":
        return Verdict("allow", "it only reads")
    if kind == "edit":
        if mode == "plan":
            return Verdict("deny", message("plan_mode_edit"))
        return _decide_edit(call, mode, grants, rule)
    if kind == "exec":
        line = line or command_line(call)
        if line is None:
            return Verdict("deny", "there is no command to run")
        if mode == "plan":
            return _decide_plan(line, sandboxed, workspace)
        return _decide_exec(call.name, line, mode, grants, sandboxed, workspace)
    if mode == "plan":  # an MCP tool runs outside the sandbox and may change anything: an earlier
        # "always" for it does not hold while the plan waits for approval
        return Verdict("ask", f"plan mode: {call.name} is an external tool that may change things")
    if mode == "full-auto":
        return Verdict("allow", "full-auto mode")
    if call.name in grants.tools:
        return Verdict("allow", f"you allowed {call.name} for this session")
    return Verdict("ask", f"{call.name} is an external tool")


def command_line(call: ToolCall) -> ShellLine | None:
    """An exec call's command, split once: what the policy, an "always" answer and the checkpoint
    read. None for other tools and for a call without a command."""
    command = call.arguments.get("command")
    if tool_kind(call.name) != "exec" or not isinstance(command, str) or not command.strip():
        return None
    return parse_line(command)


def changes_files(call: ToolCall, line: ShellLine | None = None) -> bool:
    """Whether a call about to run needs the turn's checkpoint first: not for reads and not for
    commands judged read-only (`ls`, `git status`); yes for everything else (writes, edits, other
    commands, MCP tools, anything unknown)."""
    kind = tool_kind(call.name)
    if kind != "exec":
        return kind != "read"
    line = line or command_line(call)
    return line is None or why_line_not_read_only(line) is not None


def _decide_edit(call: ToolCall, mode: ApprovalMode, grants: Grants, rule: Rule | None) -> Verdict:
    path = call.arguments.get("path")
    if rule is not None and rule.effect == "deny":
        return Verdict("deny", rule.describe(str(path)))
    asked_for = rule is not None and rule.effect != "ask" and str(rule.path) in grants.files
    if rule is not None and not asked_for and (rule.effect == "ask" or mode != "full-auto"):
        # a file that configures the agent: neither --yes nor "always" covers it
        return Verdict("ask", rule.describe(str(path)))
    if mode == "full-auto":
        return Verdict("allow", "full-auto mode")
    if call.name in grants.tools:
        return Verdict("allow", f"you allowed {call.name} for this session")
    if mode == "ask":
        return Verdict("ask", "ask mode confirms every file change")
    unusual = unusual_path_reason(path)
    if unusual:
        return Verdict("ask", unusual)
    return Verdict("allow", f"{mode} mode")


def _decide_plan(line: ShellLine, sandboxed: bool, workspace: str | PurePath | None) -> Verdict:
    """Plan mode: nothing in the workspace changes. Commands run in a sandbox whose workspace is
    read-only (a kernel fact, so any command may run); without one, only those judged read-only."""
    danger = destructive_reason(line) or git_removal_risk(line, workspace).deny
    if danger:
        return Verdict("deny", danger)
    if sandboxed:
        return Verdict("allow", "plan mode: the workspace is read-only in the sandbox")
    not_read_only = why_line_not_read_only(line)
    if not_read_only is None:
        return Verdict("allow", "plan mode: a read-only command")
    return Verdict("deny", message("plan_mode_no_sandbox", reason=not_read_only))


def unusual_path_reason(path: object) -> str | None:
    """Why a file-tool path written as absolute, with `..` or with `~` needs a look in auto-edit mode.
    Such a path may still resolve inside the workspace (outside it the file tools refuse anyway)."""
    if not isinstance(path, str):
        return None
    text = path.replace("\\", "/")
    if text.startswith("~"):
        return f"the path {path} starts with ~"
    if text.startswith("/"):
        return f"the path {path} is absolute"
    if ".." in PurePosixPath(text).parts:
        return f"the path {path} contains .."
    return None


def _decide_exec(
    tool: str,
    line: ShellLine,
    mode: ApprovalMode,
    grants: Grants,
    sandboxed: bool,
    workspace: str | PurePath | None,
) -> Verdict:
    risk = git_removal_risk(line, workspace)
    danger = destructive_reason(line) or risk.deny
    if danger:
        return Verdict("deny", danger)
    exact = line.text.strip() in grants.lines
    if risk.ask:  # in every mode: --yes does not cover what may remove .git
        if exact:
            return Verdict("allow", "you allowed this exact command for this session")
        return Verdict("ask", risk.ask)
    if mode == "full-auto":
        return Verdict("allow", "full-auto mode")
    if exact:
        return Verdict("allow", "you allowed this exact command for this session")
    if not sandboxed:
        return Verdict("ask", "commands run unsandboxed, so every command needs approval")
    if tool in grants.tools:
        return Verdict("allow", f"you allowed {tool} for this session")
    careful = mode == "ask"
    if grants.commands and _covered_by_prefixes(line, grants.commands, read_only_free=not careful):
        return Verdict("allow", "every part is allowed for this session")
    if careful:
        return Verdict("ask", "ask mode confirms every command")
    not_read_only = why_line_not_read_only(line)
    if not_read_only is None:
        return Verdict("allow", "a read-only command")
    return Verdict("ask", not_read_only)


def _covered_by_prefixes(line: ShellLine, prefixes: set[str], *, read_only_free: bool) -> bool:
    """Every part is granted (or, outside ask mode, read-only)."""
    if line.parts is None:
        return False
    free = read_only_free
    return all(
        (free and why_part_not_read_only(part) is None) or _granted(part, prefixes) for part in line.parts
    )


def _granted(part: SimpleCommand, prefixes: set[str]) -> bool:
    """Whether a granted prefix covers `part`. A prefix granted for a read-only program (`sort`, `git
    diff`, `xxd`, `rg`) covers only its read-only uses: `sort -o FILE`, `sort --compress-program=sh`,
    `git diff --output=FILE` still ask, as they would without the grant."""
    if _grantable_prefix(part) is None:
        return False
    words = [w.text for w in part.words]
    matched = [p for p in prefixes if words[: len(p.split())] == p.split()]
    if not matched:
        return False
    return why_part_not_read_only(part) is None or any(why_line_not_read_only(as_line(p)) for p in matched)


def _grantable_prefix(part: SimpleCommand) -> str | None:
    """The part's `command_prefix`, or None when a grant must not cover the part: it sets variables
    for the command or redirects into a file (an "always" answer covers neither)."""
    if part.assignments or any(why_redirect_not_read_only(r) for r in part.redirects):
        return None
    return command_prefix(part)


def command_prefix(part: SimpleCommand) -> str | None:
    """The words an "always" answer covers: `pytest`, `git commit`, `python -m pytest`; None when the
    program runs whatever its arguments say (shells, `env`, `sudo`, interpreters; by basename, so
    `/bin/sh` too) or its first words are only known at run time."""
    words = part.words
    if not words or any(w.dynamic for w in words[:3]):
        return None
    first = words[0].text
    name = program_of(first)
    if name in OPEN_ENDED:
        return None
    if name.startswith("python"):
        if len(words) >= 3 and words[1].text == "-m" and words[2].text in MODULE_TOOLS:
            return " ".join(w.text for w in words[:3])  # `python -m pytest` is pytest
        return None  # a script, `-c`, or a module that may run anything (`-m runpy`): exact lines only
    if name in _SUBCOMMAND_TOOLS:
        if len(words) < 2 or words[1].text.startswith("-"):
            return None  # `git -c x=y ...`, a bare `git`: options before the subcommand change anything
        return f"{first} {words[1].text}"
    return first


def grant_scope(
    call: ToolCall,
    *,
    sandboxed: bool = True,
    mode: ApprovalMode = "auto-edit",
    line: ShellLine | None = None,
) -> GrantScope:
    """What "always" would grant for `call` (no change to any grants). Commands get argv prefixes
    only when sandboxed; in ask mode read-only parts need grants too, so they are covered as well.
    `line`: the command already split (`command_line`)."""
    if tool_kind(call.name) != "exec":
        return GrantScope(tool=call.name)
    command = str(call.arguments.get("command", "")).strip()
    line = line or command_line(call)
    prefixes = _prefixes_to_grant(line, read_only_too=mode == "ask") if sandboxed and line else None
    return GrantScope(prefixes=frozenset(prefixes)) if prefixes else GrantScope(line=command)


def remember(
    grants: Grants,
    call: ToolCall,
    *,
    sandboxed: bool = True,
    mode: ApprovalMode = "auto-edit",
) -> str:
    """Record an "always for this session" answer for `call` (its `grant_scope`); returns what it
    covers, for the UI."""
    scope = grant_scope(call, sandboxed=sandboxed, mode=mode)
    grants.add(scope)
    return str(scope)


def _prefixes_to_grant(line: ShellLine, *, read_only_too: bool) -> set[str] | None:
    if line.parts is None:
        return None
    prefixes = set()
    for part in line.parts:
        if not read_only_too and why_part_not_read_only(part) is None:
            continue
        prefix = _grantable_prefix(part)
        if prefix is None:
            return None
        prefixes.add(prefix)
    return prefixes


def destructive_reason(command: str | ShellLine) -> str | None:
    """Why the line must never run (wipes the system, the home directory or a disk); None otherwise."""
    for found in as_line(command).commands:
        words = [w.text for w in found.words]
        name = program_of(words[0])
        if name.startswith("mkfs") or (name == "dd" and any(_is_disk(w) for w in words)):
            return f"`{name}` would overwrite a disk"
        recursive_delete = name == "find" and "-delete" in words
        if (name in ("rm", "chmod", "chown", "chgrp", "shred") or recursive_delete) and _recursive_on_system(
            ["-r", *words[1:]] if recursive_delete else words[1:]
        ):
            return f"`{' '.join(words)}` would destroy the system or the home directory"
    return None


def _recursive_on_system(args: list[str]) -> bool:
    recursive = any(a in ("--recursive", "--no-preserve-root") or re.fullmatch(r"-[a-zA-Z]*[rR][a-zA-Z]*", a)
                    for a in args)  # fmt: skip
    targets = [a for a in args if not a.startswith("-")]
    return recursive and any(_is_system_target(t) for t in targets)


def _is_system_target(target: str) -> bool:
    if _HOME_TARGET.fullmatch(target) or target.rstrip("/*") in ("..", "../.."):
        return True
    if target.startswith("/") and not target.rstrip("/*"):
        return True  # `/`, `/*`
    parts = PurePosixPath(target).parts
    return target.startswith("/") and len(parts) == 2 and parts[1].rstrip("*") in _SYSTEM_DIRS


def _is_disk(word: str) -> bool:
    path = word.removeprefix("of=")
    return word.startswith("of=/dev/") and path not in (
        "/dev/null",
        "/dev/zero",
        "/dev/stdout",
        "/dev/stderr",
    )
