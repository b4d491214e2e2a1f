"""`always` on `python -m TOOL`: a known test, lint or format tool is granted like the tool itself (a
prefix); any other module may run anything and is approved only as that exact line (README)."""

import pytest

from vllm_bot.calls import ToolCall
from vllm_bot.safety.policy import Grants, decide, grant_scope, remember


def exec_call(command):
    return ToolCall("1", "exec", {"command": command})


@pytest.mark.parametrize(
    "command, scope",
    [
        ("python3 -m unittest -v", "commands starting with `python3 -m unittest`"),
        ("python -m pytest -x tests/a.py", "commands starting with `python -m pytest`"),
        ("python3 -m mypy src", "commands starting with `python3 -m mypy`"),
        ("python3 -m runpy evil", "exactly `python3 -m runpy evil`"),
        ("python3 -m timeit 'import os'", "exactly `python3 -m timeit 'import os'`"),
        ("python3 -m http.server 8000", "exactly `python3 -m http.server 8000`"),
        ("python3 -m pip install x", "exactly `python3 -m pip install x`"),
        ("python3 script.py", "exactly `python3 script.py`"),
    ],
)
def test_what_always_grants_for_python_modules(command, scope):
    assert str(grant_scope(exec_call(command), mode="ask")) == scope


def test_an_exact_line_grant_covers_only_that_line():
    grants = Grants()
    remember(grants, exec_call("python3 -m code -q"), mode="ask")
    assert decide(exec_call("python3 -m code -q"), "ask", grants).decision == "allow"
    assert decide(exec_call("python3 -m code -i x.py"), "ask", grants).decision == "ask"
    remember(grants, exec_call("python3 -m unittest -v"), mode="ask")
    assert decide(exec_call("python3 -m unittest discover -s tests"), "ask", grants).decision == "allow"
