"""Option checks for the read-only allowlist: which options of a command write files or run programs."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from vllm_bot.safety.shellsplit import Word

Check = Callable[[str, Sequence[Word]], "str | None"]


def options(
    *,
    deny: Iterable[str] = (),
    short: str = "",
    max_args: int | None = None,
    values: Iterable[str] = (),
    positional: Callable[[str], bool] | None = None,
) -> Check:
    """A check for a command whose dangerous options are known.

    deny: long options that write or run programs (GNU abbreviations such as `--out` are caught);
    short: option letters that do (also inside clusters such as `-uo`); max_args: positional
    arguments allowed (more would name an output file); values: options whose value is the next word;
    positional: a test every positional argument must pass.
    """
    long_deny = tuple(d.lstrip("-") for d in deny)
    value_options = set(values)
    restricted = bool(long_deny or short or max_args is not None or positional)

    def check(name: str, args: Sequence[Word]) -> str | None:
        count, options_done, skip = 0, False, False
        for word in args:
            if word.dynamic:
                if restricted:
                    return f"`{name}` gets an argument only known at run time ({word.text})"
                continue
            text = word.text
            if skip:
                skip = False
            elif options_done or text == "-" or not text.startswith("-"):
                count += 1
                if positional and not positional(text):
                    return f"`{name} {text}` may change something"
            elif text == "--":
                options_done = True
            elif text.startswith("--"):
                option = text[2:].split("=", 1)[0]
                if any(d.startswith(option) for d in long_deny):
                    return f"`{name} --{option}` may write files or run programs"
                skip = text in value_options
            elif any(c in short for c in text[1:]):
                return f"`{name} {text}` may write files or run programs"
            else:
                skip = text in value_options
        if max_args is not None and count > max_args:
            return f"`{name}` with {count} file arguments writes the last one"
        return None

    return check


ANY = options()
