"""git.auto_commit: commit the agent's changes after each turn, never mixed with the user's work.

If the user had uncommitted changes in files the agent then changed, those are committed first, in a
commit of their own. Commits are built with plumbing in a scratch index of the agent's own snapshot
store (which sees the user's objects as an alternate), the new objects are copied into the user's
repository as a pack, and HEAD is moved with `update-ref`; afterwards only the committed paths'
entries of the user's index are set to the new HEAD. Everything that touches the user's repository
runs through safegit (no hooks, filters, gpg or other programs from its config). Paths the user's
repository runs through a filter (Git LFS, git-crypt) are not committed: the snapshot holds their
bytes as they are on disk, not what the filter would store, so the user commits those by hand.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .checkpoints import CheckpointStore, Turn, first_line
from .gitrepo import BOT_IDENTITY, GitRepo, UserRepo
from .safegit import GitFailed, read_user_setting
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
    with store.repo.seeing_user_objects():
        return _commit_turn(store, turn)


def _commit_turn(store: CheckpointStore, turn: Turn) -> CommitReport:
    repo, user = store.repo, store.repo.user
    if user is None or turn.end is None:
        return CommitReport([], None, "not a git repository" if user is None else "the turn did not finish")
    busy = [name for name in IN_PROGRESS if (user.git_dir / name).exists()]
    if busy:
        return CommitReport([], None, f"a git operation is in progress ({busy[0]}); commit by hand")
    paths = [c.path for c in changes(repo, turn.start, turn.end)]
    if not paths:
        return CommitReport([], None, "the turn changed no files")
    filtered = _filtered(user, repo.user_prefix, paths)
    if filtered:
        return CommitReport(
            [], None, f"{filtered[0]} goes through a git filter of your repository; commit it by hand"
        )
    head = user.head()
    wanted = set(paths)
    dirty = [c.path for c in changes(repo, _head_tree(repo, head), turn.start) if c.path in wanted]
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
    _copy_objects(repo, user, agent_commit, head)
    user.run("update-ref", "-m", "vllm-bot: auto-commit", "HEAD", agent_commit, head or "")
    _sync_user_index(user, [repo.user_prefix + p for p in paths])
    turn.head_before, turn.commits = head, commits
    store.save()
    return CommitReport(commits, user_commit)


def _head_tree(repo: GitRepo, head: str | None) -> str:
    """The workspace's part of HEAD's tree (the empty tree without one)."""
    empty = repo.run("hash-object", "-t", "tree", "-w", "--stdin", stdin=b"").strip()
    if head is None:
        return empty
    prefix = repo.user_prefix.rstrip("/")
    try:
        return repo.run(
            "rev-parse", "--verify", "-q", f"{head}^{{tree}}" if not prefix else f"{head}:{prefix}"
        ).strip()
    except GitFailed:
        return empty  # the workspace's folder is new


def _commit_paths(
    repo: GitRepo, index: Path, source: str, paths: list[str], parent: str | None, message: str, agent: bool
) -> str:
    """Set `paths` in the scratch index to their state in `source`, then commit that index."""
    prefix = repo.user_prefix
    listing = _ls_tree(repo, source, paths)
    present = [f"{mode},{sha},{prefix}{path}" for path, (mode, sha) in listing.items()]
    absent = [prefix + p for p in paths if p not in listing]
    for i in range(0, len(present), CHUNK):
        args = [a for entry in present[i : i + CHUNK] for a in ("--cacheinfo", entry)]
        repo.run("update-index", "--add", *args, index=index)
    for i in range(0, len(absent), CHUNK):
        repo.run("update-index", "--force-remove", "--", *absent[i : i + CHUNK], index=index)
    tree = repo.run("write-tree", index=index).strip()
    args = ["commit-tree", "--no-gpg-sign", tree, "-m", message] + (["-p", parent] if parent else [])
    return repo.run(*args, env=_identity(repo.user, agent)).strip()


def _ls_tree(repo: GitRepo, commit: str, paths: list[str]) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    for i in range(0, len(paths), CHUNK):
        text = repo.run("ls-tree", "-r", "-z", "--full-tree", commit, "--", *paths[i : i + CHUNK])
        for record in filter(None, text.split("\0")):
            meta, path = record.split("\t", 1)
            mode, _kind, sha = meta.split(" ")
            out[path] = (mode, sha)
    return out


def _identity(user: UserRepo | None, agent: bool) -> dict[str, str]:
    """The agent's commits are authored by vllm-bot; the user's by the user (as the user's git
    config names them, read without running anything). Without an identity vllm-bot's fills in."""
    place = user.place if user else None
    name, email = read_user_setting(place, "user.name"), read_user_setting(place, "user.email")
    env: dict[str, str] = {}
    if email:
        env.update({"GIT_COMMITTER_NAME": name or email, "GIT_COMMITTER_EMAIL": email})
        if not agent:
            env.update({"GIT_AUTHOR_NAME": name or email, "GIT_AUTHOR_EMAIL": email})
    if agent or not email:
        env.update({k: v for k, v in BOT_IDENTITY.items() if k.startswith("GIT_AUTHOR")})
    if not email:
        env.update(BOT_IDENTITY)
    return env


