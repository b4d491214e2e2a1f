"""Packaging glue pyproject.toml cannot express: ship the top-level prompts/ inside the package, and
list the data-only folders (resources/, the demo's sample project, the eval suite) as packages so
setuptools ships them without a warning."""

from setuptools import find_packages, setup

LEDGER = "vllm_bot.eval.tasks.projects.ledger"  # the eval's bundled project (its repository tier)
DATA_PACKAGES = [
    "vllm_bot.prompts",
    "vllm_bot.resources",
    "vllm_bot.demo.sample",
    "vllm_bot.eval.tasks",
    "vllm_bot.eval.harness",
    "vllm_bot.eval.tasks.projects",
    LEDGER,
    f"{LEDGER}.ledger",
    f"{LEDGER}.tests",
    f"{LEDGER}.examples",
]

setup(
    packages=[*find_packages("src"), *DATA_PACKAGES],
    package_dir={"": "src", "vllm_bot.prompts": "prompts"},
    package_data={
        "vllm_bot.prompts": ["*.yaml"],
        "vllm_bot.resources": ["*.json", "*.yaml"],
        "vllm_bot.demo.sample": ["*"],  # the --demo sample project
        "vllm_bot.eval.tasks": ["*.yaml"],  # the bundled eval suite
        "vllm_bot.eval.harness": ["*.cjs", "*.sh"],  # the checks' runners for node and bash
        LEDGER: ["*.md"],
        f"{LEDGER}.examples": ["*.journal"],
    },
)
