"""The turn machine: the hops of a turn and the end of every move, compiled, in one place.

A turn is one whole move played as hops (`tammi_rl.rules.actions`). At the start of a
turn the move generator writes every legal whole move into a row buffer ``buf`` (rows of
`tammi_rl.rules.movegen`); the rows still possible after the hops played so far are the
"alive" rows. A hop keeps the alive rows whose next hop it is; it is legal exactly when
one does. When the hops played complete an alive row's path, that move is finished:
applied, the draw counters advanced, the next turn's moves generated, and the end and
draw rules (`tammi_rl.rules.draw_rules`) decide whether the game goes on. (Two moves may
share a prefix and diverge; a move never ends where another continues, because a chain
must go on while it can.)

Every user of the rules runs on these functions: the Gymnasium env and the `Game` record
keep a whole game in a state vector (``state``, layout ``S_*``, with `begin_game`,
`play_hop`, `play_row`, `fill_mask`); the search trees keep a compact node per state and
call the same building blocks (`prefix_rows`, `keep_hop`, `completed_row`,
`legal_hops`, `finish_move`, `chain_view`) on it.

All per-variant tables are packed into one int64 vector ``tables`` (layout ``X_*``,
built by `build_tables`), so the compiled calls take few arguments.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit

from tammi_rl.rules import draw_rules as dr
from tammi_rl.rules import movegen as mg
from tammi_rl.rules.actions import canonical_square, codec_for
from tammi_rl.rules.engine import Rules

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
S_REASON = 15  # index into rules.results.REASONS once the game is over
S_HISTORY_N = 16  # rows used in the repetition table
S_ALIVE = 20  # [20 .. 20 + MAX_MOVES) alive row indices
S_LAST = S_ALIVE + mg.MAX_MOVES  # the row of the last completed whole move
N_STATE = S_LAST + mg.N_FIELDS

# --- tables layout -----------------------------------------------------------------
X_NSQ = 0
X_SIZE = 1
X_RAYLEN = 2
X_NACT = 3
X_LIMITS = 4  # [4..7] the counters' limits (0: no such rule), in observation-plane order
X_PARAMS = 8  # offset of the movegen params
X_NPARAMS = 9
X_RAYS = 10  # offset of rays [nsq, 4, raylen]
X_HOP = 11  # offset of hop_action [2, nsq, nsq]
X_CELL_ROW = 12  # offset of cell_row [2, nsq]: canonical board row of each square, per side
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
_ONE = np.int64(1)


def counter_limits(rules: Rules) -> tuple[int, int, int, int]:
    """Plies (occurrences for repetition) at which each counter's rule fires; 0 = no rule."""
    d = rules.variant.draw
    return (2 * d.no_progress_moves, 2 * d.kings_only_moves, 2 * d.three_kings_vs_one_moves, d.repetition)


def canonical_cells(rules: Rules) -> tuple[np.ndarray, np.ndarray]:
    """int64 [2, n_squares] (row, col): where each internal square lies on the board drawn
    from each side's point of view (the canonical frame of actions and observations)."""
    g = rules.geometry
    rows = np.zeros((2, g.n_squares), np.int64)
    cols = np.zeros((2, g.n_squares), np.int64)
    for side in (0, 1):
        for sq in range(g.n_squares):
            rows[side, sq], cols[side, sq] = g.coords[canonical_square(g.n_squares, side, sq)]
    return rows, cols


