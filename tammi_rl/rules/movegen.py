"""Compiled move generation, move application and perft (numba, ``cache=True``).

Everything here works on plain integers and arrays so numba can compile it once for
every variant: a position is four int64 bitboards (white men, white kings, black men,
black kings; bit ``i`` = internal square ``i``) plus the side to move (0 white,
1 black). The variant enters as ``params`` (an int64 vector, layout ``P_*`` below) and
the geometry as ``rays`` (``[n_squares, 4, size-1]``, see `geometry`).

Moves are written as rows of an int64 buffer ``out[MAX_MOVES, N_FIELDS]`` (layout
``F_*`` below): a whole move, i.e. the path of squares the piece visits and the
pieces it captures in order. Two capture routes with the same start, end and captured
set are one move (the first route found is kept).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

# --- params layout -------------------------------------------------------------
P_NSQ = 0  # number of playable squares
P_FLYING = 1  # 1: kings move and capture at any distance
P_CHOICE = 2  # capture choice: 0 free, 1 maximum, 2 italian precedence
P_PROMO = 3  # man reaching the far row mid-chain: 0 continue as king, 1 stop, 2 promote at end only
P_IMMEDIATE = 4  # 1: captured pieces leave the board at once (Turkish)
P_MEN_CAPTURE_KINGS = 5
P_NO_180 = 6  # 1: a capturing piece may not reverse direction between two jumps
P_MOVE_DIRS = 7  # [7 + side]: bitmask of the directions a man of `side` moves in
P_CAPTURE_DIRS = 9  # [9 + side]: bitmask of the directions a man of `side` captures in
P_FAR_ROW = 11  # [11 + side]: bitboard of the row where a man of `side` promotes
P_MAN_REACH = 13  # [13 + 64 * side + sq]: squares a man of `side` on `sq` could capture (prefilter)
N_PARAMS = P_MAN_REACH + 128

CHOICE_FREE, CHOICE_MAXIMUM, CHOICE_ITALIAN = 0, 1, 2
PROMO_CONTINUE, PROMO_STOP, PROMO_AT_END = 0, 1, 2

# --- move row layout -----------------------------------------------------------
MAX_MOVES = 1024
STACK_ROWS = 11  # the last rows of every move buffer are the capture search's scratch stack
MAX_CAPTURES = 24
MAX_PATH = MAX_CAPTURES + 1
F_FROM = 0
F_TO = 1
F_CAPTURED = 2  # bitboard of captured squares
F_PROMOTES = 3  # 1 when a man ends the move as a king
F_NCAP = 4  # number of pieces captured (= hops of a capture)
F_NKINGS = 5  # kings among them
F_FIRST_KING = 6  # index in capture order of the first king captured (MAX_CAPTURES if none)
F_BY_KING = 7  # 1 when the moving piece is a king
F_PATH_LEN = 8
F_PATH = 9  # MAX_PATH squares: start, then every landing square
F_CAPS = F_PATH + MAX_PATH  # MAX_CAPTURES squares: captured pieces in capture order
N_FIELDS = F_CAPS + MAX_CAPTURES

_ONE = np.int64(1)

# The hot functions below are compiled with ``_nrt=False``: they only read and write the
# arrays they are given (no allocation), and without the runtime numba stops counting
# references to those arrays. A function with NRT increfs every array argument on entry
# and decrefs it on exit, two atomic operations each; in Turkish alpha-beta those were
# 45% of all samples under perf.


@njit(cache=True, inline="always")
def _bit(sq):
    return _ONE << sq


@njit(cache=True, inline="always")
def popcount(b):
    """Number of set bits of an int64 bitboard (fast for sparse boards)."""
    c = 0
    while b != 0:
        b &= b - 1
        c += 1
    return c


@njit(cache=True, _nrt=False)
def _victim_and_landings(sq, d, is_king, own_color, opp_men, opp_kings, occ, captured, rays, params):
    """Capture from ``sq`` along direction ``d``: (victim square or -1, first landing index k, last k).

    Landing squares are ``rays[sq, d, k_first..k_last]``. ``occ`` holds every piece still
    on the board (the mover lifted from its start), ``captured`` the pieces jumped so far.
    """
    maxlen = rays.shape[2]
    k = 0
    if is_king and params[P_FLYING] == 1:
        while k < maxlen and rays[sq, d, k] >= 0 and (occ >> rays[sq, d, k]) & 1 == 0:
            k += 1
    if k >= maxlen or rays[sq, d, k] < 0:
        return -1, 0, -1
    victim = rays[sq, d, k]
    vbit = _bit(victim)
    if (opp_men | opp_kings) & vbit == 0 or captured & vbit != 0:
        return -1, 0, -1
    if not is_king and params[P_MEN_CAPTURE_KINGS] == 0 and opp_kings & vbit != 0:
        return -1, 0, -1
    first = k + 1
    last = first - 1
    while last + 1 < maxlen and rays[sq, d, last + 1] >= 0 and (occ >> rays[sq, d, last + 1]) & 1 == 0:
        last += 1
        if not (is_king and params[P_FLYING] == 1):
            break
    return victim, first, last


@njit(cache=True, _nrt=False)
def _can_capture(sq, is_king, color, last_dir, opp_men, opp_kings, occ, captured, rays, params):
    """Whether the piece on ``sq`` has at least one capture (used for chain continuation)."""
    dirs = 15 if is_king else params[P_CAPTURE_DIRS + color]
    for d in range(4):
        if (dirs >> d) & 1 == 0:
            continue
        if last_dir >= 0 and params[P_NO_180] == 1 and d == _opposite(last_dir):
            continue
        victim, first, last = _victim_and_landings(
            sq, d, is_king, color, opp_men, opp_kings, occ, captured, rays, params
        )
        if victim >= 0 and last >= first:
            return True
    return False


@njit(cache=True, inline="always")
def _opposite(d):
    # Both direction orders (NE, NW, SE, SW) and (N, E, W, S) pair d with 3 - d.
    return 3 - d


@njit(cache=True, _nrt=False)
def _commit(out, n, depth, captured, promotes, by_king, opp_kings, italian):
    """Finish the capture written in row ``n`` (``depth`` hops); return the new count.

    A route with the same start, end and captured set as an earlier row is the same move:
    it is dropped, except that under Italian precedence the row keeps the route that
    captures a king earliest (rule 4 judges a move by its best route). Otherwise the row
    is kept and its prefix copied into row ``n + 1`` so sibling routes can keep writing.
    """
    frm = out[n, F_PATH]
    to = out[n, F_PATH + depth]
    nkings = 0
    first_king = MAX_CAPTURES
    for i in range(depth):
        if (opp_kings >> out[n, F_CAPS + i]) & 1:
            if nkings == 0:
                first_king = i
            nkings += 1
    for j in range(n):
        if out[j, F_CAPTURED] == captured and out[j, F_FROM] == frm and out[j, F_TO] == to:
            if italian and first_king < out[j, F_FIRST_KING]:
                out[j, F_FIRST_KING] = first_king
                for i in range(depth + 1):
                    out[j, F_PATH + i] = out[n, F_PATH + i]
                for i in range(depth):
                    out[j, F_CAPS + i] = out[n, F_CAPS + i]
            return n
    out[n, F_FROM] = frm
    out[n, F_TO] = to
    out[n, F_CAPTURED] = captured
    out[n, F_PROMOTES] = promotes
    out[n, F_NCAP] = depth
    out[n, F_NKINGS] = nkings
    out[n, F_FIRST_KING] = first_king
    out[n, F_BY_KING] = by_king
    out[n, F_PATH_LEN] = depth + 1
    if n + 1 >= out.shape[0] - STACK_ROWS:
        raise IndexError("move buffer full: more legal moves than MAX_MOVES")
    for i in range(depth + 1):
        out[n + 1, F_PATH + i] = out[n, F_PATH + i]
    for i in range(depth):
        out[n + 1, F_CAPS + i] = out[n, F_CAPS + i]
    return n + 1


@njit(cache=True, _nrt=False)
def _captures_from(start, is_king, color, opp_men, opp_kings, occ, rays, params, out, n):
    """Commit every capture chain of the piece on ``start`` to ``out`` from row ``n`` on.

    An explicit-stack depth-first search (numba cannot cache recursive functions).
    Level ``L`` of the stack is the piece standing on its square after ``L`` hops; each
    level walks its directions, and for the current direction its landing squares.
    ``occ`` holds every piece on the board except the mover. Returns the new row count.
    """
    # Scratch rows at the buffer's tail, so the hot path allocates nothing. They are
    # indexed as out[row, level] rather than taken as row views: under numba's runtime
    # every view costs two atomic reference-count operations (this function now runs
    # without the runtime, so direct indexing is simply the plainer form).
    top = out.shape[0] - STACK_ROWS
    SQ = top
    KING = top + 1  # 1 when the piece moves as a king at this level
    OCC = top + 2
    CAPTURED = top + 3
    LAST_DIR = top + 4
    FOUND = top + 5
    D_AT = top + 6
    K_AT = top + 7
    LAST_AT = top + 8
    VICTIM = top + 9
    CONT = top + 10  # landings that can continue (bit k), 0: all may end
    started_king = 1 if is_king else 0
    far_row = params[P_FAR_ROW + color]
    promo = params[P_PROMO]
    immediate = params[P_IMMEDIATE] == 1
    no_180 = params[P_NO_180] == 1
    man_dirs = params[P_CAPTURE_DIRS + color]
    italian = params[P_CHOICE] == CHOICE_ITALIAN

    out[n, F_PATH] = start
    level = 0
    out[SQ, 0] = start
    out[KING, 0] = 1 if is_king else 0
    out[OCC, 0] = occ
    out[CAPTURED, 0] = 0
    out[LAST_DIR, 0] = -1
    out[FOUND, 0] = 0
    out[D_AT, 0] = -1
    out[K_AT, 0] = 1
    out[LAST_AT, 0] = 0
    while level >= 0:
        s = out[SQ, level]
        if out[K_AT, level] <= out[LAST_AT, level]:
            # Try the next landing square of the current direction.
            d = out[D_AT, level]
            k = out[K_AT, level]
            out[K_AT, level] = k + 1
            if out[CONT, level] != 0 and (out[CONT, level] >> k) & 1 == 0:
                continue
            land = rays[s, d, k]
            victim = out[VICTIM, level]
            vbit = _bit(victim)
            out[n, F_PATH + level + 1] = land
            out[n, F_CAPS + level] = victim
            new_captured = out[CAPTURED, level] | vbit
            king_now = out[KING, level]
            if king_now == 0 and (far_row >> land) & 1:
                if promo == PROMO_STOP:
                    n = _commit(out, n, level + 1, new_captured, 1, started_king, opp_kings, italian)
                    continue
                if promo == PROMO_CONTINUE:
                    king_now = 1
            if level + 1 >= MAX_CAPTURES:
                raise IndexError("capture chain longer than MAX_CAPTURES")
            level += 1
            out[SQ, level] = land
            out[KING, level] = king_now
            out[OCC, level] = out[OCC, level - 1] & ~vbit if immediate else out[OCC, level - 1]
            out[CAPTURED, level] = new_captured
            out[LAST_DIR, level] = d
            out[FOUND, level] = 0
            out[D_AT, level] = -1
            out[K_AT, level] = 1
            out[LAST_AT, level] = 0
            continue
        # Current direction exhausted: find the next one with a capture.
        dirs = 15 if out[KING, level] == 1 else man_dirs
        d = out[D_AT, level] + 1
        while d < 4:
            if (dirs >> d) & 1 and not (no_180 and out[LAST_DIR, level] >= 0 and d == _opposite(out[LAST_DIR, level])):
                victim, first, last = _victim_and_landings(
                    s,
                    d,
                    out[KING, level] == 1,
                    color,
                    opp_men,
                    opp_kings,
                    out[OCC, level],
                    out[CAPTURED, level],
                    rays,
                    params,
                )
                if victim >= 0 and last >= first:
                    break
            d += 1
        out[D_AT, level] = d
        if d < 4:
            out[FOUND, level] = 1
            out[VICTIM, level] = victim
            out[K_AT, level] = first
            out[LAST_AT, level] = last
            out[CONT, level] = 0
            if last > first:
                # A flying king must land where it can go on capturing, if it can anywhere.
                vbit = _bit(victim)
                nocc = out[OCC, level] & ~vbit if immediate else out[OCC, level]
                for k in range(first, last + 1):
                    if _can_capture(
                        rays[s, d, k],
                        True,
                        color,
                        d,
                        opp_men,
                        opp_kings,
                        nocc,
                        out[CAPTURED, level] | vbit,
                        rays,
                        params,
                    ):
                        out[CONT, level] |= _ONE << k
            continue
        # All directions done: a chain that cannot go on ends here.
        if level > 0 and out[FOUND, level] == 0:
            ends_king = out[KING, level] == 1 or (far_row >> s) & 1 == 1
            promotes = 1 if ends_king and started_king == 0 else 0
            n = _commit(out, n, level, out[CAPTURED, level], promotes, started_king, opp_kings, italian)
        level -= 1
    return n


@njit(cache=True, _nrt=False)
def _copy_row(out, src, dst):
    for f in range(out.shape[1]):
        out[dst, f] = out[src, f]


@njit(cache=True, _nrt=False)
def _filter_captures(out, n, choice):
    """Keep only the captures the variant's capture-choice rule allows; return the count."""
    if choice == CHOICE_FREE or n <= 1:
        return n
    best = 0
    for i in range(n):
        best = max(best, out[i, F_NCAP])
    keep = 0
    for i in range(n):
        if out[i, F_NCAP] == best:
            if keep != i:
                _copy_row(out, i, keep)
            keep += 1
    if choice == CHOICE_MAXIMUM:
        return keep
    # Italian precedence: quantity (done), then by a king, then most kings, then first king earliest.
    n = keep
    by_king = 0
    for i in range(n):
        by_king = max(by_king, out[i, F_BY_KING])
    most_kings = 0
    for i in range(n):
        if out[i, F_BY_KING] == by_king:
            most_kings = max(most_kings, out[i, F_NKINGS])
    earliest = MAX_CAPTURES
    for i in range(n):
        if out[i, F_BY_KING] == by_king and out[i, F_NKINGS] == most_kings:
            earliest = min(earliest, out[i, F_FIRST_KING])
    keep = 0
    for i in range(n):
        if out[i, F_BY_KING] == by_king and out[i, F_NKINGS] == most_kings and out[i, F_FIRST_KING] == earliest:
            if keep != i:
                _copy_row(out, i, keep)
            keep += 1
    return keep


