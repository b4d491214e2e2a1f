"""A fake model that knows the answers to the doctor's prompts, for the fake vLLM server's auto_reply."""

from vllm_bot.doctor.probes import PROBES
from vllm_bot.testing.script import Call, Reply


def ideal_model(quirks=(), reasoning="17 + 25 = 42.", calls_per_reply=None):
    """`auto_reply` for FakeVLLM: each doctor prompt gets the reply a capable model gives.
    `calls_per_reply` caps the calls in one reply (a model without parallel calls)."""
    answers = {p.prompt: p for p in PROBES.values()}

    def respond(body):
        user = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
        probe = answers[user]
        if probe.expected:
            calls = [Call(name, args) for name, args in probe.expected][:calls_per_reply]
            return Reply(calls=calls, quirks=set(quirks))
        return Reply(content=probe.answer, reasoning=reasoning)

    return respond
