"""The doctor's model requests: a few tiny prompts with known answers, sent the way a session sends
them, and what came back (HTTP status, content, reasoning, calls, usage) without interpretation."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..calls import ToolCall, Usage
from ..errors import ModelServerError
from ..events import ignore
from ..model.deltas import _get
from ..model.server_errors import _status_message
from ..model.streaming import RawReply, consume, reply_from_completion
from ..tools.definitions import TOOL_DEFINITIONS, find_definition

# The probes' budget once a model has spent a whole one thinking (raised once per doctor run, never
# above half the window): enough for most reasoning models to get to the call, and still a small request.
RAISED_MAX_TOKENS = 4096

# Quotes, backslashes, braces, a tab, blank lines and non-ASCII: what breaks argument streaming.
LONG_TEXT = (
    "def greet(name: str) -> str:\n"
    '    """Say hello to {name}; never to an empty name."""\n'
    "    if not name:\n"
    '        raise ValueError("name must not be empty")\n'
    '    return f"Hello, {name}!\\n"  # a backslash and an n, not a newline\n'
    "\n"
    "\n"
    'WINDOWS_PATH = r"C:\\temp\\{id}.json"\n'
    'DATA = {"quote": "\'single\' and \\"double\\"", "list": [1, 2, {"k": null}]}\n'
    "\tTABBED = True\n"
    'GREETING_JA = "こんにちは、世界"  # non-ASCII stays literal\n'
    "</tool_call> and </parameter> are just text here\n"
)
LONG_PATH = "doctor_probe.txt"


@dataclass
class Probe:
    id: str
    prompt: str
    tools: list[str]  # names from TOOL_DEFINITIONS; empty: no tools in the request
    expected: list[tuple[str, dict[str, Any]]]  # the calls a working model makes, in any order
    max_tokens: int
    answer: str = ""  # for a probe without tools: text the reply must contain

    @property
    def definitions(self) -> list[dict[str, Any]]:
        return [d for name in self.tools if (d := find_definition(TOOL_DEFINITIONS, name)) is not None]


PROBES: dict[str, Probe] = {
    p.id: p
    for p in [
        Probe(
            "single",
            "Use the read tool to read the file README.md. Call the tool now; do not answer in text.",
            ["read"],
            [("read", {"path": "README.md"})],
            512,
        ),
        Probe(
            "parallel",
            "In this one reply, make two tool calls at once: read the file README.md with the read tool, "
            "and run the command `ls` with the exec tool. Call both tools now.",
            ["read", "exec"],
            [("read", {"path": "README.md"}), ("exec", {"command": "ls"})],
            768,
        ),
        Probe(
            "long",
            f"Call the write tool once, with path {LONG_PATH} and as content exactly the text between "
            "the <<< and >>> lines (every line, quote, backslash and space as given, nothing else):\n"
            f"<<<\n{LONG_TEXT}>>>",
            ["write"],
            [("write", {"path": LONG_PATH, "content": LONG_TEXT})],
            1536,
        ),
        Probe(
            "reasoning",
            "What is 17 + 25? Think it through briefly, then answer with just the number.",
            [],
            [],
            1024,
            answer="42",
        ),
        Probe(
            "text",
            "Use the read tool to read the file README.md. Call the tool now; do not answer in text.",
            ["read"],
            [("read", {"path": "README.md"})],
            512,
        ),
    ]
}


@dataclass
class Outcome:
    """One request's raw result. `status` is the HTTP status (None: no answer at all)."""

    status: int | None
    streamed: bool
    error: str = ""
    content: str = ""
    reasoning: str = ""
    reasoning_fields: list[str] = field(default_factory=list)  # "reasoning" / "reasoning_content"
    calls: list[ToolCall] = field(default_factory=list)  # native tool_calls only
    finish_reason: str | None = None
    usage: Usage | None = None
    max_tokens: int = 0  # the budget it was sent with
    raised_from: int | None = None  # the probe's own budget, when the doctor raised it (a thinker)

    def excerpt(self, limit: int = 300) -> str:
        return self.content if len(self.content) <= limit else self.content[:limit] + "…"


