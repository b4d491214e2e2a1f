"""Packaging glue pyproject.toml cannot express: ship the top-level prompts/ inside the package, and
list the data-only folders (resources/, the demo's sample project) as packages so setuptools ships
them without a warning."""

from setuptools import find_packages, setup

DATA_PACKAGES = ["vllm_bot.prompts", "vllm_bot.resources", "vllm_bot.demo.sample"]

setup(
    packages=[*find_packages("src"), *DATA_PACKAGES],
    package_dir={"": "src", "vllm_bot.prompts": "prompts"},
    package_data={
        "vllm_bot.prompts": ["*.yaml"],
        "vllm_bot.resources": ["*.json", "*.yaml"],
        "vllm_bot.demo.sample": ["*"],  # the --demo sample project
    },
)
