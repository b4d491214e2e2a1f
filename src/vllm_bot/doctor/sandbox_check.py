"""The doctor's one local row: is the sandbox on here, and what it shows of the home directory (the
boundary's show-list: toolchains read-only, everything else under ~ hidden)."""

from __future__ import annotations

from pathlib import Path

from ..config import Config
from ..safety.boundary import build
from ..safety.sandbox import probe
from .report import Check


def sandbox_check(config: Config, workspace: Path) -> Check:
    status = probe(config.sandbox)
    boundary = build(workspace, config)
    shown = boundary.describe_shown()
    detail = "bubblewrap" if status.active else f"OFF - {status.warning}"
    detail += "; shown read-only from your home directory: " + (", ".join(shown) or "nothing")
    fix = "" if status.active else "see docs/sandbox.md"
    data = {"active": status.active, "shown": shown, "missing": list(status.missing)}
    return Check("sandbox", "sandbox", "pass" if status.active else "warn", detail, fix, data)
