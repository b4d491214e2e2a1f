"""Bad argument shapes through `python cli.py -p` and the fake vLLM server: the model gets an error
result that says what to send, and nothing is written or run (issue 4, validation)."""

from pathlib import Path

import pytest
from test_e2e import MODES, expect_in_last, run_cli, sent_text

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Call, Reply


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "project"
    ws.mkdir()
    (ws / "app.py").write_text("x = 1\n")
    return ws


def user_files(ws: Path) -> list[str]:
    return sorted(str(p.relative_to(ws)) for p in ws.rglob("*") if ".vllm-bot" not in p.parts)


@pytest.mark.parametrize("mode", ["native", "no-parser-fallback"])
def test_list_arguments_for_strings_go_back_to_the_model(workspace: Path, mode: str) -> None:
    script = [
        Reply(
            calls=[
                Call("write", {"path": ["a.py"], "content": "print(1)\n"}),
                Call("exec", {"command": ["touch", "made-by-exec"]}),
            ]
        ),
        Reply(
            content="I will send strings next time.",
            expect=expect_in_last(
                '\'path\': expected a string, got a list ["a.py"]; send the string itself: "path": "a.py"',
                "'command': expected a string, got a list",
            ),
        ),
    ]
    with FakeVLLM(script, **MODES[mode]) as server:
        proc = run_cli(workspace, server, "-p", "make a.py", "--yes")
        server.assert_done()
    assert proc.returncode == 0, proc.stderr
    assert user_files(workspace) == ["app.py"]


def test_broken_json_repaired_to_a_list_is_an_error_in_text_mode(workspace: Path) -> None:
    script = [
        Reply(content='TOOL_CALL: {"name": "write", "args": {"content": "x", "path": [[[}}'),
        Reply(content="Sorry.", expect=expect_in_last("'path': expected a string, got a list []")),
    ]
    with FakeVLLM(script) as server:
        proc = run_cli(workspace, server, "-p", "write it", "--yes", "--no-function-calling")
        server.assert_done()
    assert proc.returncode == 0, proc.stderr
    assert user_files(workspace) == ["app.py"]


def test_a_call_cut_by_max_tokens_is_explained_once(workspace: Path) -> None:
    def check(body: dict) -> None:
        text = sent_text(body)
        assert "rest with edit). Expected write(path, content)" in text
        assert "edit).." not in text

    script = [
        Reply(calls=[Call("write", {"path": "big.py", "content": "x = 1\n"})], finish_reason="length"),
        Reply(content="I will write it in parts.", expect=check),
    ]
    with FakeVLLM(script) as server:
        proc = run_cli(workspace, server, "-p", "write big.py", "--yes")
        server.assert_done()
    assert proc.returncode == 0, proc.stderr
    assert user_files(workspace) == ["app.py"]