@njit(cache=True, _nrt=False)
def _add_quiet(out, n, frm, to, promotes):
    if n >= out.shape[0] - STACK_ROWS:
        raise IndexError("move buffer full: more legal moves than MAX_MOVES")
    out[n, F_FROM] = frm
    out[n, F_TO] = to
    out[n, F_CAPTURED] = 0
    out[n, F_PROMOTES] = promotes
    out[n, F_NCAP] = 0
    out[n, F_NKINGS] = 0
    out[n, F_FIRST_KING] = MAX_CAPTURES
    out[n, F_BY_KING] = 0
    out[n, F_PATH_LEN] = 2
    out[n, F_PATH] = frm
    out[n, F_PATH + 1] = to
    return n + 1


@njit(cache=True, _nrt=False)
def generate_moves(men_w, kings_w, men_b, kings_b, side, rays, params, out):
    """Write every legal move of ``side`` into ``out``; return how many there are.

    Captures are compulsory: when any exists, only captures (filtered by the capture
    choice rule) are returned.
    """
    if side == 0:
        own_men, own_kings, opp_men, opp_kings = men_w, kings_w, men_b, kings_b
    else:
        own_men, own_kings, opp_men, opp_kings = men_b, kings_b, men_w, kings_w
    occ = own_men | own_kings | opp_men | opp_kings
    n = 0
    # Men: most have no enemy piece within reach, which one mask test rules out.
    targets = opp_men | opp_kings if params[P_MEN_CAPTURE_KINGS] == 1 else opp_men
    cap_dirs = params[P_CAPTURE_DIRS + side]
    reach = P_MAN_REACH + 64 * side
    rest = own_men
    while rest != 0:
        sq = trailing_zeros(rest)
        b = _bit(sq)
        rest ^= b
        if targets & params[reach + sq] == 0:
            continue
        for d in range(4):
            if (cap_dirs >> d) & 1:
                over = rays[sq, d, 0]
                land = rays[sq, d, 1]
                if land >= 0 and (targets >> over) & 1 and (occ >> land) & 1 == 0:
                    n = _captures_from(sq, False, side, opp_men, opp_kings, occ & ~b, rays, params, out, n)
                    break
    rest = own_kings
    while rest != 0:
        sq = trailing_zeros(rest)
        b = _bit(sq)
        rest ^= b
        if _can_capture(sq, True, side, -1, opp_men, opp_kings, occ & ~b, 0, rays, params):
            n = _captures_from(sq, True, side, opp_men, opp_kings, occ & ~b, rays, params, out, n)
    if n > 0:
        return _filter_captures(out, n, params[P_CHOICE])
    far_row = params[P_FAR_ROW + side]
    move_dirs = params[P_MOVE_DIRS + side]
    flying = params[P_FLYING] == 1
    maxlen = rays.shape[2]
    rest = own_men
    while rest != 0:
        sq = trailing_zeros(rest)
        rest ^= _bit(sq)
        for d in range(4):
            if (move_dirs >> d) & 1 == 0:
                continue
            to = rays[sq, d, 0]
            if to >= 0 and (occ >> to) & 1 == 0:
                n = _add_quiet(out, n, sq, to, 1 if (far_row >> to) & 1 else 0)
    rest = own_kings
    while rest != 0:
        sq = trailing_zeros(rest)
        rest ^= _bit(sq)
        for d in range(4):
            k = 0
            while k < maxlen:
                to = rays[sq, d, k]
                if to < 0 or (occ >> to) & 1:
                    break
                n = _add_quiet(out, n, sq, to, 0)
                if not flying:
                    break
                k += 1
    return n


