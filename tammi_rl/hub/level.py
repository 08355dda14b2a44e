"""The Hub ``level`` command as a search budget (`SearchLimits`).

Forms: ``level depth=D``, ``level nodes=N`` (pydraughts sends it), ``level move-time=T``,
``level [moves=M] time=T [inc=I]`` (seconds; the increment is added before every move,
as the protocol says) and ``level infinite`` (search until ``stop``). Several may be
combined on one line; the last ``level`` line replaces the one before.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tammi_rl.hub.protocol import HubCommand
from tammi_rl.players.analysis import SearchLimits
from tammi_rl.rules.errors import TammiError

MOVES_TO_GO = 30
"""Moves the remaining time is shared over in sudden death (no ``moves=``)."""
SAFETY_S = 0.05
"""Seconds kept back from every budget for the answer to reach the GUI."""
INFINITE_S = 1e6
"""The budget of ``level infinite`` (a search ends with ``stop``)."""


class HubLevelError(TammiError):
    """A ``level`` line with a bad number."""


@dataclass(frozen=True)
class Level:
    """The limits a GUI set; None: not set."""

    depth: int | None = None
    nodes: int | None = None
    move_time: float | None = None
    time: float | None = None
    moves: int | None = None
    inc: float | None = None
    infinite: bool = False

    @classmethod
    def parse(cls, command: HubCommand) -> Level:
        """The level of a ``level`` line."""
        a = command.args
        return cls(
            depth=_whole(a, "depth"),
            nodes=_whole(a, "nodes"),
            move_time=_seconds(a, "move-time"),
            time=_seconds(a, "time"),
            moves=_whole(a, "moves"),
            inc=_seconds(a, "inc"),
            infinite="infinite" in a,
        )

    def seconds(self) -> float | None:
        """Seconds for this move: the move time, or a share of the clock; None without either."""
        if self.infinite:
            return INFINITE_S
        if self.move_time is not None:
            return max(self.move_time - SAFETY_S, 0.01)
        if self.time is None:
            return None
        available = self.time + (self.inc or 0.0)
        share = available / (self.moves or MOVES_TO_GO)
        if self.moves is None and self.inc:
            share = self.time / MOVES_TO_GO + self.inc
        return max(min(share, 0.5 * available) - SAFETY_S, 0.01)

    def on_the_clock(self) -> bool:
        """Whether this level is a time control (a move time or a clock, not ``infinite``)."""
        return not self.infinite and (self.move_time is not None or self.time is not None)

    def limits(self) -> SearchLimits:
        """The `SearchLimits` of this level (all None: the player's own settings)."""
        return SearchLimits(time_s=self.seconds(), depth=self.depth, nodes=self.nodes)


def _whole(args: dict[str, str], key: str) -> int | None:
    """Argument ``key`` as a whole number >= 1 (None when absent)."""
    if key not in args:
        return None
    try:
        value = int(args[key])
    except ValueError:
        raise HubLevelError(f"level: {key}={args[key]!r} is not a whole number") from None
    if value < 1:
        raise HubLevelError(f"level: {key} must be >= 1, got {args[key]}")
    return value


def _seconds(args: dict[str, str], key: str) -> float | None:
    """Argument ``key`` as seconds >= 0 (None when absent)."""
    if key not in args:
        return None
    try:
        value = float(args[key])
    except ValueError:
        raise HubLevelError(f"level: {key}={args[key]!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise HubLevelError(f"level: {key} must be >= 0 seconds, got {args[key]}")
    return value
