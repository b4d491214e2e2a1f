"""What the editor can switch: the approval modes as session modes (and as the "mode" config option)
and the served models as the "model" config option.

The modes are the session's (`workflow.Workflow.modes`: plan mode only when `agent.plan_mode`), so a
mode added there is offered here too; `DESCRIPTIONS` words the known ones.
"""

from __future__ import annotations

from typing import Any

from acp.schema import (
    ConfigOptionUpdate,
    CurrentModeUpdate,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
)

from .errors import InputError

DESCRIPTIONS = {
    "ask": "Confirm every write, edit and command",
    "auto-edit": "File changes in the workspace run; commands ask (read-only ones run when sandboxed)",
    "full-auto": "Nothing asks (commands still run in the sandbox)",
    "plan": "Read and plan only: nothing in the workspace changes until you approve the plan",
}
MODE_OPTION, MODEL_OPTION = "mode", "model"


def modes(session: Any) -> SessionModeState:
    available = [
        SessionMode(id=mode, name=mode.replace("-", " ").capitalize(), description=DESCRIPTIONS.get(mode))
        for mode in session.workflow.modes
    ]
    return SessionModeState(current_mode_id=session.gate.mode, available_modes=available)


def served_models(session: Any) -> list[str]:
    """The models the server listed at start (just the configured one while it is unreachable)."""
    names = [m.id for m in session.client.models]
    return names if session.client.model in names else [session.client.model, *names]


def config_options(session: Any) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
    mode_choices = [
        SessionConfigSelectOption(value=m.id, name=m.name, description=m.description)
        for m in modes(session).available_modes
    ]
    model_choices = [SessionConfigSelectOption(value=name, name=name) for name in served_models(session)]
    return [
        SessionConfigOptionSelect(
            id=MODE_OPTION,
            name="Approval",
            category="mode",
            type="select",
            current_value=session.gate.mode,
            options=mode_choices,
        ),
        SessionConfigOptionSelect(
            id=MODEL_OPTION,
            name="Model",
            category="model",
            type="select",
            current_value=session.client.model,
            options=model_choices,
        ),
    ]


def shown(session: Any) -> tuple[str, str]:
    """What the editor was last told: (mode, model)."""
    return session.gate.mode, session.client.model


def changed(session: Any, told: tuple[str, str]) -> list[Any]:
    """The updates that tell the editor the mode or model changed from inside the session (an approved
    plan leaves plan mode) since it was told `told`; none when nothing did."""
    if shown(session) == told:
        return []
    return [
        CurrentModeUpdate(session_update="current_mode_update", current_mode_id=session.gate.mode),
        ConfigOptionUpdate(session_update="config_option_update", config_options=config_options(session)),
    ]


class OptionError(InputError):
    """A mode or model the session does not offer (the message says which it does)."""


def check_mode(session: Any, mode: str) -> str:
    offered = session.workflow.modes
    if mode not in offered:
        raise OptionError(f"unknown mode {mode!r}; the modes are {', '.join(offered)}")
    return mode


def set_model(session: Any, name: str) -> None:
    """Switch to another served model (worker thread: it asks the server)."""
    served = served_models(session)
    if name not in served:
        raise OptionError(f"the server does not serve {name!r}; it serves {', '.join(served)}")
    if name != session.client.model:
        session.switch_model(name)
