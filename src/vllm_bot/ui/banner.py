"""The start banner as plain data: model, server, context window, function calling, approval mode,
sandbox, workspace and git status. Git is asked lazily (one `git status`, when the banner is drawn)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..history.safegit import GitFailed, GitMissing, GitRunner, find_user_repo
from ..safety.sandbox.status import UNSANDBOXED
from .status import short_count


@dataclass
class BannerInfo:
    model: str
    base_url: str
    context_window: int | None
    window_assumed: bool
    function_calling: str  # "on" | "off" | "fell back to text mode"
    approval: str
    sandbox: str  # SandboxStatus.describe()
    workspace: str
    git: Callable[[], str] = field(default=lambda: "")
    label: str = ""  # e.g. "DEMO"
    sandbox_gaps: list[str] = field(default_factory=list)  # SandboxStatus.gaps(): never shortened
    offline: str = ""  # why the server could not be reached (the session is open anyway)
    instructions: str = ""  # the AGENTS.md files in the system prompt (Instructions.summary())
    project: str = ""  # the workspace's own settings files and whether they are trusted

    def offline_lines(self) -> list[str]:
        """The banner's closing lines when the server is down: why, and what works meanwhile."""
        return [self.offline, OFFLINE_NOTE] if self.offline else []

    def rows(self) -> list[tuple[str, str]]:
        window = "unknown"
        if self.context_window:
            window = f"{self.context_window:,} tokens ({short_count(self.context_window)})"
            if self.window_assumed:
                window += " - assumed: the server did not say (set vllm.context_window)"
        sandbox = sandbox_warning(self.sandbox.removeprefix("sandbox: "), self.approval)
        if sandbox.startswith("bubblewrap"):  # a warning (sandbox off) is never shortened
            sandbox = shorten(sandbox, 100, " (/sandbox lists all)")
        rows = [
            ("model", self.model if not self.offline else f"{self.model} (not connected)"),
            ("server", self.base_url if not self.offline else f"{self.base_url} - NOT REACHABLE"),
            ("context", window),
            ("function calling", self.function_calling),
            ("approval", self.approval),
            ("sandbox", sandbox),
            *(("not covered", gap) for gap in self.sandbox_gaps),
            ("workspace", self.workspace),
        ]
        if self.project:
            rows.append(("project config", self.project))
        if self.instructions:
            rows.append(("instructions", self.instructions))
        git = self.git()
        if git:
            rows.append(("git", git))
        return rows


# The keys, under the banner; the short one when the terminal is too short for the whole banner.
HINT = (
    "Enter sends · Ctrl-J: new line · @ completes paths · !cmd runs a command · /help · Esc or Ctrl-C stops"
)
SHORT_HINT = "Enter sends · Ctrl-J: new line · !cmd runs it · /help · Esc or Ctrl-C stops"
MENU_ROWS = 8  # prompt_toolkit's rows kept free under the prompt for the completion menu


def menu_rows(height: int) -> int:
    """Rows kept free under the prompt for the completion menu: 8, fewer on a short terminal (at 24
    rows, 8 and a 16-row banner scrolled the banner's title off the screen)."""
    return MENU_ROWS if height >= 40 else max(3, height // 6)


def may_shorten(label: str, value: str) -> bool:
    """May a short terminal cut this banner row to one line? Never what the sandbox does not cover,
    nor the sandbox row when it is a warning (sandbox off)."""
    return label != "not covered" and not (label == "sandbox" and not value.startswith("bubblewrap"))


OFFLINE_NOTE = (
    "The session is open anyway: /doctor, /model, /resume and /help work, and sending a task tries "
    "the server again."
)


def sandbox_warning(text: str, approval: str) -> str:
    """The sandbox's warning as it stands in `approval` mode: in full-auto nothing asks, so it must not
    say that every command needs approval."""
    if approval == "full-auto":
        return text.replace(UNSANDBOXED, "commands run UNSANDBOXED and nothing asks (full-auto)")
    return text


def shorten(text: str, width: int, more: str) -> str:
    """`text` cut at the last ", " before `width`, with `more` appended when cut."""
    if len(text) <= width:
        return text
    cut = text.rfind(", ", 0, width)
    return (text[:cut] if cut > 0 else text[:width]) + ", ..." + more


def git_status(workspace: Path, timeout: float = 3.0) -> str:
    """`main, 3 changed files` / `main, clean` / '' outside a repository (or without git).

    Through safegit: the repository is found without trusting a bare layout or a broken `.git`, and
    its config runs nothing (no filter, fsmonitor or hook); no submodule is entered, no index lock is
    taken (so the index is never rewritten)."""
    try:
        place = find_user_repo(workspace)
        if place is None:
            return ""
        args = ("--no-optional-locks", "status", "--porcelain", "-b", "--ignore-submodules=all")
        out = GitRunner(place).run(*args, timeout=timeout)
    except (GitFailed, GitMissing, OSError):
        return ""
    lines = out.splitlines()
    head = lines[0][3:] if lines and lines[0].startswith("## ") else ""
    branch = head.split("...")[0].replace("No commits yet on ", "") or "(no branch)"
    changed = len([ln for ln in lines[1:] if ln.strip()])
    state = "clean" if not changed else f"{changed} changed file{'s' if changed != 1 else ''}"
    return f"{branch}, {state}"
