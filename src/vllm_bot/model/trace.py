"""DEBUG trace: every raw request and response (streamed chunks included) as JSON lines.

Written under the workspace's `.vllm-bot/traces/`. The API key is never written: request headers are
not recorded, and any occurrence of the key's value in recorded data is replaced.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, TextIO

REDACTED = "***REDACTED***"


class Trace:
    def __init__(self, path: Path, secrets: list[str] | None = None) -> None:
        self.path = path
        self._secrets = [s for s in (secrets or []) if s and s != "EMPTY" and len(s) >= 4]
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: TextIO | None = path.open("a", encoding="utf-8")

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
        self._file.write(line + "\n")
        self._file.flush()

    def chunk(self, chunk: Any) -> None:
        self.record("chunk", chunk)

    def close(self) -> None:
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
