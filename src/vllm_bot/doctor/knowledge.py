"""The parser table (resources/parsers.yaml): model family -> vLLM parsers, and how leaked tool calls
and reasoning look in `content`. Data, not code: adding a family is a YAML edit."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ..model.profiles import RESOURCES, pattern_matches


@dataclass
class Family:
    name: str
    match: list[str]
    tool_call_parser: str | None
    reasoning_parser: str | None
    note: str = ""


@dataclass
class LeakFormat:
    name: str
    parsers: list[str]
    aliases: list[str] = field(default_factory=list)
    markers: list[re.Pattern[str]] = field(default_factory=list)

    def found_in(self, text: str) -> bool:
        return any(m.search(text) for m in self.markers)


@dataclass
class ReasoningFormat:
    name: str
    parser: str
    markers: list[re.Pattern[str]] = field(default_factory=list)


class TableError(Exception):
    """resources/parsers.yaml is malformed (a packaging bug, not a user error)."""


@dataclass
class Knowledge:
    families: list[Family]
    formats: list[LeakFormat]
    reasoning_formats: list[ReasoningFormat]

    def family_for(self, names: list[str | None]) -> Family | None:
        """The first family with a pattern matching the served name or the root."""
        candidates = [n for n in names if n]
        for family in self.families:
            if any(pattern_matches(p, n) for p in family.match for n in candidates):
                return family
        return None

    def leak_format(self, name: str) -> LeakFormat | None:
        """A format by its table name or an alias (names the reply parser reports)."""
        key = name.lower()
        for fmt in self.formats:
            if key == fmt.name or key in fmt.aliases:
                return fmt
        return None

    def leaked_formats(self, text: str, reported: list[str]) -> list[str]:
        """Format names seen in `text`: those whose markers appear (table order: the table tells server
        formats apart, e.g. granite's `<tool_call>[` from hermes), then the names the reply parser
        reported (normalized), without duplicates."""
        names = [fmt.name for fmt in self.formats if fmt.found_in(text)]
        for name in reported:
            fmt = self.leak_format(name)
            names.append(fmt.name if fmt else name)
        return list(dict.fromkeys(n for n in names if n != "native"))

    def tool_parser_for(self, format_name: str | None, family: Family | None) -> str | None:
        """The --tool-call-parser to suggest: the family's own when it reads the format the model
        writes, else the format's first parser, else the family's."""
        fmt = self.leak_format(format_name) if format_name else None
        family_parser = family.tool_call_parser if family else None
        if fmt is None or not fmt.parsers:
            return family_parser
        if family_parser in fmt.parsers:
            return family_parser
        return fmt.parsers[0]

    def parser_choices(self) -> str:
        """Each --tool-call-parser of the table with its families: "hermes (Qwen3, Qwen2.5), ..."."""
        users: dict[str, list[str]] = {}
        for family in self.families:
            if family.tool_call_parser:
                users.setdefault(family.tool_call_parser, []).append(family.name)
        return ", ".join(f"{parser} ({', '.join(names)})" for parser, names in users.items())

    def reasoning_parser_for(self, text: str, family: Family | None) -> str | None:
        if family is not None and family.reasoning_parser:
            return family.reasoning_parser
        for fmt in self.reasoning_formats:
            if any(m.search(text) for m in fmt.markers):
                return fmt.parser
        return None

    def reasoning_leak(self, text: str) -> str | None:
        """The name of the reasoning format written into `text`, if any."""
        for fmt in self.reasoning_formats:
            if any(m.search(text) for m in fmt.markers):
                return fmt.name
        return None


@lru_cache(maxsize=1)
def knowledge() -> Knowledge:
    return load_knowledge(RESOURCES / "parsers.yaml")


def load_knowledge(path: Path) -> Knowledge:
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    try:
        return Knowledge(
            [
                Family(
                    name,
                    list(raw["match"]),
                    raw["tool_call_parser"],
                    raw["reasoning_parser"],
                    raw.get("note", ""),
                )
                for name, raw in data["families"].items()
            ],
            [
                LeakFormat(name, list(raw["parsers"]), list(raw.get("aliases", [])), _compile(raw["markers"]))
                for name, raw in data["formats"].items()
            ],
            [
                ReasoningFormat(name, raw["parser"], _compile(raw["markers"]))
                for name, raw in data["reasoning_formats"].items()
            ],
        )
    except (KeyError, TypeError, AttributeError, re.error) as e:
        raise TableError(f"{path}: malformed ({type(e).__name__}: {e})") from None


def _compile(markers: list[str]) -> list[re.Pattern[str]]:
    return [re.compile(m, re.MULTILINE) for m in markers]
