"""One boundary, every enforcer (issue 32): in a lived-in home, for the workspace outside $HOME, at
`~/proj` and at `~` itself, the file tools (through the approval gate, full-auto, nobody to ask) and a
sandboxed command give the same answer for every path of the table, and the answer is the expected
one. What "answer" means is the effect: the read tool returns the file / `cat` prints it; the write
tool changes it / a command's `>>` changes it (a change put back after the command counts as none)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from lived_in_home import CANARY, Home
from sandbox_helpers import needs_bwrap

from vllm_bot.calls import ToolCall
from vllm_bot.config import load_config
from vllm_bot.safety.approval import ApprovalGate
from vllm_bot.safety.boundary import build
from vllm_bot.tools.toolbox import build_toolbox

pytestmark = needs_bwrap

# (label, path relative to $HOME or to the workspace "ws:", readable, writable) for a workspace at
# ~/proj; the other two places change some answers (WHERE below).
TABLE = [
    ("a workspace file", "ws:notes.txt", True, True),
    ("a new workspace file", "ws:new.txt", None, True),
    ("an ssh key", ".ssh/id_rsa", False, False),
    ("authorized_keys", ".ssh/authorized_keys", False, False),
    ("aws credentials", ".aws/credentials", False, False),
    ("netrc", ".netrc", False, False),
    ("terraformrc", ".terraformrc", False, False),
    ("copilot token", ".config/github-copilot/hosts.json", False, False),
    ("codex auth", ".codex/auth.json", False, False),
    ("yarnrc", ".yarnrc.yml", False, False),
    ("maven settings", ".m2/settings.xml", False, False),
    ("shell history", ".bash_history", False, False),
    ("bashrc", ".bashrc", False, False),
    ("profile", ".profile", False, False),
    ("gitconfig", ".gitconfig", False, False),
    ("the user config", ".config/vllm-bot/config.json", False, False),
    ("the trust store", ".local/state/vllm-bot/trusted-workspaces.json", False, False),
    ("the project config", "ws:.vllm-bot/config.json", True, False),
    (".mcp.json", "ws:.mcp.json", True, False),
    ("git config", "ws:.git/config", True, False),
    ("a new git hook", "ws:.git/hooks/pre-commit", None, False),
    ("AGENTS.md (full-auto may)", "ws:AGENTS.md", True, True),
    ("a note in $HOME", "notes.txt", False, False),
    ("a new file at the top of $HOME", "new-top.txt", None, False),
    ("a new file in ~/proj", "proj/new-in-proj.txt", None, True),
    # toolchains under $HOME: commands see them read-only, so the file tools never change them either
    # (at `~` too, where they are inside the workspace); reading differs by place, so it is not asked
    ("a program on PATH", "bin/backup", None, False),
    ("a conda's site-packages", "miniconda3/lib/python3.12/site-packages/tool.pth", None, False),
]
# What differs where: the workspace outside $HOME has no repository; at `~` the dot entries at the
# top of $HOME (the project config and .mcp.json among them) are out of reach, `~/notes.txt` is in.
WHERE = {
    "elsewhere": {"git config": None, "a new git hook": None, "a new file in ~/proj": (None, False)},
    "proj": {},
    "home": {
        "the project config": (False, False),
        ".mcp.json": (False, False),
        "a note in $HOME": (True, True),
        "a new workspace file": (None, False),
        "git config": None,
        "a new git hook": None,
    },
}


def workspace_of(home: Home, where: str) -> Path:
    return {"elsewhere": home.elsewhere, "proj": home.proj, "home": home.root}[where]


def cases(where: str):
    for label, rel, readable, writable in TABLE:
        change = WHERE[where].get(label, (readable, writable))
        if change is not None:
            yield pytest.param(label, rel, *change, id=f"{where}-{label}")


class Tools:
    """The session's file tools, gate and sandbox, as Session builds them, for one workspace."""

    def __init__(self, home: Home, ws: Path) -> None:
        config = load_config(None, env=home.env, workspace=ws)
        config.sandbox.mode = "bwrap"
        self.boundary = build(ws, config, env=home.env, state_dirs=[ws / ".vllm-bot"])
        self.box = build_toolbox(config, ws, ws / ".vllm-bot", self.boundary)
        self.ex = self.box.executor
        self.gate = ApprovalGate(
            "full-auto", None, path_rule=lambda p, write: self.ex.context.paths.rule(p, write=write)
        )

    def read(self, path: Path) -> bool:
        result = self.ex.execute("read", {"path": str(path)})
        return result.kind == "text"

    def cat(self, path: Path) -> bool:
        return self.ex.execute("exec", {"command": f"cat {shlex.quote(str(path))}"}).kind == "text"

    def write(self, path: Path) -> bool:
        call = ToolCall("c1", "write", {"path": str(path), "content": "changed by write\n"})
        if self.gate(call) is None:
            self.ex.execute("write", call.arguments)
        return _holds(path, "changed by write")

    def append(self, path: Path) -> bool:
        self.ex.execute("exec", {"command": f"echo changed by a command >> {shlex.quote(str(path))}"})
        return _holds(path, "changed by a command")


