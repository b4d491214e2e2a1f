"""The model wing: everything about talking to vLLM — requests and their wire form, streaming,
native vs text tool calling and the fallback between them, retries, the context window, token
counts, model profiles, server telemetry and the DEBUG trace."""
