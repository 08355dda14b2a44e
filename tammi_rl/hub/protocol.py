"""Hub protocol lines: ``<command> <arg>=<val> <arg>=<val> ...``, read and written.

Values may be double-quoted (they must be when they hold a space or ``=`` or are empty);
an argument without ``=val`` is a flag (value ``""``). This is Scan 3.x's Hub protocol,
version 2 (`tammi_rl.hub` lists the commands).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tammi_rl.rules.errors import TammiError

_TOKEN = re.compile(r'\s*([^\s="]+)(?:=("(?:[^"]*)"|[^\s"]*))?(?=\s|$)')


class HubProtocolError(TammiError):
    """A line that is not ``command arg=value ...``."""


@dataclass(frozen=True)
class HubCommand:
    """One line from the GUI: its command word and arguments (quotes removed)."""

    name: str
    args: dict[str, str] = field(default_factory=dict)

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.args.get(key, default)


def parse_line(line: str) -> HubCommand | None:
    """The command of a line (None for a blank one); `HubProtocolError` if it is malformed."""
    text = line.strip()
    if not text:
        return None
    name, _, rest = text.partition(" ")
    args: dict[str, str] = {}
    pos = 0
    rest = rest.strip()
    while pos < len(rest):
        match = _TOKEN.match(rest, pos)
        if match is None:
            raise HubProtocolError(f"cannot read {rest[pos:].strip()!r} in {text!r}: write arg=value, quoting values")
        key, value = match.group(1), match.group(2) or ""
        if value.startswith('"'):
            value = value[1:-1]
        args[key] = value
        pos = match.end()
        while pos < len(rest) and rest[pos].isspace():
            pos += 1
    return HubCommand(name, args)


def quote(value: object) -> str:
    """A value as the protocol writes it: quoted when it is empty or holds a space, ``=`` or ``"``."""
    text = str(value)
    if text == "" or re.search(r'[\s="]', text):
        return '"' + text.replace('"', "'") + '"'
    return text


def format_line(command: str, *flags: str, **args: object) -> str:
    """``command flag... key=value ...`` (a key's ``_`` written ``-``; None values left out)."""
    parts = [command, *flags]
    parts += [f"{key.replace('_', '-')}={quote(value)}" for key, value in args.items() if value is not None]
    return " ".join(parts)
