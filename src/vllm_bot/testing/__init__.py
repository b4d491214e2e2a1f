"""The scripted fake vLLM server (tests, benchmarks, --demo)."""
