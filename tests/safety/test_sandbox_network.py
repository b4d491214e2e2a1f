"""Network isolation: connections to a listener on the host's 127.0.0.1 never arrive from inside."""

from __future__ import annotations

import shutil

import pytest
from sandbox_helpers import Layout, Listener, child_env, needs_bwrap, run

from vllm_bot.config import SandboxConfig
from vllm_bot.safety.sandbox import Sandbox, probe

pytestmark = needs_bwrap

PY = "python3 -c"
TCP = f"{PY} \"import socket; socket.create_connection(('127.0.0.1', {{port}}), 3).sendall(b'tcp')\""
UDP = (
    f'{PY} "import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); '
    f"s.connect(('127.0.0.1', {{udp}})); s.send(b'udp')\""
)
# (command, must exit non-zero): a UDP send "succeeds" into the sandbox's own loopback, so for UDP
# only the listener's count proves anything.
TECHNIQUES = [
    (TCP, True),
    (f"{PY} \"import urllib.request as u; u.urlopen('http://127.0.0.1:{{port}}/', timeout=3)\"", True),
    (UDP, False),
    (f"{PY} \"import socket; socket.create_connection(('1.1.1.1', 53), 3)\"", True),
    (f"{PY} \"import socket; socket.getaddrinfo('example.com', 80)\"", True),
    ("echo exfil > /dev/tcp/127.0.0.1/{port}", True),
    ("echo exfil > /dev/udp/127.0.0.1/{udp}", False),
    ("curl -s -m 3 http://127.0.0.1:{port}/", True),
    ("curl -s -m 3 -d @/etc/hostname http://127.0.0.1:{port}/", True),
    ("wget -q -T 3 -t 1 -O - http://127.0.0.1:{port}/", True),
    ("git clone -q http://127.0.0.1:{port}/repo.git cloned", True),
    ("git ls-remote http://127.0.0.1:{port}/repo.git", True),
]


@pytest.fixture
def listener():
    listener = Listener()
    yield listener
    listener.close()


@pytest.mark.parametrize(("template", "must_fail"), TECHNIQUES)
def test_no_connection_leaves_the_sandbox(layout: Layout, listener: Listener, template: str, must_fail: bool):
    if template.split()[0] in ("curl", "wget") and not shutil.which(template.split()[0]):
        pytest.skip(f"{template.split()[0]} is not installed")
    with Sandbox(layout.ws, SandboxConfig(), probe(SandboxConfig()), home=layout.home) as sandbox:
        command = template.format(port=listener.port, udp=listener.udp_port)
        result = run(sandbox, command, child_env(layout, sandbox))
    listener.settle()
    assert result.returncode != 0 or not must_fail, f"{command!r} succeeded"
    assert (listener.connections, listener.datagrams) == (0, 0)


def test_network_true_lets_connections_through(layout: Layout, listener: Listener):
    """The same listener does see traffic when sandbox.network is true: the test above can fail."""
    config = SandboxConfig(network=True)
    status = probe(config)
    assert "network off" not in status.layers and "network ALLOWED" in status.describe()
    with Sandbox(layout.ws, config, status, home=layout.home) as sandbox:
        result = run(sandbox, TCP.format(port=listener.port), child_env(layout, sandbox))
        assert result.returncode == 0, result.stderr
        run(sandbox, UDP.format(udp=listener.udp_port), child_env(layout, sandbox))
    listener.settle()
    assert listener.connections == 1 and listener.datagrams == 1
    assert b"tcp" in listener.received and b"udp" in listener.received
