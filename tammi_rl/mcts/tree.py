"""Compiled batched search trees over hop actions (numba, no recursion).

One `Trees` value holds B independent trees (one per game searched together) as flat
arrays, in the spirit of mctx's batched tree but with numba kernels instead of
vectorised array programs. A simulation step is three calls:

1. `select_leaves`: per tree, walk from the root to a leaf (creating the child node the
   walk steps into), and write the leaf's observation planes and legal hops;
2. the caller evaluates all leaves in ONE network forward pass;
3. `expand_and_backup`: give the leaves their children (priors from the policy) and
   back the values up the paths.

Node state. A node is a state of the game between two hops: the board at the start of
the current turn, the hops already played in this turn (the path prefix of the whole
move being built) and the draw counters at the start of the turn. Its legal hops are
the next hops of the legal whole moves that start with that prefix (see
`tammi_rl.env.turn`). Hops by the same player can follow each other, so values are
PLAYER-INDEXED (DESIGN decision 3): each node stores the sum of backed-up values from
WHITE's point of view, and a parent reads its child's value with its own sign.

Simplifications, stated: repetition draws are not detected inside the tree (the root
knows the real repetition count); the length cap is not applied inside the tree.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tammi_rl.env import observation as ob
from tammi_rl.jit_cache import drop_stale_cache
from tammi_rl.rules import draw_rules as dr
from tammi_rl.rules import movegen as mg

drop_stale_cache(__file__, [mg, ob, dr])  # the kernels inline the move generator and draw rules

# --- integer node fields: nodes_i[tree, node, field] ---------------------------
I_BOARD = 0  # 5 fields: white men, white kings, black men, black kings, side
I_HOPS = 5  # hops already played in this turn
I_PARENT = 6
I_FIRST_EDGE = 7
I_N_EDGES = 8  # -1 until the node is expanded
I_VISITS = 9
I_TERMINAL = 10  # 1 when the game is over in this node
I_NO_PROGRESS = 11  # draw counters at the start of the turn (plies)
I_KINGS_ONLY = 12
I_THREE_KINGS = 13
I_PATH = 14  # MAX_PATH squares: the prefix of the move being built
N_I = I_PATH + mg.MAX_PATH

# --- float node fields: nodes_f[tree, node, field] -----------------------------
F_VALUE_SUM = 0  # sum of backed-up values, White's point of view
F_TERMINAL_VALUE = 1  # exact value (White's view) of a terminal node
F_NET_VALUE = 2  # the network's value of the node, side to move's view
N_F = 3

# Draw rules: the ``limits`` argument is `tammi_rl.rules.draw_rules.draw_params` (no cap).

_ONE = np.int64(1)


@njit(cache=True, _nrt=False)
def _alive_rows(board, hops, path, rays, params, buf, alive):
    """Generate the turn's legal moves into ``buf``; keep the rows starting with ``path[:hops+1]``."""
    n = mg.generate_moves(board[0], board[1], board[2], board[3], board[4], rays, params, buf)
    keep = 0
    for r in range(n):
        ok = True
        if hops > 0:
            if buf[r, mg.F_PATH_LEN] <= hops:
                ok = False
            else:
                for i in range(hops + 1):
                    if buf[r, mg.F_PATH + i] != path[i]:
                        ok = False
                        break
        if ok:
            alive[keep] = r
            keep += 1
    return keep


@njit(cache=True, _nrt=False)
def _terminal_value(board, counters, limits, n_moves):
    """(is_terminal, value from White's view) of a position at the start of a turn
    (repetition and the length cap are not judged inside the tree)."""
    winner, _ = dr.decide(board, board[4], n_moves, counters, 0, -1, limits)
    if winner == dr.ONGOING:
        return False, 0.0
    if winner == dr.DRAWN:
        return True, 0.0
    return True, (1.0 if winner == 0 else -1.0)