@njit(cache=True, _nrt=False)
def has_capture(men_w, kings_w, men_b, kings_b, side, rays, params):
    """Whether ``side`` must capture (has at least one capture), without generating moves."""
    if side == 0:
        own_men, own_kings, opp_men, opp_kings = men_w, kings_w, men_b, kings_b
    else:
        own_men, own_kings, opp_men, opp_kings = men_b, kings_b, men_w, kings_w
    occ = own_men | own_kings | opp_men | opp_kings
    targets = opp_men | opp_kings if params[P_MEN_CAPTURE_KINGS] == 1 else opp_men
    cap_dirs = params[P_CAPTURE_DIRS + side]
    reach = P_MAN_REACH + 64 * side
    rest = own_men
    while rest != 0:
        sq = trailing_zeros(rest)
        rest &= rest - 1
        if targets & params[reach + sq] == 0:
            continue
        for d in range(4):
            if (cap_dirs >> d) & 1:
                land = rays[sq, d, 1]
                if land >= 0 and (targets >> rays[sq, d, 0]) & 1 and (occ >> land) & 1 == 0:
                    return True
    rest = own_kings
    while rest != 0:
        sq = trailing_zeros(rest)
        b = _bit(sq)
        rest ^= b
        if _can_capture(sq, True, side, -1, opp_men, opp_kings, occ & ~b, 0, rays, params):
            return True
    return False


