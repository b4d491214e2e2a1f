"""The fake vLLM server's HTTP side (fake_vllm.py holds what the server is and answers): vLLM 0.32's
error bodies and messages, the routes (`/v1/models`, `/tokenize`, `/metrics`, `/health`, `/version`,
`/v1/chat/completions`) and the streamed answer, served by a threading HTTP server that takes a hung-up
client as normal."""

from __future__ import annotations

import json
import ssl
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from .generation import completion
from .script import Reply, count_tokens, metrics_page

if TYPE_CHECKING:
    from .fake_vllm import FakeVLLM

AUTO_MSG = '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'
REQUIRED_MSG = 'tool_choice="required" requires --tool-call-parser to be set'


def error_body(
    message: str, code: int = 400, kind: str = "BadRequestError", param: str | None = None
) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def too_long_message(window: int, prompt: int) -> str:
    """vLLM 0.32's 400 for a prompt longer than the window (it counts at most one token past it)."""
    seen = min(prompt, window + 1)
    return (
        f"This model's maximum context length is {window} tokens. However, your prompt contains at least "
        f"{seen} input tokens, which exceeds this limit even without any output tokens. Please reduce "
        f"the length of the input prompt. (parameter=input_tokens, value={seen})"
    )


def max_tokens_error(body: dict[str, Any], window: int | None) -> dict[str, Any] | None:
    """vLLM 0.32's 400 for a max_tokens (or max_completion_tokens) larger than the whole window."""
    name = "max_completion_tokens" if body.get("max_completion_tokens") is not None else "max_tokens"
    wanted = body.get(name)
    if window is None or not isinstance(wanted, int) or wanted <= window:
        return None
    message = (
        f"{name}={wanted} cannot be greater than max_model_len={window}. Please request fewer output tokens."
    )
    return error_body(message, param=name)


class QuietServer(ThreadingHTTPServer):
    """Clients that hang up (a cut test, a stopped agent, a refused TLS handshake) are normal here,
    not errors to print."""

    request_queue_size = 256  # a batch of many agents connects at once (socketserver's default is 5)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError, ssl.SSLError)):
            super().handle_error(request, client_address)


class Handler(BaseHTTPRequestHandler):
    fake: FakeVLLM
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # like vLLM (asyncio sets TCP_NODELAY): no delayed-ACK stalls

    def setup(self) -> None:
        super().setup()
        with self.fake._lock:
            self.fake.connections += 1
            self.fake._open.add(self.connection)

    def finish(self) -> None:
        with self.fake._lock:
            self.fake._open.discard(self.connection)
        super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        raw = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(raw)

    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length) or b"{}")

    def _authorized(self) -> bool:
        if self.fake.api_key and self.headers.get("Authorization") != f"Bearer {self.fake.api_key}":
            self._json(401, {"error": "Unauthorized"})
            return False
        return True

    def do_GET(self) -> None:
        f = self.fake
        f.side_requests.append(self.path)
        if self.path == "/health":
            self.send_response(f.health_status)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/version" and f.version is not None:
            self._json(200, {"version": f.version})
        elif self.path == "/metrics" and f.metrics is not None:
            raw = metrics_page(f.metrics, f.model, f.counters).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)
        elif self.path == "/v1/models":
            if self._authorized():
                self._json(200, {"object": "list", "data": [self._card(m) for m in self.fake.served_models]})
        else:
            self._json(404, error_body(f"Not Found: {self.path}", 404, "NotFoundError"))

    def _card(self, model: str) -> dict[str, Any]:
        f = self.fake
        return {
            "id": model,
            "object": "model",
            "created": int(time.time()),
            "owned_by": "vllm",
            "root": model,
            "parent": None,
            "max_model_len": f.max_model_len if f.card_max_model_len else None,
            "permission": [],
        }

    def do_POST(self) -> None:
        body = self._body()
        if self.path != "/v1/chat/completions":
            self.fake.side_requests.append(self.path)
        if self.path == "/tokenize" and self.fake.tokenize:
            text = body.get("prompt") or json.dumps(body.get("messages") or []) + json.dumps(
                body.get("tools") or []
            )
            n = count_tokens(text)
            answer = {"count": n, "max_model_len": self.fake.max_model_len, "tokens": list(range(n))}
            self._json(200, {**answer, "token_strs": None})
        elif self.path == "/v1/chat/completions":
            if self._authorized():
                self._chat(body)
        else:
            self._json(404, error_body(f"Not Found: {self.path}", 404, "NotFoundError"))

    def _chat(self, body: dict[str, Any]) -> None:
        f = self.fake
        if body.get("model") not in (None, *f.served_models):
            self._json(
                404, error_body(f"The model `{body.get('model')}` does not exist.", 404, "NotFoundError")
            )
            return
        refusal = f.tool_choice_error(body)
        if refusal:
            f.rejected.append(body)
            self._json(400, error_body(refusal))
            return
        too_many = max_tokens_error(body, f.max_model_len)
        if too_many is not None:
            f.requests.append(body)
            self._json(400, too_many)
            return
        prompt = f.prompt_tokens(body)
        if f.max_model_len is not None and prompt >= f.max_model_len:
            f.requests.append(body)
            self._json(400, error_body(too_long_message(f.max_model_len, prompt), param="input_tokens"))
            return
        if f.turn_latency:
            f._stopping.wait(f.turn_latency)
        reply = f.next_reply(body)
        if reply is None:
            self._json(500, error_body("unscripted request", 500, "InternalServerError"))
            return
        if reply.status is not None:
            self._json(reply.status, reply.error or error_body("scripted error", reply.status), reply.headers)
            return
        out = f.generate(reply, body, prompt)
        chunks = f.chunks(out, reply, body, prompt)
        if not body.get("stream"):
            self._json(200, completion(chunks, out))
            return
        self._stream(chunks, reply)

    def _stream(self, chunks: list[dict[str, Any]], reply: Reply) -> None:
        lines = [f"data: {json.dumps(c, separators=(',', ':'))}\n\n" for c in chunks]
        if reply.stream_error is not None:
            lines.insert(len(lines) // 2, f"data: {json.dumps(reply.stream_error)}\n\n")
        lines.append("data: [DONE]\n\n")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        sent = 0
        for line in lines:
            data = line.encode()
            for limit in (reply.cut_at_byte, reply.stall_after_bytes):
                if limit is not None and sent + len(data) > limit:
                    data = data[: max(0, limit - sent)]
            if data:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
                sent += len(data)
            if reply.cut_at_byte is not None and sent >= reply.cut_at_byte:
                self.close_connection = True
                return
            if reply.stall_after_bytes is not None and sent >= reply.stall_after_bytes:
                self.fake._stopping.wait(600)
                return
            if reply.latency:
                time.sleep(reply.latency)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()