@njit(cache=True, _nrt=False)
def _new_node(nodes_i, nodes_f, n_nodes, t, parent):
    i = n_nodes[t]
    if i >= nodes_i.shape[1]:
        raise IndexError("search tree full: more nodes than simulations + 1")
    n_nodes[t] = i + 1
    nodes_i[t, i, I_PARENT] = parent
    nodes_i[t, i, I_FIRST_EDGE] = 0
    nodes_i[t, i, I_N_EDGES] = -1
    nodes_i[t, i, I_VISITS] = 0
    nodes_i[t, i, I_TERMINAL] = 0
    nodes_f[t, i, F_VALUE_SUM] = 0.0
    nodes_f[t, i, F_TERMINAL_VALUE] = 0.0
    nodes_f[t, i, F_NET_VALUE] = 0.0
    return i


@njit(cache=True, _nrt=False)
def _make_child(nodes_i, nodes_f, n_nodes, t, parent, action, hop_action, rays, params, limits, buf, alive):
    """Create the node reached from ``parent`` by hop ``action``; returns its index."""
    c = _new_node(nodes_i, nodes_f, n_nodes, t, parent)
    pb = nodes_i[t, parent, I_BOARD:I_BOARD + 5]
    hops = nodes_i[t, parent, I_HOPS]
    side = pb[4]
    n_alive = _alive_rows(pb, hops, nodes_i[t, parent, I_PATH:], rays, params, buf, alive)
    done = -1
    nxt = -1
    for j in range(n_alive):
        r = alive[j]
        if hop_action[side, buf[r, mg.F_PATH + hops], buf[r, mg.F_PATH + hops + 1]] == action:
            nxt = r
            if buf[r, mg.F_PATH_LEN] == hops + 2:
                done = r
                break
    if nxt < 0:
        raise ValueError("search: hop is not legal in its parent node")
    if done < 0:
        # The chain goes on: same turn, one more hop in the prefix.
        for f in range(I_PATH):
            nodes_i[t, c, f] = nodes_i[t, parent, f]
        nodes_i[t, c, I_PARENT] = parent
        nodes_i[t, c, I_FIRST_EDGE] = 0
        nodes_i[t, c, I_N_EDGES] = -1
        nodes_i[t, c, I_VISITS] = 0
        nodes_i[t, c, I_TERMINAL] = 0
        for i in range(hops + 2):
            nodes_i[t, c, I_PATH + i] = buf[nxt, mg.F_PATH + i]
        nodes_i[t, c, I_HOPS] = hops + 1
        return c
    # The whole move is complete: apply it and start the next turn.
    mw, kw, mb, kb = mg.apply_move(pb[0], pb[1], pb[2], pb[3], side, buf, done)
    capture = buf[done, mg.F_NCAP] > 0
    own_men = pb[0] if side == 0 else pb[2]
    man_move = (own_men >> buf[done, mg.F_FROM]) & 1 == 1
    cb = nodes_i[t, c, I_BOARD:I_BOARD + 5]
    cb[0], cb[1], cb[2], cb[3], cb[4] = mw, kw, mb, kb, 1 - side
    nodes_i[t, c, I_HOPS] = 0
    nodes_i[t, c, I_PATH] = -1
    counters = nodes_i[t, c, I_NO_PROGRESS:I_NO_PROGRESS + 3]
    for i in range(3):
        counters[i] = nodes_i[t, parent, I_NO_PROGRESS + i]
    dr.advance_counters(pb[0], pb[1], pb[2], pb[3], mw, kw, mb, kb, capture, man_move, counters)
    n_next = mg.generate_moves(mw, kw, mb, kb, 1 - side, rays, params, buf)
    term, value = _terminal_value(cb, nodes_i[t, c, I_NO_PROGRESS:I_NO_PROGRESS + 3], limits, n_next)
    if term:
        nodes_i[t, c, I_TERMINAL] = 1
        nodes_f[t, c, F_TERMINAL_VALUE] = value
    return c


