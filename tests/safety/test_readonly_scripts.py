"""sed and awk scripts are read-only only when every argument is known before the command runs."""

import pytest

from vllm_bot.safety.readonly import why_not_read_only


@pytest.mark.parametrize("tool", ["sed", "awk", "gawk", "mawk"])
def test_an_argument_known_only_at_run_time_is_not_read_only(tool):
    assert why_not_read_only(f'{tool} "$SCRIPT" a.txt') == f"`{tool}` gets an argument only known at run time"
    assert (
        why_not_read_only(f"{tool} -n $(cat prog) a.txt")
        == f"`{tool}` gets an argument only known at run time"
    )


@pytest.mark.parametrize(
    ("command", "read_only"),
    [("sed -n '1,5p' a.txt", True), ("sed -i 's/a/b/' a.txt", False), ("gawk '{print $2}' a", True)],
)
def test_a_known_script_is_judged_by_its_text(command, read_only):
    assert (why_not_read_only(command) is None) is read_only
