"""The openai SDK's chat parts load without the package's `__init__` (issue 22): a real request works
through them, nothing else of the SDK is imported, and a later `import openai` finds the same classes.
An SDK laid out otherwise falls back to the plain import. Each case runs in a fresh interpreter."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from vllm_bot.testing.fake_vllm import FakeVLLM
from vllm_bot.testing.script import Reply

ROOT = Path(__file__).resolve().parents[2]

REQUEST = """
import json, sys
sys.path.insert(0, {src!r})
from vllm_bot.model import sdk
chat = sdk.load()
loaded = sorted(m for m in sys.modules if m == "openai" or m.startswith("openai."))
client = chat.OpenAI(base_url={url!r}, api_key="EMPTY", max_retries=0)
body = {{"model": {model!r}, "messages": [{{"role": "user", "content": "hi"}}], "stream": True}}
stream = client.post("/chat/completions", cast_to=chat.ChatCompletion, content=json.dumps(body).encode(),
                     options={{}}, stream=True, stream_cls=chat.Stream[chat.ChatCompletionChunk])
text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
after = sorted(m for m in sys.modules if m == "openai" or m.startswith("openai."))
try:
    client.post("/no-such-path", cast_to=chat.ChatCompletion, content=b"{{}}", options={{}})
    status = None
except chat.APIStatusError as e:
    status = e.status_code
import openai
from openai.types.chat import ChatCompletionChunk
same = [openai.OpenAI is chat.OpenAI, openai.APIStatusError is chat.APIStatusError,
        openai.Stream is chat.Stream, ChatCompletionChunk is chat.ChatCompletionChunk]
print(json.dumps({{"partial": chat.partial, "text": text, "status": status, "same": same,
                  "loaded": len(loaded), "grew": after != loaded, "graders": "openai.types.graders" in loaded}}))
"""


def run(code: str, **env: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env={**os.environ, **env}
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_a_streamed_request_through_the_partly_loaded_sdk():
    with FakeVLLM([Reply(content="Hello there.")]) as server:
        out = run(REQUEST.format(src=str(ROOT / "src"), url=server.base_url, model=server.model))
    assert out["partial"] is True
    assert out["text"] == "Hello there."
    assert out["status"] == 404
    assert out["same"] == [True, True, True, True]  # a later `import openai` reuses what was loaded
    assert out["graders"] is False and out["loaded"] < 150  # `import openai` loads over 500 modules
    assert out["grew"] is False  # the request imported nothing more


FAKE_SDK = {
    "openai/__init__.py": """
        class OpenAIError(Exception): pass
        class APIError(OpenAIError): pass
        class APIStatusError(APIError): pass
        class APIConnectionError(APIError): pass
        class APITimeoutError(APIConnectionError): pass
        class OpenAI: pass
        class Timeout: pass
        class Stream: pass
        from . import types
    """,
    "openai/types/__init__.py": "from . import chat\n",
    "openai/types/chat/__init__.py": "class ChatCompletion: pass\nclass ChatCompletionChunk: pass\n",
}

FALLBACK = """
import json, sys
sys.path.insert(0, {src!r})
from vllm_bot.model import sdk
chat = sdk.load()
import openai
print(json.dumps({{"partial": chat.partial, "same": chat.OpenAI is openai.OpenAI,
                  "file": openai.__file__, "stand_in": not hasattr(openai, "Stream")}}))
"""


def test_an_sdk_laid_out_otherwise_falls_back_to_the_plain_import(tmp_path):
    for name, text in FAKE_SDK.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text))
    out = run(FALLBACK.format(src=str(ROOT / "src")), PYTHONPATH=str(tmp_path))
    assert out["partial"] is False
    assert out["same"] is True and out["stand_in"] is False
    assert out["file"].startswith(str(tmp_path))


WARMED = """
import json, sys
sys.path.insert(0, {src!r})
from vllm_bot.model import sdk
sdk.warm()
chat = sdk.load()
body = json.dumps({{"model": {model!r}, "messages": [{{"role": "user", "content": "hi"}}]}}).encode()
results = []
for key in ("right", "wrong"):  # the first copies the warmed client, the second is made anew
    client = sdk.client(base_url={url!r}, api_key=key, timeout=chat.Timeout(7, connect=3), max_retries=0)
    try:
        reply = client.post("/chat/completions", cast_to=chat.ChatCompletion, content=body,
                            options={{"security": {{"bearer_auth": True}}}})
        results.append(reply.choices[0].message.content)
    except chat.APIStatusError as e:
        results.append(e.status_code)
    results.append([str(client.base_url), client.timeout.read, client.timeout.connect, client.max_retries])
print(json.dumps(results))
"""


def test_the_client_warmed_ahead_takes_the_sessions_url_key_and_timeouts():
    with FakeVLLM([Reply(content="Hi."), Reply(content="unused")], api_key="right") as server:
        code = WARMED.format(src=str(ROOT / "src"), url=server.base_url, model=server.model)
        first, first_options, second, second_options = run(code)
        expected = [server.base_url.rstrip("/") + "/", 7, 3, 0]
    assert first == "Hi." and first_options == expected
    assert second == 401 and second_options == expected
