"""The demo's recorded task: what the scripted model says and calls, step by step.

The model reads the code and the tests, runs the tests, fixes the bug, runs them again and answers.
`pace` scales the streaming speed (1.0: about 25 tokens a second; 0: as fast as possible).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..testing.script import Call, Reply

TASK = "The discount tests fail. Find the bug in shop.py, fix it and run the tests."
TEST_COMMAND = "python3 -m unittest -v"
BUGGY_LINE = "    return total_cents - total_cents * percent\n"
FIXED_LINE = "    return total_cents - total_cents * percent // 100\n"

ANSWER = """## Fixed: discounts were 100 times too large

**Cause:** `apply_discount` in `shop.py` subtracted `total_cents * percent`, so a 10 % discount
took off ten times the whole price.

**Change:** divide by 100; integer division keeps whole cents and rounds down, as the docstring says:

```python
return total_cents - total_cents * percent // 100
```

**Check:** `python3 -m unittest -v` now passes all 4 tests.
"""


def _expect_in_results(*needles: str) -> Callable[[dict[str, Any]], None]:
    """The request carries the results the previous step should have produced."""

    def check(body: dict[str, Any]) -> None:
        text = "\n".join(str(m.get("content") or "") for m in body.get("messages") or [])
        for needle in needles:
            assert needle in text, f"the demo expected {needle!r} in the tool results"

    return check


def demo_script(pace: float = 1.0) -> list[Reply]:
    latency = 0.05 * max(0.0, pace)

    def step(**fields: Any) -> Reply:
        return Reply(chunk_size=5, latency=latency, **fields)

    return [
        step(
            reasoning="The user says the discount tests fail. I should read shop.py and its tests first.",
            content="I'll start by reading the code and its tests.",
            calls=[Call("read", {"path": "shop.py"}), Call("read", {"path": "test_shop.py"})],
        ),
        step(
            content="Let me run the tests to see how they fail.",
            calls=[Call("exec", {"command": TEST_COMMAND})],
            expect=_expect_in_results("def apply_discount", "class ShopTest"),
        ),
        step(
            reasoning=(
                "apply_discount(1000, 10) returned -9000: it subtracts total * percent without dividing "
                "by 100. Integer division keeps cents whole and rounds down, matching the docstring."
            ),
            content="`apply_discount` forgets to divide the percentage by 100. Fixing it:",
            calls=[Call("edit", {"path": "shop.py", "oldText": BUGGY_LINE, "newText": FIXED_LINE})],
            expect=_expect_in_results("FAILED (failures=2)"),
        ),
        step(
            content="Now the tests again.",
            calls=[Call("exec", {"command": TEST_COMMAND})],
            expect=_expect_in_results("+    return total_cents - total_cents * percent // 100"),
        ),
        step(content=ANSWER, expect=_expect_in_results("Ran 4 tests", "OK")),
    ]
