"""Keep the conversation inside the model's context window.

Before each request, tool results that have not gone out yet (new ones, or a resumed session's) are
clipped to the window's share, once (clipping.py), and the prompt is measured (tokens.TokenCounter).
Past the threshold (default 80% of the window) the history is compacted in two steps: old tool
results are shrunk to head + tail (oldest first, only as many as it takes, never those of the last
few turns), then the oldest turns are summarized by the model itself into one message. Only if that
is still not enough are the recent turns' results cut harder (never the newest turn's). The system
prompt and the original task stay verbatim. Between compactions the history is append-only, so
vLLM's prefix cache keeps hitting.
"""

from __future__ import annotations

import json
import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..calls import AssistantTurn
from ..config import ContextConfig
from ..conversation import Conversation, ToolResults, UserMessage, summary_block, task_list
from ..errors import ContextOverflow
from .clipping import fit_result, fit_text, recent_start, shrink_results
from .tokens import TokenCounter

MIN_OUTPUT_TOKENS = 256
# The default completion limit (vllm.max_tokens: null): the rest of the window, at most this. Qwen3's
# model card recommends 32768 output tokens for thinking; reasoning models think for thousands.
MAX_OUTPUT_TOKENS = 32768
# The window in vLLM's context errors: "maximum context length is N tokens" (a prompt too long, every
# release) and "max_tokens=M cannot be greater than max_model_len=N" (0.18 and later; 0.18-0.30 print
# "max_model_len=max_total_tokens=N"), which a gateway that hides max_model_len makes the first one.
WINDOW_IN_ERROR = re.compile(
    r"maximum context length is (\d+) tokens|max_model_len=(?:max_total_tokens=)?(\d+)"
)
RESULT_SHARE = 0.3  # of the window left beside the agent's own prompt, for one turn's tool results


def overflow_message(detail: str) -> str:
    return (
        f"The conversation no longer fits the model's context window ({detail}) even after compacting it. "
        "Start a new task with less context, or serve the model with a larger --max-model-len."
    )


def own_prompt_message(window: int, own: int, system: int, tools: int, native: bool) -> str:
    """What is too big when the agent's own prompt leaves no room for an answer, and what to do."""
    if native:
        parts = f"the system prompt ~{system:,}, {tools} tool definitions ~{own - system:,}"
    else:
        parts = f"the system prompt, with {tools} tools described in it"
    return (
        f"The model's context window ({window:,} tokens) is too small for the agent's own prompt: "
        f"~{own:,} tokens ({parts}) plus {MIN_OUTPUT_TOKENS} for the answer, before any task. "
        "Serve the model with a larger --max-model-len, offer fewer MCP tools "
        "(mcp.servers.NAME.enabled_tools, or enabled: false), or lower "
        "system_prompt.instructions_max_tokens (the AGENTS.md files in the system prompt)."
    )


@dataclass
class Compaction:
    before: int
    after: int
    shrunk: int = 0  # tool results shrunk
    summarized: int = 0  # entries folded into the summary

    def describe(self) -> str:
        steps = []
        if self.shrunk:
            steps.append(f"shrank {self.shrunk} old tool results")
        if self.summarized:
            steps.append(f"summarized {self.summarized} earlier messages")
        done = ", ".join(steps) or "nothing to do"
        return f"Compacted the conversation: ~{self.before:,} -> ~{self.after:,} tokens ({done})."


Measure = Callable[[], int]  # tokens of the next request as the conversation stands now
Summarize = Callable[[str], str]  # transcript -> summary (a model request without tools)


