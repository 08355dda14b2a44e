"""Where `eval`, `match` and `play` write: the current directory unless the user names a path.

A default name never replaces earlier results: ``_2``, ``_3``, ... is added before the
suffix while the name is taken. A path the user gives (``--out``) is used as it is. Nothing
is ever written next to its input, so a shipped model inside an installed package (or a
read-only run directory) stays untouched.
"""

from __future__ import annotations

import datetime
import re
from pathlib import Path

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def default_output(stem: str, suffix: str = "") -> Path:
    """A free path ``./<stem><suffix>`` in the current directory (``stem`` made file-name safe)."""
    safe = _UNSAFE.sub("_", stem).strip("._") or "out"
    path = Path(f"{safe}{suffix}")
    n = 2
    while path.exists():
        path = Path(f"{safe}_{n}{suffix}")
        n += 1
    return path


def output_path(given: str | None, stem: str, suffix: str = "") -> Path:
    """``given`` when the user named a path, else `default_output` of ``stem``."""
    return Path(given) if given else default_output(stem, suffix)


def shown(path: Path) -> str:
    """A path as the messages print it: absolute, so the user finds it from anywhere."""
    return str(path.resolve())


def pdn_date() -> str:
    """Today in PDN's ``Date`` tag format."""
    return datetime.date.today().strftime("%Y.%m.%d")