@njit(cache=True, _nrt=False)
def jumpable(men, kings, opp_men, opp_kings, color, captured, occ, rays, params):
    """Bitboard of the opponent's pieces that a man in ``men`` or a king in ``kings`` (of
    ``color``) could jump with its next hop, with a free landing square beyond: the pieces
    under attack. ``occ`` holds every piece on the board, ``captured`` the pieces already
    jumped in the chain (they cannot be jumped twice). A rules fact for the network's input
    planes, not a move list: the capture-choice rule (take the most, Italian precedence) and
    the no-reversal rule between hops are not applied."""
    targets = opp_men | opp_kings
    out = np.int64(0)
    rest = men | kings
    while rest != 0:
        sq = trailing_zeros(rest)
        b = _bit(sq)
        rest ^= b
        is_king = kings & b != 0
        if not is_king and targets & params[P_MAN_REACH + 64 * color + sq] == 0:
            continue
        dirs = 15 if is_king else params[P_CAPTURE_DIRS + color]
        for d in range(4):
            if (dirs >> d) & 1 == 0:
                continue
            victim, first, last = _victim_and_landings(
                sq, d, is_king, color, opp_men, opp_kings, occ & ~b, captured, rays, params
            )
            if victim >= 0 and last >= first:
                out |= _bit(victim)
    return out


