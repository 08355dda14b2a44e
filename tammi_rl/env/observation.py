"""Observation planes: the ONE place their order and meaning are defined.

An observation is ``float32 [N_PLANES, H, W]`` with ``H = W = board_size``, seen from
the side to move: ``obs[p, r, c]`` is row ``r`` counted from the side to move's own back
row and column ``c`` counted from its left (for Black the board is rotated 180 degrees,
the same canonical frame as the actions, see `tammi_rl.env.actions`). Only playable
squares can be non-zero in the piece planes.

Planes, in order:

====  ====================  =====================================================
 0    OWN_MEN               men of the side to move
 1    OWN_KINGS             kings of the side to move
 2    OPP_MEN               the opponent's men
 3    OPP_KINGS             the opponent's kings
 4    CHAIN_PIECE           the piece that must continue the capture chain (mid-chain only)
 5    JUMPED                pieces already jumped in this chain (still on the board under
                            end-of-chain removal, already gone under immediate removal)
 6    PLAYABLE              1 on every playable square (constant)
 7    NO_PROGRESS           plies without progress / the no-progress limit (constant plane)
 8    KINGS_ONLY            kings-only plies / the kings-only limit (constant plane)
 9    THREE_KINGS           three-kings-vs-one plies / its limit (constant plane)
10    REPETITION            times the position has occurred / the repetition limit
====  ====================  =====================================================

Mid-chain, the piece planes show the board as it stands: the moving piece on its
current square (a king once promoted under ``promotion_in_chain = "continue"``).
Counter planes are clipped to [0, 1] and are 0 when the variant has no such rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from tammi_rl.env.actions import canonical_square
from tammi_rl.env import turn as tc
from tammi_rl.jit_cache import drop_stale_cache
from tammi_rl.rules import draw_rules as _draw_rules
from tammi_rl.rules import movegen as _movegen

drop_stale_cache(__file__, [tc, _movegen, _draw_rules])  # encode_planes inlines the turn kernels
from tammi_rl.rules.engine import Rules

OWN_MEN, OWN_KINGS, OPP_MEN, OPP_KINGS = 0, 1, 2, 3
CHAIN_PIECE, JUMPED, PLAYABLE = 4, 5, 6
NO_PROGRESS, KINGS_ONLY, THREE_KINGS, REPETITION = 7, 8, 9, 10
N_PLANES = 11
PLANE_NAMES = (
    "own_men", "own_kings", "opp_men", "opp_kings", "chain_piece", "jumped", "playable",
    "no_progress", "kings_only", "three_kings", "repetition",
)


@njit(cache=True, _nrt=False)
def encode_planes(state, buf, tables, side, obs):
    """Write the planes of the current state, seen by ``side`` (normally the side to move),
    into ``obs`` (``float32 [N_PLANES, H, W]``, zeroed)."""
    mw, kw, mb, kb, cur, jumped = tc.chain_view(state, buf, tables)
    if side == 0:
        own_men, own_kings, opp_men, opp_kings = mw, kw, mb, kb
    else:
        own_men, own_kings, opp_men, opp_kings = mb, kb, mw, kw
    nsq = tables[tc.X_NSQ]
    rows = tables[tables[tc.X_CELL_ROW] + side * nsq:]
    cols = tables[tables[tc.X_CELL_COL] + side * nsq:]
    for sq in range(nsq):
        r = rows[sq]
        c = cols[sq]
        obs[PLAYABLE, r, c] = 1.0
        if (own_men >> sq) & 1:
            obs[OWN_MEN, r, c] = 1.0
        elif (own_kings >> sq) & 1:
            obs[OWN_KINGS, r, c] = 1.0
        elif (opp_men >> sq) & 1:
            obs[OPP_MEN, r, c] = 1.0
        elif (opp_kings >> sq) & 1:
            obs[OPP_KINGS, r, c] = 1.0
        if (jumped >> sq) & 1:
            obs[JUMPED, r, c] = 1.0
    if cur >= 0:
        obs[CHAIN_PIECE, rows[cur], cols[cur]] = 1.0
    for i in range(4):
        limit = tables[tc.X_LIMITS + i]
        if limit > 0:
            v = min(1.0, max(0.0, state[tc.S_COUNTERS + i] / limit))
            if v != 0.0:
                obs[NO_PROGRESS + i, :, :] = v


@njit(cache=True)
def observe(state, buf, tables, side):
    """A fresh observation seen by ``side`` and its action mask (empty unless ``side`` is to move)."""
    size = tables[tc.X_SIZE]
    obs = np.zeros((N_PLANES, size, size), np.float32)
    encode_planes(state, buf, tables, side, obs)
    mask = np.zeros(tables[tc.X_NACT], np.int8)
    if side == state[tc.S_SIDE]:
        tc.fill_mask(state, buf, tables, mask)
    return obs, mask


@dataclass(frozen=True, eq=False)
class ObservationEncoder:
    """Per-variant tables for `encode_planes`: canonical cells and counter limits."""

    size: int
    cell_row: np.ndarray
    """int64 [2, n_squares]: canonical row of each internal square, per side to move."""
    cell_col: np.ndarray
    playable: np.ndarray
    """float32 [H, W]: 1 on playable squares (the same in both frames)."""
    limits: tuple[int, int, int, int]
    """Plies (occurrences for repetition) at which each counter's rule fires; 0 = no rule.
    The counters are `Game.counters` ``no_progress_plies``, ``kings_only_plies``,
    ``three_kings_plies`` and ``repetitions``, in plane order."""

    @property
    def shape(self) -> tuple[int, int, int]:
        return (N_PLANES, self.size, self.size)

    @classmethod
    def for_rules(cls, rules: Rules) -> "ObservationEncoder":
        g = rules.geometry
        nsq, size = g.n_squares, g.size
        cell_row = np.zeros((2, nsq), dtype=np.int64)
        cell_col = np.zeros((2, nsq), dtype=np.int64)
        playable = np.zeros((size, size), dtype=np.float32)
        for side in (0, 1):
            for sq in range(nsq):
                r, c = g.coords[canonical_square(nsq, side, sq)]
                cell_row[side, sq], cell_col[side, sq] = r, c
                playable[r, c] = 1.0
        d = rules.variant.draw
        limits = (2 * d.no_progress_moves, 2 * d.kings_only_moves, 2 * d.three_kings_vs_one_moves, d.repetition)
        return cls(size, cell_row, cell_col, playable, limits)
