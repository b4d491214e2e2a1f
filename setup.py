"""Packaging glue pyproject.toml cannot express: ship the top-level prompts/ inside the package, and
list the data-only folders (resources/, the demo's sample project, the eval suite) as packages so
setuptools ships them without a warning."""

from setuptools import find_packages, setup

DATA_PACKAGES = ["vllm_bot.prompts", "vllm_bot.resources", "vllm_bot.demo.sample", "vllm_bot.eval.tasks"]

setup(
    packages=[*find_packages("src"), *DATA_PACKAGES],
    package_dir={"": "src", "vllm_bot.prompts": "prompts"},
    package_data={
        "vllm_bot.prompts": ["*.yaml"],
        "vllm_bot.resources": ["*.json", "*.yaml"],
        "vllm_bot.demo.sample": ["*"],  # the --demo sample project
        "vllm_bot.eval.tasks": ["*.yaml"],  # the bundled eval suite
    },
)
