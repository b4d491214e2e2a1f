"""Sandboxed execution: commands run inside bubblewrap, confined to the workspace.

Wiring (see docs/sandbox.md):
    status = probe(cfg.sandbox)                      # once; status.describe() for the banner
    sandbox = Sandbox(workspace, cfg.sandbox, status)
    argv = sandbox.wrap(["bash", "-c", command])     # SandboxUnavailable in bwrap mode without bwrap
    env = safe_environment(os.environ, extra_secrets=[api_key], tmpdir=sandbox.tmpdir)
    ...
    sandbox.close()                                  # at exit
"""

from vllm_bot.safety.sandbox.bwrap import Sandbox, SandboxUnavailable
from vllm_bot.safety.sandbox.env import safe_environment
from vllm_bot.safety.sandbox.paths import is_protected, protected_paths
from vllm_bot.safety.sandbox.status import SandboxStatus, probe

__all__ = [
    "Sandbox",
    "SandboxStatus",
    "SandboxUnavailable",
    "is_protected",
    "probe",
    "protected_paths",
    "safe_environment",
]
