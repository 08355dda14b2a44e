"""The end and draw rules of `tammi_rl.rules.game`, compiled for the hot paths.

`Game` is the readable reference: counters, repetition table and the order of
decisions are documented there. This module is the same logic as numba functions over
int64 bitboards, so the env core and the search can decide game ends without a Python
call per ply. Tests play thousands of random games per variant through both and
require the same counters and results, ply by ply (tests/test_env_draw_rules.py).

A variant's draw rules (and a length cap) are packed into one int64 vector built by
`draw_params` (layout ``DP_*``). Results are two small ints: ``winner`` (`ONGOING`,
0 white, 1 black, `DRAWN`) and ``reason`` (an index into `tammi_rl.rules.game.REASONS`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tammi_rl.jit_cache import drop_stale_cache
from tammi_rl.rules import movegen as mg
from tammi_rl.rules.game import REASONS
from tammi_rl.rules.variant import Variant

drop_stale_cache(__file__, [mg])  # popcount is inlined

# --- draw parameter vector ---------------------------------------------------------
DP_NO_PROGRESS = 0  # limit in plies (0: no such rule)
DP_KINGS_ONLY = 1  # limit in plies
DP_THREE_KINGS = 2  # limit in plies
DP_REPETITION = 3  # occurrences that draw (0: no such rule)
DP_KING_VS_MAN = 4  # 0 play on, 1 draw, 2 the king's side wins
DP_ADJUDICATION = 5  # at the length cap: 0 draw, 1 by material
DP_MAN_IRREVERSIBLE = 6  # 1 when men only move forward (a man move can never be undone)
DP_MAX_PLIES = 7  # length cap in plies (-1: none)
N_DP = 8

ONGOING = -1
DRAWN = 2
# Indices into REASONS, written out: numba freezes globals into its cache, and this
# module's cache does not depend on game.py. The assert keeps them honest.
R_NO_MOVES, R_REPETITION, R_KINGS_ONLY, R_THREE_KINGS, R_NO_PROGRESS, R_KING_VS_MAN, R_ADJUDICATION = 0, 1, 2, 3, 4, 5, 6
assert REASONS[:7] == ("no_moves", "repetition", "kings_only", "three_kings_vs_one", "no_progress",
                       "king_vs_lone_man", "adjudication"), "draw_rules.R_* no longer match game.REASONS"

# counters vector: the three ply counters of `DrawCounters`
C_NO_PROGRESS = 0
C_KINGS_ONLY = 1
C_THREE_KINGS = 2


def draw_params(variant: Variant, max_plies: int | None) -> np.ndarray:
    """The int64 ``DP_*`` vector of ``variant``'s draw rules and a length cap (None: no cap)."""
    d = variant.draw
    dp = np.zeros(N_DP, np.int64)
    dp[DP_NO_PROGRESS] = 2 * d.no_progress_moves
    dp[DP_KINGS_ONLY] = 2 * d.kings_only_moves
    dp[DP_THREE_KINGS] = 2 * d.three_kings_vs_one_moves
    dp[DP_REPETITION] = d.repetition
    dp[DP_KING_VS_MAN] = ("play", "draw", "king_wins").index(d.king_vs_lone_man)
    dp[DP_ADJUDICATION] = ("draw", "material").index(d.adjudication)
    dp[DP_MAN_IRREVERSIBLE] = set(variant.man_moves) == {"forward"}
    dp[DP_MAX_PLIES] = -1 if max_plies is None else max_plies
    return dp


@njit(cache=True, _nrt=False)
def kings_only(mw, kw, mb, kb):
    """Both sides have pieces and none of them is a man."""
    return mw == 0 and mb == 0 and kw != 0 and kb != 0


@njit(cache=True, _nrt=False)
def three_kings_vs_one(mw, kw, mb, kb):
    """One side has 3+ kings, the other exactly one piece, a king."""
    if mb == 0 and kb != 0 and kb & (kb - 1) == 0 and mg.popcount(kw) >= 3:
        return True
    return mw == 0 and kw != 0 and kw & (kw - 1) == 0 and mg.popcount(kb) >= 3


@njit(cache=True, _nrt=False)
def king_vs_lone_man(mw, kw, mb, kb):
    """The side holding a lone king against a lone man, else -1."""
    if mw == 0 and kb == 0 and kw != 0 and mb != 0 and kw & (kw - 1) == 0 and mb & (mb - 1) == 0:
        return 0
    if mb == 0 and kw == 0 and kb != 0 and mw != 0 and kb & (kb - 1) == 0 and mw & (mw - 1) == 0:
        return 1
    return -1


