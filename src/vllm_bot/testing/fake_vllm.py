"""A scripted fake vLLM server on 127.0.0.1 that speaks vLLM 0.32's OpenAI-compatible wire format.

Used by the tests, the benchmarks and `cli.py --demo`. Server modes:
- "parser":   started with --enable-auto-tool-choice --tool-call-parser: scripted calls are streamed
              as native tool-call deltas when the request carries `tools` (and tool_choice is not none);
- "noparser": started without the flags: `tools` with tool_choice auto, absent, required or a named
              tool get vLLM's 400 (plain JSON, streamed or not); "none" is answered; calls go in content;
- "leak":     a parser is configured but the model writes its calls in content (`leak_format`:
              hermes, qwen3_xml, mistral, tool_call).
What the server does to a scripted reply (reasoning parser, max_tokens cuts, finish reasons) is in
generation.py. Other server traits, each reproducing something `doctor` diagnoses: `think_in_content`
(no --reasoning-parser: reasoning arrives as <think> in content), `include_usage=False`
(stream_options ignored), `prompt_tokens_details` (--enable-prompt-tokens-details: cached_tokens from
a prefix cache with 16-token blocks), `metrics` (gauges served on /metrics, with vLLM's token and
prefix-cache counters), `tokenize=False`, `version=None`, `health_status`, `turn_latency` (seconds
before each chat answer, like prefill), `tls` (a server-side ssl.SSLContext: https, as behind a
TLS-terminating proxy). Many sessions at once (a batch): `conversations` maps a key
found in the task text to that session's own script (conversations.py); others use `script`.
`reasoning_field` "reasoning_content" / "both" imitate releases before 0.16; 0.16 and later send
`reasoning` only.
A prompt longer than `max_model_len` gets vLLM's 400 (`param: "input_tokens"`), and so does a
max_tokens larger than the whole window (`param: "max_tokens"`, checked first); prompt + max_tokens
over the window is not an error, max_tokens is clamped.
A request beyond the script, or one whose history breaks the tool-call/result pairing, is recorded in
`problems`; `assert_done()` fails the test for those and for unconsumed replies.
"""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
import threading
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from typing import Any

from .conversations import Conversations
from .generation import Generated, generate, stream_chunks, usage_details
from .script import COUNTERS, ChunkWriter, PrefixCache, Reply, check_history, count_tokens
from .wire import AUTO_MSG, REQUIRED_MSG, Handler, QuietServer