@njit(cache=True, _nrt=False)
def _child_q(nodes_i, nodes_f, t, child, parent_side, fpu):
    """Mean value of ``child`` from the point of view of the player moving at its parent."""
    if child < 0 or nodes_i[t, child, I_VISITS] == 0:
        return fpu
    q = nodes_f[t, child, F_VALUE_SUM] / nodes_i[t, child, I_VISITS]
    return q if parent_side == 0 else -q


@njit(cache=True, _nrt=False)
def _completed_q(nodes_i, nodes_f, edge_child, edge_prior, t, node, out_q):
    """Completed Q of every child (mctx-style v_mix for unvisited ones), rescaled to [0, 1].

    Returns the largest child visit count.
    """
    side = nodes_i[t, node, I_BOARD + 4]
    first = nodes_i[t, node, I_FIRST_EDGE]
    ne = nodes_i[t, node, I_N_EDGES]
    net_v = nodes_f[t, node, F_NET_VALUE]
    total_visits = 0
    weighted = 0.0
    prior_visited = 0.0
    max_visits = 0
    for e in range(ne):
        c = edge_child[t, first + e]
        if c >= 0 and nodes_i[t, c, I_VISITS] > 0:
            v = nodes_i[t, c, I_VISITS]
            total_visits += v
            max_visits = max(max_visits, v)
            weighted += edge_prior[t, first + e] * _child_q(nodes_i, nodes_f, t, c, side, 0.0)
            prior_visited += edge_prior[t, first + e]
    if prior_visited > 0:
        v_mix = (net_v + total_visits * weighted / prior_visited) / (1 + total_visits)
    else:
        v_mix = net_v
    lo = 1e9
    hi = -1e9
    for e in range(ne):
        q = _child_q(nodes_i, nodes_f, t, edge_child[t, first + e], side, v_mix)
        out_q[e] = q
        lo = min(lo, q)
        hi = max(hi, q)
    span = max(hi - lo, 1e-6)
    for e in range(ne):
        out_q[e] = (out_q[e] - lo) / span if hi > lo else 0.5
    return max_visits


@njit(cache=True, _nrt=False)
def _select_edge(nodes_i, nodes_f, edge_child, edge_prior, edge_logit, edge_gumbel, t, node, is_root,
                 sim, considered_visits, algo, c_puct, c_visit, c_scale, scratch_q):
    """Index (within the node's edges) of the edge to follow."""
    first = nodes_i[t, node, I_FIRST_EDGE]
    ne = nodes_i[t, node, I_N_EDGES]
    side = nodes_i[t, node, I_BOARD + 4]
    n_parent = nodes_i[t, node, I_VISITS]
    best = -1
    best_score = -1e300
    if algo == 0:  # PUCT
        sqrt_n = np.sqrt(max(n_parent, 1))
        fpu = nodes_f[t, node, F_NET_VALUE]
        for e in range(ne):
            c = edge_child[t, first + e]
            visits = nodes_i[t, c, I_VISITS] if c >= 0 else 0
            q = _child_q(nodes_i, nodes_f, t, c, side, fpu)
            score = q + c_puct * edge_prior[t, first + e] * sqrt_n / (1 + visits)
            if score > best_score:
                best_score = score
                best = e
        return best
    max_visits = _completed_q(nodes_i, nodes_f, edge_child, edge_prior, t, node, scratch_q)
    sigma_scale = (c_visit + max_visits) * c_scale
    if is_root:
        # Sequential halving: visit the considered action with the fewest visits so far.
        target = considered_visits[sim]
        for e in range(ne):
            if edge_gumbel[t, first + e] < -1e200:
                continue  # not among the considered actions
            c = edge_child[t, first + e]
            visits = nodes_i[t, c, I_VISITS] if c >= 0 else 0
            if visits != target:
                continue
            score = edge_gumbel[t, first + e] + edge_logit[t, first + e] + sigma_scale * scratch_q[e]
            if score > best_score:
                best_score = score
                best = e
        if best >= 0:
            return best
        # Fall back to the least visited considered action (the schedule ran short).
        fewest = 1 << 60
        for e in range(ne):
            if edge_gumbel[t, first + e] < -1e200:
                continue
            c = edge_child[t, first + e]
            visits = nodes_i[t, c, I_VISITS] if c >= 0 else 0
            if visits < fewest:
                fewest = visits
                best = e
        return best
    # Interior Gumbel rule: follow the improved policy, correcting for visits so far.
    mx = -1e300
    for e in range(ne):
        scratch_q[e] = edge_logit[t, first + e] + sigma_scale * scratch_q[e]
        mx = max(mx, scratch_q[e])
    z = 0.0
    for e in range(ne):
        scratch_q[e] = np.exp(scratch_q[e] - mx)
        z += scratch_q[e]
    total = 0
    for e in range(ne):
        c = edge_child[t, first + e]
        total += nodes_i[t, c, I_VISITS] if c >= 0 else 0
    for e in range(ne):
        c = edge_child[t, first + e]
        visits = nodes_i[t, c, I_VISITS] if c >= 0 else 0
        score = scratch_q[e] / z - visits / (1.0 + total)
        if score > best_score:
            best_score = score
            best = e
    return best


