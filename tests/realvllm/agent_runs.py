"""Drive `cli.py -p` and `cli.py doctor` against a real server, and say what the tiny model must write.

Random weights write noise, so every run forces the reply through vLLM's structured outputs: a model
profile in the run's config.json sends `structured_outputs: {"choice": [...]}` in `extra_body`, and
vLLM must answer with one of the listed strings (with a reasoning parser: after `</think>`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servers import SERVED_NAME, VllmServer

CHECKOUT = Path(__file__).resolve().parents[2]
CLI = CHECKOUT / "cli.py"
RUN_TIMEOUT = 600  # seconds for one agent run (a few seconds on an idle machine)


def hermes(name: str, arguments: dict[str, Any]) -> str:
    """A call as Qwen2.5 / Hermes models write it, which vLLM's hermes parser reads."""
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"


def text_call(name: str, args: dict[str, Any]) -> str:
    """A call in the agent's own text protocol."""
    return "TOOL_CALL: " + json.dumps({"name": name, "args": args})


def forced(*choices: str, temperature: float = 0.0, grammar: bool = False, **extra: Any) -> dict[str, Any]:
    """A model profile (config.json `profiles`) whose every reply is one of `choices`.

    vLLM refuses `choice` (also `json`, `regex`) next to a named tool_choice, before it looks at
    tools ("You can only either use constraints for structured outputs or tools, not both"); an
    EBNF `grammar` of the same strings is not refused, so `grammar=True` sends that instead.
    """
    if grammar:
        constraint: dict[str, Any] = {"grammar": "root ::= " + " | ".join(json.dumps(c) for c in choices)}
    else:
        constraint = {"choice": list(choices)}
    body = {"structured_outputs": constraint, **extra}
    return {"match": [SERVED_NAME], "temperature": temperature, "extra_body": body}


def reasoning_then(server: VllmServer, *choices: str, seed: int = 11) -> dict[str, Any]:
    """A profile for server C: some reasoning (noise), `</think>`, then one of `choices`.

    The random model is all but uniform over its ~720 tokens, so it would rarely write `</think>`; a
    small bias on that token ends the reasoning after ~160 sampled tokens (at once: 0.6 %), and a fixed
    seed keeps a run repeatable. The end-of-turn tokens and the markup are barred from the reasoning
    (the grammar that follows `</think>` still ends the reply). The sampling settings are repeated in
    `extra_body`, which the SDK merges last: they hold for the doctor too, which sends temperature 0.
    """
    end, call_open, call_close, think, im_end, eot = server.tokenize(
        "</think><tool_call></tool_call><think><|im_end|><|endoftext|>"
    )
    bias = {str(end): 1.5, **{str(t): -100 for t in (call_open, call_close, think, im_end, eot)}}
    profile = forced(*choices, temperature=1.0, seed=seed, logit_bias=bias)
    profile["extra_body"]["temperature"] = 1.0
    return profile


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str
    workspace: Path

    @property
    def result(self) -> dict[str, Any]:
        """The result object (last stdout line) of `--output-format json|stream-json`."""
        return dict(json.loads(self.stdout.strip().splitlines()[-1]))

    @property
    def events(self) -> list[dict[str, Any]]:
        """Every stream-json line."""
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("type") == kind]

    def trace(self) -> list[dict[str, Any]]:
        """The DEBUG trace records (with --debug)."""
        files = sorted((self.workspace / ".vllm-bot" / "traces").glob("trace-*.jsonl"))
        assert files, f"no trace in {self.workspace}; stderr:\n{self.stderr}"
        return [json.loads(line) for f in files for line in f.read_text().splitlines()]

    def describe(self) -> str:
        return f"exit {self.code}\n--- stdout\n{self.stdout[-4000:]}\n--- stderr\n{self.stderr[-4000:]}"


def write_config(path: Path, server: VllmServer, profile: dict[str, Any] | None, **sections: Any) -> Path:
    """config.json for one run: the server, the forcing profile, and other sections as given."""
    vllm = {"base_url": server.base_url, "model": "auto", **sections.pop("vllm", {})}
    data: dict[str, Any] = {"vllm": vllm, **sections}
    if profile is not None:
        data["profiles"] = {"forced": profile}
    path.write_text(json.dumps(data, indent=2))
    return path


def run_agent(
    workspace: Path,
    server: VllmServer,
    task: str,
    profile: dict[str, Any] | None,
    *flags: str,
    output: str = "json",
    approve: bool = True,
    **sections: Any,
) -> Run:
    """`cli.py -p TASK` in workspace against server, headless, with the given flags; `approve`: --yes."""
    config = write_config(workspace.parent / f"{workspace.name}-config.json", server, profile, **sections)
    command = [sys.executable, str(CLI), "-p", "-", "--workspace", str(workspace), "--config", str(config)]
    command += [*(["--yes"] if approve else []), "--output-format", output, *flags]
    done = subprocess.run(
        command, input=task, capture_output=True, text=True, timeout=RUN_TIMEOUT, cwd=workspace
    )
    return Run(done.returncode, done.stdout, done.stderr, workspace)


def run_doctor(
    workspace: Path, server: VllmServer, profile: dict[str, Any] | None, **sections: Any
) -> tuple[int, dict[str, Any], str]:
    """`cli.py doctor --output-format json`: (exit code, report, stderr)."""
    config = write_config(workspace.parent / f"{workspace.name}-doctor.json", server, profile, **sections)
    command = [sys.executable, str(CLI), "doctor", "--workspace", str(workspace), "--config", str(config)]
    done = subprocess.run(
        [*command, "--output-format", "json"], capture_output=True, text=True, timeout=RUN_TIMEOUT
    )
    assert done.stdout.strip(), f"doctor printed no report (exit {done.returncode}):\n{done.stderr}"
    return done.returncode, json.loads(done.stdout), done.stderr


def check(report: dict[str, Any], check_id: str) -> dict[str, Any]:
    """One row of a doctor report by id."""
    rows = {c["id"]: c for c in report["checks"]}
    assert check_id in rows, f"no {check_id!r} row in {sorted(rows)}"
    return dict(rows[check_id])
