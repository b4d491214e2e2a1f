"""The doctor's report: one row per check (pass / warn / fail / skip, with a fix for every failure),
the suggested `vllm serve` flags, the verdict and exit code; rendered as text or as one JSON object."""

from __future__ import annotations

import json
import re
import shlex
import textwrap
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Status = Literal["pass", "warn", "fail", "skip"]
MARKS = {"pass": "PASS", "warn": "WARN", "fail": "FAIL", "skip": "SKIP"}


@dataclass
class Check:
    id: str  # stable, for scripts reading the JSON report
    title: str
    status: Status
    detail: str
    fix: str = ""
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class Advice:
    """What to change on the server, collected while checking."""

    tool_parser: str | None = None  # "PARSER" when the family is unknown
    reasoning_parser: str | None = None
    optional: list[str] = field(default_factory=list)  # nice-to-have flags
    notes: list[str] = field(default_factory=list)

    def flags(self) -> list[str]:
        out: list[str] = []
        if self.tool_parser:
            out += ["--enable-auto-tool-choice", "--tool-call-parser", self.tool_parser]
        if self.reasoning_parser:
            out += ["--reasoning-parser", self.reasoning_parser]
        return out

    def add_optional(self, *flags: str) -> None:
        if not set(flags) <= set(self.optional):
            self.optional += list(flags)

    def add_note(self, note: str) -> None:
        if note and note not in self.notes:
            self.notes.append(note)


@dataclass
class Report:
    base_url: str
    checks: list[Check] = field(default_factory=list)
    server: dict[str, Any] = field(default_factory=dict)  # version, model, root, max_model_len
    family: str | None = None
    profile: str = ""
    advice: Advice = field(default_factory=Advice)
    mode: str | None = None  # "native", "text" (the agent works through its text protocol) or None
    verdict: str = ""
    remembered: str = ""  # what changed in the remembered tool-call mode
    exit_code: int = 1

    def add(self, check: Check) -> Check:
        self.checks.append(check)
        return check

    def get(self, check_id: str) -> Check | None:
        return next((c for c in self.checks if c.id == check_id), None)

    def command(self) -> str:
        """`vllm serve MODEL --flags…` for what was found, or "" when nothing needs changing."""
        flags = self.advice.flags() + self.advice.optional
        if not flags:
            return ""
        model = self.server.get("root") or self.server.get("model") or "MODEL"
        return shlex.join(["vllm", "serve", model, *flags])

    def to_dict(self) -> dict[str, Any]:
        return {
            "base_url": self.base_url,
            "server": self.server,
            "family": self.family,
            "profile": self.profile,
            "checks": [asdict(c) for c in self.checks],
            "suggested_flags": self.advice.flags(),
            "optional_flags": self.advice.optional,
            "suggested_command": self.command(),
            "notes": self.advice.notes,
            "mode": self.mode,
            "verdict": self.verdict,
            "remembered": self.remembered,
            "exit_code": self.exit_code,
        }


def render_json(report: Report) -> str:
    return json.dumps(report.to_dict(), indent=2, ensure_ascii=False)


WIDTH = 22  # title column; fixed so rows can be printed as the checks finish


def wrap_hanging(text: str, width: int) -> str:
    """Each line of `text` wrapped at `width`, its continuation lines indented to where the line's
    last column begins (a report row's detail, a `fix:` line's text) instead of column 0."""
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        hang = hang_column(line, width)
        parts = textwrap.wrap(line[hang:], max(20, width - hang), break_on_hyphens=False) or [""]
        out += [line[:hang] + parts[0], *(" " * hang + part for part in parts[1:])]
    return "\n".join(out)


_LABEL = re.compile(r"[A-Z][\w ]{0,20}: ")


def hang_column(line: str, width: int) -> int:
    """Where `line`'s last column starts: after its last run of two or more spaces within the first
    half of `width`, else after a leading `Label: `, else after its indentation."""
    runs = [m.end() for m in re.finditer(r" {2,}", line) if m.end() <= width // 2 and m.end() < len(line)]
    label = _LABEL.match(line)  # "Suggested: vllm serve ...": under the text after the label
    hang = runs[-1] if runs else label.end() if label else len(line) - len(line.lstrip(" "))
    return hang + 5 if line[hang : hang + 5] == "fix: " else hang


def header(base_url: str) -> str:
    return f"vLLM Bot doctor · {base_url}\n"


def row(check: Check) -> str:
    """One check as text: status, title, detail, and the fix on its own line."""
    line = f"  {MARKS[check.status]}  {check.title:<{WIDTH}}{check.detail}"
    if check.fix:
        line += f"\n        {'':<{WIDTH}}fix: {check.fix}"
    return line


def footer(report: Report) -> str:
    lines = ["", f"Verdict: {report.verdict}"]
    command = report.command()
    if command:
        lines.append(f"{'Suggested' if report.advice.flags() else 'Optional'}: {command}")
    lines += [f"Note: {note}" for note in report.advice.notes]
    if report.remembered:
        lines.append(f"Remembered: {report.remembered}")
    return "\n".join(lines)
