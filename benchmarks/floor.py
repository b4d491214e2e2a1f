"""The floor for per-turn overhead: a bare loop that sends the agent's own requests with the openai
SDK and reads every streamed chunk, doing nothing else.

    python benchmarks/floor.py BASE_URL BODIES.jsonl
"""

from __future__ import annotations

import json
import sys

import openai


def main() -> None:
    base_url, bodies = sys.argv[1], sys.argv[2]
    client = openai.OpenAI(base_url=base_url, api_key="EMPTY", max_retries=0)
    with open(bodies) as f:
        requests = [r["body"] for r in map(json.loads, f) if "body" in r]
    for body in requests:
        text, args = [], []
        for chunk in client.chat.completions.create(**body):
            for choice in chunk.choices:
                if choice.delta.content:
                    text.append(choice.delta.content)
                for call in choice.delta.tool_calls or []:
                    if call.function and call.function.arguments:
                        args.append(call.function.arguments)


if __name__ == "__main__":
    main()
