"""`vllm-bot acp`: vLLM Bot as an editor's agent over the Agent Client Protocol (docs/acp.md).

`cli.py` is the sub-command, `server.py` the SDK's agent interface, `sessions.py` one editor session on
our Session, `front.py` its front end (events -> `updates.py`, approval -> `permission.py`),
`worker.py` the main thread that runs the sessions (where Ctrl-C reaches them), `stdio.py` the protocol's
own stdin/stdout. Nothing here is imported unless the sub-command runs.
"""
