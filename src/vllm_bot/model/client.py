"""The model client: one streamed request per turn, function calling with automatic text fallback.

`complete(conversation, definitions, emit) -> AssistantTurn` is the whole interface the loop sees.
Whether calls came from native `tool_calls`, a `TOOL_CALL:` block or a leaked `<tool_call>` tag is
recorded in the events and the calls' metadata; the loop never branches on it. The client also keeps
the request inside the context window (context.py) and retries a faltering server (retry.py).
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..calls import AssistantTurn
from ..config import ContextConfig, VllmConfig
from ..conversation import Conversation
from ..errors import ContextOverflow, ModelServerError
from ..events import Debug, Emit, ModeSwitched, Notice, RequestStarted, TurnFinished, ignore
from ..parsing import split_reasoning
from ..prompts import load_template, render
from .context import ContextManager, overflow_message
from .forced import finish_as_answer, forced, tools_and_choice
from .profiles import Profile, keep_reasoning
from .replies import broken_native_arguments, to_turn
from .retry import Retrier, RetryPolicy
from .server_errors import ContextLengthExceeded, ToolChoiceUnsupported, incomplete_reply, translate_errors
from .streaming import RawReply, consume, reply_from_completion
from .tokens import TokenCounter
from .trace import Trace
from .watchdog import DeadlineReached, with_deadlines
from .wire import to_messages

if TYPE_CHECKING:
    from .server import Server

NATIVE_FLAGS_HINT = (
    "Native tool calls need the server started with `--enable-auto-tool-choice --tool-call-parser PARSER` "
    "(e.g. hermes for Qwen2.5/Qwen3, qwen3_coder for Qwen3-Coder, llama3_json for Llama 3.x, "
    "mistral for Mistral); until then tool calls go through the text protocol."
)
SystemPrompt = Callable[[bool, list[dict[str, Any]]], str]  # (text_mode, definitions) -> prompt


@dataclass
class ModelInfo:
    id: str
    root: str | None = None
    max_model_len: int | None = None


class ModelClient:
    """Talks to one vLLM server. `function_calling` may flip to False (fallback) during a session."""

    def __init__(
        self,
        config: VllmConfig,
        *,
        system_prompt: SystemPrompt,
        trace: Trace | None = None,
        context: ContextConfig | None = None,
        retrier: Retrier | None = None,
        compact_prompt: Callable[[], str] | None = None,
    ) -> None:
        self.config = config
        self.stop: threading.Event | None = None  # a sub-agent's: when set, its streamed reply stops
        self.system_prompt = system_prompt
        self.function_calling = config.enable_function_calling
        self.fell_back = False
        self.answered = False  # has the server answered once since start?
        self.model = config.model
        self.models: list[ModelInfo] = []
        from .server import Server  # the openai SDK: imported when a client is made, not with this module

        self.server: Server = Server(
            config.base_url,
            config.api_key,
            # The socket read timeout stays a little longer than our own first-token and idle
            # deadlines (watchdog.py), so a stall is always reported as the stall it is.
            timeout=max(config.timeout, config.stream_idle_timeout) + 10,
            connect_timeout=config.connect_timeout,
        )
        self.counter = TokenCounter(self.server, None if config.model == "auto" else config.model)
        self.trace = trace
        self.context = ContextManager(
            context or ContextConfig(),
            self.counter,
            self._served_window,
            config.context_window,
            config.max_tokens,
            server_limit=self._card_window,
        )
        self.retrier = retrier or Retrier(
            RetryPolicy(
                config.retry_attempts, config.retry_base, config.retry_cap, window=config.retry_window
            )
        )
        self.compact_prompt = compact_prompt or _default_compact_prompt
        self.profile: Profile | None = None  # the model's profile (profiles.resolve), set after connecting

    @property
    def trace(self) -> Trace | None:
        return self._trace

    @trace.setter
    def trace(self, trace: Trace | None) -> None:
        """The DEBUG trace of every request; set when DEBUG is turned on."""
        self._trace = self.server.trace = trace

    # -- connection -----------------------------------------------------------------------------

    def list_models(self) -> list[ModelInfo]:
        """GET /v1/models (not a model request: no GPU time)."""
        from .server import model_cards

        answer = self.server.get("models", timeout=self.config.connect_timeout + 10)
        cards = model_cards(answer, self.config.base_url, self.answered)
        self.answered = True
        self.models = [
            ModelInfo(str(c["id"]), c.get("root"), c.get("max_model_len")) for c in cards if c.get("id")
        ]
        return self.models

    def resolve_model(self) -> str:
        """Resolve "auto" to the first served model, and check an explicit name is served."""
        models = self.list_models()
        if not models:
            raise ModelServerError(f"The server at {self.config.base_url} lists no models.")
        if self.model != "auto" and self.model not in {m.id for m in models}:
            served = ", ".join(m.id for m in models)
            raise ModelServerError(
                f"The server at {self.config.base_url} does not serve model '{self.model}'. "
                f"Served: {served}. Use --model NAME or vllm.model in config.json."
            )
        self.use_model(models[0].id if self.model == "auto" else self.model)
        return self.model

    def use_model(self, name: str) -> None:
        """Talk to served model `name` from now on, starting over in the configured tool-call mode with
        no profile (a fallback and a profile belong to one model; capabilities.configure sets both)."""
        self.model = name
        self.counter.model = name
        self.function_calling = self.config.enable_function_calling
        self.fell_back = False
        self.profile = None

    def _served_window(self) -> int | None:
        """max_model_len from /v1/models, unless the model profile overrides it (vllm.context_window
        overrides both, in ContextManager, which never goes above what the server enforces)."""
        if self.profile is not None and self.profile.context_window:
            return self.profile.context_window
        return self._card_window()

    def _card_window(self) -> int | None:
        """max_model_len from /v1/models: the window the server enforces."""
        return next((m.max_model_len for m in self.models if m.id == self.model and m.max_model_len), None)

    @property
    def model_info(self) -> ModelInfo | None:
        return next((m for m in self.models if m.id == self.model), None)

    @property
    def context_window(self) -> int:
        return self.context.window

    # -- one turn -------------------------------------------------------------------------------

    def complete(
        self,
        conversation: Conversation,
        definitions: list[dict[str, Any]],
        emit: Emit,
        *,
        deadline: float | None = None,
    ) -> AssistantTurn:
        """Ask the model for the next turn: fit the window, fall back to text mode once if the server
        cannot do tools, retry a faltering server, compact harder once on vLLM's context error.
        Past `deadline` (time.monotonic) no request starts and a streaming reply stops at its next
        chunk: DeadlineReached."""
        compacted_after_error = False
        while True:
            native = self.function_calling
            try:  # fitting the window may ask for a summary, which the server may refuse too
                messages, max_tokens = self._prepare(conversation, definitions, native, emit, deadline)
                return self.retrier.run(
                    functools.partial(
                        self._request, messages, definitions, native, max_tokens, emit=emit, until=deadline
                    ),
                    emit,
                    until=deadline,
                )
            except ToolChoiceUnsupported as e:
                self.function_calling = False
                self.fell_back = True
                emit(ModeSwitched(False, reason=e.message, hint=NATIVE_FLAGS_HINT))
            except ContextLengthExceeded as e:
                if self.context.learn(e.message):  # a window set above the server's: now we know, and
                    emit(Notice("warning", self.context.limit_notice() or e.message))
                    continue  # the next request is fitted to it (clipped, compacted as it needs)
                if compacted_after_error:
                    raise ContextOverflow(overflow_message(e.message)) from None
                compacted_after_error = True
                self.compact(conversation, definitions, emit, force=True, deadline=deadline)

    def _build(
        self, conversation: Conversation, definitions: list[dict[str, Any]], native: bool
    ) -> list[dict[str, Any]]:
        """The request's messages."""
        messages = to_messages(conversation, self.system_prompt(not native, definitions))
        if self.profile is not None and self.profile.keep_reasoning:
            keep_reasoning(messages, conversation)
        return messages

    def measure(
        self, conversation: Conversation, definitions: list[dict[str, Any]], native: bool | None = None
    ) -> int:
        """Tokens of the next request as exactly as the server can count them (compaction, /tokens)."""
        native = self.function_calling if native is None else native
        return self.context.measure(
            self._build(conversation, definitions, native), definitions if native else None
        )

    def _prepare(
        self,
        conversation: Conversation,
        definitions: list[dict[str, Any]],
        native: bool,
        emit: Emit,
        deadline: float | None,
    ) -> tuple[list[dict[str, Any]], int]:
        limit = self.context.limit_notice()
        if limit:
            emit(Notice("warning", limit))
        tools = definitions if native else None
        own = self._build(Conversation(), definitions, native)  # the agent's own prompt, before any task
        self.context.own_prompt = self.context.counter.estimate(own, tools).cheap
        clipped = self.context.clip_results(conversation)
        if clipped:
            emit(Debug(f"Clipped {clipped} tool result(s) to fit the {self.context.window:,}-token window"))
        messages = self._build(conversation, definitions, native)
        prompt = self.context.estimate(messages, tools)
        if self.context.over_budget(prompt):
            self.context.check_own_prompt(own, tools, len(definitions))
            self.compact(conversation, definitions, emit, deadline=deadline)
            messages = self._build(conversation, definitions, native)
            prompt = self.context.estimate(messages, tools)
        if not self.context.fits(prompt):
            raise ContextOverflow(
                overflow_message(
                    f"the next request needs ~{prompt:,} tokens of a {self.context.window:,}-token window"
                )
            )
        return messages, self.context.max_tokens(prompt)

    def compact(
        self,
        conversation: Conversation,
        definitions: list[dict[str, Any]],
        emit: Emit,
        *,
        force: bool = False,
        deadline: float | None = None,
    ) -> str:
        """Shrink and summarize old history (also `/compact`); returns what was done."""
        result = self.context.compact(
            conversation,
            lambda: self.measure(conversation, definitions),
            lambda text: self.summarize(text, emit, deadline=deadline),
            force=force,
        )
        emit(Notice("info", result.describe()))
        return result.describe()

    def _request(
        self,
        messages: list[dict[str, Any]],
        definitions: list[dict[str, Any]],
        native: bool,
        max_tokens: int,
        attempt: int,
        silent: float,  # longest silence allowed: a retry gets only what is left of the retry window
        emit: Emit,
        until: float | None = None,
    ) -> AssistantTurn:
        if until is not None and time.monotonic() >= until:
            raise DeadlineReached()
        params = self._params(messages, definitions, native, max_tokens)
        emit(RequestStarted("native" if native else "text", len(messages), attempt))
        started = time.monotonic()
        with translate_errors(self, native):
            reply = self._stream(params, silent, until, emit, definitions)

            if broken_native_arguments(reply):
                reply = self._retry_unstreamed(params, reply, emit)
        turn = to_turn(reply, definitions, native, emit)
        if native and forced(self.config.tool_choice):
            turn = finish_as_answer(turn, emit)
        if turn.usage:
            self.counter.calibrate(messages, definitions if native else None, turn.usage.prompt_tokens)
        first = reply.first_token_at - started if reply.first_token_at else None
        emit(TurnFinished(turn, time.monotonic() - started, first))
        return turn

    def _stream(
        self,
        params: dict[str, Any],
        silent: float,
        until: float | None,
        emit: Emit,
        definitions: list[dict[str, Any]] | None = None,
    ) -> RawReply:
        """One streamed request, read under the first-token, idle and task deadlines (watchdog.py)."""
        stream = self.server.chat(params)
        self.answered = True

        try:
            waits = min(self.config.timeout, silent), min(self.config.stream_idle_timeout, silent)
            chunks = with_deadlines(stream, *waits, until, self.stop)
            reply = consume(chunks, emit, self.trace.chunk if self.trace else None, definitions)
        finally:
            stream.close()
        if reply.finish_reason is None:
            raise incomplete_reply(self.config.base_url)
        return reply

    def _retry_unstreamed(self, params: dict[str, Any], streamed: RawReply, emit: Emit) -> RawReply:
        """Some model/parser pairs stream broken tool-call arguments; unstreamed, the request often parses."""
        emit(Notice("warning", "The server streamed broken tool-call arguments; asking again unstreamed."))
        plain = {k: v for k, v in params.items() if k not in ("stream", "stream_options")}
        completion = self.server.chat(plain)
        if self.trace:
            self.trace.record("response", completion)

        reply = reply_from_completion(completion)
        return streamed if broken_native_arguments(reply) or reply.finish_reason is None else reply

    def _params(
        self, messages: list[dict[str, Any]], definitions: list[dict[str, Any]], native: bool, max_tokens: int
    ) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": max_tokens,
        }
        if native:
            params["tools"], params["tool_choice"] = tools_and_choice(self.config.tool_choice, definitions)
        temperature = self.config.temperature  # explicit config beats the model profile
        if temperature is None and self.profile is not None:
            temperature = self.profile.temperature
        if temperature is not None:
            params["temperature"] = temperature
        if self.profile is not None:
            params.update(self.profile.request_params())
        return params

    # -- summaries for compaction ---------------------------------------------------------------

    def summarize(self, transcript: str, emit: Emit = ignore, *, deadline: float | None = None) -> str:
        """One request without tools: the model summarizes its earlier work (compaction only). It
        streams under the same stall and task deadlines as a turn; its text is not displayed."""
        messages = [
            {"role": "system", "content": self.compact_prompt()},
            {"role": "user", "content": transcript},
        ]
        # never more than the window (vLLM refuses that); the transcript takes half of it at most
        limit = min(self.context.config.summary_max_tokens, self.context.window // 2)
        params = self._params(messages, [], False, limit)

        def ask(attempt: int, silent: float) -> str:
            if deadline is not None and time.monotonic() >= deadline:
                raise DeadlineReached()
            emit(RequestStarted("summary", 2, attempt))
            with translate_errors(self):
                reply = self._stream(params, silent, deadline, ignore)

            return split_reasoning(reply.content)[1]

        return self.retrier.run(ask, emit, until=deadline)


def _default_compact_prompt() -> str:
    return render(load_template("compact.yaml")["system"], {}, "compact.yaml")
