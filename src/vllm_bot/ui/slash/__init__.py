"""Slash commands of the interactive session: the registry and the modules that declare them."""
