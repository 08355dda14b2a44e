"""Player specs: ``KIND`` or ``KIND:key=value,key=value``, parsed into a player.

    player = parse_player_spec("alphabeta:depth=6,seed=1", rules)
    player = parse_player_spec('hub:cmd="scan hub",time=0.1', rules)

A value may be quoted (``"..."`` or ``'...'``, right after the ``=``) to hold commas or
spaces; the quotes are removed. Elsewhere a quote is an ordinary character.

Each kind has a factory ``factory(rules, options, spec_text) -> Player`` registered with
`register_player_kind`; `int_option`, `float_option` and `reject_unknown` are the shared
option readers, so every kind reports a bad option the same way (naming the spec).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tammi_rl.players.base import Player
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.errors import TammiError


class PlayerSpecError(TammiError):
    """A player spec cannot be read or names unknown options."""


@dataclass(frozen=True)
class PlayerSpec:
    """A parsed player spec: its kind and ``key=value`` options (values as text)."""

    kind: str
    options: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> PlayerSpec:
        """Split ``KIND:key=value,...`` (kind and keys lower-cased); the kind is not checked here."""
        body = text.strip()
        if not body:
            raise PlayerSpecError(f"empty player spec; known kinds: {', '.join(sorted(PLAYER_KINDS))}")
        kind, _, rest = body.partition(":")
        kind = kind.strip().lower()
        options: dict[str, str] = {}
        for item in split_options(rest, text):
            key, eq, value = item.partition("=")
            value = _unquote(value.strip())
            if not eq or not key.strip() or not value.strip():
                raise PlayerSpecError(f"player spec {text!r}: option {item!r} must look like key=value")
            key = key.strip().lower()
            if key in options:
                raise PlayerSpecError(f"player spec {text!r}: option {key!r} given twice")
            options[key] = value
        return cls(kind, options)


_QUOTES = "\"'"


def split_options(rest: str, spec: str = "") -> list[str]:
    """The ``key=value`` items of ``rest`` (the spec after ``KIND:``), split on the commas
    outside a quoted value; blank items are dropped, quotes are kept (`PlayerSpec.parse`
    removes them). ``spec`` names the whole spec in the error for an unclosed quote."""
    items: list[str] = []
    i, n = 0, len(rest)
    while i <= n:
        j = i
        while j < n and rest[j] not in "=,":
            j += 1
        end = rest.find(",", j) if j < n else -1
        if j < n and rest[j] == "=":
            k = j + 1
            while k < n and rest[k].isspace():
                k += 1
            if k < n and rest[k] in _QUOTES:
                close = rest.find(rest[k], k + 1)
                if close < 0:
                    raise PlayerSpecError(
                        f"player spec {spec or rest!r}: the {rest[k]} quote after {rest[i:j].strip()}= is not closed"
                    )
                end = rest.find(",", close)
                if rest[close + 1 : n if end < 0 else end].strip():
                    raise PlayerSpecError(
                        f"player spec {spec or rest!r}: text after the quoted value of {rest[i:j].strip()!r}"
                        " (end the quote at the end of the value)"
                    )
        end = n if end < 0 else end
        if rest[i:end].strip():
            items.append(rest[i:end].strip())
        i = end + 1
    return items


def _unquote(value: str) -> str:
    """``value`` without the quotes around it, when it is quoted."""
    if len(value) >= 2 and value[0] in _QUOTES and value[-1] == value[0]:
        return value[1:-1]
    return value


PlayerFactory = Callable[[Rules, dict[str, str], str], Player]
PLAYER_KINDS: dict[str, PlayerFactory] = {}


def register_player_kind(kind: str, factory: PlayerFactory) -> None:
    """Make ``kind`` usable in player specs: ``factory(rules, options, spec_text) -> Player``."""
    PLAYER_KINDS[kind.lower()] = factory


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
"""Whole-number options end up in compiled code as int64: `int_option` keeps them in range."""
MAX_SECONDS = 1e9
"""Largest time option `float_option` accepts (the search turns seconds into node budgets)."""


def int_option(spec: str, key: str, value: str, lo: int | None = None) -> int:
    """Option ``key`` of ``spec`` as a whole number (at least ``lo`` when given; 64-bit)."""
    try:
        number = int(value)
    except ValueError:
        raise PlayerSpecError(f"player spec {spec!r}: {key} must be a whole number, got {value!r}") from None
    if lo is not None and number < lo:
        raise PlayerSpecError(f"player spec {spec!r}: {key} must be >= {lo}, got {number}")
    if not INT64_MIN <= number <= INT64_MAX:
        raise PlayerSpecError(f"player spec {spec!r}: {key} must fit in 64 bits, got {value!r}")
    return number


def positive_option(spec: str, key: str, value: str, most: float | None = None, what: str = "a number") -> float:
    """Option ``key`` of ``spec`` as a number > 0: finite, or at most ``most`` when given."""
    try:
        number = float(value)
    except ValueError:
        raise PlayerSpecError(f"player spec {spec!r}: {key} must be {what}, got {value!r}") from None
    if most is None and not 0 < number < float("inf"):  # also rejects nan
        raise PlayerSpecError(f"player spec {spec!r}: {key} must be a finite number > 0, got {value!r}")
    if most is not None and not 0 < number <= most:  # also rejects nan and inf
        raise PlayerSpecError(f"player spec {spec!r}: {key} must be > 0 and <= {most:g}, got {value!r}")
    return number


def nonnegative_option(spec: str, key: str, value: str) -> float:
    """Option ``key`` of ``spec`` as a finite number >= 0."""
    try:
        number = float(value)
    except ValueError:
        raise PlayerSpecError(f"player spec {spec!r}: {key} must be a number, got {value!r}") from None
    if not 0 <= number < float("inf"):  # also rejects nan
        raise PlayerSpecError(f"player spec {spec!r}: {key} must be a finite number >= 0, got {value!r}")
    return number


def float_option(spec: str, key: str, value: str) -> float:
    """Option ``key`` of ``spec`` as a positive number of seconds (at most `MAX_SECONDS`)."""
    return positive_option(spec, key, value, MAX_SECONDS, "a number of seconds")


def switch_option(spec: str, key: str, value: str) -> bool:
    """Option ``key`` of ``spec`` as on/off (``on``, ``off``, ``true``, ``false``, ``1``, ``0``)."""
    word = value.strip().lower()
    if word in ("on", "true", "1"):
        return True
    if word in ("off", "false", "0"):
        return False
    raise PlayerSpecError(f"player spec {spec!r}: {key} must be on or off, got {value!r}")


def reject_unknown(spec: str, options: dict[str, str], known: set[str]) -> None:
    """A `PlayerSpecError` naming the first option of ``spec`` that is not in ``known``."""
    unknown = sorted(set(options) - known)
    if unknown:
        raise PlayerSpecError(
            f"player spec {spec!r}: unknown option {unknown[0]!r}; known options: {', '.join(sorted(known)) or 'none'}"
        )


def parse_player_spec(text: str, rules: Rules) -> Player:
    """The player a spec names, for ``rules``' variant; `PlayerSpecError` says what is wrong."""
    spec = PlayerSpec.parse(text)
    factory = PLAYER_KINDS.get(spec.kind)
    if factory is None:
        raise PlayerSpecError(
            f"unknown player kind {spec.kind!r} in {text!r}; known kinds: {', '.join(sorted(PLAYER_KINDS))}"
            " (write e.g. 'alphabeta:depth=6', 'random:seed=1' or 'human')"
        )
    return factory(rules, spec.options, text)
