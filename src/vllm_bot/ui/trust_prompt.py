"""The trust question of a workspace with its own safety settings (trust.py decides when to ask)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .keys import terminal_key_reader


def ask_trust(request: Any, read_key: Callable[[], str] | None = None) -> bool:
    """The question a workspace with its own safety settings gets once (trust.TrustRequest): one key
    on a terminal, as the approval menu (y trusts; n, Esc or Enter does not), else a typed line.
    The command line asks it through session.py (app.py imports no UI)."""
    print("\n".join(request.question()))
    return ask_yes("Trust this workspace? [y/N] ", read_key)


def ask_home(workspace: Any, where: str, read_key: Callable[[], str] | None = None) -> bool:
    """The question an interactive start at $HOME (or above it) gets: work there anyway?"""
    print(
        f"The workspace would be {where} ({workspace}): every file in it would be the model's to read "
        "and change, but for the dotfiles and dot-folders at the top of your home directory, which stay "
        "out of reach. A project folder is the usual workspace."
    )
    return ask_yes("Work here anyway? [y/N] ", read_key)


def ask_yes(question: str, read_key: Callable[[], str] | None = None) -> bool:
    """One key on a terminal (y; n, Esc or Enter is no), else a typed line."""
    print(question, end="", flush=True)
    read_key = read_key or terminal_key_reader()
    try:
        answer = read_key() if read_key is not None else input()
    except EOFError:
        answer = ""
    trusted = answer.strip().lower() in ("y", "yes")
    if read_key is not None:
        print("yes" if trusted else "no")
    return trusted