@njit(cache=True, _nrt=False)
def _encode_planes(board, hops, buf, row, params, cell_row, cell_col, counters, obs):
    """Planes of a node as documented in `tammi_rl.env.observation` (``obs`` zeroed).

    ``row`` is any alive move row: its first ``hops`` hops are the ones played.
    """
    side = board[4]
    mw, kw, mb, kb = board[0], board[1], board[2], board[3]
    own_men, own_kings, opp_men, opp_kings = (mw, kw, mb, kb) if side == 0 else (mb, kb, mw, kw)
    cur = -1
    jumped = np.int64(0)
    if hops > 0:
        start = buf[row, mg.F_PATH]
        cur = buf[row, mg.F_PATH + hops]
        for i in range(hops):
            jumped |= _ONE << buf[row, mg.F_CAPS + i]
        king = (own_kings >> start) & 1 == 1
        if not king and params[mg.P_PROMO] == mg.PROMO_CONTINUE:
            far = params[mg.P_FAR_ROW + side]
            for i in range(1, hops + 1):
                if (far >> buf[row, mg.F_PATH + i]) & 1:
                    king = True
        own_men &= ~(_ONE << start)
        own_kings &= ~(_ONE << start)
        if king:
            own_kings |= _ONE << cur
        else:
            own_men |= _ONE << cur
        if params[mg.P_IMMEDIATE] == 1:
            opp_men &= ~jumped
            opp_kings &= ~jumped
    for sq in range(params[mg.P_NSQ]):
        r = cell_row[side, sq]
        c = cell_col[side, sq]
        obs[ob.PLAYABLE, r, c] = 1.0
        if (own_men >> sq) & 1:
            obs[ob.OWN_MEN, r, c] = 1.0
        elif (own_kings >> sq) & 1:
            obs[ob.OWN_KINGS, r, c] = 1.0
        elif (opp_men >> sq) & 1:
            obs[ob.OPP_MEN, r, c] = 1.0
        elif (opp_kings >> sq) & 1:
            obs[ob.OPP_KINGS, r, c] = 1.0
        if (jumped >> sq) & 1:
            obs[ob.JUMPED, r, c] = 1.0
    if cur >= 0:
        obs[ob.CHAIN_PIECE, cell_row[side, cur], cell_col[side, cur]] = 1.0
    for i in range(4):
        if counters[i] != 0.0:
            obs[ob.NO_PROGRESS + i, :, :] = counters[i]