@njit(cache=True, _nrt=False)
def material_winner(mw, kw, mb, kb):
    """Adjudication by material: more pieces wins; equal pieces, more kings; else `DRAWN`."""
    white = mg.popcount(mw | kw)
    black = mg.popcount(mb | kb)
    if white == black:
        white = mg.popcount(kw)
        black = mg.popcount(kb)
    if white == black:
        return DRAWN
    return 0 if white > black else 1


@njit(cache=True, _nrt=False)
def advance_counters(mw, kw, mb, kb, amw, akw, amb, akb, capture, man_move, counters):
    """Update ``counters`` (int64 [3]) for one ply from board ``mw, kw, mb, kb`` to
    ``amw, akw, amb, akb`` (white men, white kings, black men, black kings)."""
    counters[C_NO_PROGRESS] = 0 if capture or man_move else counters[C_NO_PROGRESS] + 1
    held = not capture and kings_only(mw, kw, mb, kb) and kings_only(amw, akw, amb, akb)
    counters[C_KINGS_ONLY] = counters[C_KINGS_ONLY] + 1 if held else 0
    three = three_kings_vs_one(mw, kw, mb, kb) and three_kings_vs_one(amw, akw, amb, akb)
    counters[C_THREE_KINGS] = counters[C_THREE_KINGS] + 1 if three else 0


@njit(cache=True, _nrt=False)
def decide(board, side, n_moves, counters, repetitions, plies, dp):
    """(winner, reason) of the position ``board`` (int64 [4]) with ``side`` to move and
    ``n_moves`` legal moves; winner is `ONGOING` while the game goes on.

    ``repetitions``: occurrences of this position so far (0 skips the rule);
    ``plies``: plies played (-1 skips the length cap). Order: `Game._decide`.
    """
    mw, kw, mb, kb = board[0], board[1], board[2], board[3]
    if n_moves == 0:
        return 1 - side, R_NO_MOVES
    if dp[DP_KING_VS_MAN] != 0:
        k = king_vs_lone_man(mw, kw, mb, kb)
        if k >= 0:
            return (k if dp[DP_KING_VS_MAN] == 2 else DRAWN), R_KING_VS_MAN
    if dp[DP_REPETITION] > 0 and repetitions >= dp[DP_REPETITION]:
        return DRAWN, R_REPETITION
    if dp[DP_THREE_KINGS] > 0 and counters[C_THREE_KINGS] >= dp[DP_THREE_KINGS]:
        return DRAWN, R_THREE_KINGS
    if dp[DP_KINGS_ONLY] > 0 and counters[C_KINGS_ONLY] >= dp[DP_KINGS_ONLY]:
        return DRAWN, R_KINGS_ONLY
    if dp[DP_NO_PROGRESS] > 0 and counters[C_NO_PROGRESS] >= dp[DP_NO_PROGRESS]:
        return DRAWN, R_NO_PROGRESS
    if dp[DP_MAX_PLIES] >= 0 and plies >= dp[DP_MAX_PLIES]:
        if dp[DP_ADJUDICATION] == 1:
            return material_winner(mw, kw, mb, kb), R_ADJUDICATION
        return DRAWN, R_ADJUDICATION
    return ONGOING, 0


@njit(cache=True, _nrt=False)
def record_position(history, n_history, board, side, irreversible):
    """Add ``board``/``side`` to the repetition table ``history`` (int64 [H, 5], the
    positions since the last irreversible ply, ``n_history`` of them); an irreversible
    ply clears it first. Returns (new length, occurrences of this position, itself
    included). The caller keeps ``H`` above the length (see `grow_history`)."""
    if irreversible:
        n_history = 0
    count = 1
    for i in range(n_history):
        if (history[i, 4] == side and history[i, 0] == board[0] and history[i, 1] == board[1]
                and history[i, 2] == board[2] and history[i, 3] == board[3]):
            count += 1
    history[n_history, 0] = board[0]
    history[n_history, 1] = board[1]
    history[n_history, 2] = board[2]
    history[n_history, 3] = board[3]
    history[n_history, 4] = side
    return n_history + 1, count


def grow_history(history: np.ndarray) -> np.ndarray:
    """A repetition table twice as long, holding the same rows."""
    bigger = np.zeros((2 * history.shape[0], 5), np.int64)
    bigger[: history.shape[0]] = history
    return bigger