class FakeVLLM:
    def __init__(
        self,
        script: list[Reply] | None = None,
        *,
        mode: str = "parser",
        leak_format: str = "hermes",
        text_format: str = "tool_call",
        model: str = "Qwen/Qwen3-Coder-30B-A3B-Instruct",
        served_models: list[str] | None = None,  # more models listed and accepted after `model`
        max_model_len: int | None = 32768,  # None: the model card has no max_model_len
        card_max_model_len: bool = True,  # False: the window is enforced but not listed (a proxy)
        reasoning_field: str = "reasoning",
        tokenize: bool = True,
        api_key: str | None = None,
        strict: bool = True,
        auto_reply: Callable[[dict[str, Any]], Reply | None] | None = None,
        think_in_content: bool = False,
        include_usage: bool = True,
        prompt_tokens_details: bool = False,
        metrics: dict[str, float] | None = None,
        version: str | None = "0.33.0",
        health_status: int = 200,
        port: int = 0,  # 0: any free port (a test that brings a server back later names its port)
        conversations: dict[str, list[Reply]] | None = None,
        turn_latency: float = 0.0,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.script = list(script or [])
        self.conversations = Conversations(conversations or {})
        self.turn_latency = turn_latency
        self.tls = tls
        self.counters = dict.fromkeys(COUNTERS, 0.0)  # served on /metrics when `metrics` is set
        self.mode = mode
        self.leak_format = leak_format  # how calls leak into content when tools were sent (mode "leak")
        self.text_format = text_format  # how the model writes calls when no tools were sent
        self.model = model
        self.served_models = [model, *(served_models or [])]
        self.max_model_len = max_model_len
        self.card_max_model_len = card_max_model_len
        self.reasoning_field = reasoning_field
        self.tokenize = tokenize
        self.api_key = api_key
        self.strict = strict
        self.auto_reply = auto_reply  # answers some requests (e.g. summaries) outside the script
        self.auto_replied: list[dict[str, Any]] = []
        self._stopping = threading.Event()
        self.think_in_content = think_in_content
        self.include_usage = include_usage
        self.prompt_tokens_details = prompt_tokens_details
        self.metrics = metrics
        self.version = version
        self.health_status = health_status
        self.port = port
        self.prefix_cache = PrefixCache()
        self.requests: list[dict[str, Any]] = []  # every chat request body, in order
        self.rejected: list[dict[str, Any]] = []  # requests answered with the no-parser 400
        self.side_requests: list[str] = []  # paths of every other request (/health, /metrics, ...)
        self.problems: list[str] = []
        self.consumed = 0
        self.connections = 0  # TCP connections accepted: a client that keeps its connection alive opens one
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._open: set[socket.socket] = set()  # connections being served (kept alive between requests)

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> FakeVLLM:
        handler = type("Handler", (Handler,), {"fake": self})
        self._httpd = QuietServer(("127.0.0.1", self.port), handler)
        self._httpd.daemon_threads = True
        if self.tls is not None:  # handshakes in the handler's thread, so a failed one stops nothing
            self._httpd.socket = self.tls.wrap_socket(
                self._httpd.socket, server_side=True, do_handshake_on_connect=False
            )
        threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def stop(self) -> None:
        """Stop like a server that dies: no new connections, and the open ones cut."""
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        with self._lock:
            open_ = list(self._open)
        for conn in open_:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> FakeVLLM:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._httpd is not None, "server not started"
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def base_url(self) -> str:
        return self.url + "/v1"

    def assert_done(self) -> None:
        """Fail unless every scripted reply was requested exactly once and no request broke the rules."""
        problems = list(self.problems) + self.conversations.unfinished()
        if self.consumed < len(self.script):
            problems.append(
                f"the agent made {self.consumed} scripted requests, the script has {len(self.script)}"
            )
        assert not problems, "; ".join(problems)

    # -- request handling -----------------------------------------------------------------------

    def next_reply(self, body: dict[str, Any]) -> Reply | None:
        if self.auto_reply is not None:
            reply = self.auto_reply(body)
            if reply is not None:
                with self._lock:
                    self.auto_replied.append(body)
                return reply
        messages = body.get("messages") or []
        key, problem = self.conversations.key_for(messages)
        with self._lock:
            self.requests.append(body)
            self.problems.extend(check_history(messages) + ([problem] if problem else []))
        reply, problem = self.conversations.reply(key, messages) if key is not None else self._scripted()
        if reply is None:
            with self._lock:
                self.problems.append(problem or "no reply")
            return None
        if reply.expect is not None:
            try:
                reply.expect(body)
            except AssertionError as e:
                self.problems.append(f"request #{len(self.requests)}: {e}")
        return reply

    def _scripted(self) -> tuple[Reply | None, str | None]:
        with self._lock:
            if self.consumed >= len(self.script):
                return None, f"unscripted request #{len(self.requests)} (script has {len(self.script)})"
            self.consumed += 1
            return self.script[self.consumed - 1], None

    def tool_choice_error(self, body: dict[str, Any]) -> str | None:
        """vLLM's 400 for tools on a server without --enable-auto-tool-choice/--tool-call-parser."""
        if self.mode != "noparser" or not body.get("tools"):
            return None
        choice = body.get("tool_choice", "auto")
        if choice == "none":
            return None
        if choice == "auto":
            return AUTO_MSG
        if choice == "required":
            return REQUIRED_MSG
        return f'tool_choice=function "{choice["function"]["name"]}" requires --tool-call-parser to be set'

    def prompt_tokens(self, body: dict[str, Any]) -> int:
        text = json.dumps(body.get("messages") or []) + json.dumps(body.get("tools") or [])
        return count_tokens(text)

    def output_budget(self, body: dict[str, Any], prompt: int) -> int | None:
        """max_tokens, clamped (as vLLM >= 0.32 does) to what the window leaves after the prompt."""
        limits = [body.get("max_tokens") or body.get("max_completion_tokens")]
        if self.max_model_len is not None:
            limits.append(max(0, self.max_model_len - prompt))
        return min((n for n in limits if n is not None), default=None)

    def generate(self, reply: Reply, body: dict[str, Any], prompt: int) -> Generated:
        tools = bool(body.get("tools"))
        thinking = ((body.get("chat_template_kwargs") or {}).get("enable_thinking")) is not False
        return generate(
            reply,
            body,
            native=self.mode == "parser" and tools and body.get("tool_choice") != "none",
            text_format=reply.text_format
            or (self.leak_format if self.mode == "leak" and tools else "tool_call"),
            separate_reasoning=not self.think_in_content and thinking,
            budget=self.output_budget(body, prompt),
        )

    def chunks(self, out: Generated, reply: Reply, body: dict[str, Any], prompt: int) -> list[dict[str, Any]]:
        w = ChunkWriter(self.model, self.reasoning_field)
        streamed = bool(body.get("stream"))
        chunks = stream_chunks(out, reply, w, streamed)
        hit = self.prefix_cache.hit(body)
        with self._lock:
            for name, value in zip(COUNTERS, (prompt, out.completion_tokens, prompt, hit), strict=True):
                self.counters[name] += value
        cached = hit if self.prompt_tokens_details else None
        if not streamed or (self.include_usage and (body.get("stream_options") or {}).get("include_usage")):
            chunks.append(usage_details(w.usage(prompt, out.completion_tokens, cached), out))
        return chunks
