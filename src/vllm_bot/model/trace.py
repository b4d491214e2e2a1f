"""DEBUG trace: every raw request and response (streamed chunks included) as JSON lines.

Kinds: "request" (a chat completion's exact JSON body), "chunk" / "response" (what came back),
"error", and "http" for every other request (/v1/models, /tokenize, /metrics: server.py) with what
was sent and what was answered.

Written under the workspace's `.vllm-bot/traces/`. The API key is never written: request headers are
not recorded, and any occurrence of the key's value in recorded data is replaced.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any, TextIO

REDACTED = "***REDACTED***"


class Trace:
    def __init__(self, path: Path, secrets: list[str] | None = None) -> None:
        self.path = path
        kept = [s for s in (secrets or []) if s and s != "EMPTY" and len(s) >= 4]
        # as the JSON line spells each (a `"` or `\\` in a key is escaped there), longest first
        spelled = {json.dumps(s, ensure_ascii=False)[1:-1] for s in kept} | set(kept)
        self._secrets = sorted(spelled, key=len, reverse=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: TextIO | None = path.open("a", encoding="utf-8")
        self._lock = threading.Lock()  # /metrics is read from a timer thread

    @classmethod
    def in_state_dir(cls, state_dir: Path, secrets: list[str] | None = None) -> Trace:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        return cls(state_dir / "traces" / f"trace-{stamp}.jsonl", secrets)

    def record(self, kind: str, data: Any) -> None:
        if self._file is None:
            return
        line = json.dumps(
            {"t": round(time.time(), 3), "kind": kind, "data": _plain(data)}, ensure_ascii=False
        )
        for secret in self._secrets:
            line = line.replace(secret, REDACTED)
        with self._lock:
            if self._file is not None:
                self._file.write(line + "\n")
                self._file.flush()

    def exchange(self, url: str, sent: Any, status: int | None, answer: str) -> None:
        """One side-endpoint call: the URL, the body sent (None for a GET), the status and the answer
        (as JSON when it is JSON)."""
        try:
            parsed: Any = json.loads(answer)
        except ValueError:
            parsed = answer
        self.record("http", {"url": url, "sent": sent, "status": status, "answer": parsed})

    def chunk(self, chunk: Any) -> None:
        self.record("chunk", chunk)

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


def _plain(data: Any) -> Any:
    """SDK objects become the JSON they were parsed from (unknown vLLM fields included)."""
    if hasattr(data, "to_dict"):
        return data.to_dict()
    if hasattr(data, "model_dump"):
        return data.model_dump()
    return data
