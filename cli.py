#!/usr/bin/env python3
"""Run vLLM Bot from a checkout: `python cli.py --help`."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "src"))

from vllm_bot.app import main

if __name__ == "__main__":
    sys.exit(main())
