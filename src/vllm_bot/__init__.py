"""vLLM Bot: an autonomous coding agent for local models served by vLLM."""

__version__ = "0.1.0"
