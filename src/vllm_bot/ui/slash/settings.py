"""Session slash commands: /model /tokens /approval /debug /reasoning /compact /sandbox."""

from __future__ import annotations

from typing import Any

from ..display import columns
from ..status import short_count
from .registry import command


def _on_off(session: Any, arg: str, what: str, current: bool) -> bool | None:
    """'on' -> True, 'off' -> False; anything else reports the state and returns None."""
    if arg in ("on", "off"):
        return arg == "on"
    session.say(f"{what} is {'on' if current else 'off'}. Use /{what.split()[0].lower()} on|off.")
    return None


@command("model", "List the served models, or switch to one", "[name]")
def _model(session: Any, arg: str) -> None:
    client = session.client
    models = client.list_models()
    if not arg:
        rows = [
            (
                f"{'*' if m.id == client.model else ' '} {m.id}",
                f"max_model_len {m.max_model_len:,}" if m.max_model_len else "",
            )
            for m in models
        ]
        for line in columns(rows):
            session.say(line)
        return
    if arg not in {m.id for m in models}:
        served = ", ".join(m.id for m in models) or "none"
        session.say(f"The server does not serve '{arg}'. Served: {served}.")
        return
    session.switch_model(arg)
    state = "on" if client.function_calling else "off"
    session.say(f"Model: {arg} (context window {client.context_window:,} tokens, function calling {state}).")


@command("tokens", "Show how the context window is used")
def _tokens(session: Any, arg: str) -> None:
    client, agent = session.client, session.agent
    native = client.function_calling
    definitions = session.executor.definitions
    parts = client.context.breakdown(
        session.current_system_prompt(), definitions if native else None, agent.conversation
    )
    used = client.measure(agent.conversation, definitions)
    window = client.context_window
    assumed = " (assumed: the server did not report max_model_len)" if client.context.window_assumed else ""
    session.say(f"Context: ~{used:,} of {window:,} tokens ({100 * used / window:.0f}%){assumed}")
    for name, count in parts.items():
        if count:
            session.say(f"  {name:<20} ~{count:>8,}")
    budget = client.context.budget()
    session.say(f"  compaction starts at ~{budget:,} tokens (context.compact_threshold)")
    if session.instructions.files:
        session.say("Project instructions (AGENTS.md), counted in the system prompt above:")
        for file in session.instructions.files:
            session.say(f"  {file.describe()}")
    total = agent.usage
    session.say(
        f"Session so far: {short_count(total.prompt_tokens)} prompt tokens sent, "
        f"{short_count(total.completion_tokens)} generated."
    )
    session.say(session.telemetry.summary())


@command("approval", "Show or set the approval mode (Shift-Tab cycles)", "ask|auto-edit|full-auto|plan")
def _approval(session: Any, arg: str) -> None:
    modes = session.workflow.modes
    if arg not in modes:
        session.say(f"Approval mode: {session.gate.mode}. Use /approval {'|'.join(modes)}.")
        session.say(
            "  ask: confirm every write, edit and command; auto-edit: file changes run (absolute, .. or ~ "
            "paths ask), commands ask (read-only ones run when sandboxed); full-auto: nothing asks; "
            "plan: nothing in the workspace changes until you approve the model's plan."
        )
        return
    session.workflow.set_mode(arg, "/approval")


@command("plan", "Plan mode: the model explores read-only and presents a plan for you to approve", "on|off")
def _plan(session: Any, arg: str) -> None:
    if "plan" not in session.workflow.modes:
        session.say("Plan mode is turned off in config (agent.plan_mode).")
        return
    leaving = arg.strip() == "off" or (not arg.strip() and session.gate.mode == "plan")
    configured = session.config.agent.approval
    back = configured if configured != "plan" else "auto-edit"
    session.workflow.set_mode(back if leaving else "plan", "/plan")


@command("debug", "Log each step and keep a raw trace", "on|off")
def _debug(session: Any, arg: str) -> None:
    on = _on_off(session, arg, "debug log", session.debug_log is not None)
    if on is not None:
        session.set_debug(on)
        session.say(f"Debug log {'on' if on else 'off'}.")


@command("reasoning", "Show the model's reasoning, or fold it to one line", "on|off")
def _reasoning(session: Any, arg: str) -> None:
    on = _on_off(session, arg, "reasoning display", session.front.show_reasoning)
    if on is not None:
        session.front.show_reasoning = on
        session.config.ui.show_reasoning = on
        session.say(f"Reasoning {'shown' if on else 'folded to one line'}.")


@command("compact", "Summarize older turns now to free context")
def _compact(session: Any, arg: str) -> None:
    if not session.agent.conversation.entries:
        session.say("Nothing to compact yet.")
        return
    session.client.compact(session.agent.conversation, session.executor.definitions, session.emit, force=True)


@command("sandbox", "Show the sandbox status and its active protections")
def _sandbox(session: Any, arg: str) -> None:
    status = session.toolbox.status
    session.say(status.describe() if not status.active else "sandbox: bubblewrap (commands run inside it)")
    for layer in status.layers:
        session.say(f"  - {layer}")
    shown = session.boundary.describe_shown()
    session.say("  shown read-only from your home directory: " + (", ".join(shown) or "nothing"))
    session.say("  (more with sandbox.visible_paths; everything else under ~ is hidden)")
    for gap in session.sandbox_gaps():
        session.say(f"  not covered: {gap}")
    for problem in session.toolbox.sandbox.problems:
        session.say(f"  problem: {problem}")
