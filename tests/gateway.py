"""A gateway in front of a model server (issue 35): it forwards every request as it is, but lists the
models without `max_model_len`, like the gateway of the issue. Used against the fake vLLM server
(tests/model) and the real one (tests/realvllm)."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class CardStripper(ThreadingHTTPServer):
    """A gateway in front of a server that answers everything it is asked, but lists its models
    without `max_model_len`."""

    daemon_threads = True

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        super().__init__(("127.0.0.1", 0), _Forward)
        threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def __enter__(self) -> CardStripper:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()


class _Forward(BaseHTTPRequestHandler):
    server: CardStripper
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._forward(None)

    def do_POST(self) -> None:
        self._forward(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

    def _forward(self, body: bytes | None) -> None:
        headers = {"Content-Type": self.headers.get("Content-Type") or "application/json"}
        if self.headers.get("Authorization"):
            headers["Authorization"] = self.headers["Authorization"]
        request = urllib.request.Request(self.server.upstream + self.path, data=body, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=600) as answer:
                status, kind, data = answer.status, answer.headers["Content-Type"], answer.read()
        except urllib.error.HTTPError as e:
            status, kind, data = e.code, e.headers["Content-Type"], e.read()
        if self.path == "/v1/models":
            cards = json.loads(data)
            for card in cards["data"]:
                card.pop("max_model_len", None)
            data = json.dumps(cards).encode()
        self.send_response(status)
        self.send_header("Content-Type", kind or "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
