"""Exception types of the rules layer; each message says what was wrong and where."""

from __future__ import annotations

from pathlib import Path


class TammiError(ValueError):
    """Base class of every error tammi-rl raises on bad input."""


class VariantError(TammiError):
    """A variant file or name is invalid (the message names the file and key)."""


class FenError(TammiError):
    """A FEN string is malformed or describes an impossible position."""


class MoveError(TammiError):
    """A move text or action is illegal, ambiguous or malformed."""


class PdnError(TammiError):
    """A PDN game text cannot be read."""


class EngineLimitError(TammiError):
    """A position the compiled move generator cannot hold: more capture routes than its move
    buffer or a longer capture chain than it tracks (only extreme, mostly unreachable boards)."""


def read_user_text(path: str | Path, what: str, error: type[TammiError]) -> str:
    """The UTF-8 text of a file a user named; any way of failing is ``error`` naming the file
    and ``what`` it should be ("variant file", "openings file", "config")."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: cannot read {what} (not UTF-8 text: {exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise error(f"{path}: cannot read {what} ({exc.strerror or exc})") from None
    except ValueError as exc:  # a NUL character in the path
        raise error(f"{path}: cannot read {what} ({exc})") from None
