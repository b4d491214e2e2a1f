"""How many calls the parser recovers, per family, on two held-out corpora, and how many false
calls it makes; plus the time to parse the 1 MB runaway reply.

Corpus (a) `corpus/families.yaml`: every vLLM tool-call family. Corpus (b) `corpus/replies.yaml`:
replies of our own, with no-call replies that talk about calls. Corpus (c) `corpus/fresh.yaml`:
written after the parser was tuned on (a) and (b); its first score is in docs/parsing.md.
None is read by the tests.
A call counts as recovered when a parsed call has its name and arguments (or, for an expected
error call, is an error call); every parsed call left over is a false call.

python benchmarks/bench_parsing_corpus.py            # summary table
python benchmarks/bench_parsing_corpus.py --families # recall per family
python benchmarks/bench_parsing_corpus.py --misses   # every case that is not perfect
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml
from bench_parsing import adversarial_reply
from common import row, to_markdown

from vllm_bot.parsing import extract_tool_calls

CORPUS = Path(__file__).parent / "corpus"
CORPORA = (
    ("(a) every family", "families.yaml"),
    ("(b) our replies", "replies.yaml"),
    ("(c) fresh", "fresh.yaml"),
)


def load(name: str) -> list[dict[str, Any]]:
    return yaml.safe_load((CORPUS / name).read_text(encoding="utf-8"))


def _tool_sets() -> dict[str, Any]:
    """The corpora's own tool sets (typed parameters, a single tool), by name."""
    if str(CORPUS) not in sys.path:
        sys.path.insert(0, str(CORPUS))
    from scenarios import TOOL_SETS

    return TOOL_SETS


def score(case: dict[str, Any]) -> tuple[int, int, list[str]]:
    """(calls recovered, false calls, notes) for one case."""
    definitions = _tool_sets().get(case.get("tools", "default"))
    got = list(extract_tool_calls(case["text"], definitions).calls)
    recovered, notes = 0, []
    for want in case["calls"]:
        hit = next((c for c in got if _matches(c, want)), None)
        if hit is None:
            notes.append(f"missed {want}")
            continue
        got.remove(hit)
        recovered += 1
    notes += [f"extra {c.name!r} {c.arguments} {(c.error or '')[:90]!r}" for c in got]
    return recovered, len(got), notes


def _matches(call: Any, want: dict[str, Any]) -> bool:
    if want.get("error"):
        return call.error is not None and call.name in (want["name"], "")
    return call.error is None and call.name == want["name"] and call.arguments == want["args"]


def measure(cases: list[dict[str, Any]]) -> dict[str, Any]:
    by_family: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    quiet = talkative = 0
    misses = []
    for case in cases:
        recovered, false, notes = score(case)
        stats = by_family[case["family"]]
        stats[0] += recovered
        stats[1] += len(case["calls"])
        stats[2] += false
        if not case["calls"]:
            talkative += 1
            quiet += false == 0
        if notes:
            misses.append((case["id"], notes))
    expected = sum(s[1] for s in by_family.values())
    recovered = sum(s[0] for s in by_family.values())
    false = sum(s[2] for s in by_family.values())
    return {
        "cases": len(cases),
        "expected": expected,
        "recovered": recovered,
        "false": false,
        "no_call": talkative,
        "no_call_quiet": quiet,
        "families": dict(by_family),
        "misses": misses,
    }


def _runaway_ms() -> float:
    text = adversarial_reply()
    extract_tool_calls(text[:1000])
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        extract_tool_calls(text)
        best = min(best, time.process_time() - start)
    return best * 1000


def run(quick: bool = False) -> list[dict]:
    rows = []
    for label, name in CORPORA:
        m = measure(load(name))
        share = 100 * m["recovered"] / max(1, m["expected"])
        with_calls = [kv for kv in m["families"].items() if kv[1][1]]
        worst = min(with_calls, key=lambda kv: kv[1][0] / kv[1][1])
        lowest = f"{worst[0]} {worst[1][0]}/{worst[1][1]}"
        note = f"{m['recovered']}/{m['expected']} calls in {m['cases']} cases; lowest: {lowest}"
        rows.append(row(f"corpus {label}: calls recovered", round(share, 1), "%", note))
        rows.append(
            row(f"corpus {label}: false calls", m["false"], "calls", "calls or error calls not expected")
        )
        if m["no_call"]:
            rows.append(
                row(
                    f"corpus {label}: no-call replies left alone",
                    m["no_call_quiet"],
                    f"of {m['no_call']}",
                    "",
                )
            )
    rows.append(
        row("parse the 1 MB runaway reply", round(_runaway_ms(), 1), "ms CPU", "best of 3; target < 50 ms")
    )
    return rows


def main() -> None:
    if "--families" in sys.argv or "--misses" in sys.argv:
        for _, name in CORPORA:
            m = measure(load(name))
            print(f"\n## {name}")
            if "--families" in sys.argv:
                for family, (got, total, false) in sorted(m["families"].items()):
                    print(f"{family:20} {got:3}/{total:<3} false {false}")
            if "--misses" in sys.argv:
                for cid, notes in m["misses"]:
                    print(f"- {cid}: " + "; ".join(notes))
        return
    print(to_markdown(run()))


if __name__ == "__main__":
    main()
