"""Packaging glue pyproject.toml cannot express: ship the top-level prompts/ inside the package."""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages("src"), "vllm_bot.prompts"],
    package_dir={"": "src", "vllm_bot.prompts": "prompts"},
    package_data={
        "vllm_bot": ["resources/*"],
        "vllm_bot.prompts": ["*.yaml"],
        "vllm_bot.demo": ["sample/*"],  # the --demo sample project
    },
)