@njit(cache=True, _nrt=False)
def has_quiet_move(men_w, kings_w, men_b, kings_b, side, rays, params):
    """Whether ``side`` has a non-capturing move (a king or man step to an empty square)."""
    if side == 0:
        own_men, own_kings = men_w, kings_w
    else:
        own_men, own_kings = men_b, kings_b
    occ = men_w | kings_w | men_b | kings_b
    move_dirs = params[P_MOVE_DIRS + side]
    rest = own_men
    while rest != 0:
        sq = trailing_zeros(rest)
        rest &= rest - 1
        for d in range(4):
            if (move_dirs >> d) & 1:
                to = rays[sq, d, 0]
                if to >= 0 and (occ >> to) & 1 == 0:
                    return True
    rest = own_kings
    while rest != 0:
        sq = trailing_zeros(rest)
        rest &= rest - 1
        for d in range(4):
            to = rays[sq, d, 0]
            if to >= 0 and (occ >> to) & 1 == 0:
                return True
    return False


@njit(cache=True, _nrt=False)
def apply_move(men_w, kings_w, men_b, kings_b, side, out, i):
    """The four bitboards after ``side`` plays move row ``i`` of ``out``."""
    return apply_fields(
        men_w, kings_w, men_b, kings_b, side, out[i, F_FROM], out[i, F_TO], out[i, F_CAPTURED], out[i, F_PROMOTES]
    )