@functools.lru_cache(maxsize=64)
def _tables(rules: Rules, max_plies: int | None) -> np.ndarray:
    codec = codec_for(rules)
    rows, cols = canonical_cells(rules)
    parts = [rules.params, rules.rays, codec.hop_action, rows, cols, dr.draw_params(rules.variant, max_plies)]
    offsets = []
    pos = X_HEADER
    for p in parts:
        offsets.append(pos)
        pos += p.size
    t = np.zeros(pos, dtype=np.int64)
    t[X_NSQ], t[X_SIZE], t[X_RAYLEN], t[X_NACT] = (
        rules.rays.shape[0],
        rules.geometry.size,
        rules.rays.shape[2],
        codec.n_actions,
    )
    t[X_LIMITS : X_LIMITS + 4] = counter_limits(rules)
    t[X_NPARAMS] = rules.params.size
    t[X_PARAMS], t[X_RAYS], t[X_HOP], t[X_CELL_ROW], t[X_CELL_COL], t[X_DRAW] = offsets
    for off, p in zip(offsets, parts, strict=True):
        t[off : off + p.size] = p.ravel()
    t.setflags(write=False)
    return t


def build_tables(rules: Rules, max_plies: int | None) -> np.ndarray:
    """The packed int64 tables of ``rules``' variant with a length cap of ``max_plies``
    (None: no cap). Cached per (rules, cap) and read-only: share them freely."""
    return _tables(rules, max_plies)


