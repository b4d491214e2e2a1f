"""TLS for the model client (model/tls.py): over https the server's certificate is verified against
the trusted CAs, which are loaded at the first TLS handshake and not when the client is made; an
untrusted certificate is refused (fails closed); over plain http no CA is ever loaded. A real https
server (the fake vLLM behind TLS, a certificate made with openssl), real requests, and whole
`cli.py -p` runs."""

from __future__ import annotations

import json
import os
import shutil
import ssl
import subprocess
import sys
from pathlib import Path

import pytest

from vllm_bot.config import VllmConfig
from vllm_bot.conversation import Conversation
from vllm_bot.errors import ServerUnreachable, untrusted_message
from vllm_bot.model import sdk
from vllm_bot.model.client import ModelClient
from vllm_bot.model.tls import LazyTLSContext, lazy_context, trust_store
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


def chat(client, model: str) -> str:
    chat_sdk = sdk.load()
    body = {"model": model, "messages": [{"role": "user", "content": "hi"}], "stream": True}
    stream = client.post(
        "/chat/completions", cast_to=chat_sdk.ChatCompletion, content=json.dumps(body).encode(),
        options={}, stream=True, stream_cls=chat_sdk.ChunkStream,
    )  # fmt: skip
    return "".join((c["choices"][0]["delta"].get("content") or "") for c in stream if c.get("choices"))


def new_client(base_url: str):
    chat_sdk = sdk.load()
    context = LazyTLSContext()
    http = chat_sdk.HttpClient(base_url=base_url, verify=context)
    return chat_sdk.OpenAI(base_url=base_url, api_key="EMPTY", max_retries=0, http_client=http), context


def test_the_session_client_gets_a_lazy_context_and_plain_http_never_loads_the_cas():
    assert isinstance(lazy_context(), LazyTLSContext)
    client = sdk.client(base_url="http://127.0.0.1:9/v1", api_key="EMPTY", max_retries=0)
    assert isinstance(client._client._transport._pool._ssl_context, LazyTLSContext)
    with FakeVLLM([Reply(content="plain")]) as server:
        client, context = new_client(server.base_url)
        assert chat(client, server.model) == "plain"
    assert not context.trusted and context.cert_store_stats()["x509_ca"] == 0


def test_https_verifies_against_the_trusted_cas_loaded_at_the_first_handshake(certificate, monkeypatch):
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
    with https_server(certificate, [Reply(content="secure"), Reply(content="again")]) as server:
        client, context = new_client(server.base_url)
        assert not context.trusted  # nothing loaded when the client was made
        assert chat(client, server.model) == "secure"
        assert context.trusted and context.cert_store_stats()["x509_ca"] == 1
        assert chat(client, server.model) == "again"
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname


def refusal(certificate: tuple[Path, Path]) -> tuple[str, list]:
    """What a chat request to the https server fails with (its causes' text), and what the server
    received meanwhile."""
    with https_server(certificate, [Reply(content="never")]) as server:
        client, _ = new_client(server.base_url)
        with pytest.raises(sdk.load().APIConnectionError) as caught:
            chat(client, server.model)
    return repr(caught.value.__cause__) + repr(caught.value.__context__), server.requests


def test_an_untrusted_certificate_is_refused(certificate, monkeypatch):
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    refused, requests = refusal(certificate)
    assert "CERTIFICATE_VERIFY_FAILED" in refused
    assert requests == []


def test_with_no_trust_store_at_all_nothing_is_trusted(certificate, monkeypatch, tmp_path):
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "missing.pem"))
    assert trust_store() == (None, None)  # trusts nothing, like OpenSSL's own lookup
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
