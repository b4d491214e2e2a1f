"""Project instructions on real files: which AGENTS.md files are read and in what order, the token
budget (nearest served first, a cut said in the prompt and the summary), and the system prompt."""

import subprocess
from pathlib import Path

import pytest

from vllm_bot.config import SystemPromptConfig
from vllm_bot.config.instructions import instruction_stamp, load_instructions, repository_root
from vllm_bot.prompts import SystemPrompts


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def test_files_from_the_user_and_the_repository_root_down_to_the_workspace(tmp_path, repo):
    user = tmp_path / "xdg" / "vllm-bot"
    write(user / "AGENTS.md", "Answer in British English.\n")
    write(tmp_path / "AGENTS.md", "Above the repository: never read.\n")
    write(repo / "AGENTS.md", "Run the tests with make test.\n")
    write(repo / "pkg" / "AGENTS.md", "pkg: keep functions short.\n")
    ws = repo / "pkg" / "sub"
    ws.mkdir()
    found = load_instructions(ws, 4000, user_dir=user)
    assert [f.label for f in found.files] == [str(user / "AGENTS.md"), "../../AGENTS.md", "../AGENTS.md"]
    section = found.section
    assert "never read" not in section
    assert section.index("British") < section.index("make test") < section.index("keep functions short")
    assert not any(f.cut for f in found.files) and found.problems == []
    assert "../AGENTS.md (~7 tokens)" in found.summary()
    assert repository_root(ws) == repo


def test_the_sandboxs_empty_git_stand_in_is_not_a_repository_root(repo):
    """A folder of a repository keeps its root while the sandbox masks the folder's missing `.git`
    with an empty one; a `.git` with anything in it is a repository (even a broken one)."""
    ws = repo / "pkg"
    (ws / ".git").mkdir(parents=True)
    assert repository_root(ws) == repo
    (ws / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    assert repository_root(ws) == ws


def test_without_a_repository_only_the_workspace_file_is_read(tmp_path):
    write(tmp_path / "AGENTS.md", "parent\n")
    ws = tmp_path / "ws"
    write(ws / "AGENTS.md", "here\n")
    found = load_instructions(ws, 4000, user_dir=tmp_path / "nouser")
    assert [f.label for f in found.files] == ["AGENTS.md"]


def test_over_budget_the_nearest_is_kept_and_the_farther_one_is_cut_and_says_so(tmp_path, repo):
    far = "".join(f"Root rule {i}: be careful with module {i}.\n" for i in range(200))  # ~2,000 tokens
    write(repo / "AGENTS.md", far)
    ws = repo / "app"
    write(ws / "AGENTS.md", "App rule: use the logger, never print.\n")
    found = load_instructions(ws, 300, user_dir=tmp_path / "nouser")
    root_file, app_file = found.files
    assert not app_file.cut and app_file.text.startswith("App rule")
    assert root_file.cut and 0 < root_file.tokens <= 300 - app_file.tokens
    assert sum(f.tokens for f in found.files) <= 300
    assert "Root rule 0:" in root_file.text and "Root rule 199" not in root_file.text
    assert f"cut here: the whole file is ~{root_file.full_tokens:,} tokens" in root_file.text
    assert str(repo / "AGENTS.md") in root_file.text  # where the rest is
    assert "../AGENTS.md (cut: ~" in found.summary()
    tiny = load_instructions(ws, 12, user_dir=tmp_path / "nouser")
    assert tiny.files[0].text == "" and "left out" in tiny.summary()
    assert "Root rule" not in tiny.section


def test_a_budget_of_zero_reads_nothing(tmp_path, repo):
    write(repo / "AGENTS.md", "rule\n")
    found = load_instructions(repo, 0, user_dir=tmp_path / "nouser")
    assert found.files == [] and found.section == "" and found.summary() == ""


def test_a_link_to_a_file_outside_the_repository_is_not_read(tmp_path, repo):
    secret = write(tmp_path / "secret.txt", "PRIVATE KEY\n")
    (repo / "AGENTS.md").symlink_to(secret)
    found = load_instructions(repo, 4000, user_dir=tmp_path / "nouser")
    assert found.section == ""
    assert found.problems == [f"AGENTS.md not read: it links outside {repo.resolve()}"]


def test_the_stamp_changes_when_a_file_is_added_or_edited(tmp_path, repo):
    before = instruction_stamp(repo, tmp_path / "nouser")
    path = write(repo / "AGENTS.md", "one\n")
    added = instruction_stamp(repo, tmp_path / "nouser")
    assert added != before
    path.write_text("one, and two\n")
    assert instruction_stamp(repo, tmp_path / "nouser") != added


def test_the_system_prompt_carries_the_instructions_and_renders_them_again_when_they_change(repo, tmp_path):
    write(repo / "AGENTS.md", "Use tabs, not spaces.\n")
    found = load_instructions(repo, 4000, user_dir=tmp_path / "nouser")
    prompts = SystemPrompts(SystemPromptConfig(), str(repo), found.section)
    text = prompts(False, [])
    assert "## Project instructions" in text and "### AGENTS.md\nUse tabs, not spaces." in text
    assert text.index("Workspace:") < text.index("Use tabs")
    prompts.set_instructions("")
    assert "Use tabs" not in prompts(False, [])
