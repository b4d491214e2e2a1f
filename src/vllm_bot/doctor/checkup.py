"""The doctor's sequence: server checks (no GPU time), then a handful of tiny model requests, then the
verdict, the suggested `vllm serve` flags and the remembered tool-call mode."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..config import Config
from ..errors import ModelServerError
from ..model.capabilities import CapabilityCache, Remembered
from ..model.client import ModelClient
from ..model.profiles import Profile, describe, resolve
from ..prompts import system_prompt
from .knowledge import Family, Knowledge, knowledge
from .mcp_checks import mcp_checks
from .probes import PROBES, RAISED_MAX_TOKENS, Outcome, Probe, request_params, send
from .reply_checks import long_check, long_result, parallel_check, reasoning_check, text_check, usage_check
from .report import Check, Report
from .server_checks import (
    context_check,
    health_check,
    metrics_check,
    models_check,
    reachable,
    tokenize_check,
    version_check,
)
from .tool_checks import ToolVerdict, classify, tool_check

if TYPE_CHECKING:
    from ..model.trace import Trace

MODEL_FIX = "check --model and --api-key against the server (vllm serve --served-model-name / --api-key)"


class Doctor:
    def __init__(
        self,
        config: Config,
        *,
        cache: CapabilityCache | None = None,
        know: Knowledge | None = None,
        on_check: Callable[[Check], None] | None = None,
        mcp_rows: Callable[[], list[dict[str, Any]]] | None = None,
        local: Callable[[], list[Check]] | None = None,
        trace: Trace | None = None,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.config = config
        self.log = log or (lambda line: None)  # the DEBUG log: each step, as it happens
        self.local = local  # checks of this machine, not the server (the sandbox)
        self.cache = cache or CapabilityCache()
        self.know = know or knowledge()
        self.on_check = on_check
        self.mcp_rows = mcp_rows  # the MCP servers' `server_row`s, when any are configured
        self.report = Report(config.vllm.base_url)
        self.client = ModelClient(config.vllm, system_prompt=lambda text_mode, definitions: "", trace=trace)
        self.family: Family | None = None
        self.profile = Profile()
        self.streamed: list[Outcome] = []
        self.verdict: ToolVerdict | None = None  # the streamed single-call request decides the mode
        self.raised: int | None = None  # every probe's budget once a model spent a whole one thinking
        self.sent: list[Outcome] = []  # every probe's outcome, in order

    def run(self) -> Report:
        if self._server() and self._model():
            self._side_endpoints()
            self._tool_calls()
            self._reasoning()
            self._add(usage_check(self.streamed, self.report.advice))
            self._fallback()
        if self.mcp_rows is not None:
            for check in mcp_checks(self.mcp_rows()):
                self._add(check)
        for check in self.local() if self.local is not None else []:
            self._add(check)
        self._conclude()
        self._remember()
        return self.report

    def _add(self, check: Check) -> Check:
        self.log(f"check {check.id}: {check.status.upper()} {check.detail}")
        self.report.add(check)
        if self.on_check is not None:
            self.on_check(check)
        return check

    def _get(self, path: str, payload: dict[str, Any] | None = None) -> Any:
        server, timeout = self.client.server, self.config.vllm.connect_timeout + 5
        if payload is None:
            answer = server.get(path, timeout=timeout)
        else:
            answer = server.post(path, payload, timeout=timeout)
        self.log(f"{'GET' if payload is None else 'POST'} {path}: {answer.status or answer.error}")
        return answer

    # -- no GPU time ----------------------------------------------------------------------------

    def _server(self) -> bool:
        health = self._get("/health")
        if self._add(reachable(health, self.config.vllm.base_url)).status == "fail":
            return False
        self._add(health_check(health))
        check, version = version_check(self._get("/version"))
        self._add(check)
        self.report.server["version"] = version
        return True

    def _model(self) -> bool:
        try:
            model = self.client.resolve_model()
        except ModelServerError as e:
            self._add(Check("models", "served model", "fail", str(e), MODEL_FIX))
            return False
        info = self.client.model_info
        root = info.root if info else None
        self.family = self.know.family_for([model, root])
        self.profile = self.client.profile = resolve([model, root], self.config.profiles)
        max_len = info.max_model_len if info else None
        self.report.server.update(model=model, root=root, max_model_len=max_len)
        self.report.family = self.family.name if self.family else None
        self.report.profile = describe(self.profile)
        self._add(models_check(model, root, max_len, self.family, self.profile.label))
        source = (
            "vllm.context_window"
            if self.config.vllm.context_window
            else "profile"
            if self.profile.context_window
            else "max_model_len"
        )
        assumed = self.client.context.window_assumed  # no max_model_len and nothing configured
        self._add(context_check(None if assumed else self.client.context_window, source))
        return True

    def _side_endpoints(self) -> None:
        probe = PROBES["single"]
        payload = {"model": self.client.model, "messages": [{"role": "user", "content": probe.prompt}]}
        self._add(tokenize_check(self._get("/tokenize", {**payload, "tools": probe.definitions})))
        self._add(metrics_check(self._get("/metrics"), self.client.model))

    # -- model requests -------------------------------------------------------------------------

    def _send(
        self,
        probe: Probe,
        stream: bool,
        system: str | None = None,
        native: bool = True,
        profile: Profile | None = None,
    ) -> Outcome:
        """One probe request; a model that spends the probe's whole budget thinking raises the budget of
        this probe and every later one, once (RAISED_MAX_TOKENS, at most half the window)."""
        settings = (profile or self.profile).request_params()
        budget = max(probe.max_tokens, self.raised or 0)
        outcome = self._probe(probe, budget, stream, system, settings, native)
        if self.raised is None and self._thought_out(outcome):
            self.raised = max(probe.max_tokens, min(RAISED_MAX_TOKENS, self.client.context_window // 2))
            if self.raised > budget:
                self.log(f"the model spent max_tokens={budget} thinking: raising the probes' budget once")
                outcome = self._probe(probe, self.raised, stream, system, settings, native)
        outcome.raised_from = probe.max_tokens if outcome.max_tokens > probe.max_tokens else None
        self.sent.append(outcome)
        if stream:
            self.streamed.append(outcome)
        return outcome

    def _probe(
        self,
        probe: Probe,
        budget: int,
        stream: bool,
        system: str | None,
        settings: dict[str, Any],
        native: bool,
    ) -> Outcome:
        params = request_params(self.client.model, probe, system, settings, native, budget)
        outcome = send(self.client.server, params, stream)
        outcome.max_tokens = budget
        self.log(
            f"probe {probe.id} ({'streamed' if stream else 'not streamed'}, max_tokens={budget}): "
            f"{outcome.status or outcome.error}, finish_reason {outcome.finish_reason}, "
            f"{len(outcome.calls)} native calls, {len(outcome.content)} characters of text, "
            f"{len(outcome.reasoning)} of reasoning"
        )
        return outcome

    def _thought_out(self, outcome: Outcome) -> bool:
        """The reply ran out of tokens in reasoning, with no call and no answer yet."""
        if outcome.finish_reason != "length" or outcome.calls or outcome.error:
            return False
        return bool(
            outcome.reasoning or not outcome.content.strip() or self.know.reasoning_leak(outcome.content)
        )

    def _tool_check(self, check_id: str, title: str, verdict: ToolVerdict) -> Check:
        return self._add(
            tool_check(
                check_id,
                title,
                verdict,
                self.family,
                self.know,
                self.report.advice,
                self.profile.thinking_off,
            )
        )

    def _tool_calls(self) -> None:
        single = PROBES["single"]
        self._tool_check("tool_call", "tool call", classify(self._send(single, False), single, self.know))
        self.verdict = classify(self._send(single, True), single, self.know)
        self._tool_check("tool_call_stream", "tool call, streamed", self.verdict)
        if not self.verdict.native:
            for check_id, title in (
                ("parallel_calls", "parallel calls"),
                ("long_arguments", "long arguments"),
            ):
                self._add(Check(check_id, title, "skip", "needs native tool calls"))
            return
        parallel = PROBES["parallel"]
        outcome = self._send(parallel, True)
        verdict = classify(outcome, parallel, self.know)
        check = parallel_check(verdict, outcome)
        self._add(check) if check else self._tool_check("parallel_calls", "parallel calls", verdict)
        self._long_arguments()

    def _long_arguments(self) -> None:
        probe = PROBES["long"]
        streamed = long_result(self._send(probe, True), probe)
        whole = None
        if streamed[0] not in ("intact", "repaired"):  # is it the stream or the model? ask once more
            whole = long_result(self._send(probe, False), probe)
        self._add(long_check(streamed, whole))

    def _reasoning(self) -> None:
        """With the profile's settings; when the model reasons in its text although the profile turns
        thinking off, once more with thinking on: does the server split reasoning off at all?"""
        probe = PROBES["reasoning"]
        outcome = self._send(probe, True)
        thinking_on = None
        if self.profile.thinking_off and self.know.reasoning_leak(outcome.content):
            thinking_on = self._send(probe, True, profile=self.profile.thinking_on())
        check = reasoning_check(outcome, self.family, self.know, self.report.advice, thinking_on)
        self._add(check)

    def _fallback(self) -> None:
        if self.verdict is not None and self.verdict.native:
            self._add(Check("text_protocol", "text protocol", "skip", "not needed: native tool calls work"))
            return

        probe = PROBES["text"]
        system = system_prompt(
            self.config.system_prompt.template,
            role=self.config.system_prompt.role,
            workspace=".",
            definitions=probe.definitions,
            text_mode=True,
        )
        outcome = self._send(probe, True, system, native=False)
        self._add(text_check(outcome, probe, self.know, self.profile.thinking_off))

    # -- conclusion -----------------------------------------------------------------------------

    def _conclude(self) -> None:
        r = self.report
        text = r.get("text_protocol")
        if self.verdict is not None and self.verdict.native:
            r.mode, r.verdict = "native", "the agent can work with native tool calls"
        elif text is not None and text.data.get("inconclusive"):
            r.verdict = (
                "inconclusive: the model was still thinking when the probes' budget ran out, so whether "
                "the agent can work with this server is not known"
            )
        elif text is not None and text.status in ("pass", "warn"):
            r.mode = "text"
            r.verdict = "the agent can work through its text protocol; native tool calls do not work"
        else:
            blocker = next((c for c in r.checks if c.status == "fail"), None)
            r.verdict = "the agent cannot work with this server" + (f": {blocker.detail}" if blocker else "")
        problems = sum(c.status in ("warn", "fail") for c in r.checks)
        if r.mode and problems:
            r.verdict += f" ({problems} check{'s need' if problems > 1 else ' needs'} attention)"
        if r.mode != "native" and self.family and self.family.note and r.advice.tool_parser:
            r.advice.add_note(self.family.note)
        if self.raised is not None:
            r.advice.add_note(self._budget_note(self.raised))
        r.exit_code = 0 if r.mode else 1

    def _budget_note(self, raised: int) -> str:
        """Which budget the thinking model needed, or that even the raised one was not enough."""
        again = [o for o in self.sent if o.raised_from]
        first = min((o.raised_from or 0) for o in again) if again else raised
        done = [o.usage.completion_tokens for o in again if o.finish_reason != "length" and o.usage]
        said = f"the doctor raised its probes' max_tokens once, from {first:,} to {raised:,}"
        allowed = self.config.vllm.max_tokens
        sessions = f"{allowed:,} (vllm.max_tokens)" if allowed else "the rest of the window, up to 32,768"
        if not done:
            return (
                f"This model was still thinking after {raised:,} tokens ({said}): a budget above {raised:,} "
                f"would do. Sessions give a reply {sessions}."
            )
        needed = max(done)
        advice = f"; raise vllm.max_tokens above {needed:,}" if allowed and allowed <= needed else ""
        return (
            f"This model thinks before it answers: a probe needed {needed:,} tokens ({said}), so a budget "
            f"of {needed:,} or more does. Sessions give a reply {sessions}{advice}."
        )

    def _remember(self) -> None:
        """A native success forgets a remembered fallback; a refusal or a leak is remembered."""
        verdict, model, url = self.verdict, self.client.model, self.config.vllm.base_url
        if verdict is None:
            return
        try:
            if verdict.native:
                if self.cache.forget(url, model):
                    self.report.remembered = (
                        "forgot the remembered text mode: sessions use native calls again"
                    )
                return
            if verdict.kind in ("refused", "leaked"):
                reason = "fallback" if verdict.kind == "refused" else "leak"
                self.cache.remember(url, model, Remembered("text", reason, verdict.detail, verdict.formats))
                self.report.remembered = (
                    "sessions with this server and model start in text mode until a doctor run sees "
                    "native tool calls work"
                )
        except OSError as e:
            self.report.remembered = f"could not update the remembered mode ({e})"