class ContextManager:
    def __init__(
        self,
        config: ContextConfig,
        counter: TokenCounter,
        served_window: Callable[[], int | None],
        configured_window: int | None = None,
        max_output: int | None = None,
        server_limit: Callable[[], int | None] = lambda: None,
    ) -> None:
        self.config = config
        self.counter = counter
        self._served = served_window
        self._server_limit = server_limit  # max_model_len from /v1/models: what the server enforces
        self.configured_window = configured_window
        self.max_output = max_output
        self.learned_window: int | None = None  # from the server's own context-length error
        self.own_prompt = 0  # tokens of the system prompt and tools, roughly (the client sets it)
        self._told: int | None = None  # the limit a notice was last given for
        # The tool results entries already clipped (by identity): each is clipped once, so the bytes
        # vLLM's prefix cache holds for it never change between compactions.
        self._clipped: dict[int, weakref.ref[ToolResults]] = {}

    @property
    def window(self) -> int:
        wanted = self.configured_window or self._served() or self.config.assumed_window
        limit = self.limit()
        return min(wanted, limit) if limit else wanted

    @property
    def window_assumed(self) -> bool:
        return not (self.configured_window or self._served() or self.learned_window)

    def limit(self) -> int | None:
        """The window the server enforces, as far as it has said: max_model_len, its error message."""
        known = [n for n in (self._server_limit(), self.learned_window) if n]
        return min(known) if known else None

    def learn(self, message: str) -> bool:
        """Take the true window from vLLM's context-length error; True when it is smaller than ours
        (every tool result is then clipped again, to the smaller window's share)."""
        found = WINDOW_IN_ERROR.search(message)
        window = int(found.group(1) or found.group(2)) if found else None
        if window is None or window >= self.window:
            return False
        self.learned_window = window
        self._clipped.clear()
        return True

    def limit_notice(self) -> str | None:
        """Once per new limit: the window we meant to use is larger than the server's (which is used)."""
        limit = self.limit()
        wanted = self.configured_window or self._served() or self.config.assumed_window
        if not limit or wanted <= limit or self._told == limit:
            return None
        self._told = limit
        if self.configured_window:
            source = "vllm.context_window"
        elif self._served():
            source = "the model profile's context_window"
        else:
            source = "context.assumed_window"
        smaller = f"smaller than {source} ({wanted:,})"
        return f"The server's context window is {limit:,} tokens, {smaller}; using {limit:,}."

    def estimate(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> int:
        """The next request's size for the decisions below: the upper bound while it is far from
        all of them (no server call), the server's own count once it comes near one."""
        rough = self.counter.estimate(messages, tools)
        if self._near(rough.cheap, rough.bound):
            return self.counter.precise(messages, tools)
        return rough.bound

    def measure(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> int:
        """The request's size as exactly as the server can say (compaction, /tokens)."""
        return self.counter.precise(messages, tools)

    def _near(self, cheap: int, bound: int) -> bool:
        """Whether the true size, somewhere between the two, could change a decision: compacting,
        refusing, or the output budget the window leaves (by more than its safety margin)."""
        if self.over_budget(bound) or not self.fits(bound):
            return True
        room = self.window - bound - self._margin()
        return room < (self.max_output or MAX_OUTPUT_TOKENS) and bound - cheap > self._margin()

    def check_own_prompt(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, tool_count: int
    ) -> None:
        """Stop with what to change when the agent's own prompt (`messages`: the system prompt alone)
        and the tools leave no room for an answer: no compaction can help."""
        own = self.estimate(messages, tools)
        if not self.fits(own):
            system = min(own, self.counter.count_text(str(messages[0]["content"])))
            raise ContextOverflow(own_prompt_message(self.window, own, system, tool_count, tools is not None))

    def budget(self) -> int:
        return int(self.window * self.config.compact_threshold)

    def over_budget(self, prompt_tokens: int) -> bool:
        return prompt_tokens > self.budget()

    def fits(self, prompt_tokens: int) -> bool:
        return prompt_tokens + MIN_OUTPUT_TOKENS <= self.window

    def max_tokens(self, prompt_tokens: int) -> int:
        """Completion budget: vllm.max_tokens, or the rest of the window up to MAX_OUTPUT_TOKENS; never
        more than the window leaves (with a small safety margin for the token estimate)."""
        room = self.window - prompt_tokens - self._margin()
        wanted = self.max_output or MAX_OUTPUT_TOKENS
        return max(1, min(wanted, room))

    def _margin(self) -> int:
        return 16 + self.window // 50

    def result_budget(self) -> int:
        """Tokens one turn's tool results may take: a share of the window the agent's own prompt leaves,
        so one big output (a 50 KB file, a long log) can never overflow a small context on its own."""
        return max(64, int((self.window - self.own_prompt) * RESULT_SHARE))

    def clip_results(self, conversation: Conversation) -> int:
        """Clip every tool results entry not clipped before (added since the last request, or loaded
        by a resume) to the window's share, each result by its own size, whatever follows it. An
        entry clipped before is left alone. Returns how many results were cut."""
        clipped, seen = 0, {}
        for entry in conversation.entries:
            if not isinstance(entry, ToolResults) or not entry.results:
                continue
            ref = self._clipped.get(id(entry))
            if ref is None or ref() is not entry:
                each = self.result_budget() // len(entry.results)
                for i, result in enumerate(entry.results):
                    shorter = fit_result(result, each, self.counter.count_text)
                    if shorter is not None:
                        entry.results[i], clipped = shorter, clipped + 1
                ref = weakref.ref(entry)
            seen[id(entry)] = ref
        self._clipped = seen  # entries compaction dropped are forgotten
        return clipped

    # -- compaction -----------------------------------------------------------------------------

    def compact(
        self, conversation: Conversation, measure: Measure, summarize: Summarize, *, force: bool = False
    ) -> Compaction:
        """Shrink, then summarize, until the next request is under budget (or `force`: always summarize).
        Old tool results are cut oldest first and only as many as needed, so the prefix vLLM has cached
        changes as little as possible."""
        budget = self.budget()
        result = Compaction(before=measure(), after=0)

        def under_budget() -> bool:
            return measure() <= budget

        def summarize_fitted(transcript: str) -> str:  # about half the window, however dense the text
            return summarize(fit_text(transcript, self.window // 2, self.counter.count_text))

        keep, chars = self.config.keep_recent_turns, self.config.shrink_results_to
        if result.before > budget or force:
            result.shrunk = shrink_results(conversation, keep, chars, None if force else under_budget)
        if force or not under_budget():
            result.summarized = summarize_old_turns(
                conversation, keep, summarize_fitted, self._transcript_chars()
            )
        if not under_budget():  # last resort: the turns before the newest one, harder
            result.shrunk += shrink_results(conversation, 1, chars // 4, under_budget)
        result.after = measure()
        return result

    def _transcript_chars(self) -> int:
        """How much old conversation text one summary request may carry."""
        return int(self.window * 0.5 * self.counter.chars_per_token)

    def breakdown(
        self, system: str, tools: list[dict[str, Any]] | None, conversation: Conversation
    ) -> dict[str, int]:
        """Where the tokens go, for /tokens."""
        count = self.counter.count_text
        parts = {
            "system prompt": count(system),
            "tool definitions": count(json.dumps(tools)) if tools else 0,
            "user messages": 0,
            "assistant messages": 0,
            "tool results": 0,
            "summaries": 0,
        }
        for entry in conversation.entries:
            if isinstance(entry, UserMessage):
                parts["summaries" if entry.kind == "summary" else "user messages"] += count(entry.content)
            elif isinstance(entry, AssistantTurn):
                args = " ".join(json.dumps(c.arguments) for c in entry.tool_calls)
                parts["assistant messages"] += count(entry.content + args)
            else:
                parts["tool results"] += sum(count(r.as_text()) for r in entry.results)
        return parts


def summarize_old_turns(
    conversation: Conversation, keep_turns: int, summarize: Summarize, max_chars: int
) -> int:
    """Replace the turns between the first task and the recent ones with one summary message."""
    entries = conversation.entries
    first_task = next(
        (i for i, e in enumerate(entries) if isinstance(e, UserMessage) and e.kind == "task"), None
    )
    if first_task is None:
        return 0
    stop = recent_start(entries, keep_turns)
    old = entries[first_task + 1 : stop]
    if not old:
        return 0
    summary = summarize(render_transcript(old, max_chars)).strip() + summary_block(task_list(entries))
    latest_task = [e for e in old if isinstance(e, UserMessage) and e.kind == "task"][-1:]
    replacement: list[Any] = [
        UserMessage("Summary of the work so far (earlier messages were compacted):\n" + summary, "summary")
    ]
    conversation.entries = [*entries[: first_task + 1], *replacement, *latest_task, *entries[stop:]]
    return len(old)


def render_transcript(entries: list[Any], max_chars: int) -> str:
    """Plain text of old entries for the summary request, each tool result capped, the whole bounded."""
    lines: list[str] = []
    for entry in entries:
        if isinstance(entry, UserMessage):
            lines.append(f"USER ({entry.kind}): {entry.content}")
        elif isinstance(entry, AssistantTurn):
            calls = "; ".join(
                f"{c.name}({json.dumps(c.arguments, ensure_ascii=False)[:300]})" for c in entry.tool_calls
            )
            lines.append(f"ASSISTANT: {entry.content}" + (f"\nCALLS: {calls}" if calls else ""))
        elif isinstance(entry, ToolResults):
            for r in entry.results:
                text = r.as_text()
                text = text if len(text) <= 1500 else text[:700] + "\n[...]\n" + text[-700:]
                lines.append(f"RESULT of {r.name}{' (error)' if r.is_error else ''}: {text}")
    transcript = "\n\n".join(lines)
    if len(transcript) > max_chars:
        half = max(1, max_chars // 2)
        transcript = (
            transcript[:half] + "\n\n[... middle of the transcript omitted ...]\n\n" + transcript[-half:]
        )
    return transcript