@njit(cache=True, inline="always")
def apply_fields(men_w, kings_w, men_b, kings_b, side, from_sq, to_sq, captured, promotes_flag):
    """`apply_move` from a move's fields (hot loops read them without taking a row view)."""
    frm = _bit(from_sq)
    to = _bit(to_sq)
    cap = captured
    promotes = promotes_flag == 1
    if side == 0:
        own_men, own_kings, opp_men, opp_kings = men_w, kings_w, men_b, kings_b
    else:
        own_men, own_kings, opp_men, opp_kings = men_b, kings_b, men_w, kings_w
    if own_kings & frm:
        own_kings = (own_kings & ~frm) | to
    else:
        own_men = own_men & ~frm
        if promotes:
            own_kings = own_kings | to
        else:
            own_men = own_men | to
    opp_men &= ~cap
    opp_kings &= ~cap
    if side == 0:
        return own_men, own_kings, opp_men, opp_kings
    return opp_men, opp_kings, own_men, own_kings


@njit(cache=True)
def _perft(men_w, kings_w, men_b, kings_b, side, depth, rays, params, buf):
    """Leaf count with an explicit stack (bulk-counted at the last ply); ``buf[ply]`` holds ply's moves."""
    if depth <= 0:
        return 1
    pos = np.empty((depth + 1, 5), np.int64)
    count = np.empty(depth + 1, np.int64)
    index = np.empty(depth + 1, np.int64)
    pos[0, 0], pos[0, 1], pos[0, 2], pos[0, 3], pos[0, 4] = men_w, kings_w, men_b, kings_b, side
    total = 0
    ply = 0
    count[0] = generate_moves(men_w, kings_w, men_b, kings_b, side, rays, params, buf[0])
    index[0] = 0
    if depth == 1:
        return count[0]
    while ply >= 0:
        if index[ply] >= count[ply]:
            ply -= 1
            continue
        i = index[ply]
        index[ply] = i + 1
        p = pos[ply]
        mw, kw, mb, kb = apply_move(p[0], p[1], p[2], p[3], p[4], buf[ply], i)
        nside = 1 - p[4]
        n = generate_moves(mw, kw, mb, kb, nside, rays, params, buf[ply + 1])
        if ply + 2 == depth:
            total += n
            continue
        ply += 1
        pos[ply, 0], pos[ply, 1], pos[ply, 2], pos[ply, 3], pos[ply, 4] = mw, kw, mb, kb, nside
        count[ply] = n
        index[ply] = 0
    return total


def perft(
    men_w: int, kings_w: int, men_b: int, kings_b: int, side: int, depth: int, rays: np.ndarray, params: np.ndarray
) -> int:
    """Number of leaf positions ``depth`` plies (whole moves) below a position."""
    if depth <= 0:
        return 1
    buf = np.zeros((depth, MAX_MOVES, N_FIELDS), dtype=np.int64)
    return int(_perft(men_w, kings_w, men_b, kings_b, side, depth, rays, params, buf))
