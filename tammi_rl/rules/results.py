"""How a game ends and the draw-rule state of a position, as plain values.

The decisions themselves are compiled (`tammi_rl.rules.draw_rules`); this module holds
what they produce for Python code: `GameResult` (winner and reason) and `DrawCounters`.
"""

from __future__ import annotations

from dataclasses import dataclass

from tammi_rl.rules.position import BLACK, COLOR_NAMES, WHITE

REASONS = (
    "no_moves",
    "repetition",
    "kings_only",
    "three_kings_vs_one",
    "no_progress",
    "king_vs_lone_man",
    "adjudication",
    "resignation",
    "agreement",
)
"""Every value `GameResult.reason` may take; the compiled rules report an index into it."""


@dataclass(frozen=True, slots=True)
class GameResult:
    """How a game ended: the winner (0 white, 1 black, None for a draw) and why."""

    winner: int | None
    reason: str

    def __post_init__(self) -> None:
        if self.winner not in (WHITE, BLACK, None):
            raise ValueError(f"GameResult.winner must be 0 (white), 1 (black) or None, got {self.winner!r}")
        if self.reason not in REASONS:
            raise ValueError(f"GameResult.reason {self.reason!r} is not one of {', '.join(REASONS)}")

    @property
    def is_draw(self) -> bool:
        return self.winner is None

    def score(self, color: int) -> float:
        """Points for ``color``: 1 for a win, 0.5 for a draw, 0 for a loss."""
        if self.winner is None:
            return 0.5
        return 1.0 if self.winner == color else 0.0

    @property
    def pdn(self) -> str:
        """The PDN ``Result`` string: "1-0" white won, "0-1" black won, "1/2-1/2" a draw."""
        if self.winner is None:
            return "1/2-1/2"
        return "1-0" if self.winner == WHITE else "0-1"

    def __str__(self) -> str:
        who = "draw" if self.winner is None else f"{COLOR_NAMES[self.winner]} wins"
        return f"{self.pdn} ({who}: {self.reason})"


@dataclass(frozen=True, slots=True)
class DrawCounters:
    """The draw-rule state of the current position (semantics: `tammi_rl.rules.draw_rules`)."""

    plies: int
    """Plies played so far in this game (the length cap counts these)."""
    no_progress_plies: int
    """Plies since the last capture or man move."""
    kings_only_plies: int
    """Plies played with only kings on the board and no capture."""
    three_kings_plies: int
    """Plies played while 3+ kings stand against a lone king."""
    repetitions: int
    """Occurrences of the current position (same side to move), this one included."""
