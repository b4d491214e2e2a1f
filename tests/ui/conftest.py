"""Fixtures of the UI tests: a real terminal (tmux) running the session against the fake server."""

import pytest
from tmux_terminal import Terminal


@pytest.fixture
def terminal(tmp_path):
    """start(server, *flags, width=, height=, env=, size_env=) -> (Terminal, workspace), at the first
    prompt."""
    terminals = []

    def start(server, *args, width=110, height=45, env=None, ready="Ctrl-C stops", size_env=True):
        ws = tmp_path / "project"
        ws.mkdir(exist_ok=True)
        url = ["--base-url", server.base_url] if server is not None else []
        term = Terminal(tmp_path, ["--workspace", str(ws), *url, *args], width, height, env, size_env)
        terminals.append(term)
        if ready:
            term.wait_for("\n>", after=ready)  # the banner's last line, then the prompt
        return term, ws

    yield start
    for term in terminals:
        term.close()