def request_params(
    model: str,
    probe: Probe,
    system: str | None,
    profile_params: dict[str, Any],
    native: bool,
    max_tokens: int | None = None,
) -> dict[str, Any]:
    """The chat request for `probe`: the profile's settings, but temperature 0 and a small max_tokens
    (the probe's own, unless `max_tokens` raises it)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": probe.prompt}]
    if system:
        messages.insert(0, {"role": "system", "content": system})
    params: dict[str, Any] = {**profile_params, "model": model, "messages": messages}
    params.update(temperature=0, max_tokens=max_tokens or probe.max_tokens)
    if native and probe.tools:
        params.update(tools=probe.definitions, tool_choice="auto")
    return params


def send(server: Any, params: dict[str, Any], stream: bool) -> Outcome:
    """Send one request through a model.server.Server; HTTP and in-stream errors become an Outcome,
    never an exception."""
    import openai

    try:
        if stream:
            return _streamed(server, params)
        response = server.chat({**params, "stream": False})
        if server.trace is not None:
            server.trace.record("response", response)
        return _whole(response)
    except openai.APIStatusError as e:
        outcome = Outcome(e.status_code, stream, error=_status_message(e))
    except openai.APIConnectionError as e:
        outcome = Outcome(None, stream, error=str(e))
    except (openai.APIError, ModelServerError) as e:
        outcome = Outcome(200, stream, error=str(e))
    if server.trace is not None:
        server.trace.record("error", {"status": outcome.status, "message": outcome.error})
    return outcome


REASONING_KEYS = ("reasoning", "reasoning_content")


def _streamed(server: Any, params: dict[str, Any]) -> Outcome:
    fields: list[str] = []

    def watch(chunk: Any) -> None:
        if server.trace is not None:
            server.trace.chunk(chunk)
        for choice in _get(chunk, "choices") or []:
            delta = _get(choice, "delta")
            extra = getattr(delta, "model_extra", None) or {}
            fields.extend(k for k in REASONING_KEYS if (_get(delta, k) or extra.get(k)) and k not in fields)

    stream = server.chat({**params, "stream": True, "stream_options": {"include_usage": True}})
    try:
        reply = consume(stream, ignore, watch)
    finally:
        stream.close()
    return _outcome(reply, True, fields)


def _whole(response: Any) -> Outcome:
    choices = _get(response, "choices") or []
    message = _get(choices[0], "message") if choices else None
    extra = getattr(message, "model_extra", None) or {}
    fields = [k for k in REASONING_KEYS if _get(message, k) or extra.get(k)]
    return _outcome(reply_from_completion(response), False, fields)


def _outcome(reply: RawReply, streamed: bool, fields: list[str]) -> Outcome:
    return Outcome(
        200,
        streamed,
        content=reply.content,
        reasoning=reply.reasoning,
        reasoning_fields=fields,
        calls=reply.assembler.finish(),
        finish_reason=reply.finish_reason,
        usage=reply.usage,
    )


def same_calls(calls: list[ToolCall], expected: list[tuple[str, dict[str, Any]]]) -> bool:
    """Every expected call is present (any order) with the expected arguments; extra optional
    arguments are fine, trailing newlines in strings are ignored, "./x" equals "x"."""
    remaining = list(calls)
    for name, args in expected:
        hit = next((c for c in remaining if c.name == name and _args_match(c.arguments, args)), None)
        if hit is None:
            return False
        remaining.remove(hit)
    return True


def _args_match(actual: dict[str, Any], expected: dict[str, Any]) -> bool:
    return all(_norm(actual.get(k)) == _norm(v) for k, v in expected.items())


def _norm(value: Any) -> Any:
    if isinstance(value, str):
        value = value.rstrip("\n")
        return value[2:] if value.startswith("./") else value
    return json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else value


def first_difference(actual: str, expected: str) -> str:
    """Where two texts first differ, for a readable failure: 'at line 5: got '…', expected '…''."""
    for i, (a, b) in enumerate(zip(actual.splitlines(), expected.splitlines(), strict=False), 1):
        if a != b:
            return f"line {i} is {a!r}, expected {b!r}"
    return f"{len(actual)} characters, expected {len(expected)}"
