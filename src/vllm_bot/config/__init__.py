"""The config wing: strict, layered settings (settings.py: the sections as dataclasses; rules.py:
how raw data goes into them, each key, type and rule checked), the layers they are read from and where
each value came from (layers.py), the trust a workspace's own settings need (trust.py), the AGENTS.md
instructions (instructions.py) and our own state directories (statedir.py). The names below are what
the other wings use."""

from .rules import ENV_KEYS, ConfigError, apply_mapping, coerce, field_types, from_env, set_key
from .settings import (
    AgentConfig,
    ApprovalMode,
    Config,
    ContextConfig,
    DelegateConfig,
    GitConfig,
    McpConfig,
    McpServerConfig,
    ProfileConfig,
    SandboxConfig,
    SystemPromptConfig,
    TelemetryConfig,
    ToolsConfig,
    UiConfig,
    VllmConfig,
    load_config,
    to_dict,
)

__all__ = [
    "ENV_KEYS",
    "AgentConfig",
    "ApprovalMode",
    "Config",
    "ConfigError",
    "ContextConfig",
    "DelegateConfig",
    "GitConfig",
    "McpConfig",
    "McpServerConfig",
    "ProfileConfig",
    "SandboxConfig",
    "SystemPromptConfig",
    "TelemetryConfig",
    "ToolsConfig",
    "UiConfig",
    "VllmConfig",
    "apply_mapping",
    "coerce",
    "field_types",
    "from_env",
    "load_config",
    "set_key",
    "to_dict",
]
