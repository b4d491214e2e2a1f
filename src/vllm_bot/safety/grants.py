"""What the user allowed "always for this session": the grants themselves and what one answer covers."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Grants:
    """ "Always for this session" answers. tools: tool names; commands: argv prefixes such as
    "pytest" or "git commit" (honoured only when sandboxed); lines: exact command lines; files: real
    paths the user asked the model to write (/init's AGENTS.md), which then need no question."""

    tools: set[str] = field(default_factory=set)
    commands: set[str] = field(default_factory=set)
    lines: set[str] = field(default_factory=set)
    files: set[str] = field(default_factory=set)

    def add(self, scope: GrantScope) -> None:
        """Record an "always" answer that covers `scope`."""
        if scope.tool is not None:
            self.tools.add(scope.tool)
        elif scope.prefixes:
            self.commands.update(scope.prefixes)
        else:
            self.lines.add(str(scope.line))


@dataclass(frozen=True)
class GrantScope:
    """What an "always for this session" answer to one call covers: exactly one of the three."""

    tool: str | None = None  # every call of this tool
    prefixes: frozenset[str] = frozenset()  # commands starting with these words
    line: str | None = None  # this exact command line

    def __str__(self) -> str:
        if self.tool is not None:
            return f"every {self.tool} call"
        if self.prefixes:
            return "commands starting with " + ", ".join(f"`{p}`" for p in sorted(self.prefixes))
        return f"exactly `{self.line}`"