def _holds(path: Path, text: str) -> bool:
    try:
        return text in path.read_text()
    except OSError:
        return False


def resolve(home: Home, ws: Path, rel: str) -> Path:
    return ws / rel[3:] if rel.startswith("ws:") else home.root / rel


@pytest.fixture
def tools(lived_in: Home, request):
    where = request.param
    ws = workspace_of(lived_in, where)
    (ws / ".vllm-bot").mkdir(exist_ok=True)
    (ws / ".vllm-bot" / "config.json").write_text('{"ui": {}}\n')
    (ws / ".mcp.json").write_text('{"mcpServers": {}}\n')
    (ws / "AGENTS.md").write_text("# rules\n")
    tools = Tools(lived_in, ws)
    yield lived_in, ws, tools
    tools.box.close()


def check(tools_fixture, label: str, rel: str, readable: bool | None, writable: bool) -> None:
    home, ws, tools = tools_fixture
    path = resolve(home, ws, rel).resolve()
    if readable is not None:
        read, cat = tools.read(path), tools.cat(path)
        assert (read, cat) == (readable, readable), f"{label}: read {read}, cat {cat}"
    before = path.read_bytes() if path.is_file() else None
    wrote = tools.write(path)
    if path.is_file() and before is not None:
        path.write_bytes(before)
    elif path.exists() and before is None and path.is_file():
        path.unlink()
    appended = tools.append(path)
    assert (wrote, appended) == (writable, writable), f"{label}: write {wrote}, command {appended}"
    assert CANARY not in "".join(tools.ex.context.seen.__dict__.keys())  # nothing of a secret kept


@pytest.mark.parametrize("tools", ["elsewhere"], indirect=True)
@pytest.mark.parametrize(("label", "rel", "readable", "writable"), list(cases("elsewhere")))
def test_outside_home(tools, label, rel, readable, writable):
    check(tools, label, rel, readable, writable)


@pytest.mark.parametrize("tools", ["proj"], indirect=True)
@pytest.mark.parametrize(("label", "rel", "readable", "writable"), list(cases("proj")))
def test_in_a_project_under_home(tools, label, rel, readable, writable):
    check(tools, label, rel, readable, writable)


@pytest.mark.parametrize("tools", ["home"], indirect=True)
@pytest.mark.parametrize(("label", "rel", "readable", "writable"), list(cases("home")))
def test_at_home(tools, label, rel, readable, writable):
    check(tools, label, rel, readable, writable)


@pytest.mark.parametrize("tools", ["elsewhere", "proj", "home"], indirect=True)
def test_a_new_mcp_json_is_never_the_models(tools):
    home, ws, t = tools
    (ws / ".mcp.json").unlink()
    assert not t.write(ws / ".mcp.json")
    result = t.ex.execute("exec", {"command": "echo '{}' > .mcp.json; echo made"})
    assert not (ws / ".mcp.json").exists()
    if ws != home.root:  # at ~ the sandbox's read-only top of $HOME refuses it at once
        assert "made" in result.value and "rule agent-config" in result.value, result.value


def test_a_read_only_workspace_is_a_kernel_fact(lived_in: Home):
    """Plan mode's boundary (issue 37): commands run, but nothing in the workspace can change, whatever
    the command line says; the file tools refuse with the rule's name; /tmp stays writable."""
    import dataclasses

    tools = Tools(lived_in, lived_in.proj)
    try:
        tools.box.set_boundary(dataclasses.replace(tools.boundary, workspace_read_only=True))
        result = tools.ex.execute(
            "exec",
            {"command": "cat notes.txt; echo x > /tmp/ok && echo tmp-ok; echo x >> notes.txt; mkdir d"},
        )
        assert "notes of proj" in result.value and "tmp-ok" in result.value
        assert result.value.count("Read-only file system") == 2, result.value
        refused = tools.ex.execute("write", {"path": "new.txt", "content": "x"})
        assert refused.kind == "error" and "rule read-only" in refused.value
        assert not (lived_in.proj / "new.txt").exists() and not (lived_in.proj / "d").exists()
    finally:
        tools.box.close()
