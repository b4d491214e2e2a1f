"""Checks that cost no GPU time: reachable, /health, /version, /v1/models, context, /tokenize, /metrics."""

from __future__ import annotations

import re
from typing import Any

from ..model.server import HttpAnswer
from ..model.telemetry import parse_metrics
from .report import Check

START_HINT = (
    "start the server (`vllm serve MODEL --enable-auto-tool-choice --tool-call-parser PARSER`) "
    "or point vLLM Bot at it with --base-url / VLLM_BASE_URL"
)
MIN_CONTEXT = 16384  # system prompt + tools + a few files: below this the agent compacts constantly


def reachable(health: HttpAnswer, base_url: str) -> Check:
    if health.status is None:
        return Check(
            "reachable", "reachable", "fail", f"no answer from {base_url}: {health.error}", START_HINT
        )
    return Check("reachable", "reachable", "pass", f"the server answered in {health.seconds * 1000:.0f} ms")


def health_check(health: HttpAnswer) -> Check:
    title = "health"
    if health.status == 200:
        return Check("health", title, "pass", "GET /health: 200 (the engine is alive)")
    if health.status in (500, 503):
        return Check(
            "health",
            title,
            "fail",
            f"GET /health: {health.status}: the engine is dead",
            "restart vllm serve and read its log for the cause (often out of GPU memory)",
        )
    return Check(
        "health",
        title,
        "warn",
        f"GET /health: {health.status}: not a vLLM server, or a proxy that hides /health",
        "point --base-url at vLLM itself (http://HOST:8000/v1) to get every check",
    )


def version_check(answer: HttpAnswer) -> tuple[Check, str | None]:
    data = answer.json() if answer.ok else None
    version = data.get("version") if isinstance(data, dict) else None
    if not isinstance(version, str):
        return Check(
            "version",
            "vLLM version",
            "warn",
            f"GET /version: {answer.status or answer.error}: unknown (not vLLM, or a proxy)",
            "point --base-url at vLLM itself to see its version",
        ), None
    numbers = tuple(int(n) for n in re.findall(r"\d+", version)[:2])
    if numbers and numbers < (0, 10):
        return Check(
            "version",
            "vLLM version",
            "warn",
            f"vLLM {version}: old; many tool-call and streaming fixes landed since 0.10",
            "upgrade vLLM (pip install -U vllm)",
        ), version
    return Check("version", "vLLM version", "pass", f"vLLM {version}"), version


def models_check(model: str, root: str | None, max_len: int | None, family: Any, profile: str) -> Check:
    facts = [f"serving {model}"]
    if root and root != model:
        facts.append(f"root {root}")
    if max_len:
        facts.append(f"max_model_len {max_len}")
    family_text = (
        f"family {family.name} (tool parser {family.tool_call_parser or 'none'}, "
        f"reasoning parser {family.reasoning_parser or 'none'})"
        if family
        else "family not in the parser table (resources/parsers.yaml)"
    )
    return Check(
        "models",
        "served model",
        "pass",
        f"{', '.join(facts)}; {family_text}; profile {profile}",
        data={"model": model, "root": root, "max_model_len": max_len, "family": family and family.name},
    )


def context_check(window: int | None, source: str) -> Check:
    if window is None:
        return Check(
            "context",
            "context window",
            "warn",
            "unknown: /v1/models gave no max_model_len, so the agent assumes context.assumed_window",
            "set vllm.context_window in config.json",
        )
    if window < MIN_CONTEXT:
        return Check(
            "context",
            "context window",
            "warn",
            f"{window} tokens ({source}): small for a coding agent; it will compact often",
            "serve with a larger --max-model-len (e.g. 32768) if the model and GPU memory allow",
        )
    return Check("context", "context window", "pass", f"{window} tokens ({source})")


def tokenize_check(answer: HttpAnswer) -> Check:
    data = answer.json() if answer.ok else None
    if isinstance(data, dict) and isinstance(data.get("count"), int):
        return Check(
            "tokenize",
            "/tokenize",
            "pass",
            f"available: the probe prompt is {data['count']} tokens with the model's own tokenizer",
        )
    return Check(
        "tokenize",
        "/tokenize",
        "warn",
        f"not available ({answer.status or answer.error}): the agent estimates token counts instead",
        "use vLLM directly (not a proxy that only forwards /v1), or upgrade vLLM",
    )


def metrics_check(answer: HttpAnswer, model: str) -> Check:
    load = parse_metrics(answer.body, model) if answer.ok else None
    if load is None:
        return Check(
            "metrics",
            "/metrics",
            "warn",
            f"no vLLM gauges ({answer.status or answer.error}): slow replies cannot be explained",
            "expose vLLM's /metrics (it is on by default; a proxy may hide it)",
        )
    kv = f", KV cache {load.kv_cache_usage:.0%} used" if load.kv_cache_usage is not None else ""
    running, waiting = int(load.running or 0), int(load.waiting or 0)
    return Check(
        "metrics",
        "/metrics",
        "pass",
        f"{running} running, {waiting} waiting{kv}",
        data={"running": load.running, "waiting": load.waiting, "kv_cache_usage": load.kv_cache_usage},
    )
