"""The environment for child commands, built from an allowlist (never a copy of ours minus a few).

Passed: the basics a shell and common toolchains need (PATH, HOME, locale, terminal, temp dir,
virtualenv/conda/pyenv, language toolchain homes, CA bundles, proxies without credentials).
Never passed, even when allowlisted: names that look like secrets (`*KEY*`, `*TOKEN*`, `AWS_*`, ...)
and any value that contains a known secret such as the configured API key. Not passed at all:
SSH_AUTH_SOCK, DBUS_SESSION_BUS_ADDRESS, DISPLAY, XDG_RUNTIME_DIR (ways out of the sandbox),
LD_PRELOAD, BASH_ENV, PROMPT_COMMAND and other variables that make programs run code.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

_ALLOWED_NAMES = """PATH HOME USER LOGNAME USERNAME SHELL LANG LANGUAGE TERM COLORTERM TZ TMPDIR COLUMNS LINES
    NO_COLOR FORCE_COLOR CLICOLOR HOSTNAME VIRTUAL_ENV CONDA_PREFIX CONDA_DEFAULT_ENV CONDA_EXE
    PYENV_ROOT PYENV_VERSION PYTHONPATH PYTHONIOENCODING PYTHONUTF8 JAVA_HOME GOPATH GOROOT GOFLAGS
    GOMODCACHE GOCACHE CARGO_HOME RUSTUP_HOME NVM_DIR NVM_BIN NODE_PATH PNPM_HOME BUN_INSTALL
    DENO_DIR GEM_HOME GEM_PATH SSL_CERT_FILE SSL_CERT_DIR REQUESTS_CA_BUNDLE CURL_CA_BUNDLE
    NODE_EXTRA_CA_CERTS PIP_INDEX_URL UV_INDEX_URL HTTP_PROXY HTTPS_PROXY NO_PROXY ALL_PROXY http_proxy
    https_proxy no_proxy all_proxy CI"""
ALLOWED = frozenset(_ALLOWED_NAMES.split())
ALLOWED_PREFIXES = ("LC_", "XDG_")
NEVER = frozenset({"XDG_RUNTIME_DIR", "XDG_SESSION_ID"})
SECRET_NAME = re.compile(
    r"KEY|SECRET|TOKEN|PASSW|PASSPHRASE|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE|SIGNATURE|^AWS_|^AZURE_|"
    r"^GCP_|^GOOGLE_|^GH_|^GITHUB_|^OPENAI_|^ANTHROPIC_|^HF_|^HUGGING|^VLLM_",
    re.IGNORECASE,
)
_USERINFO = re.compile(r"://[^/@\s]+@")  # credentials inside a URL (proxies, index URLs)
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
MIN_SECRET_LENGTH = 4  # shorter "secrets" (e.g. a placeholder key) would match innocent values


def safe_environment(
    environ: Mapping[str, str],
    *,
    extra_secrets: Iterable[str] = (),
    tmpdir: str | None = None,
) -> dict[str, str]:
    """The child environment: allowlisted names from `environ`, minus secret-looking names and any
    value containing one of `extra_secrets` (e.g. the API key). `tmpdir` sets TMPDIR (the sandbox's
    private /tmp)."""
    secrets = [s for s in extra_secrets if s and len(s) >= MIN_SECRET_LENGTH and s != "EMPTY"]
    env: dict[str, str] = {}
    for name, value in environ.items():
        if not _allowed_name(name):
            continue
        if any(secret in value for secret in secrets) or _USERINFO.search(value):
            continue
        env[name] = value
    env.setdefault("PATH", DEFAULT_PATH)
    if tmpdir is not None:
        env["TMPDIR"] = tmpdir
    return env


def _allowed_name(name: str) -> bool:
    if name in NEVER or SECRET_NAME.search(name):
        return False
    return name in ALLOWED or name.startswith(ALLOWED_PREFIXES)
