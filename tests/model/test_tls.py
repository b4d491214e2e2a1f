"""TLS for the model client: over https the server's certificate is verified against the trusted
CAs (the SDK's default: SSL_CERT_FILE / SSL_CERT_DIR, else the system's); an untrusted certificate is
refused (fails closed) with the fix. A real https server (the fake vLLM behind TLS, a certificate
made with openssl), real requests, and whole `cli.py -p` runs."""

from __future__ import annotations

import os
import shutil
import ssl
import subprocess
import sys
from pathlib import Path

import openai
import pytest

from vllm_bot.config import VllmConfig
from vllm_bot.conversation import Conversation
from vllm_bot.errors import ServerUnreachable, untrusted_message
from vllm_bot.model.client import ModelClient
from vllm_bot.model.server import Server
from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Reply
from vllm_bot.tools.definitions import TOOL_DEFINITIONS

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")


@pytest.fixture(scope="module")
def certificate(tmp_path_factory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key."""
    where = tmp_path_factory.mktemp("tls")
    cert, key = where / "cert.pem", where / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def https_server(certificate: tuple[Path, Path], script: list[Reply]) -> FakeVLLM:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*certificate)
    return FakeVLLM(script, tls=context)


def chat(server: FakeVLLM) -> str:
    """One streamed chat request through a new client (made now, so it reads the environment now)."""
    body = {"model": server.model, "messages": [{"role": "user", "content": "hi"}], "stream": True}
    stream = Server(server.base_url).chat(body)
    return "".join((c.choices[0].delta.content or "") for c in stream if c.choices)


def test_https_verifies_against_the_trusted_cas(certificate, monkeypatch):
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    with https_server(certificate, [Reply(content="secure")]) as server:
        assert chat(server) == "secure"


def refusal(certificate: tuple[Path, Path]) -> tuple[str, list]:
    """What a chat request to the https server fails with (its causes' text), and what the server
    received meanwhile."""
    with https_server(certificate, [Reply(content="never")]) as server:
        with pytest.raises(openai.APIConnectionError) as caught:
            chat(server)
    return repr(caught.value.__cause__) + repr(caught.value.__context__), server.requests


def test_an_untrusted_certificate_is_refused(certificate, monkeypatch):
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    refused, requests = refusal(certificate)
    assert "CERTIFICATE_VERIFY_FAILED" in refused
    assert requests == []


def test_with_no_trust_store_at_all_nothing_is_trusted(certificate, monkeypatch, tmp_path):
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "missing.pem"))
    refused, requests = refusal(certificate)
    assert "CERTIFICATE_VERIFY_FAILED" in refused
    assert requests == []


def run_cli(server: FakeVLLM, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "ws").mkdir(exist_ok=True)
    argv = [sys.executable, str(ROOT / "cli.py"), "-p", "hi", "--yes", "--workspace", str(tmp_path / "ws")]
    environ = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), **env}
    return subprocess.run(
        [*argv, "--base-url", server.base_url], capture_output=True, text=True, timeout=120, env=environ,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


def test_a_headless_run_against_an_https_server(certificate, tmp_path):
    with https_server(certificate, [Reply(content="Done over TLS.")]) as server:
        trusted = run_cli(server, tmp_path, SSL_CERT_FILE=str(certificate[0]))
        assert trusted.returncode == 0, trusted.stderr
        assert "Done over TLS." in trusted.stdout
        server.assert_done()
        refused = run_cli(server, tmp_path, SSL_CERT_FILE="/nonexistent.pem")
    assert refused.returncode != 0
    assert "presented a TLS certificate this machine does not trust" in refused.stderr, refused.stderr
    assert "SSL_CERT_FILE" in refused.stderr and "vllm serve" not in refused.stderr


def test_the_refusal_names_the_reason_and_the_fix():
    error = (
        "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed certificate (_ssl.c:1006)"
    )
    message = untrusted_message("https://gpu-box:8000/v1", error)
    assert (
        message is not None
        and "(self-signed certificate)" in message
        and "https://gpu-box:8000/v1" in message
    )
    assert untrusted_message("https://gpu-box:8000/v1", "[Errno 111] Connection refused") is None


def test_the_model_client_refuses_an_untrusted_certificate_with_the_fix(certificate, monkeypatch):
    """The SDK's path (a chat request; the model is configured, so /v1/models is not asked first)."""
    monkeypatch.setenv("SSL_CERT_FILE", "/nonexistent.pem")
    with https_server(certificate, [Reply(content="never")]) as server:
        config = VllmConfig(base_url=server.base_url, model=server.model, timeout=10)
        client = ModelClient(config, system_prompt=lambda text_mode, definitions: "SYSTEM")
        conversation = Conversation()
        conversation.add_user("hi")
        with pytest.raises(ServerUnreachable) as caught:
            client.complete(conversation, TOOL_DEFINITIONS, lambda event: None)
    assert "presented a TLS certificate this machine does not trust" in str(caught.value)
    assert server.requests == []
