"""Project slash commands: /init (write a starter AGENTS.md) and /config (each value and its origin)."""

from __future__ import annotations

from typing import Any

from ...config.instructions import FILE_NAME
from ...config.layers import config_rows
from ...prompts import load_template, render
from ..display import columns
from .registry import StartTask, command


@command("init", "Ask the model to survey the repository and write a starter AGENTS.md")
def _init(session: Any, arg: str) -> None:
    parts = load_template("init.yaml", required="task")
    existing = (session.workspace / FILE_NAME).exists()
    text = render(parts["task"], {"existing": parts["existing" if existing else "new"]}, "init.yaml: task")
    session.say(
        f"Asking the model to survey the repository and {'improve' if existing else 'write'} {FILE_NAME}; "
        "the change is shown and approved like any write. The next task reads the new file."
    )
    # you asked for this file: writing it needs no question about steering later sessions (boundary.py)
    session.gate.grants.files.add(str((session.workspace / FILE_NAME).resolve()))
    raise StartTask(text.strip())


@command("config", "Show each setting, its value and where it came from", "[key prefix]")
def _config(session: Any, arg: str) -> None:
    config = session.config
    for layer, path, note in config.provenance.files:
        session.say(f"{layer}: {path} ({note})")
    rows = config_rows(config, arg.strip())
    if not rows:
        session.say(f"No setting starts with '{arg.strip()}'. Try /config vllm, /config sandbox, ...")
        return
    for line in columns(rows):
        session.say(line)
    if config.provenance.ignored:
        session.say("Ignored (the workspace is not trusted): " + ", ".join(config.provenance.ignored))
