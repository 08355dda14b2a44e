"""The compiled alpha-beta search: one fixed-depth negamax iteration (numba, ``cache=True``).

`search_iteration` searches the root to a fixed depth and is called once per depth by
the Python iterative-deepening driver (`tammi_rl.alphabeta.driver`). It is written
WITHOUT recursion: numba cannot safely load a recursive function from its disk cache,
so the tree walk is an explicit stack (one row per ply) driven by a small state machine
(ENTER a node, pick its NEXT move, RETURN a value to the parent).

What the search does:

* fail-soft negamax with principal-variation search (null windows after the first move,
  re-search on a fail-high inside the window);
* a transposition table of Zobrist keys in two-slot buckets (depth-preferred slot and
  always-replace slot); mate scores are stored relative to the node;
* move ordering: TT move, then captures by pieces/kings taken, then two killer moves
  per ply, then the history heuristic;
* quiescence: at depth 0 a position where the side to move must capture is searched
  on (captures only, since captures are compulsory there is no stand-pat); a position
  with a single legal move does not use up depth (forced-move extension);
* a side with no legal move loses: ``-(MATE - ply)``, so shorter wins score higher;
* draws: a position that already occurred on the current path (or in the game history
  handed in, since the last irreversible move) scores 0. This is cheaper than the
  game's threefold rule and makes the search avoid or seek repetition one cycle early.
  The variants' move-count draw rules are not modelled inside the search.
* a node budget: past ``node_limit`` nodes the iteration is abandoned (``aborted``); it
  then returns the best root move resolved so far (or -1), which the driver uses when
  the clock runs out mid-iteration. The driver searches in node slices and checks its
  deadline between them.

At the root, a ``margin`` > 0 lowers the window so every root move scoring within
``margin`` of the best gets an exact score in ``root_scores`` (used to randomise among
near-equal moves); moves outside it get an upper bound below ``best - margin``.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from tammi_rl.alphabeta.heuristic import evaluate
from tammi_rl.alphabeta.zobrist import SIDE_KEY_ROW, hash_bitboards
from tammi_rl.rules.movegen import (
    F_CAPTURED,
    F_FROM,
    F_NCAP,
    F_NKINGS,
    F_PROMOTES,
    F_TO,
    MAX_MOVES,
    N_FIELDS,
    apply_fields,
    generate_moves,
    has_capture,
    has_quiet_move,
)

MAX_PLY = 128
MATE = 1_000_000
INF = 2_000_000
MATE_BOUND = MATE - 1000  # |score| above this is a forced win/loss
EXACT, LOWER, UPPER = 0, 1, 2
_BIAS = 1 << 31
_ENTER, _NEXT, _RETURN = 0, 1, 2
_FULL, _NULL = 0, 1


def allocate_buffers(max_ply: int = MAX_PLY) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-ply move buffers, ordering scores and move permutations (uninitialised, reused)."""
    bufs = np.empty((max_ply + 1, MAX_MOVES, N_FIELDS), dtype=np.int64)
    order = np.empty((max_ply + 1, MAX_MOVES), dtype=np.int64)
    perm = np.empty((max_ply + 1, MAX_MOVES), dtype=np.int64)
    return bufs, order, perm


@njit(cache=True, inline="always")
def _pack(score, depth, flag, move):
    return (score + _BIAS) | (depth << 32) | (flag << 40) | ((move + 1) << 42)


@njit(cache=True, inline="always")
def _to_tt(score, ply):
    if score > MATE_BOUND:
        return score + ply
    if score < -MATE_BOUND:
        return score - ply
    return score


@njit(cache=True, inline="always")
def _from_tt(score, ply):
    if score > MATE_BOUND:
        return score - ply
    if score < -MATE_BOUND:
        return score + ply
    return score


@njit(cache=True, _nrt=False)
def tt_probe(tt_key, h):
    """Slot of key ``h`` in the table, or -1."""
    i = h & (tt_key.shape[0] - 2)  # even slot of the two-slot bucket
    if tt_key[i] == h:
        return i
    if tt_key[i + 1] == h:
        return i + 1
    return -1


@njit(cache=True, _nrt=False)
def tt_store(tt_key, tt_val, h, score, depth, flag, move):
    """Store an entry: the depth-preferred slot when as deep (or the same key), else the other."""
    i = h & (tt_key.shape[0] - 2)
    if depth > 255:
        depth = 255
    if tt_key[i] != h and depth < ((tt_val[i] >> 32) & 0xFF):
        i += 1
    tt_key[i] = h
    tt_val[i] = _pack(score, depth, flag, move)


