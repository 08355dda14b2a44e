"""The end and draw rules of every variant, compiled: the one place they are decided.

The turn machine (`tammi_rl.rules.turn`) calls these after every whole move, for the
environment, the search trees, self-play and the `Game` record alike. A pure-Python
reading of the same rules lives in the tests (``tests/support/reference_draw_rules.py``), which
play thousands of random games through both and require the same counters and results.

Counters (all in plies; a rule of N moves per side fires at 2*N plies):

* no progress: plies since the last capture or man move (a promotion is a man move);
  the English/Italian 40-move rule draws when it reaches ``2 * draw.no_progress_moves``.
* kings only: plies played from a position in which both sides had only kings, with
  no capture since. It is 0 in the position where that balance arises (by a promotion
  or a capture) and whenever it does not hold; a capture resets it. The Russian
  15-move rule draws at ``2 * draw.kings_only_moves``.
* three kings: plies played while one side has 3+ kings (men may stand beside them)
  and the other a single king and nothing else. It is 0 where that balance arises and
  whenever it does not hold; a capture that keeps the balance (4 kings v 1 becoming
  3 v 1) does NOT reset it, since the deadline runs from when the balance arose.
* repetitions: how often the current position (same pieces, same side to move) has
  occurred so far, this time included; drawn at ``draw.repetition``. The repetition
  table is cleared after an irreversible ply (a capture, a promotion, or a man move
  where men only move forward), because no earlier position can come back.

Order of decisions (`decide`): the side to move has no legal move (it loses); a lone
king v a lone man (Turkish option); repetition; three kings v one; kings only; no
progress; the length cap (adjudication: a draw or by material).

A variant's draw rules and a length cap are packed into one int64 vector built by
`draw_params` (layout ``DP_*``). Results are two small ints: ``winner`` (`ONGOING`,
0 white, 1 black, `DRAWN`) and ``reason`` (an index into
`tammi_rl.rules.results.REASONS`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tammi_rl.rules import movegen as mg
from tammi_rl.rules.results import REASONS
from tammi_rl.rules.variant import Variant

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
# Indices into REASONS (numba freezes these ints into the compiled code).
R_NO_MOVES = REASONS.index("no_moves")
R_REPETITION = REASONS.index("repetition")
R_KINGS_ONLY = REASONS.index("kings_only")
R_THREE_KINGS = REASONS.index("three_kings_vs_one")
R_NO_PROGRESS = REASONS.index("no_progress")
R_KING_VS_MAN = REASONS.index("king_vs_lone_man")
R_ADJUDICATION = REASONS.index("adjudication")

# counters vector: the three ply counters (no progress, kings only, three kings)
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
    ``plies``: plies played (-1 skips the length cap). Order: the module docstring.
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
        if (
            history[i, 4] == side
            and history[i, 0] == board[0]
            and history[i, 1] == board[1]
            and history[i, 2] == board[2]
            and history[i, 3] == board[3]
        ):
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
