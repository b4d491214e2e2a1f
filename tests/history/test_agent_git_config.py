"""The agent's own git never runs what a repository's config names (issue 15, breach 4 and its class).

Each variant plants one way git config can run a program (filters, textconv, fsmonitor, hooks,
pager, editor, ssh, credential helper, gpg, includes, attributes files, ...) in the user's `.git`, as
a command could with `sandbox.git_writable` or without the sandbox. Then every operation of the
agent's own git runs: checkpoints, the turn-end snapshot, diff, auto-commit, undo (which unwinds the
commit), the CLI's store, the banner's status. Every planted program would touch a marker in a
directory outside the workspace: it must stay empty. The user's own git does run them (checked for
the filter), so the plants are live."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from gitworkspace import git, init_repo, isolate_git

from vllm_bot.config.statedir import workspace_state_dir
from vllm_bot.history.autocommit import commit_turn
from vllm_bot.history.checkpoints import CheckpointStore
from vllm_bot.history.gitrepo import open_repo
from vllm_bot.history.ops import diff_text, store_from_disk, undo_last
from vllm_bot.ui.banner import git_status

RUN = "touch {marks}/{name}; cat"
ATTRS = "* filter=x diff=x merge=x\n"
# name -> (text appended to .git/config, extra files relative to the workspace)
VARIANTS: dict[str, tuple[str, dict[str, str]]] = {
    "filter-clean": ('[filter "x"]\n\tclean = "{run}"\n', {".gitattributes": ATTRS}),
    "filter-smudge": ('[filter "x"]\n\tsmudge = "{run}"\n', {".gitattributes": ATTRS}),
    "filter-process": ('[filter "x"]\n\tprocess = "{run}"\n', {".gitattributes": ATTRS}),
    "filter-required": ('[filter "x"]\n\tclean = "{run}"\n\trequired = true\n', {".gitattributes": ATTRS}),
    "diff-textconv": ('[diff "x"]\n\ttextconv = "{run}"\n', {".gitattributes": ATTRS}),
    "diff-command": ('[diff "x"]\n\tcommand = "{run}"\n', {".gitattributes": ATTRS}),
    "diff-external": ('[diff]\n\texternal = "{run}"\n', {}),
    "merge-driver": ('[merge "x"]\n\tdriver = "{run}"\n', {".gitattributes": ATTRS}),
    "fsmonitor": ('[core]\n\tfsmonitor = "{run}"\n', {}),
    "hooks-path": ("[core]\n\thooksPath = {hooks}\n", {}),
    "pager": ('[core]\n\tpager = "{run}"\n[pager]\n\tdiff = "{run}"\n\tstatus = "{run}"\n', {}),
    "editor": ('[core]\n\teditor = "{run}"\n[sequence]\n\teditor = "{run}"\n', {}),
    "ssh-command": ('[core]\n\tsshCommand = "{run}"\n', {}),
    "askpass": ('[core]\n\taskPass = "{run}"\n', {}),
    "credential-helper": ('[credential]\n\thelper = "!{run}"\n', {}),
    "gpg-sign": ('[gpg]\n\tprogram = "{run}"\n[commit]\n\tgpgSign = true\n', {}),
    "gpg-ssh": ('[gpg]\n\tformat = ssh\n[gpg "ssh"]\n\tprogram = "{run}"\n[commit]\n\tgpgSign = true\n', {}),
    "show-signature": ('[gpg]\n\tprogram = "{run}"\n[log]\n\tshowSignature = true\n', {}),
    "include-path": ("[include]\n\tpath = {ws}/inc.cfg\n", {"inc.cfg": '[filter "x"]\n\tclean = "{run}"\n',
                                                            ".gitattributes": ATTRS}),
    "include-if": ('[includeIf "gitdir:{ws}/"]\n\tpath = {ws}/inc.cfg\n',
                   {"inc.cfg": '[core]\n\tfsmonitor = "{run}"\n'}),
    "attributes-file": ('[core]\n\tattributesFile = {ws}/attrs\n[filter "y"]\n\tclean = "{run}"\n',
                        {"attrs": "* filter=y\n"}),
    "info-attributes": ('[filter "z"]\n\tclean = "{run}"\n\tsmudge = "{run}"\n', {".git/info/attributes": "* filter=z\n"}),
    "alternate-refs": ('[core]\n\talternateRefsCommand = "{run}"\n', {}),
    "pack-objects-hook": ('[uploadpack]\n\tpackObjectsHook = "{run}"\n', {}),
    "git-proxy": ('[core]\n\tgitProxy = "{run}"\n[remote "origin"]\n\turl = git://example.invalid/x\n'
                  '\tuploadpack = "{run}"\n', {}),
    "alias": ('[alias]\n\tstatus = "!{run}"\n\tdiff = "!{run}"\n', {}),
    "worktree-elsewhere": ("[core]\n\tworktree = {marks}\n", {}),
    "difftool": ('[difftool "x"]\n\tcmd = "{run}"\n[diff]\n\ttool = x\n', {}),
}  # fmt: skip
HOOKS = ("post-index-change", "reference-transaction", "pre-commit", "post-commit", "post-checkout",
         "pre-auto-gc", "post-rewrite", "pre-push", "fsmonitor-watchman")  # fmt: skip


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    isolate_git(monkeypatch, tmp_path)


def plant(ws: Path, marks: Path, name: str) -> None:
    config, files = VARIANTS[name]
    hooks = ws.parent / "planted-hooks"
    values = {
        "run": RUN.format(marks=marks, name=name),
        "marks": marks,
        "ws": ws,
        "hooks": hooks,
        "name": name,
    }
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text.format(**values))
    for folder in (hooks, ws / ".git" / "hooks"):
        folder.mkdir(exist_ok=True)
        for hook in HOOKS:
            (folder / hook).write_text(f"#!/bin/sh\ntouch {marks}/hook-{hook}\n")
            (folder / hook).chmod(0o755)
    with (ws / ".git" / "config").open("a") as f:
        f.write(config.format(**values))


def every_operation(ws: Path) -> None:
    """Everything the agent's own git does, start to finish."""
    state = workspace_state_dir(ws)
    store = CheckpointStore(open_repo(ws, state, []), state, "s1")
    store.begin_turn("edit")
    store.ensure_checkpoint()
    (ws / "a.txt").write_text("agent\n")
    (ws / "new.txt").write_text("new\n")
    turn = store.end_turn()
    assert turn is not None
    diff = diff_text(store, whole_session=True, stat=False, color=False)
    assert "agent" in diff
    commit_turn(store, turn)
    assert undo_last(store, ask=None, force=True).done
    assert (ws / "a.txt").read_text() == "original\n" and not (ws / "new.txt").exists()
    later = store_from_disk(ws, None)
    assert later is not None and "No changes" in diff_text(later, whole_session=True, stat=True, color=True)
    git_status(ws)


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_no_program_named_by_the_repository_config_runs(tmp_path: Path, name: str):
    ws = init_repo(tmp_path / "ws", {"a.txt": "original\n"})
    marks = tmp_path / "marks"
    marks.mkdir()
    plant(ws, marks, name)
    every_operation(ws)
    assert sorted(p.name for p in marks.iterdir()) == []


