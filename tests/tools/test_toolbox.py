"""build_toolbox: the sandbox hides the config file without changing the config the user sees."""

from __future__ import annotations

import json
from pathlib import Path

from vllm_bot.config import load_config, to_dict
from vllm_bot.tools.toolbox import build_toolbox


def test_the_config_file_is_hidden_from_commands_but_not_added_to_the_config(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"sandbox": {"mode": "off", "hidden_paths": ["~/.x"]}}))
    config = load_config(path, env={})
    workspace = tmp_path / "ws"
    workspace.mkdir()
    toolbox = build_toolbox(config, workspace, workspace / ".vllm-bot")
    try:
        assert path.resolve() in toolbox.sandbox.boundary.hidden
        assert config.sandbox.hidden_paths == ["~/.x"]
        assert to_dict(config)["sandbox"]["hidden_paths"] == ["~/.x"]
    finally:
        toolbox.close()