def _filtered(user: UserRepo, prefix: str, paths: list[str]) -> list[str]:
    """Paths the user's repository would run through a filter (attributes only: reading runs nothing)."""
    out = []
    for i in range(0, len(paths), CHUNK):
        text = user.run("check-attr", "-z", "filter", "--", *(prefix + p for p in paths[i : i + CHUNK]))
        fields = text.split("\0")
        out += [
            fields[j] for j in range(0, len(fields) - 2, 3) if fields[j + 2] not in ("unspecified", "unset")
        ]
    return out


def _copy_objects(repo: GitRepo, user: UserRepo, commit: str, head: str | None) -> None:
    """Copy the new commits, trees and blobs into the user's repository as one pack."""
    listed = repo.run("rev-list", "--objects", commit, *(["--not", head] if head else []))
    names = "".join(line.split(" ", 1)[0] + "\n" for line in listed.splitlines() if line)
    pack = repo.run_bytes("pack-objects", "--stdout", "-q", stdin=names.encode())
    user.runner.run_bytes("index-pack", "--stdin", "--fix-thin", stdin=pack)


def _sync_user_index(user: UserRepo, paths: list[str]) -> None:
    """Only the committed paths (relative to the user's top): their index entries now match HEAD, or
    go when HEAD lacks them; everything else stays staged. Plumbing that never reads the work tree,
    so no filter runs."""
    for i in range(0, len(paths), CHUNK):
        chunk = paths[i : i + CHUNK]
        listed = user.run("ls-tree", "-z", "--full-tree", "HEAD", "--", *chunk)
        records = [r for r in listed.split("\0") if "\t" in r]
        present = {r.split("\t", 1)[1] for r in records}
        entries = [_index_info(r) for r in records]
        entries += [f"0 {'0' * 40}\t{path}" for path in chunk if path not in present]
        feed = "".join(f"{entry}\0" for entry in entries).encode("utf-8", "surrogateescape")
        user.runner.run_bytes("update-index", "-z", "--index-info", stdin=feed)


def _index_info(record: str) -> str:
    """`ls-tree` "mode type sha<TAB>path" -> `update-index --index-info` "mode sha<TAB>path"."""
    meta, path = record.split("\t", 1)
    mode, _kind, sha = meta.split(" ")
    return f"{mode} {sha}\t{path}"


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
    user = store.repo.user
    if not turn.commits or user is None:
        return None
    agent_commit = turn.commits[-1]
    if user.head() != agent_commit:
        return (
            f"the agent's commit {agent_commit[:10]} is no longer HEAD, so it stays in history; the undo "
            "shows as uncommitted changes"
        )
    if user.run("for-each-ref", "--contains", agent_commit, "refs/remotes/").strip():
        return f"the agent's commit {agent_commit[:10]} was pushed, so it stays; the undo shows as changes"
    target = turn.commits[-2] if len(turn.commits) > 1 else turn.head_before
    paths = [store.repo.user_prefix + p for p in paths]  # relative to the top of the user's work tree
    if target:
        user.run("update-ref", "-m", "vllm-bot: undo auto-commit", "HEAD", target, agent_commit)
        _sync_user_index(user, paths)
    else:
        user.run("update-ref", "-d", "HEAD", agent_commit)
        for i in range(0, len(paths), CHUNK):
            user.run("update-index", "--force-remove", "--", *paths[i : i + CHUNK])
    turn.commits = turn.commits[:-1]
    store.save()
    return None
