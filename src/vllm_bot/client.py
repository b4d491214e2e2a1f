"""The model client: one streamed request per turn, function calling with automatic text fallback.

`complete(conversation, definitions, emit) -> AssistantTurn` is the whole interface the loop sees.
Whether calls came from native `tool_calls`, a `TOOL_CALL:` block or a leaked `<tool_call>` tag is
recorded in the events and the calls' metadata; the loop never branches on it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from .calls import AssistantTurn
from .config import VllmConfig
from .conversation import Conversation
from .errors import IncompleteReply, ModelServerError, ServerUnreachable, unreachable_message
from .events import CallsDetected, Debug, Emit, ModeSwitched, RequestStarted, TurnFinished
from .parsing import extract_tool_calls, split_reasoning
from .streaming import RawReply, consume
from .trace import Trace
from .wire import to_messages

FALLBACK_MARKERS = ("--enable-auto-tool-choice", "requires --tool-call-parser")
NATIVE_FLAGS_HINT = (
    "Native tool calls need the server started with `--enable-auto-tool-choice --tool-call-parser PARSER` "
    "(e.g. hermes for Qwen2.5/Qwen3, qwen3_coder for Qwen3-Coder, llama3_json for Llama 3.x, "
    "mistral for Mistral); until then tool calls go through the text protocol."
)


@dataclass
class ModelInfo:
    id: str
    root: str | None = None
    max_model_len: int | None = None


class ModelClient:
    """Talks to one vLLM server. `function_calling` may flip to False (fallback) during a session."""

    def __init__(self, config: VllmConfig, *, system_prompt: Any, trace: Trace | None = None) -> None:
        self.config = config
        self.system_prompt = system_prompt  # callable(text_mode: bool, definitions) -> str
        self.trace = trace
        self.function_calling = config.enable_function_calling
        self.fell_back = False
        self.answered = False  # has the server answered once since start?
        self.model = config.model
        self.models: list[ModelInfo] = []
        self._sdk: Any = None

    # -- connection -----------------------------------------------------------------------------

    @property
    def sdk(self) -> Any:
        if self._sdk is None:
            import openai

            self._sdk = openai.OpenAI(
                base_url=self.config.base_url,
                api_key=self.config.api_key or "EMPTY",
                timeout=openai.Timeout(self.config.timeout, connect=self.config.connect_timeout),
                max_retries=0,
            )
        return self._sdk

    def list_models(self) -> list[ModelInfo]:
        """GET /v1/models (not a model request: no GPU time)."""
        with self._translate_errors():
            page = self.sdk.models.list()
        self.answered = True
        self.models = []
        for card in page.data:
            extra = getattr(card, "model_extra", None) or {}
            self.models.append(ModelInfo(card.id, extra.get("root"), extra.get("max_model_len")))
        if self.trace:
            self.trace.record("models", [m.__dict__ for m in self.models])
        return self.models

    def resolve_model(self) -> str:
        """Resolve "auto" to the first served model, and check an explicit name is served."""
        models = self.list_models()
        if not models:
            raise ModelServerError(f"The server at {self.config.base_url} lists no models.")
        if self.model == "auto":
            self.model = models[0].id
        elif self.model not in {m.id for m in models}:
            served = ", ".join(m.id for m in models)
            raise ModelServerError(
                f"The server at {self.config.base_url} does not serve model '{self.model}'. "
                f"Served: {served}. Use --model NAME or vllm.model in config.json."
            )
        return self.model

    @property
    def context_window(self) -> int | None:
        if self.config.context_window:
            return self.config.context_window
        for m in self.models:
            if m.id == self.model and m.max_model_len:
                return m.max_model_len
        return None

    # -- one turn -------------------------------------------------------------------------------

    def complete(
        self, conversation: Conversation, definitions: list[dict[str, Any]], emit: Emit
    ) -> AssistantTurn:
        """Ask the model for the next turn. Falls back to text mode once if the server cannot do tools."""
        while True:
            native = self.function_calling
            messages = to_messages(conversation, self.system_prompt(not native, definitions))
            try:
                return self._request(messages, definitions, native, emit)
            except _ToolChoiceUnsupported as e:
                self.function_calling = False
                self.fell_back = True
                emit(ModeSwitched(False, reason=e.message, hint=NATIVE_FLAGS_HINT))

    def _request(
        self, messages: list[dict[str, Any]], definitions: list[dict[str, Any]], native: bool, emit: Emit
    ) -> AssistantTurn:
        params = self._params(messages, definitions, native)
        emit(RequestStarted("native" if native else "text", len(messages)))
        if self.trace:
            self.trace.record("request", params)
        started = time.monotonic()
        with self._translate_errors(native):
            stream = self.sdk.chat.completions.create(**params)
            self.answered = True
            try:
                reply = consume(stream, emit, self.trace.chunk if self.trace else None)
            finally:
                stream.close()
        turn = self._to_turn(reply, definitions, native, emit)
        first = reply.first_token_at - started if reply.first_token_at else None
        emit(TurnFinished(turn, time.monotonic() - started, first))
        return turn

    def _params(
        self, messages: list[dict[str, Any]], definitions: list[dict[str, Any]], native: bool
    ) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if native:
            params["tools"] = definitions
            params["tool_choice"] = self._tool_choice(definitions)
        if self.config.temperature is not None:
            params["temperature"] = self.config.temperature
        if self.config.max_tokens is not None:
            params["max_tokens"] = self.config.max_tokens
        return params

    def _tool_choice(self, definitions: list[dict[str, Any]]) -> Any:
        choice = self.config.tool_choice
        if choice in ("auto", "none", "required"):
            return choice
        return {"type": "function", "function": {"name": choice}}

    def _to_turn(
        self, reply: RawReply, definitions: list[dict[str, Any]], native: bool, emit: Emit
    ) -> AssistantTurn:
        if reply.finish_reason is None:
            raise IncompleteReply(
                f"The reply from {self.config.base_url} ended before it was complete; nothing was executed."
            )
        reasoning, content = split_reasoning(reply.content)
        calls = reply.assembler.finish()
        source, formats = "native", ["native"]
        if not calls:
            extraction = extract_tool_calls(content, definitions)
            calls, source, formats = extraction.calls, "text", extraction.formats
            if calls and native:
                content = extraction.content  # history shows the calls as native tool_calls instead
        if calls and reply.finish_reason == "length":
            for call in calls:
                call.metadata["error"] = (
                    "your reply was cut off by the max_tokens limit while writing this call, "
                    "so it was not run. Make smaller calls "
                    "(for a big file: write a first part, then add the rest with edit)."
                )
        turn = AssistantTurn(
            content=content,
            tool_calls=calls,
            reasoning=(reply.reasoning + ("\n" if reply.reasoning and reasoning else "") + reasoning),
            finish_reason=reply.finish_reason,
            usage=reply.usage,
            via="native" if native else "text",
            raw_content=reply.content if reply.content != content else None,
        )
        if calls:
            emit(CallsDetected(calls, source, formats))
        else:
            emit(Debug(f"No tool calls in the reply (finish_reason={reply.finish_reason})"))
        return turn

    # -- errors ---------------------------------------------------------------------------------

    def _translate_errors(self, native: bool = False) -> Any:
        return _ErrorTranslator(self, native)


class _ToolChoiceUnsupported(Exception):
    def __init__(self, message: str) -> None:
        self.message = message


class _ErrorTranslator:
    """Context manager turning SDK exceptions into user-facing errors (or the fallback signal)."""

    def __init__(self, client: ModelClient, native: bool) -> None:
        self.client = client
        self.native = native

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc is None:
            return
        import openai

        url = self.client.config.base_url
        if self.client.trace and isinstance(exc, openai.OpenAIError):
            self.client.trace.record("error", {"type": type(exc).__name__, "message": str(exc)})
        if isinstance(exc, openai.APIStatusError):
            self.client.answered = True
            message = _status_message(exc)
            if self.native and exc.status_code == 400 and any(m in message for m in FALLBACK_MARKERS):
                raise _ToolChoiceUnsupported(message) from None
            if exc.status_code == 401:
                raise ModelServerError(
                    f"The server at {url} rejected the API key (401). Set vllm.api_key, VLLM_API_KEY or "
                    "--api-key to the key vLLM was started with (--api-key)."
                ) from None
            raise ModelServerError(f"The server at {url} answered {exc.status_code}: {message}") from None
        if isinstance(exc, openai.APIConnectionError):
            if not self.client.answered:
                detail = "timed out" if isinstance(exc, openai.APITimeoutError) else "connection failed"
                raise ServerUnreachable(unreachable_message(url, detail)) from None
            raise ModelServerError(f"Lost the connection to the server at {url}: {exc}") from None
        if isinstance(exc, openai.APIError):
            raise ModelServerError(
                f"The server at {url} reported an error during the reply: {exc.message}"
            ) from None


def _status_message(exc: Any) -> str:
    body = exc.body
    if isinstance(body, dict):
        return str(body.get("message") or body)
    if isinstance(body, str):
        return body
    return str(exc.message)
