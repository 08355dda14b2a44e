"""Compiled per-hop turn state: which whole moves are still possible after the hops played.

At the start of a turn the engine writes every legal whole move into ``buf`` (rows of
`tammi_rl.rules.movegen`). Every row is "alive". Each hop keeps only the rows whose next
hop (``path[k] -> path[k+1]``) is that action; when the hops played complete an alive
row's path, that whole move is applied. A hop is legal exactly when some alive row
continues with it, so the mask is the set of next hops of the alive rows (two moves may
share a prefix and diverge; a move never ends where another continues, because a chain
must go on while it can).

A completed move also runs the game's end and draw rules (`tammi_rl.rules.draw_rules`,
the compiled twin of `Game`): the draw counters, the repetition table ``history`` and
the result live in the core, so a completed move needs no Python bookkeeping.

To keep the per-step cost to one or two compiled calls with few arguments, all state
is packed in one int64 vector ``state`` (layout ``S_*``) beside the move buffer ``buf``,
and all per-variant tables in one int64 vector ``tables`` (layout ``X_*``; built by
`build_tables`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tammi_rl.jit_cache import drop_stale_cache
from tammi_rl.rules import draw_rules as dr
from tammi_rl.rules import movegen as mg

drop_stale_cache(__file__, [mg, dr])  # the turn kernels inline the move generator and draw rules

# --- state layout ------------------------------------------------------------------
S_BOARD = 0  # [0..3] white men, white kings, black men, black kings (int64 bitboards)
S_SIDE = 4  # side to move (0 white, 1 black)
S_ALIVE_N = 5  # number of alive rows
S_HOPS = 6  # hops played this turn
S_NLEGAL = 7  # legal whole moves at the start of this turn
S_DONE = 8  # 1 once the game is over (the mask is then empty)
S_COUNTERS = 9  # [9..12] draw counters: no progress, kings only, three kings (plies), repetitions
S_PLIES = 13  # whole moves played
S_WINNER = 14  # draw_rules.ONGOING, 0 white, 1 black, draw_rules.DRAWN
S_REASON = 15  # index into rules.game.REASONS once the game is over
S_HISTORY_N = 16  # rows used in the repetition table
S_ALIVE = 20  # [20 .. 20 + MAX_MOVES) alive row indices
S_LAST = S_ALIVE + mg.MAX_MOVES  # the row of the last completed whole move
N_STATE = S_LAST + mg.N_FIELDS

# --- tables layout -----------------------------------------------------------------
X_NSQ = 0
X_SIZE = 1
X_RAYLEN = 2
X_NACT = 3
X_LIMITS = 4  # [4..7] the counters' limits (0: no such rule)
X_PARAMS = 8  # offset of the movegen params
X_NPARAMS = 9
X_RAYS = 10  # offset of rays [nsq, 4, raylen]
X_HOP = 11  # offset of hop_action [2, nsq, nsq]
X_CELL_ROW = 12  # offset of cell_row [2, nsq]
X_CELL_COL = 13  # offset of cell_col [2, nsq]
X_DRAW = 14  # offset of the draw-rule parameters (draw_rules.DP_*)
X_HEADER = 16

HOP_ILLEGAL = -1
HOP_CONTINUES = 0
HOP_COMPLETES = 1

_F_PATH = mg.F_PATH
_F_PATH_LEN = mg.F_PATH_LEN
_F_CAPS = mg.F_CAPS
_F_NCAP = mg.F_NCAP
_F_FROM = mg.F_FROM
_F_PROMOTES = mg.F_PROMOTES


def build_tables(params: np.ndarray, rays: np.ndarray, hop_action: np.ndarray, cell_row: np.ndarray,
                 cell_col: np.ndarray, limits: tuple[int, int, int, int], size: int, n_actions: int,
                 draw: np.ndarray) -> np.ndarray:
    """Pack one variant's tables (``draw``: `draw_rules.draw_params`) into the int64 vector
    the compiled calls read."""
    parts = [params, rays, hop_action, cell_row, cell_col, draw]
    offsets = []
    pos = X_HEADER
    for p in parts:
        offsets.append(pos)
        pos += p.size
    t = np.zeros(pos, dtype=np.int64)
    t[X_NSQ], t[X_SIZE], t[X_RAYLEN], t[X_NACT] = rays.shape[0], size, rays.shape[2], n_actions
    t[X_LIMITS : X_LIMITS + 4] = limits
    t[X_NPARAMS] = params.size
    t[X_PARAMS], t[X_RAYS], t[X_HOP], t[X_CELL_ROW], t[X_CELL_COL], t[X_DRAW] = offsets
    for off, p in zip(offsets, parts):
        t[off : off + p.size] = p.ravel()
    return t


@njit(cache=True, inline="always")
def _params(tables):
    o = tables[X_PARAMS]
    return tables[o : o + tables[X_NPARAMS]]


@njit(cache=True, inline="always")
def _rays(tables):
    nsq, raylen, o = tables[X_NSQ], tables[X_RAYLEN], tables[X_RAYS]
    return tables[o : o + nsq * 4 * raylen].reshape((nsq, 4, raylen))


@njit(cache=True, inline="always")
def _hop_action(tables):
    nsq, o = tables[X_NSQ], tables[X_HOP]
    return tables[o : o + 2 * nsq * nsq].reshape((2, nsq, nsq))


@njit(cache=True, inline="always")
def _draw(tables):
    o = tables[X_DRAW]
    return tables[o : o + dr.N_DP]


@njit(cache=True, _nrt=False)
def _decide(state, tables, n_moves):
    winner, reason = dr.decide(state[0:4], state[S_SIDE], n_moves, state[S_COUNTERS : S_COUNTERS + 3],
                               state[S_COUNTERS + 3], state[S_PLIES], _draw(tables))
    state[S_WINNER] = winner
    state[S_REASON] = reason
    state[S_DONE] = 0 if winner == dr.ONGOING else 1


@njit(cache=True, _nrt=False)
def begin_game(state, buf, tables, history):
    """Start a game from the board in ``state[0:5]``: moves, zero counters, the repetition
    table holding the start position, and the result if the start already decides it.
    Returns the number of legal moves."""
    n = start_turn(state, buf, tables)
    for i in range(3):
        state[S_COUNTERS + i] = 0
    state[S_PLIES] = 0
    n_hist, reps = dr.record_position(history, 0, state[0:4], state[S_SIDE], True)
    state[S_HISTORY_N] = n_hist
    state[S_COUNTERS + 3] = reps
    _decide(state, tables, n)
    return n


@njit(cache=True, _nrt=False)
def start_turn(state, buf, tables):
    """Generate the legal moves of the side to move and make them all alive; return their count."""
    n = mg.generate_moves(state[0], state[1], state[2], state[3], state[S_SIDE], _rays(tables), _params(tables), buf)
    for i in range(n):
        state[S_ALIVE + i] = i
    state[S_ALIVE_N] = n
    state[S_HOPS] = 0
    state[S_NLEGAL] = n
    return n


@njit(cache=True, _nrt=False)
def play_hop(state, buf, tables, history, action):
    """Play one hop. Returns HOP_ILLEGAL (state untouched), HOP_CONTINUES or HOP_COMPLETES.

    On completion the whole move is copied to ``state[S_LAST:]``, applied to the board,
    the side flips, the next turn's moves are generated and the draw rules decide
    whether the game goes on (``history`` must have a free row: the caller grows it).
    """
    hop = _hop_action(tables)
    side = state[S_SIDE]
    k = state[S_HOPS]
    keep = 0
    for j in range(state[S_ALIVE_N]):
        r = state[S_ALIVE + j]
        if hop[side, buf[r, _F_PATH + k], buf[r, _F_PATH + k + 1]] == action:
            state[S_ALIVE + keep] = r  # in-order compaction; untouched when nothing matches
            keep += 1
    if keep == 0:
        return HOP_ILLEGAL
    k += 1
    state[S_ALIVE_N] = keep
    state[S_HOPS] = k
    done = -1
    for j in range(keep):
        r = state[S_ALIVE + j]
        if buf[r, _F_PATH_LEN] == k + 1:
            done = r
            break
    if done < 0:
        return HOP_CONTINUES
    for f in range(buf.shape[1]):
        state[S_LAST + f] = buf[done, f]
    b0, b1, b2, b3 = state[0], state[1], state[2], state[3]
    capture = buf[done, _F_NCAP] > 0
    own_men = b0 if side == 0 else b2
    man_move = (own_men >> buf[done, _F_FROM]) & 1 == 1
    promotes = buf[done, _F_PROMOTES] == 1
    mw, kw, mb, kb = mg.apply_move(b0, b1, b2, b3, side, buf, done)
    state[0] = mw
    state[1] = kw
    state[2] = mb
    state[3] = kb
    state[S_SIDE] = 1 - side
    n = start_turn(state, buf, tables)
    draw = _draw(tables)
    dr.advance_counters(b0, b1, b2, b3, mw, kw, mb, kb, capture, man_move, state[S_COUNTERS : S_COUNTERS + 3])
    state[S_PLIES] += 1
    irreversible = capture or promotes or (man_move and draw[dr.DP_MAN_IRREVERSIBLE] == 1)
    n_hist, reps = dr.record_position(history, state[S_HISTORY_N], state[0:4], 1 - side, irreversible)
    state[S_HISTORY_N] = n_hist
    state[S_COUNTERS + 3] = reps
    _decide(state, tables, n)
    return HOP_COMPLETES


@njit(cache=True, _nrt=False)
def fill_mask(state, buf, tables, mask):
    """Set ``mask[a] = 1`` for every legal hop ``a`` (``mask`` must be zeroed); nothing once done."""
    if state[S_DONE] != 0:
        return
    hop = _hop_action(tables)
    side = state[S_SIDE]
    k = state[S_HOPS]
    for j in range(state[S_ALIVE_N]):
        r = state[S_ALIVE + j]
        mask[hop[side, buf[r, _F_PATH + k], buf[r, _F_PATH + k + 1]]] = 1


@njit(cache=True, _nrt=False)
def chain_view(state, buf, tables):
    """The board as it stands mid-chain: (white_men, white_kings, black_men, black_kings, square of
    the piece that must continue or -1, bitboard of pieces jumped so far).

    The moving piece stands on its current landing square (a king if it started as one or,
    under ``promotion_in_chain = "continue"``, crossed the far row); jumped pieces stay on
    the board unless captures are removed immediately.
    """
    mw, kw, mb, kb, side = state[0], state[1], state[2], state[3], state[S_SIDE]
    k = state[S_HOPS]
    if k == 0 or state[S_ALIVE_N] == 0:
        return mw, kw, mb, kb, np.int64(-1), np.int64(0)
    params = _params(tables)
    r = state[S_ALIVE]
    one = np.int64(1)
    start = buf[r, _F_PATH]
    cur = buf[r, _F_PATH + k]
    jumped = np.int64(0)
    for i in range(k):
        jumped |= one << buf[r, _F_CAPS + i]
    if side == 0:
        own_men, own_kings, opp_men, opp_kings = mw, kw, mb, kb
    else:
        own_men, own_kings, opp_men, opp_kings = mb, kb, mw, kw
    sbit = one << start
    cbit = one << cur
    king = own_kings & sbit != 0
    if not king and params[mg.P_PROMO] == mg.PROMO_CONTINUE:
        far = params[mg.P_FAR_ROW + side]
        for i in range(1, k + 1):
            if (far >> buf[r, _F_PATH + i]) & 1:
                king = True
    if own_kings & sbit:
        own_kings = own_kings & ~sbit
    else:
        own_men = own_men & ~sbit
    if king:
        own_kings |= cbit
    else:
        own_men |= cbit
    if params[mg.P_IMMEDIATE] == 1:
        opp_men &= ~jumped
        opp_kings &= ~jumped
    if side == 0:
        return own_men, own_kings, opp_men, opp_kings, cur, jumped
    return opp_men, opp_kings, own_men, own_kings, cur, jumped


def new_state(history_rows: int = 64) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fresh (state, buf, history) arrays."""
    return (np.zeros(N_STATE, dtype=np.int64), np.zeros((mg.MAX_MOVES, mg.N_FIELDS), dtype=np.int64),
            np.zeros((max(2, history_rows), 5), dtype=np.int64))
