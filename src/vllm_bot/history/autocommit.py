"""git.auto_commit: commit the agent's changes after each turn, never mixed with the user's work.

If the user had uncommitted changes in files the agent then changed, those are committed first, in a
commit of their own. Commits are built with plumbing in a scratch index (no hooks run, nothing else
the user staged is committed); afterwards only the committed paths' entries of the user's index are
updated to match the new HEAD.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .checkpoints import CheckpointStore, Turn, first_line
from .gitrepo import BOT_IDENTITY, GitRepo, git_errors
from .snapshot import changes

CHUNK = 200
IN_PROGRESS = ("MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "rebase-merge", "rebase-apply")


@dataclass
class CommitReport:
    commits: list[str]  # new commits, oldest first
    user_commit: str | None  # the commit of the user's own earlier changes, if one was needed
    skipped: str | None = None  # why nothing was committed


def commit_turn(store: CheckpointStore, turn: Turn) -> CommitReport:
    """Commit what the agent changed in `turn` (start -> end) on the current branch."""
    repo = store.repo
    if repo.private or turn.end is None:
        return CommitReport([], None, "not a git repository" if repo.private else "the turn did not finish")
    busy = [name for name in IN_PROGRESS if (repo.git_dir / name).exists()]
    if busy:
        return CommitReport([], None, f"a git operation is in progress ({busy[0]}); commit by hand")
    paths = [c.path for c in changes(repo, turn.start, turn.end)]
    if not paths:
        return CommitReport([], None, "the turn changed no files")
    head = repo.head()
    wanted = set(paths)
    dirty = [c.path for c in changes(repo, head, turn.start) if c.path in wanted] if head else []
    scratch = store.dir / f"commit-{os.getpid()}.index"
    try:
        repo.run("read-tree", head, index=scratch) if head else repo.run(
            "read-tree", "--empty", index=scratch
        )
        parent, commits, user_commit = head, [], None
        if dirty:
            message = user_message(dirty)
            user_commit = _commit_paths(repo, scratch, turn.start, dirty, parent, message, agent=False)
            commits.append(user_commit)
            parent = user_commit
        agent_commit = _commit_paths(repo, scratch, turn.end, paths, parent, agent_message(turn, paths), True)
        commits.append(agent_commit)
    finally:
        scratch.unlink(missing_ok=True)
    repo.run("update-ref", "-m", "vllm-bot: auto-commit", "HEAD", agent_commit, head or "")
    _sync_user_index(repo, paths)
    turn.head_before, turn.commits = head, commits
    store.save()
    return CommitReport(commits, user_commit)


def _commit_paths(
    repo: GitRepo, index: Path, source: str, paths: list[str], parent: str | None, message: str, agent: bool
) -> str:
    """Set `paths` in the scratch index to their state in `source`, then commit that index."""
    listing = _ls_tree(repo, source, paths)
    present = [f"{mode},{sha},{path}" for path, (mode, sha) in listing.items()]
    absent = [p for p in paths if p not in listing]
    for i in range(0, len(present), CHUNK):
        args = [a for entry in present[i : i + CHUNK] for a in ("--cacheinfo", entry)]
        repo.run("update-index", "--add", *args, index=index)
    for i in range(0, len(absent), CHUNK):
        repo.run("update-index", "--force-remove", "--", *absent[i : i + CHUNK], index=index)
    tree = repo.run("write-tree", index=index).strip()
    args = ["commit-tree", tree, "-m", message] + (["-p", parent] if parent else [])
    return repo.run(*args, env=_identity(repo, agent)).strip()


def _ls_tree(repo: GitRepo, commit: str, paths: list[str]) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    for i in range(0, len(paths), CHUNK):
        text = repo.run("ls-tree", "-r", "-z", "--full-tree", commit, "--", *paths[i : i + CHUNK])
        for record in filter(None, text.split("\0")):
            meta, path = record.split("\t", 1)
            mode, _kind, sha = meta.split(" ")
            out[path] = (mode, sha)
    return out


def _identity(repo: GitRepo, agent: bool) -> dict[str, str]:
    """The agent's commits are authored by vllm-bot; the user's by the user. Without a configured
    identity git would refuse to commit, so vllm-bot's identity fills in."""
    try:
        configured = bool(repo.run("config", "user.email").strip())
    except git_errors()[0]:
        configured = False
    env: dict[str, str] = {}
    if agent or not configured:
        env.update({k: v for k, v in BOT_IDENTITY.items() if k.startswith("GIT_AUTHOR")})
    if not configured:
        env.update(BOT_IDENTITY)
    return env


def _sync_user_index(repo: GitRepo, paths: list[str]) -> None:
    """Only the committed paths: their index entries now match HEAD; everything else stays staged."""
    for i in range(0, len(paths), CHUNK):
        repo.run("reset", "-q", "HEAD", "--", *paths[i : i + CHUNK])


def agent_message(turn: Turn, paths: list[str]) -> str:
    files = "\n".join(f"  {p}" for p in paths[:50])
    more = f"\n  ... and {len(paths) - 50} more" if len(paths) > 50 else ""
    return f"vllm-bot: {first_line(turn.task)}\n\nFiles changed by the agent:\n{files}{more}\n"


def user_message(paths: list[str]) -> str:
    files = "\n".join(f"  {p}" for p in paths)
    return (
        "Your uncommitted changes, before vllm-bot edited these files\n\n"
        "Committed separately by vllm-bot (git.auto_commit) so the agent's commit holds only its work:\n"
        f"{files}\n"
    )


def unwind(store: CheckpointStore, turn: Turn, paths: list[str]) -> str | None:
    """After undoing `turn`: drop its agent commit if it is still HEAD and not pushed. Returns a note
    for the user when the commit has to stay."""
    if not turn.commits:
        return None
    repo = store.repo
    agent_commit = turn.commits[-1]
    if repo.head() != agent_commit:
        return (
            f"the agent's commit {agent_commit[:10]} is no longer HEAD, so it stays in history; the undo "
            "shows as uncommitted changes"
        )
    if repo.run("branch", "-r", "--contains", agent_commit).strip():
        return f"the agent's commit {agent_commit[:10]} was pushed, so it stays; the undo shows as changes"
    target = turn.commits[-2] if len(turn.commits) > 1 else turn.head_before
    if target:
        repo.run("update-ref", "-m", "vllm-bot: undo auto-commit", "HEAD", target, agent_commit)
        _sync_user_index(repo, paths)
    else:
        repo.run("update-ref", "-d", "HEAD", agent_commit)
        for i in range(0, len(paths), CHUNK):
            repo.run("rm", "-q", "--cached", "--ignore-unmatch", "--", *paths[i : i + CHUNK])
    turn.commits = turn.commits[:-1]
    store.save()
    return None
