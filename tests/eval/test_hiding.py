"""What an eval run hides from its tasks and shows them (src/vllm_bot/eval/hiding.py), and what it
records and says about the sandbox."""

import tempfile
from pathlib import Path

import pytest

from vllm_bot.config import SandboxConfig, load_config
from vllm_bot.eval.checks import HARNESS_DIR
from vllm_bot.eval.hiding import checkout_copies, confined, hidden_for, sandbox_record
from vllm_bot.safety.sandbox.status import probe

ROOT = Path(__file__).resolve().parents[2]


def test_a_mode_does_not_see_the_hidden_files_the_other_modes_or_the_checkouts_history(tmp_path):
    out = tmp_path / "eval"
    hidden = hidden_for(out, "text", ["native", "text"])
    assert out / "suite" / "hidden" in hidden and out / "native" in hidden and out / "text" not in hidden
    assert (ROOT / ".git") in hidden  # run from this checkout: its history holds the suite too
    if (ROOT / ".git").is_file():  # a worktree: the repository that holds the objects as well
        assert len(checkout_copies(ROOT)) >= 3


def test_an_installed_package_has_no_checkout_around_it(tmp_path):
    assert checkout_copies(tmp_path) == []


def test_the_config_of_a_mode_hides_and_shows(tmp_path):
    config = load_config(None, overrides={"sandbox.hidden_paths": ["/srv/secret"]})
    mode = confined(config, tmp_path, "native", ["native"])
    assert (
        mode.sandbox.hidden_paths[0] == "/srv/secret"
        and str(tmp_path / "suite" / "hidden") in mode.sandbox.hidden_paths
    )
    assert mode.sandbox.visible_paths == [str(HARNESS_DIR)]
    assert config.sandbox.hidden_paths == ["/srv/secret"]  # the user's config is left alone


@pytest.mark.skipif(not probe(SandboxConfig()).active, reason="needs the sandbox")
def test_an_output_directory_the_sandbox_shows_is_warned_about(tmp_path):
    config = load_config(None)
    assert sandbox_record(config, tmp_path) == {"active": True, "mode": "auto", "warnings": []}
    with tempfile.TemporaryDirectory(dir="/var/tmp") as shown:
        record = sandbox_record(config, Path(shown))
    [warning] = record["warnings"]
    assert "is visible to the agents' commands" in warning and "--output-dir" in warning


def test_without_the_sandbox_the_record_says_so():
    config = load_config(None, overrides={"sandbox.mode": "off"})
    record = sandbox_record(config, Path("/tmp/x"))
    assert record["active"] is False and "hidden tests are hidden" in record["warnings"][0]