@njit(cache=True, _nrt=False)
def _encode_leaf(nodes_i, t, node, rays, params, hop_action, limits, buf, alive, cell_row, cell_col,
                 counters, obs, leaf_actions, repetition):
    """Write the leaf's planes into ``obs`` and its legal hop actions; return their count."""
    board = nodes_i[t, node, I_BOARD:I_BOARD + 5]
    hops = nodes_i[t, node, I_HOPS]
    side = board[4]
    n_alive = _alive_rows(board, hops, nodes_i[t, node, I_PATH:], rays, params, buf, alive)
    for i in range(3):
        lim = limits[i]
        v = nodes_i[t, node, I_NO_PROGRESS + i]
        counters[i] = min(1.0, v / lim) if lim > 0 else 0.0
    counters[3] = min(1.0, repetition / limits[dr.DP_REPETITION]) if limits[dr.DP_REPETITION] > 0 else 0.0
    obs[:] = 0.0
    _encode_planes(board, hops, buf, alive[0], params, cell_row, cell_col, counters, obs)
    n = 0
    for j in range(n_alive):
        r = alive[j]
        a = hop_action[side, buf[r, mg.F_PATH + hops], buf[r, mg.F_PATH + hops + 1]]
        dup = False
        for q in range(n):
            if leaf_actions[q] == a:
                dup = True
                break
        if not dup:
            leaf_actions[n] = a
            n += 1
    return n


@njit(cache=True)
def init_roots(nodes_i, nodes_f, n_nodes, root_states, root_counters, active):
    """Reset each active tree to a single unexpanded root.

    ``root_states[t]``: int64 [5 + 1 + MAX_PATH] = board, hops, path prefix;
    ``root_counters[t]``: int64 [3] draw counters (no progress, kings only, three kings).
    """
    for t in range(nodes_i.shape[0]):
        if not active[t]:
            continue
        n_nodes[t] = 0
        r = _new_node(nodes_i, nodes_f, n_nodes, t, -1)
        for f in range(5):
            nodes_i[t, r, I_BOARD + f] = root_states[t, f]
        nodes_i[t, r, I_HOPS] = root_states[t, 5]
        for i in range(mg.MAX_PATH):
            nodes_i[t, r, I_PATH + i] = root_states[t, 6 + i]
        for i in range(3):
            nodes_i[t, r, I_NO_PROGRESS + i] = root_counters[t, i]


@njit(cache=True)
def select_leaves(nodes_i, nodes_f, n_nodes, edge_action, edge_child, edge_prior, edge_logit, edge_gumbel,
                  active, sim, considered_visits, algo, c_puct, c_visit, c_scale, rays, params, hop_action,
                  limits, cell_row, cell_col, root_repetition, obs, leaf_node, leaf_actions,
                  leaf_n_actions, buf, alive, scratch_q):
    """One selection step for every active tree.

    Writes per tree: ``leaf_node[t]`` (-1 when inactive); for a leaf that needs the
    network, its planes ``obs[t]`` and hop actions ``leaf_actions[t, :leaf_n_actions[t]]``;
    ``leaf_n_actions[t] = 0`` marks a terminal leaf, whose exact value `expand_and_backup`
    backs up. ``considered_visits[t]`` is tree t's Gumbel sequential-halving schedule.
    """
    counters = np.zeros(4, np.float64)
    for t in range(nodes_i.shape[0]):
        leaf_node[t] = -1
        leaf_n_actions[t] = 0
        if not active[t]:
            continue
        node = 0
        depth = 0
        while nodes_i[t, node, I_TERMINAL] == 0 and nodes_i[t, node, I_N_EDGES] >= 0:
            e = _select_edge(nodes_i, nodes_f, edge_child, edge_prior, edge_logit, edge_gumbel, t, node,
                             depth == 0, sim, considered_visits[t], algo, c_puct, c_visit, c_scale, scratch_q)
            slot = nodes_i[t, node, I_FIRST_EDGE] + e
            child = edge_child[t, slot]
            if child < 0:
                child = _make_child(nodes_i, nodes_f, n_nodes, t, node, edge_action[t, slot], hop_action,
                                    rays, params, limits, buf, alive)
                edge_child[t, slot] = child
                node = child
                break
            node = child
            depth += 1
        leaf_node[t] = node
        if nodes_i[t, node, I_TERMINAL] == 1:
            continue
        repetition = root_repetition[t] if node == 0 else 1
        leaf_n_actions[t] = _encode_leaf(nodes_i, t, node, rays, params, hop_action, limits, buf, alive,
                                         cell_row, cell_col, counters, obs[t], leaf_actions[t], repetition)