def test_the_plants_are_live_for_the_users_own_git(tmp_path: Path):
    ws = init_repo(tmp_path / "ws", {"a.txt": "original\n"})
    marks = tmp_path / "marks"
    marks.mkdir()
    plant(ws, marks, "filter-clean")
    (ws / "a.txt").write_text("changed\n")
    git(ws, "add", "a.txt")
    assert "filter-clean" in {p.name for p in marks.iterdir()}


def test_a_tampered_store_of_our_own_runs_nothing(tmp_path: Path):
    """Without the sandbox a command may rewrite `.vllm-bot/git` itself: its config is written again
    on every open, foreign files are removed, and a change made after opening is overridden."""
    ws = tmp_path / "plain"
    ws.mkdir()
    (ws / "a.txt").write_text("original\n")
    marks = tmp_path / "marks"
    marks.mkdir()
    run = RUN.format(marks=marks, name="store")
    state = workspace_state_dir(ws)
    store = CheckpointStore(open_repo(ws, state, []), state, "s0")
    store.begin_turn("t")
    store.ensure_checkpoint()
    store.end_turn()
    shadow = state / "git"
    (ws / ".gitattributes").write_text("* filter=x diff=x\n")
    (shadow / "info" / "attributes").write_text("* filter=x\n")
    (shadow / "commondir").write_text(str(tmp_path) + "\n")
    (shadow / "hooks").mkdir(exist_ok=True)
    (shadow / "hooks" / "post-index-change").write_text(f"#!/bin/sh\ntouch {marks}/hook\n")
    (shadow / "hooks" / "post-index-change").chmod(0o755)
    with (shadow / "config").open("a") as f:
        f.write(f'[filter "x"]\n\tclean = "{run}"\n[core]\n\tfsmonitor = "{run}"\n')
    every_operation(ws)  # opens again: config rewritten
    with (shadow / "config").open("a") as f:  # and now after opening, before the next command
        f.write(f'[filter "x"]\n\tclean = "{run}"\n\tsmudge = "{run}"\n[diff "x"]\n\ttextconv = "{run}"\n')
    store.begin_turn("again")
    store.ensure_checkpoint()
    (ws / "a.txt").write_text("second\n")
    store.end_turn()
    assert "second" in diff_text(store, whole_session=True, stat=False, color=False)
    assert undo_last(store, ask=None, force=True).done
    assert sorted(p.name for p in marks.iterdir()) == []


def test_the_users_git_variables_never_reach_our_git(tmp_path: Path, monkeypatch):
    """GIT_DIR, GIT_CONFIG_PARAMETERS, GIT_EXTERNAL_DIFF and friends from our environment are not
    passed on: the agent's git builds its environment from scratch."""
    ws = init_repo(tmp_path / "ws", {"a.txt": "original\n"})
    marks = tmp_path / "marks"
    marks.mkdir()
    run = RUN.format(marks=marks, name="env")
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", run)
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'core.fsmonitor'='{run}'")
    monkeypatch.setenv("GIT_SSH_COMMAND", run)
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "nowhere"))
    every_operation(ws)
    assert sorted(p.name for p in marks.iterdir()) == []
    subprocess.run(["true"], check=True)


def test_a_session_of_an_earlier_version_gets_a_hint_not_a_traceback(tmp_path: Path):
    """Earlier versions kept a repository's snapshots in its own refs: our store cannot read them."""
    import json
    import sys

    ws = init_repo(tmp_path / "ws", {"a.txt": "original\n"})
    state = workspace_state_dir(ws)
    start = git(ws, "write-tree").strip()  # these trees exist in the user's repository only
    (ws / "a.txt").write_text("agent\n")
    git(ws, "add", "a.txt")
    end = git(ws, "write-tree").strip()
    (state / "checkpoints").mkdir(parents=True)
    turn = {"n": 1, "task": "t", "start": start, "started": 1.0, "end": end, "ended": 2.0}
    ledger = {"session": "old", "private": False, "turns": [turn]}
    (state / "checkpoints" / "old.json").write_text(json.dumps(ledger))
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, str(root / "cli.py"), "diff", "--workspace", str(ws)], capture_output=True, text=True
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert (
        "earlier vLLM Bot" in done.stderr
        and "git restore --source=refs/vllm-bot/checkpoints/old/N" in done.stderr
    )