@njit(cache=True, _nrt=False)
def _child_hash(h, keys, frm, to, cap, promotes, side, own_kings, opp_kings):
    kind = 2 * side + (1 if (own_kings >> frm) & 1 else 0)
    new_kind = 2 * side + 1 if kind & 1 or promotes == 1 else kind
    h ^= keys[SIDE_KEY_ROW, 0] ^ keys[kind, frm] ^ keys[new_kind, to]
    opp = 2 * (1 - side)
    while cap != 0:
        sq = trailing_zeros(cap)
        cap &= cap - 1
        h ^= keys[opp + (1 if (opp_kings >> sq) & 1 else 0), sq]
    return h


@njit(cache=True)
def search_iteration(
    root,
    depth,
    margin,
    node_limit,
    rays,
    params,
    pst,
    reach,
    mobility,
    keys,
    tt_key,
    tt_val,
    killers,
    history,
    path,
    n_hist,
    men_reversible,
    extend_forced,
    bufs,
    order,
    perm,
    root_scores,
):
    """Search ``root`` (int64[5]: four bitboards and side) to ``depth`` plies.

    ``path[:n_hist]`` holds the Zobrist keys of the game positions since the last
    irreversible move (root excluded); the search writes its own path after them.
    Returns ``(score, best move row, nodes, aborted)``; the move row indexes
    `generate_moves` order for the root. An aborted iteration returns the best root move
    whose full-window score it completed (its first move, then any that beat it), or row
    -1 when none was. ``extend_forced`` 1 turns on the forced-move
    extension. ``root_scores[i]`` receives each root move's
    score (exact within the margin window, else an upper bound).
    """
    P = bufs.shape[0] - 1
    pos = np.empty((P + 1, 5), np.int64)
    ist = np.empty((P + 1, 12), np.int64)  # int state per ply, columns below
    DEP, ALPHA, BETA, AORIG, BEST, BIDX, NMOV, DONE, CUR, STAGE, IRREV, TTD = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11
    base = n_hist
    for f in range(5):
        pos[0, f] = root[f]
    path[base] = hash_bitboards(root[0], root[1], root[2], root[3], root[4], keys)
    ist[0, DEP] = depth
    ist[0, ALPHA] = -INF
    ist[0, BETA] = INF
    ist[0, IRREV] = 0
    ist[0, BEST] = -INF
    ist[0, BIDX] = -1
    nodes = 0
    p = 0
    ret = 0
    mode = _ENTER
    while True:
        if mode == _ENTER:
            nodes += 1
            if nodes > node_limit:
                return ist[0, BEST], ist[0, BIDX], nodes, True
            h = path[base + p]
            mw, kw, mb, kb, side = pos[p, 0], pos[p, 1], pos[p, 2], pos[p, 3], pos[p, 4]
            d = ist[p, DEP]
            if p > 0:
                i = base + p - 2
                rep = False
                while i >= ist[p, IRREV]:
                    if path[i] == h:
                        rep = True
                        break
                    i -= 2
                if rep:
                    ret = 0
                    mode = _RETURN
                    continue
            if p >= P - 1:
                ret = evaluate(mw, kw, mb, kb, side, pst, reach, mobility)
                mode = _RETURN
                continue
            ttm = -1
            slot = tt_probe(tt_key, h)
            if slot >= 0:
                v = tt_val[slot]
                ttm = ((v >> 42) & 0x7FF) - 1
                if p > 0 and ((v >> 32) & 0xFF) >= max(d, 0):
                    sc = _from_tt((v & 0xFFFFFFFF) - _BIAS, p)
                    flag = (v >> 40) & 3
                    if (
                        flag == EXACT
                        or (flag == LOWER and sc >= ist[p, BETA])
                        or (flag == UPPER and sc <= ist[p, ALPHA])
                    ):
                        ret = sc
                        mode = _RETURN
                        continue
            if d <= 0 and not has_capture(mw, kw, mb, kb, side, rays, params):
                # A quiet leaf (most nodes): no need to generate its moves.
                if has_quiet_move(mw, kw, mb, kb, side, rays, params):
                    ret = evaluate(mw, kw, mb, kb, side, pst, reach, mobility)
                else:
                    ret = -(MATE - p)
                mode = _RETURN
                continue
            buf = bufs[p]
            n = generate_moves(mw, kw, mb, kb, side, rays, params, buf)
            if n == 0:
                ret = -(MATE - p)
                mode = _RETURN
                continue
            capture = buf[0, F_NCAP] > 0
            for i in range(n):
                perm[p, i] = i
                if i == ttm:
                    sc = 1 << 40
                elif capture:
                    sc = (buf[i, F_NCAP] << 20) + (buf[i, F_NKINGS] << 16) + (buf[i, F_PROMOTES] << 15)
                else:
                    key = buf[i, F_FROM] * 64 + buf[i, F_TO]
                    if key == killers[p, 0]:
                        sc = 1 << 35
                    elif key == killers[p, 1]:
                        sc = (1 << 35) - 1
                    else:
                        sc = history[side, buf[i, F_FROM], buf[i, F_TO]] + (buf[i, F_PROMOTES] << 34)
                order[p, i] = sc
            ist[p, TTD] = d  # the depth the node was asked for (what the TT records)
            if n == 1 and extend_forced == 1 and p < P // 2:
                ist[p, DEP] = d + 1  # forced move: do not use up depth
            ist[p, NMOV] = n
            ist[p, DONE] = 0
            ist[p, BEST] = -INF
            ist[p, BIDX] = -1
            ist[p, AORIG] = ist[p, ALPHA]
            if p == 0:
                for i in range(n):
                    root_scores[i] = -INF
            mode = _NEXT
        elif mode == _NEXT:
            k = ist[p, DONE]
            n = ist[p, NMOV]
            d = ist[p, DEP]
            if k >= n:
                b = ist[p, BEST]
                if ist[p, TTD] >= 0:
                    flag = EXACT if b > ist[p, AORIG] else UPPER
                    tt_store(tt_key, tt_val, path[base + p], _to_tt(b, p), ist[p, TTD], flag, ist[p, BIDX])
                ret = b
                mode = _RETURN
                continue
            bi = k
            bs = order[p, k]
            for j in range(k + 1, n):
                if order[p, j] > bs:
                    bs = order[p, j]
                    bi = j
            mi = perm[p, bi]
            perm[p, bi] = perm[p, k]
            order[p, bi] = order[p, k]
            perm[p, k] = mi
            ist[p, DONE] = k + 1
            ist[p, CUR] = mi
            # Move fields are read straight from bufs: a row view would cost atomic refcounts.
            frm, to = bufs[p, mi, F_FROM], bufs[p, mi, F_TO]
            cap, promotes = bufs[p, mi, F_CAPTURED], bufs[p, mi, F_PROMOTES]
            side = pos[p, 4]
            c = p + 1
            mw, kw, mb, kb = apply_fields(pos[p, 0], pos[p, 1], pos[p, 2], pos[p, 3], side, frm, to, cap, promotes)
            pos[c, 0], pos[c, 1], pos[c, 2], pos[c, 3], pos[c, 4] = mw, kw, mb, kb, 1 - side
            own_kings = pos[p, 1] if side == 0 else pos[p, 3]
            opp_kings = pos[p, 3] if side == 0 else pos[p, 1]
            path[base + c] = _child_hash(path[base + p], keys, frm, to, cap, promotes, side, own_kings, opp_kings)
            man_move = (own_kings >> frm) & 1 == 0
            if cap != 0 or promotes == 1 or (man_move and men_reversible == 0):
                ist[c, IRREV] = base + c
            else:
                ist[c, IRREV] = ist[p, IRREV]
            ist[c, DEP] = d - 1
            if k == 0:
                ist[p, STAGE] = _FULL
                ist[c, ALPHA] = -ist[p, BETA]
            else:
                ist[p, STAGE] = _NULL
                ist[c, ALPHA] = -ist[p, ALPHA] - 1
            ist[c, BETA] = -ist[p, ALPHA]
            p = c
            mode = _ENTER
        else:  # _RETURN
            if p == 0:
                return ret, ist[0, BIDX], nodes, False
            p -= 1
            score = -ret
            if ist[p, STAGE] == _NULL and ist[p, ALPHA] < score < ist[p, BETA]:
                ist[p, STAGE] = _FULL
                c = p + 1
                ist[c, DEP] = ist[p, DEP] - 1  # undo a forced-move extension the null-window pass added
                ist[c, ALPHA] = -ist[p, BETA]
                ist[c, BETA] = -ist[p, ALPHA]
                p = c
                mode = _ENTER
                continue
            mi = ist[p, CUR]
            if p == 0:
                root_scores[mi] = score
            if score > ist[p, BEST]:
                ist[p, BEST] = score
                ist[p, BIDX] = mi
            raised = score - margin - 1 if p == 0 and margin > 0 else score
            if raised > ist[p, ALPHA]:
                ist[p, ALPHA] = raised
            if score >= ist[p, BETA]:
                d = ist[p, DEP]
                if bufs[p, mi, F_NCAP] == 0:
                    key = bufs[p, mi, F_FROM] * 64 + bufs[p, mi, F_TO]
                    if killers[p, 0] != key:
                        killers[p, 1] = killers[p, 0]
                        killers[p, 0] = key
                    if d > 0:
                        history[pos[p, 4], bufs[p, mi, F_FROM], bufs[p, mi, F_TO]] += d * d
                if ist[p, TTD] >= 0:
                    tt_store(tt_key, tt_val, path[base + p], _to_tt(score, p), ist[p, TTD], LOWER, mi)
                ret = score
                mode = _RETURN
                continue
            mode = _NEXT
