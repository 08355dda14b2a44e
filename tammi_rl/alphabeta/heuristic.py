"""Static evaluation for every variant: weights as a dataclass, tables for the compiled core.

The score is built from per-square tables, so the compiled evaluator only walks the
pieces once:

* material: ``man`` and ``king`` values; defaults depend on the variant (a flying king
  is worth about three men, a short king about one and a half, a Turkish rook-like
  king more);
* advancement (tempo): ``advancement`` per row a man has left behind, plus
  ``near_promotion`` on the last row before the promotion row;
* back-rank guard: ``back_rank`` per man still on its own first row (it keeps the
  opponent from crowning);
* centre: ``centre_man`` / ``centre_king`` on the central block of the board;
* mobility: ``man_mobility`` per empty square a man could step to, ``king_mobility``
  per empty neighbouring square of a king.

Scores are integers (a man is 100) from the side to move's point of view.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from tammi_rl.rules import movegen as mg
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.errors import TammiError
from tammi_rl.rules.position import BLACK, WHITE


@dataclass(frozen=True)
class EvalWeights:
    """Evaluation weights in hundredths of a man."""

    man: int = 100
    king: int = 300
    advancement: int = 3
    near_promotion: int = 10
    back_rank: int = 8
    centre_man: int = 5
    centre_king: int = 10
    man_mobility: int = 2
    king_mobility: int = 2

    def with_overrides(self, overrides: Mapping[str, Any] | None) -> EvalWeights:
        """A copy with some weights replaced; unknown keys and non-integers are errors."""
        if not overrides:
            return self
        known = {f.name for f in fields(self)}
        clean: dict[str, int] = {}
        for key, value in overrides.items():
            if key not in known:
                raise TammiError(f"unknown evaluation weight {key!r}; known weights: {', '.join(sorted(known))}")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
                raise TammiError(f"evaluation weight {key!r} must be an integer, got {value!r}")
            clean[key] = int(value)
        return replace(self, **clean)


VARIANT_DEFAULTS: dict[str, dict[str, int]] = {
    "russian": {"king": 300},
    "brazilian": {"king": 300},
    "international": {"king": 300, "advancement": 2},
    "english": {"king": 150},
    "italian": {"king": 150},
    "turkish": {"king": 400, "back_rank": 0, "advancement": 4, "centre_man": 2},
}
"""Per-variant overrides of the `EvalWeights` defaults, by variant name."""


def default_weights(rules: Rules) -> EvalWeights:
    """The default weights of ``rules``' variant (by name, else by king range)."""
    v = rules.variant
    if v.name in VARIANT_DEFAULTS:
        return EvalWeights().with_overrides(VARIANT_DEFAULTS[v.name])
    return EvalWeights(king=300 if v.king_range == "flying" else 150)


@dataclass(frozen=True, eq=False)
class EvalTables:
    """Arrays the compiled evaluator reads (kinds: white man, white king, black man, black king)."""

    pst: np.ndarray
    """int64[4, n_squares]: value of a piece of each kind on each square, White's point of view."""
    reach: np.ndarray
    """int64[4, n_squares]: squares counted for mobility (man steps, king neighbours)."""
    mobility: np.ndarray
    """int64[4]: mobility weight per kind, signed for White's point of view."""


def build_tables(rules: Rules, weights: EvalWeights) -> EvalTables:
    """Per-square tables of ``weights`` on ``rules``' board."""
    g = rules.geometry
    n, size = g.n_squares, g.size
    pst = np.zeros((4, n), dtype=np.int64)
    reach = np.zeros((4, n), dtype=np.int64)
    lo, hi = 2, size - 3  # central block: rows and columns 2..size-3
    for sq, (row, col) in enumerate(g.coords):
        centre = lo <= row <= hi and lo <= col <= hi
        for color, sign in ((WHITE, 1), (BLACK, -1)):
            own_row = row if color == WHITE else size - 1 - row
            man = weights.man + weights.advancement * own_row
            if own_row == size - 2:
                man += weights.near_promotion
            if own_row == 0:
                man += weights.back_rank
            if centre:
                man += weights.centre_man
            king = weights.king + (weights.centre_king if centre else 0)
            pst[2 * color, sq] = sign * man
            pst[2 * color + 1, sq] = sign * king
            steps = 0
            neighbours = 0
            move_dirs = int(rules.params[mg.P_MOVE_DIRS + color])
            for d in range(4):
                to = int(g.rays[sq, d, 0])
                if to < 0:
                    continue
                neighbours |= 1 << to
                if move_dirs >> d & 1:
                    steps |= 1 << to
            reach[2 * color, sq] = _signed(steps)
            reach[2 * color + 1, sq] = _signed(neighbours)
    mobility = np.array(
        [weights.man_mobility, weights.king_mobility, -weights.man_mobility, -weights.king_mobility], dtype=np.int64
    )
    return EvalTables(pst=pst, reach=reach, mobility=mobility)


def _signed(bits: int) -> int:
    return bits - (1 << 64) if bits >= 1 << 63 else bits


@njit(cache=True, _nrt=False)
def evaluate(men_w, kings_w, men_b, kings_b, side, pst, reach, mobility):
    """Static score of a position for the side to move (``side``: 0 white, 1 black)."""
    empty = ~(men_w | kings_w | men_b | kings_b)
    boards = (men_w, kings_w, men_b, kings_b)
    s = 0
    for kind in range(4):
        b = boards[kind]
        w = mobility[kind]
        while b != 0:
            sq = trailing_zeros(b)
            b &= b - 1
            s += pst[kind, sq]
            if w != 0:
                s += w * mg.popcount(reach[kind, sq] & empty)
    return s if side == 0 else -s