def new_state(history_rows: int = 64) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fresh (state, buf, history) arrays for one game."""
    return (
        np.zeros(N_STATE, dtype=np.int64),
        np.zeros((mg.MAX_MOVES, mg.N_FIELDS), dtype=np.int64),
        np.zeros((max(2, history_rows), 5), dtype=np.int64),
    )


# --- table views ---------------------------------------------------------------------
@njit(cache=True, inline="always")
def params_of(tables):
    o = tables[X_PARAMS]
    return tables[o : o + tables[X_NPARAMS]]


@njit(cache=True, inline="always")
def rays_of(tables):
    nsq, raylen, o = tables[X_NSQ], tables[X_RAYLEN], tables[X_RAYS]
    return tables[o : o + nsq * 4 * raylen].reshape((nsq, 4, raylen))


@njit(cache=True, inline="always")
def hop_table_of(tables):
    nsq, o = tables[X_NSQ], tables[X_HOP]
    return tables[o : o + 2 * nsq * nsq].reshape((2, nsq, nsq))


@njit(cache=True, inline="always")
def draw_params_of(tables):
    o = tables[X_DRAW]
    return tables[o : o + dr.N_DP]


# --- building blocks (shared by the state vector below and the search trees) ----------
@njit(cache=True, inline="always")
def generate(board, side, tables, buf):
    """Write the legal whole moves of ``side`` on ``board`` (int64 [4]) into ``buf``; return their count."""
    return mg.generate_moves(board[0], board[1], board[2], board[3], side, rays_of(tables), params_of(tables), buf)


@njit(cache=True, _nrt=False)
def prefix_rows(buf, n, path, hops, alive):
    """Into ``alive``, the rows among the first ``n`` whose path starts with ``path[:hops + 1]``
    (all rows at the start of a turn); return their count."""
    keep = 0
    for r in range(n):
        ok = True
        if hops > 0:
            if buf[r, _F_PATH_LEN] <= hops:
                ok = False
            else:
                for i in range(hops + 1):
                    if buf[r, _F_PATH + i] != path[i]:
                        ok = False
                        break
        if ok:
            alive[keep] = r
            keep += 1
    return keep


@njit(cache=True, _nrt=False)
def keep_hop(buf, alive, n_alive, hops, side, action, tables):
    """Keep (in order, in place) the alive rows whose hop number ``hops`` is ``action``;
    return how many. 0 means the hop is illegal, and then ``alive`` is untouched."""
    hop = hop_table_of(tables)
    keep = 0
    for j in range(n_alive):
        r = alive[j]
        if hop[side, buf[r, _F_PATH + hops], buf[r, _F_PATH + hops + 1]] == action:
            alive[keep] = r
            keep += 1
    return keep


@njit(cache=True, _nrt=False)
def completed_row(buf, alive, n_alive, hops):
    """The alive row whose whole path has been played after ``hops`` hops, or -1."""
    for j in range(n_alive):
        r = alive[j]
        if buf[r, _F_PATH_LEN] == hops + 1:
            return r
    return -1


@njit(cache=True, _nrt=False)
def legal_hops(buf, alive, n_alive, hops, side, tables, out):
    """The distinct next hops of the alive rows, in row order, into ``out``; return their count."""
    hop = hop_table_of(tables)
    n = 0
    for j in range(n_alive):
        r = alive[j]
        a = hop[side, buf[r, _F_PATH + hops], buf[r, _F_PATH + hops + 1]]
        dup = False
        for q in range(n):
            if out[q] == a:
                dup = True
                break
        if not dup:
            out[n] = a
            n += 1
    return n


@njit(cache=True, _nrt=False)
def finish_move(board, side, buf, row, counters, tables):
    """Play the whole move ``buf[row]`` of ``side`` on ``board`` (int64 [4], in place) and
    advance the three ply ``counters`` (int64 [3], in place). Returns True when the move is
    irreversible (the repetition table restarts after it)."""
    b0, b1, b2, b3 = board[0], board[1], board[2], board[3]
    capture = buf[row, _F_NCAP] > 0
    own_men = b0 if side == 0 else b2
    man_move = (own_men >> buf[row, _F_FROM]) & 1 == 1
    mw, kw, mb, kb = mg.apply_move(b0, b1, b2, b3, side, buf, row)
    board[0] = mw
    board[1] = kw
    board[2] = mb
    board[3] = kb
    dr.advance_counters(b0, b1, b2, b3, mw, kw, mb, kb, capture, man_move, counters)
    draw = draw_params_of(tables)
    return capture or buf[row, _F_PROMOTES] == 1 or (man_move and draw[dr.DP_MAN_IRREVERSIBLE] == 1)


@njit(cache=True, _nrt=False)
def chain_view(board, side, hops, buf, row, tables):
    """The board as it stands after ``hops`` hops of row ``row`` (any alive row) by ``side``:
    (white_men, white_kings, black_men, black_kings, square of the piece that must continue
    or -1, bitboard of the pieces jumped so far).

    The moving piece stands on its current landing square (a king if it started as one or,
    under ``promotion_in_chain = "continue"``, crossed the far row); jumped pieces stay on
    the board unless captures are removed immediately.
    """
    mw, kw, mb, kb = board[0], board[1], board[2], board[3]
    if hops == 0 or row < 0:
        return mw, kw, mb, kb, np.int64(-1), np.int64(0)
    params = params_of(tables)
    start = buf[row, _F_PATH]
    cur = buf[row, _F_PATH + hops]
    jumped = np.int64(0)
    for i in range(hops):
        jumped |= _ONE << buf[row, _F_CAPS + i]
    if side == 0:
        own_men, own_kings, opp_men, opp_kings = mw, kw, mb, kb
    else:
        own_men, own_kings, opp_men, opp_kings = mb, kb, mw, kw
    sbit = _ONE << start
    king = own_kings & sbit != 0
    if not king and params[mg.P_PROMO] == mg.PROMO_CONTINUE:
        far = params[mg.P_FAR_ROW + side]
        for i in range(1, hops + 1):
            if (far >> buf[row, _F_PATH + i]) & 1:
                king = True
    own_men &= ~sbit
    own_kings &= ~sbit
    if king:
        own_kings |= _ONE << cur
    else:
        own_men |= _ONE << cur
    if params[mg.P_IMMEDIATE] == 1:
        opp_men &= ~jumped
        opp_kings &= ~jumped
    if side == 0:
        return own_men, own_kings, opp_men, opp_kings, cur, jumped
    return opp_men, opp_kings, own_men, own_kings, cur, jumped


# --- a whole game in one state vector (env, Game) -------------------------------------
@njit(cache=True, _nrt=False)
def _decide(state, tables, n_moves):
    winner, reason = dr.decide(
        state[0:4],
        state[S_SIDE],
        n_moves,
        state[S_COUNTERS : S_COUNTERS + 3],
        state[S_COUNTERS + 3],
        state[S_PLIES],
        draw_params_of(tables),
    )
    state[S_WINNER] = winner
    state[S_REASON] = reason
    state[S_DONE] = 0 if winner == dr.ONGOING else 1


@njit(cache=True, _nrt=False)
def start_turn(state, buf, tables):
    """Generate the legal moves of the side to move and make them all alive; return their count."""
    n = generate(state[0:4], state[S_SIDE], tables, buf)
    for i in range(n):
        state[S_ALIVE + i] = i
    state[S_ALIVE_N] = n
    state[S_HOPS] = 0
    state[S_NLEGAL] = n
    return n


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
def play_row(state, buf, tables, history, row):
    """Play the whole legal move ``buf[row]`` from the start of the turn (no hop played yet).

    Copies it to ``state[S_LAST:]``, applies it, flips the side, generates the next turn's
    moves and lets the draw rules decide whether the game goes on. ``history`` must have
    a free row (the caller grows it, see `draw_rules.grow_history`).
    """
    for f in range(buf.shape[1]):
        state[S_LAST + f] = buf[row, f]
    side = state[S_SIDE]
    irreversible = finish_move(state[0:4], side, buf, row, state[S_COUNTERS : S_COUNTERS + 3], tables)
    state[S_SIDE] = 1 - side
    n = start_turn(state, buf, tables)
    state[S_PLIES] += 1
    n_hist, reps = dr.record_position(history, state[S_HISTORY_N], state[0:4], 1 - side, irreversible)
    state[S_HISTORY_N] = n_hist
    state[S_COUNTERS + 3] = reps
    _decide(state, tables, n)


@njit(cache=True, _nrt=False)
def play_hop(state, buf, tables, history, action):
    """Play one hop. Returns HOP_ILLEGAL (state untouched), HOP_CONTINUES or HOP_COMPLETES
    (then as `play_row`: the move is finished and the next turn begun)."""
    k = state[S_HOPS]
    alive = state[S_ALIVE : S_ALIVE + mg.MAX_MOVES]
    keep = keep_hop(buf, alive, state[S_ALIVE_N], k, state[S_SIDE], action, tables)
    if keep == 0:
        return HOP_ILLEGAL
    state[S_ALIVE_N] = keep
    state[S_HOPS] = k + 1
    done = completed_row(buf, alive, keep, k + 1)
    if done < 0:
        return HOP_CONTINUES
    play_row(state, buf, tables, history, done)
    return HOP_COMPLETES


@njit(cache=True, _nrt=False)
def fill_mask(state, buf, tables, mask):
    """Set ``mask[a] = 1`` for every legal hop ``a`` (``mask`` must be zeroed); nothing once done."""
    if state[S_DONE] != 0:
        return
    hop = hop_table_of(tables)
    side = state[S_SIDE]
    k = state[S_HOPS]
    for j in range(state[S_ALIVE_N]):
        r = state[S_ALIVE + j]
        mask[hop[side, buf[r, _F_PATH + k], buf[r, _F_PATH + k + 1]]] = 1


@njit(cache=True, _nrt=False)
def state_legal_hops(state, buf, tables, out):
    """The distinct legal hops now into ``out`` (none once the game is over); return their count."""
    if state[S_DONE] != 0:
        return 0
    return legal_hops(
        buf, state[S_ALIVE : S_ALIVE + mg.MAX_MOVES], state[S_ALIVE_N], state[S_HOPS], state[S_SIDE], tables, out
    )


@njit(cache=True, _nrt=False)
def state_chain_view(state, buf, tables):
    """`chain_view` of the game in ``state`` (see there)."""
    row = state[S_ALIVE] if state[S_ALIVE_N] > 0 else -1
    return chain_view(state[0:4], state[S_SIDE], state[S_HOPS], buf, row, tables)