@njit(cache=True)
def expand_and_backup(nodes_i, nodes_f, n_edges, edge_action, edge_child, edge_prior, edge_logit, leaf_node,
                      leaf_actions, leaf_n_actions, logits, values):
    """Expand each evaluated leaf with softmax priors over its legal hops, then back up.

    ``logits[t]``: float32 [A] policy logits, ``values[t]``: the leaf's value for its
    side to move. Terminal leaves back up their exact value instead.
    """
    for t in range(nodes_i.shape[0]):
        node = leaf_node[t]
        if node < 0:
            continue
        if nodes_i[t, node, I_TERMINAL] == 1:
            value_white = nodes_f[t, node, F_TERMINAL_VALUE]
        else:
            side = nodes_i[t, node, I_BOARD + 4]
            v = values[t]
            nodes_f[t, node, F_NET_VALUE] = v
            value_white = v if side == 0 else -v
            if nodes_i[t, node, I_N_EDGES] < 0:
                n = leaf_n_actions[t]
                first = n_edges[t]
                if first + n > edge_action.shape[1]:
                    raise IndexError("search tree edge pool full")
                n_edges[t] = first + n
                mx = -1e300
                for j in range(n):
                    mx = max(mx, logits[t, leaf_actions[t, j]])
                z = 0.0
                for j in range(n):
                    a = leaf_actions[t, j]
                    edge_action[t, first + j] = a
                    edge_child[t, first + j] = -1
                    edge_logit[t, first + j] = logits[t, a] - mx
                    p = np.exp(logits[t, a] - mx)
                    edge_prior[t, first + j] = p
                    z += p
                for j in range(n):
                    edge_prior[t, first + j] /= z
                nodes_i[t, node, I_FIRST_EDGE] = first
                nodes_i[t, node, I_N_EDGES] = n
        while node >= 0:
            nodes_i[t, node, I_VISITS] += 1
            nodes_f[t, node, F_VALUE_SUM] += value_white
            node = nodes_i[t, node, I_PARENT]


@njit(cache=True)
def root_statistics(nodes_i, nodes_f, edge_action, edge_child, edge_prior, edge_logit, edge_gumbel, t,
                    c_visit, c_scale, out_actions, out_visits, out_q, out_improved, out_score):
    """Per root edge: action, visits, completed Q (rescaled), improved policy, Gumbel score.

    Returns the number of root edges. The improved policy is softmax(logits + sigma(q)),
    the Gumbel policy target; the score is gumbel + logits + sigma(q) (the final choice).
    """
    ne = nodes_i[t, 0, I_N_EDGES]
    if ne <= 0:
        return 0
    first = nodes_i[t, 0, I_FIRST_EDGE]
    max_visits = _completed_q(nodes_i, nodes_f, edge_child, edge_prior, t, 0, out_q)
    sigma_scale = (c_visit + max_visits) * c_scale
    mx = -1e300
    for e in range(ne):
        c = edge_child[t, first + e]
        out_actions[e] = edge_action[t, first + e]
        out_visits[e] = nodes_i[t, c, I_VISITS] if c >= 0 else 0
        out_improved[e] = edge_logit[t, first + e] + sigma_scale * out_q[e]
        out_score[e] = edge_gumbel[t, first + e] + out_improved[e]
        mx = max(mx, out_improved[e])
    z = 0.0
    for e in range(ne):
        out_improved[e] = np.exp(out_improved[e] - mx)
        z += out_improved[e]
    for e in range(ne):
        out_improved[e] /= z
    return ne
