"""Batched search trees over hop actions: node arrays, expansion and backup (numba, no recursion).

B independent trees (one per game searched together) live in flat arrays, in the spirit
of mctx's batched tree but with numba kernels instead of vectorised array programs. This
module knows nothing of how an edge is chosen: the in-tree selection rule is a compiled
``select_edge`` function that `select_leaves` takes as its first argument
(`tammi_rl.mcts.puct`, `tammi_rl.mcts.gumbel`; each compiles its own selection step around
it). A simulation step is three calls:

1. the algorithm's ``select_leaves``: per tree, walk from the root to a leaf (creating the
   child node the walk steps into), and write the leaf's observation planes and legal hops;
   up to K walks per tree (K = ``leaves.shape[1]``), each a simulation of its own;
2. the caller evaluates all leaves in ONE network forward pass;
3. `expand_and_backup`: give the leaves their children (priors from the policy) and
   back the values up the paths.

Several walks in one tree (K > 1) spread out by VIRTUAL LOSS: a walk marks every node on
its path as pending (``NI_PENDING``), and until the step's backup the selection rules read
each pending walk as one more visit (`child_visits`), by default one that keeps the child's
mean value (`VIRTUAL_VALUE`; ``SP_VIRTUAL_VALUE`` = -1 makes it a lost visit: `child_q`).
A walk that still ends on a leaf another walk of the same step
already holds (a collision) is dropped, and that tree takes no more walks this step. Every
simulation backs up its own leaf's exact value; only the order of the leaves changes.

An optional EVALUATION CACHE (`allocate_cache`) keeps the network's output for positions
already evaluated (keyed by the whole node state, compared in full: exact), so a
transposition inside the tree, or a line searched again at the next move, costs no network
call. It is only valid for one set of weights: the owner clears it when they change.

Arrays (B trees, N nodes and E edges per tree; shapes as ``[B, N, NI_COUNT]`` etc.):

* ``nodes_i`` int64 ``[B, N, NI_COUNT]``, ``nodes_f`` float64 ``[B, N, NF_COUNT]``: nodes.
* ``edges_i`` int64 ``[B, E, EI_COUNT]``, ``edges_f`` float64 ``[B, E, EF_COUNT]``: edges;
  the edges of a node are the contiguous slice ``[first, first + n)``.
* ``trees_i`` int64 ``[B, TI_COUNT]``: per-tree counts, flags and the last leaf.
* ``params`` float64 ``[SP_COUNT]``: the search settings (`search_params`).
* ``tables``: the variant's packed tables (`tammi_rl.rules.turn.build_tables`, no length cap).

N and E are the caller's choice (`pool_sizes`): one node per network call, plus room for
forced-hop nodes when those are played through. A tree that outgrows them raises.

A node is a state of the game between two hops: the board at the start of the current
turn, the hops already played in this turn (the path prefix of the whole move being
built) and the draw counters at the start of the turn. Its legal hops, the finished
moves and the game end come from the turn machine (`tammi_rl.rules.turn`), its planes
from the one observation encoder (`tammi_rl.env.observation`). Hops by the same player
can follow each other, so values are PLAYER-INDEXED: each node stores the sum of
backed-up values from WHITE's point of view, and a parent reads its child's value with
its own sign (`child_q`).

Forced hops (one legal hop: the rest of a capture chain, the only capture) are played
through when a simulation creates a node (`_play_forced_hops`, ``params[SP_FORCED]``):
the simulation's network call goes to the next node with a choice, so a tree of S
simulations can hold more than S nodes.

REPETITION inside the tree (``params[SP_REPETITION_DRAWS]``, off by default): a new node
whose position (board and side to move, at the start of a turn) already stands on its path
from the root, or among the game's positions before the root since the last irreversible
move (the root's history, `write_root`), is a terminal draw. That is one cycle earlier than
the threefold rule, as alpha-beta searches (`tammi_rl.alphabeta.core`): whoever can repeat
once can repeat again, so the search learns that a line which goes round in circles is a
draw, where without it the tree values it as if the game went on. Off, the root knows the
real repetition count (shown in its planes) and no node inside the tree does.

Simplification, stated: the length cap is not applied inside the tree.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from tammi_rl.env import observation as ob
from tammi_rl.rules import draw_rules as dr
from tammi_rl.rules import movegen as mg
from tammi_rl.rules import turn as tm

N_COUNTERS = 3  # draw counters kept per node: no progress, kings only, three kings (plies)
MAX_HISTORY = 64
"""Positions before the root a search sees for repetition draws (the newest, when the game
has more since its last irreversible move)."""
HISTORY_FIELDS = 5  # a history position: 4 bitboards, then the side to move

# --- node fields: nodes_i[tree, node, NI_*]; a multi-field value spans [NI_X, NI_X_END) ----
NI_BOARD = 0  # white men, white kings, black men, black kings (bitboards) at the start of the turn
NI_BOARD_END = 4
NI_SIDE = 4  # side to move: 0 White, 1 Black
NI_HOPS = 5  # hops already played in this turn
NI_PARENT = 6  # parent node (-1 at the root)
NI_FIRST_EDGE = 7  # first edge of this node's slice
NI_N_EDGES = 8  # number of edges; -1 until the node is expanded
NI_VISITS = 9
NI_TERMINAL = 10  # 1 when the game is over in this node
NI_PENDING = 11  # walks of the current step through this node, not yet backed up (virtual loss)
NI_COUNTERS = 12  # N_COUNTERS draw counters at the start of the turn
NI_COUNTERS_END = NI_COUNTERS + N_COUNTERS
NI_PATH = NI_COUNTERS_END  # MAX_PATH squares: the prefix of the move being built (start square first)
NI_PATH_END = NI_PATH + mg.MAX_PATH
NI_COUNT = NI_PATH_END

# --- node values: nodes_f[tree, node, NF_*] -------------------------------------------
NF_VALUE_SUM = 0  # sum of backed-up values, White's point of view
NF_TERMINAL_VALUE = 1  # exact value (White's view) of a terminal node
NF_NET_VALUE = 2  # the network's value of the node, side to move's view
NF_COUNT = 3

# --- edges: edges_i[tree, edge, EI_*], edges_f[tree, edge, EF_*] -----------------------
EI_ACTION = 0  # the hop action
EI_CHILD = 1  # child node, -1 until visited
EI_COUNT = 2
EF_PRIOR = 0  # softmax prior (PUCT: with root noise)
EF_LOGIT = 1  # policy logit minus the node's max logit
EF_GUMBEL = 2  # root Gumbel noise (`tammi_rl.mcts.gumbel.NOT_CONSIDERED` outside the considered set); 0 elsewhere
EF_COUNT = 3

# --- per tree: trees_i[tree, TI_*] -----------------------------------------------------
TI_N_NODES = 0
TI_N_EDGES = 1
TI_ACTIVE = 2  # 1: this tree takes part in the current simulation step
TI_REPETITION = 3  # occurrences of the root position so far (for the root's planes)
TI_N_LEAVES = 4  # walks (simulations) the last selection step made in this tree
TI_BUDGET = 5  # simulations this search may make in the tree (the root's own evaluation included)
TI_HORIZON = 6  # the pool keeps one node free for each simulation index below this (forced hops)
TI_N_HISTORY = 7  # positions in the root's history (`write_root`)
TI_HISTORY = 8  # MAX_HISTORY positions of HISTORY_FIELDS each (4 bitboards, side to move), oldest first
TI_HISTORY_END = TI_HISTORY + MAX_HISTORY * HISTORY_FIELDS
TI_COUNT = TI_HISTORY_END

# --- the leaves of a step: leaves[tree, k, LI_*]; their planes and hops are row t * K + k ---
LI_NODE = 0  # the leaf node
LI_N_ACTIONS = 1  # its legal hops (0: terminal, backed up with its exact value)
LI_CACHE_SLOT = 2  # evaluation cache slot holding its network output (-1: needs the network)
LI_COUNT = 3

VIRTUAL_VALUE = float("nan")
"""Default `SP_VIRTUAL_VALUE`: a pending walk counts as a visit that keeps the child's mean
(only the exploration term feels it). Measured with the shipped Russian network, 50 positions
at 800 simulations and 16 leaves a call: the root's visit shares moved 0.009 (total
variation) from the one-leaf search's and the move agreed on 100%; counting a pending walk
as a loss (-1) moved them 0.050 and agreed on 96%, and that player scored 0.390 (+13 =52
-35) against the one-leaf player over 100 games at equal simulations."""

# --- evaluation cache (`allocate_cache`): key of a node state, compared in full ----------
K_BOARD = 0  # 4 bitboards
K_SIDE = 4
K_HOPS = 5
K_PATH = 6  # MAX_PATH squares, -1 past the prefix
K_COUNTERS = K_PATH + mg.MAX_PATH
K_REPETITION = K_COUNTERS + N_COUNTERS
K_COUNT = K_REPETITION + 1
CACHE_MAX_ACTIONS = 64
"""Positions with more legal hops than this are not cached (rare: kings in open boards)."""

# --- search settings: params[SP_*] (`search_params`): the tree's, then PUCT's, then Gumbel's --
SP_FORCED = 0  # 1: play forced hops through without a network call (`_play_forced_hops`)
SP_C_PUCT = 1  # PUCT exploration constant
SP_FPU_REDUCTION = 2  # PUCT: unvisited children start at the node's value minus this * sqrt(visited prior)
SP_C_VISIT = 3  # Gumbel sigma: (c_visit + max visits) * c_scale * q
SP_C_SCALE = 4
SP_VIRTUAL_VALUE = 5  # what a pending walk counts as for the player moving into the node (NaN: its mean)
SP_REPETITION_DRAWS = 6  # 1: a position repeated on the path or from the root's history is a draw
SP_COUNT = 7

# --- root states: roots[tree, R_*] (`write_root`, `init_roots`) ----------------------------
R_BOARD = 0  # as NI_BOARD
R_BOARD_END = 4
R_SIDE = 4
R_HOPS = 5
R_PATH = 6  # MAX_PATH squares, -1 past the prefix
R_PATH_END = R_PATH + mg.MAX_PATH
R_COUNTERS = R_PATH_END  # N_COUNTERS fields, as NI_COUNTERS
R_COUNTERS_END = R_COUNTERS + N_COUNTERS
R_REPETITION = R_COUNTERS_END
R_N_HISTORY = R_REPETITION + 1
R_HISTORY = R_N_HISTORY + 1  # as TI_HISTORY
R_HISTORY_END = R_HISTORY + MAX_HISTORY * HISTORY_FIELDS
R_COUNT = R_HISTORY_END

# --- workspace counters (`workspace`): the observation encoder's counters record ---------
W_REPETITION = N_COUNTERS  # after the draw counters: occurrences of the position


def pool_sizes(max_simulations: int, edges_per_node: int, forced_per_simulation: int) -> tuple[int, int]:
    """(N nodes, E edges) per tree for searches of up to ``max_simulations`` simulations.

    One node per network call (``max_simulations + 2``: the root's call and a spare node),
    each with up to ``edges_per_node`` edges, and ``forced_per_simulation`` one-edge nodes per
    call for forced hops (0: forced hops are not played through).
    """
    evaluated = max_simulations + 2
    forced = forced_per_simulation * evaluated
    return evaluated + forced, evaluated * edges_per_node + forced


def allocate(n_trees: int, n_nodes: int, n_edges: int) -> tuple[np.ndarray, ...]:
    """Zeroed ``(nodes_i, nodes_f, edges_i, edges_f, trees_i)`` for ``n_trees`` trees."""
    return (
        np.zeros((n_trees, n_nodes, NI_COUNT), np.int64),
        np.zeros((n_trees, n_nodes, NF_COUNT), np.float64),
        np.zeros((n_trees, n_edges, EI_COUNT), np.int64),
        np.zeros((n_trees, n_edges, EF_COUNT), np.float64),
        np.zeros((n_trees, TI_COUNT), np.int64),
    )


def workspace() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Scratch arrays for the selection step: a move buffer, alive rows, per-edge values, the
    observation counters, a cache key (allocated once per search object: allocating them per
    call costs about 2%)."""
    return (
        np.zeros((mg.MAX_MOVES, mg.N_FIELDS), np.int64),
        np.zeros(mg.MAX_MOVES, np.int64),
        np.zeros(mg.MAX_MOVES, np.float64),
        np.zeros(W_REPETITION + 1, np.int64),
        np.zeros(K_COUNT, np.int64),
    )


def allocate_cache(slots: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """An empty evaluation cache of ``slots`` entries (a power of two; 0: no cache), as
    ``(keys int64 [S, K_COUNT], counts int64 [S] (legal hops; -1: empty), logits float32
    [S, CACHE_MAX_ACTIONS] (at the legal hops, in their order), values float32 [S])``.
    Direct-mapped: a new position replaces whatever held its slot."""
    if slots < 0 or slots & (slots - 1):
        raise ValueError(f"cache slots must be 0 or a power of two, got {slots}")
    return (
        np.zeros((slots, K_COUNT), np.int64),
        np.full(slots, -1, np.int64),
        np.zeros((slots, CACHE_MAX_ACTIONS), np.float32),
        np.zeros(slots, np.float32),
    )


def clear_cache(cache: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]) -> None:
    """Forget every cached evaluation (new weights)."""
    cache[1][:] = -1


def search_params(
    c_puct: float,
    c_visit: float,
    c_scale: float,
    play_forced_hops: bool = False,
    fpu_reduction: float = 0.0,
    virtual_value: float = VIRTUAL_VALUE,
    repetition_draws: bool = False,
) -> np.ndarray:
    """The float64 ``SP_*`` record of the search settings (each algorithm reads its own fields)."""
    p = np.zeros(SP_COUNT, np.float64)
    p[SP_VIRTUAL_VALUE] = virtual_value
    p[SP_REPETITION_DRAWS] = 1.0 if repetition_draws else 0.0
    p[SP_FORCED] = 1.0 if play_forced_hops else 0.0
    p[SP_C_PUCT] = c_puct
    p[SP_FPU_REDUCTION] = fpu_reduction
    p[SP_C_VISIT], p[SP_C_SCALE] = c_visit, c_scale
    return p


def write_root(
    row: np.ndarray,
    board: Sequence[int],
    side: int,
    path: Sequence[int],
    counters: Sequence[int],
    repetition: int,
    history: Sequence[Sequence[int]] = (),
) -> None:
    """Fill one int64 ``[R_COUNT]`` root record: ``board`` (4 bitboards), ``side`` to move, the
    squares of this turn so far (``path``, start square first), the draw ``counters``, repetitions,
    and the ``history``: the game's positions before this one since its last irreversible move,
    oldest first, each 4 bitboards and the side to move (the newest `MAX_HISTORY` are kept)."""
    row[R_BOARD:R_BOARD_END] = board
    row[R_SIDE] = side
    row[R_HOPS] = max(0, len(path) - 1)
    row[R_PATH:R_PATH_END] = -1
    row[R_PATH : R_PATH + len(path)] = path
    row[R_COUNTERS:R_COUNTERS_END] = counters
    row[R_REPETITION] = repetition
    kept = list(history)[-MAX_HISTORY:]
    row[R_N_HISTORY] = len(kept)
    row[R_HISTORY:R_HISTORY_END] = 0
    for i, position in enumerate(kept):
        if len(position) != HISTORY_FIELDS:
            raise ValueError(f"a history position is 4 bitboards and the side to move, got {tuple(position)}")
        row[R_HISTORY + i * HISTORY_FIELDS : R_HISTORY + (i + 1) * HISTORY_FIELDS] = position


@njit(cache=True, inline="always")
def _copy_into(dst, src):
    """``dst[:len(src)] = src`` element by element (no temporary copy, no allocation)."""
    for i in range(src.shape[0]):
        dst[i] = src[i]


@njit(cache=True, _nrt=False)
def _new_node(nodes_i, nodes_f, trees_i, t, parent):
    i = trees_i[t, TI_N_NODES]
    if i >= nodes_i.shape[1]:
        raise IndexError("search tree full: the node pool (`pool_sizes`) is used up")
    trees_i[t, TI_N_NODES] = i + 1
    nodes_i[t, i, NI_PARENT] = parent
    nodes_i[t, i, NI_FIRST_EDGE] = 0
    nodes_i[t, i, NI_N_EDGES] = -1
    nodes_i[t, i, NI_VISITS] = 0
    nodes_i[t, i, NI_TERMINAL] = 0
    nodes_i[t, i, NI_PENDING] = 0
    nodes_f[t, i, NF_VALUE_SUM] = 0.0
    nodes_f[t, i, NF_TERMINAL_VALUE] = 0.0
    nodes_f[t, i, NF_NET_VALUE] = 0.0
    return i


@njit(cache=True, _nrt=False)
def _alive_rows(nodes_i, t, node, tables, buf, alive):
    """The node's turn: its legal whole moves in ``buf``, those continuing its prefix in ``alive``."""
    board = nodes_i[t, node, NI_BOARD:NI_BOARD_END]
    n = tm.generate(board, nodes_i[t, node, NI_SIDE], tables, buf)
    return tm.prefix_rows(buf, n, nodes_i[t, node, NI_PATH:NI_PATH_END], nodes_i[t, node, NI_HOPS], alive)


@njit(cache=True, _nrt=False)
def _make_child(nodes_i, nodes_f, trees_i, t, parent, action, params, tables, buf, alive):
    """Create the node reached from ``parent`` by hop ``action``; returns its index."""
    c = _new_node(nodes_i, nodes_f, trees_i, t, parent)
    hops = nodes_i[t, parent, NI_HOPS]
    side = nodes_i[t, parent, NI_SIDE]
    n_alive = _alive_rows(nodes_i, t, parent, tables, buf, alive)
    keep = tm.keep_hop(buf, alive, n_alive, hops, side, action, tables)
    if keep == 0:
        raise ValueError("search: hop is not legal in its parent node")
    _copy_into(nodes_i[t, c, NI_BOARD:NI_BOARD_END], nodes_i[t, parent, NI_BOARD:NI_BOARD_END])
    nodes_i[t, c, NI_SIDE] = side
    _copy_into(nodes_i[t, c, NI_COUNTERS:NI_COUNTERS_END], nodes_i[t, parent, NI_COUNTERS:NI_COUNTERS_END])
    done = tm.completed_row(buf, alive, keep, hops + 1)
    if done < 0:
        # The chain goes on: same turn, one more hop in the prefix.
        path = nodes_i[t, c, NI_PATH:NI_PATH_END]
        for i in range(hops + 2):
            path[i] = buf[alive[0], mg.F_PATH + i]
        nodes_i[t, c, NI_HOPS] = hops + 1
        return c
    # The whole move is complete: finish it and start the next turn.
    board = nodes_i[t, c, NI_BOARD:NI_BOARD_END]
    counters = nodes_i[t, c, NI_COUNTERS:NI_COUNTERS_END]
    tm.finish_move(board, side, buf, done, counters, tables)
    nodes_i[t, c, NI_SIDE] = 1 - side
    nodes_i[t, c, NI_HOPS] = 0
    nodes_i[t, c, NI_PATH] = -1
    n_next = tm.generate(board, 1 - side, tables, buf)
    dp = tm.draw_params_of(tables)
    winner, _ = dr.decide(board, 1 - side, n_next, counters, 0, -1, dp)
    repetition = params[SP_REPETITION_DRAWS] != 0.0 and dp[dr.DP_REPETITION] > 0
    if winner == dr.ONGOING and repetition and _repeats(nodes_i, trees_i, t, c):
        winner = dr.DRAWN
    if winner != dr.ONGOING:
        nodes_i[t, c, NI_TERMINAL] = 1
        nodes_f[t, c, NF_TERMINAL_VALUE] = 0.0 if winner == dr.DRAWN else (1.0 if winner == 0 else -1.0)
    return c


@njit(cache=True, _nrt=False)
def _same_position(board, side, other, other_side):
    """Whether 4 bitboards and a side to move equal another 4 and side."""
    same = side == other_side
    for i in range(4):
        same = same and board[i] == other[i]
    return same


@njit(cache=True, _nrt=False)
def _repeats(nodes_i, trees_i, t, node):
    """Whether ``node`` (at the start of a turn) repeats a position on its path from the root
    or in the root's history. A capture cannot be undone, so the walk up the path stops at the
    first turn start with more pieces on the board; the history already starts after the
    game's last irreversible move."""
    board = nodes_i[t, node, NI_BOARD:NI_BOARD_END]
    side = nodes_i[t, node, NI_SIDE]
    pieces = 0
    for i in range(4):
        pieces += mg.popcount(board[i])
    up = nodes_i[t, node, NI_PARENT]
    while up >= 0:
        if nodes_i[t, up, NI_HOPS] == 0:
            other = nodes_i[t, up, NI_BOARD:NI_BOARD_END]
            if _same_position(board, side, other, nodes_i[t, up, NI_SIDE]):
                return True
            total = 0
            for i in range(4):
                total += mg.popcount(other[i])
            if total != pieces:
                return False  # a capture lies between: nothing before it can repeat
        up = nodes_i[t, up, NI_PARENT]
    for h in range(trees_i[t, TI_N_HISTORY]):
        at = TI_HISTORY + h * HISTORY_FIELDS
        if _same_position(board, side, trees_i[t, at : at + 4], trees_i[t, at + 4]):
            return True
    return False


@njit(cache=True, inline="always")
def child_q(nodes_i, nodes_f, t, child, parent_side, unvisited, virtual):
    """Mean value of ``child`` (-1: not created yet) from the point of view of the player moving
    at its parent (``parent_side``); ``unvisited`` for a child without visits. Each pending walk
    counts as one more visit worth ``virtual`` for that player (`SP_VIRTUAL_VALUE`; NaN: the
    child's own mean, so pending walks change the visit counts only)."""
    if child < 0:
        return unvisited
    n = nodes_i[t, child, NI_VISITS]
    pending = nodes_i[t, child, NI_PENDING]
    if n == 0:
        return unvisited if pending == 0 or np.isnan(virtual) else virtual
    q = nodes_f[t, child, NF_VALUE_SUM] / n
    q = q if parent_side == 0 else -q
    if pending == 0 or np.isnan(virtual):
        return q
    return (q * n + virtual * pending) / (n + pending)


@njit(cache=True, inline="always")
def child_visits(nodes_i, t, child):
    """Visits of ``child`` (-1: not created yet, 0 visits), pending walks included."""
    return nodes_i[t, child, NI_VISITS] + nodes_i[t, child, NI_PENDING] if child >= 0 else 0


@njit(cache=True, inline="always")
def node_visits(nodes_i, t, node):
    """Visits of ``node``, pending walks included (the N of the selection rules)."""
    return nodes_i[t, node, NI_VISITS] + nodes_i[t, node, NI_PENDING]


@njit(cache=True, _nrt=False)
def _play_forced_hops(
    nodes_i, nodes_f, edges_i, edges_f, trees_i, t, node, params, tables, buf, alive, hops_out, spare
):
    """From a new node, follow hops that have no alternative (the rest of a capture chain, the
    only legal capture) and return the first node with a real choice, or a terminal node.

    Each forced node gets its one edge (prior 1) without a network call, so a simulation's one
    evaluation lands on a position where a decision is made rather than mid-exchange. At most
    ``spare`` nodes are added, which keeps the pool's reserve of one node per simulation left.
    """
    while spare > 0 and nodes_i[t, node, NI_TERMINAL] == 0:
        hops = nodes_i[t, node, NI_HOPS]
        side = nodes_i[t, node, NI_SIDE]
        n_alive = _alive_rows(nodes_i, t, node, tables, buf, alive)
        if tm.legal_hops(buf, alive, n_alive, hops, side, tables, hops_out) != 1:
            break
        first = trees_i[t, TI_N_EDGES]
        if first + 1 > edges_i.shape[1]:
            raise IndexError("search tree edge pool full")
        trees_i[t, TI_N_EDGES] = first + 1
        edges_i[t, first, EI_ACTION] = hops_out[0]
        edges_f[t, first, EF_LOGIT] = 0.0
        edges_f[t, first, EF_GUMBEL] = 0.0
        edges_f[t, first, EF_PRIOR] = 1.0
        nodes_i[t, node, NI_FIRST_EDGE] = first
        nodes_i[t, node, NI_N_EDGES] = 1
        child = _make_child(nodes_i, nodes_f, trees_i, t, node, hops_out[0], params, tables, buf, alive)
        edges_i[t, first, EI_CHILD] = child
        node = child
        spare -= 1
    return node


@njit(cache=True, _nrt=False)
def _leaf_hops(nodes_i, t, node, tables, buf, alive, leaf_actions):
    """The leaf's legal hop actions into ``leaf_actions``; returns their count. Leaves the
    turn's moves in ``buf`` and those continuing the prefix in ``alive`` (for `_encode_planes`)."""
    n_alive = _alive_rows(nodes_i, t, node, tables, buf, alive)
    hops, side = nodes_i[t, node, NI_HOPS], nodes_i[t, node, NI_SIDE]
    return tm.legal_hops(buf, alive, n_alive, hops, side, tables, leaf_actions)


@njit(cache=True, _nrt=False)
def _encode_planes(nodes_i, t, node, tables, buf, alive, counters, obs):
    """Write the leaf's planes into ``obs`` (after `_leaf_hops`, which fills ``buf`` and
    ``alive``). ``counters[W_REPETITION]`` is already set; the draw counters are copied in here."""
    _copy_into(counters, nodes_i[t, node, NI_COUNTERS:NI_COUNTERS_END])
    obs[:] = 0.0
    side = nodes_i[t, node, NI_SIDE]
    mw, kw, mb, kb, cur, jumped = tm.chain_view(
        nodes_i[t, node, NI_BOARD:NI_BOARD_END], side, nodes_i[t, node, NI_HOPS], buf, alive[0], tables
    )
    ob.encode_planes(mw, kw, mb, kb, cur, jumped, side, counters, tables, obs)


@njit(cache=True, _nrt=False)
def _cache_key(nodes_i, t, node, repetition, key):
    """Write the node state the network reads (board, side, hops, path prefix, draw counters,
    repetitions) into ``key`` (int64 ``[K_COUNT]``); returns its hash (a non-negative int64)."""
    for i in range(4):
        key[K_BOARD + i] = nodes_i[t, node, NI_BOARD + i]
    key[K_SIDE] = nodes_i[t, node, NI_SIDE]
    hops = nodes_i[t, node, NI_HOPS]
    key[K_HOPS] = hops
    for i in range(mg.MAX_PATH):
        key[K_PATH + i] = nodes_i[t, node, NI_PATH + i] if i <= hops and hops > 0 else -1
    for i in range(N_COUNTERS):
        key[K_COUNTERS + i] = nodes_i[t, node, NI_COUNTERS + i]
    key[K_REPETITION] = repetition
    h = np.uint64(0x9E3779B97F4A7C15)
    for i in range(K_COUNT):  # splitmix64 of each field, folded in
        z = h ^ np.uint64(key[i])
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        h = z ^ (z >> np.uint64(31))
    return np.int64(h >> np.uint64(1))


@njit(cache=True, _nrt=False)
def _cache_find(cache, key, h):
    """The slot holding ``key`` (hash ``h``), or -1."""
    keys, counts = cache[0], cache[1]
    if keys.shape[0] == 0:
        return -1
    slot = h & (keys.shape[0] - 1)
    if counts[slot] < 0:
        return -1
    for i in range(K_COUNT):
        if keys[slot, i] != key[i]:
            return -1
    return slot


@njit(cache=True)
def init_roots(nodes_i, nodes_f, edges_i, trees_i, roots):
    """Reset each active tree to a single unexpanded root; ``roots[t]``: int64 ``[R_COUNT]``
    (`write_root`: board, side, hops, path prefix, draw counters, repetitions, history)."""
    for t in range(nodes_i.shape[0]):
        if trees_i[t, TI_ACTIVE] == 0:
            continue
        trees_i[t, TI_N_NODES] = 0
        trees_i[t, TI_N_EDGES] = 0
        r = _new_node(nodes_i, nodes_f, trees_i, t, -1)
        _copy_into(nodes_i[t, r, NI_BOARD:NI_BOARD_END], roots[t, R_BOARD:R_BOARD_END])
        nodes_i[t, r, NI_SIDE] = roots[t, R_SIDE]
        nodes_i[t, r, NI_HOPS] = roots[t, R_HOPS]
        _copy_into(nodes_i[t, r, NI_PATH:NI_PATH_END], roots[t, R_PATH:R_PATH_END])
        _copy_into(nodes_i[t, r, NI_COUNTERS:NI_COUNTERS_END], roots[t, R_COUNTERS:R_COUNTERS_END])
        trees_i[t, TI_REPETITION] = roots[t, R_REPETITION]
        trees_i[t, TI_N_HISTORY] = roots[t, R_N_HISTORY]
        _copy_into(trees_i[t, TI_HISTORY:TI_HISTORY_END], roots[t, R_HISTORY:R_HISTORY_END])


@njit(cache=True, inline="always")
def select_leaves(
    select_edge,
    nodes_i,
    nodes_f,
    edges_i,
    edges_f,
    trees_i,
    schedules,
    params,
    tables,
    obs,
    leaf_actions,
    leaves,
    cache,
    work,
):
    """One selection step: up to K = ``leaves.shape[1]`` walks in every active tree, following
    ``select_edge`` at each node, while the tree's simulations stay under ``TI_BUDGET``.

    ``select_edge(nodes_i, nodes_f, edges_i, edges_f, t, node, is_root, target, params, scratch_q)``
    (compiled) returns the index, within the node's edges, of the edge to follow; ``target`` is
    ``schedules[t, s]`` for the walk's simulation index s (Gumbel's sequential-halving visit
    target) and ``scratch_q`` float64 ``[MAX_MOVES]`` is scratch space. Inlined into each
    algorithm's compiled selection step (`tammi_rl.mcts.puct.select_leaves`,
    `tammi_rl.mcts.gumbel.select_leaves`), so the rule is fixed at compile time and costs no
    dispatch per node.

    Writes per tree ``trees_i[t, TI_N_LEAVES]`` (0 when inactive or done) and per walk k the
    record ``leaves[t, k]`` (int64 ``[LI_COUNT]``: node, legal hops, cache slot); for a leaf
    that needs the network, the planes ``obs[t * K + k]`` (float32 ``[C, H, W]``) and its hop
    actions ``leaf_actions[t * K + k, :n]``. 0 actions marks a terminal leaf, whose exact value
    `expand_and_backup` backs up; a leaf found in ``cache`` (`allocate_cache`) gets its slot and
    no planes. ``work`` is scratch space (`workspace`).
    """
    buf, alive, scratch_q, counters, key = work
    k_max = leaves.shape[1]
    for t in range(nodes_i.shape[0]):
        trees_i[t, TI_N_LEAVES] = 0
        if trees_i[t, TI_ACTIVE] == 0:
            continue
        for k in range(k_max):
            index = node_visits(nodes_i, t, 0)  # this walk's simulation number (the root's own is 0)
            if index >= trees_i[t, TI_BUDGET]:
                break
            sim = min(max(index - 1, 0), schedules.shape[1] - 1)
            node = 0
            depth = 0
            while nodes_i[t, node, NI_TERMINAL] == 0 and nodes_i[t, node, NI_N_EDGES] >= 0:
                e = select_edge(
                    nodes_i, nodes_f, edges_i, edges_f, t, node, depth == 0, schedules[t, sim], params, scratch_q
                )
                slot = nodes_i[t, node, NI_FIRST_EDGE] + e
                child = edges_i[t, slot, EI_CHILD]
                if child < 0:
                    child = _make_child(
                        nodes_i, nodes_f, trees_i, t, node, edges_i[t, slot, EI_ACTION], params, tables, buf, alive
                    )
                    edges_i[t, slot, EI_CHILD] = child
                    node = child
                    if params[SP_FORCED] != 0.0:
                        # Keep one free node for each simulation still to come.
                        spare = nodes_i.shape[1] - trees_i[t, TI_N_NODES] - (trees_i[t, TI_HORIZON] - sim)
                        node = _play_forced_hops(
                            nodes_i,
                            nodes_f,
                            edges_i,
                            edges_f,
                            trees_i,
                            t,
                            node,
                            params,
                            tables,
                            buf,
                            alive,
                            leaf_actions[t * k_max + k],
                            spare,
                        )
                    break
                node = child
                depth += 1
            terminal = nodes_i[t, node, NI_TERMINAL] == 1
            if not terminal and nodes_i[t, node, NI_PENDING] > 0:
                break  # a collision: another walk of this step holds this leaf already
            trees_i[t, TI_N_LEAVES] = k + 1
            up = node
            while up >= 0:  # virtual loss until the backup
                nodes_i[t, up, NI_PENDING] += 1
                up = nodes_i[t, up, NI_PARENT]
            leaves[t, k, LI_NODE] = node
            leaves[t, k, LI_N_ACTIONS] = 0
            leaves[t, k, LI_CACHE_SLOT] = -1
            if terminal:
                continue
            row = t * k_max + k
            n = _leaf_hops(nodes_i, t, node, tables, buf, alive, leaf_actions[row])
            leaves[t, k, LI_N_ACTIONS] = n
            repetition = trees_i[t, TI_REPETITION] if node == 0 else 1
            found = _cache_find(cache, key, _cache_key(nodes_i, t, node, repetition, key))
            if found >= 0 and cache[1][found] == n:
                leaves[t, k, LI_CACHE_SLOT] = found
                if node != 0:
                    continue  # the root's planes are still written: its search result carries them
            counters[W_REPETITION] = repetition
            _encode_planes(nodes_i, t, node, tables, buf, alive, counters, obs[row])


@njit(cache=True)
def expand_and_backup(nodes_i, nodes_f, edges_i, edges_f, trees_i, leaves, leaf_actions, logits, values, cache, work):
    """Expand each leaf of the step with softmax priors over its legal hops, then back up, and
    remember the network's evaluations in ``cache``.

    Rows as in `select_leaves`: ``logits[t * K + k]`` float32 ``[A]`` policy logits and
    ``values[t * K + k]`` the leaf's value for its side to move, for leaves that needed the
    network; cached leaves read their slot, terminal leaves back up their exact value. Every
    backup also takes the walk's virtual loss off its path.
    """
    k_max = leaves.shape[1]
    keys, counts, cached_logits, cached_values = cache
    key = work[4]
    for t in range(nodes_i.shape[0]):
        for k in range(trees_i[t, TI_N_LEAVES]):
            node = leaves[t, k, LI_NODE]
            row = t * k_max + k
            slot = leaves[t, k, LI_CACHE_SLOT]
            if nodes_i[t, node, NI_TERMINAL] == 1:
                value_white = nodes_f[t, node, NF_TERMINAL_VALUE]
            else:
                side = nodes_i[t, node, NI_SIDE]
                v = cached_values[slot] if slot >= 0 else values[row]
                nodes_f[t, node, NF_NET_VALUE] = v
                value_white = v if side == 0 else -v
                if nodes_i[t, node, NI_N_EDGES] < 0:
                    n = leaves[t, k, LI_N_ACTIONS]
                    first = trees_i[t, TI_N_EDGES]
                    if first + n > edges_i.shape[1]:
                        raise IndexError("search tree edge pool full")
                    trees_i[t, TI_N_EDGES] = first + n
                    mx = -1e300
                    for j in range(n):
                        logit = cached_logits[slot, j] if slot >= 0 else logits[row, leaf_actions[row, j]]
                        edges_f[t, first + j, EF_LOGIT] = logit
                        mx = max(mx, logit)
                    z = 0.0
                    for j in range(n):
                        edges_i[t, first + j, EI_ACTION] = leaf_actions[row, j]
                        edges_i[t, first + j, EI_CHILD] = -1
                        p = np.exp(edges_f[t, first + j, EF_LOGIT] - mx)
                        edges_f[t, first + j, EF_LOGIT] -= mx
                        edges_f[t, first + j, EF_GUMBEL] = 0.0
                        edges_f[t, first + j, EF_PRIOR] = p
                        z += p
                    for j in range(n):
                        edges_f[t, first + j, EF_PRIOR] /= z
                    nodes_i[t, node, NI_FIRST_EDGE] = first
                    nodes_i[t, node, NI_N_EDGES] = n
            while node >= 0:
                nodes_i[t, node, NI_VISITS] += 1
                nodes_i[t, node, NI_PENDING] -= 1
                nodes_f[t, node, NF_VALUE_SUM] += value_white
                node = nodes_i[t, node, NI_PARENT]
    if keys.shape[0] == 0:
        return
    for t in range(nodes_i.shape[0]):  # after every leaf read its slot: storing may replace one
        for k in range(trees_i[t, TI_N_LEAVES]):
            node = leaves[t, k, LI_NODE]
            n = leaves[t, k, LI_N_ACTIONS]
            if leaves[t, k, LI_CACHE_SLOT] >= 0 or n == 0 or n > CACHE_MAX_ACTIONS:
                continue
            row = t * k_max + k
            repetition = trees_i[t, TI_REPETITION] if node == 0 else 1
            slot = _cache_key(nodes_i, t, node, repetition, key) & (keys.shape[0] - 1)
            _copy_into(keys[slot], key)
            counts[slot] = n
            for j in range(n):
                cached_logits[slot, j] = logits[row, leaf_actions[row, j]]
            cached_values[slot] = values[row]


@njit(cache=True)
def root_edges(nodes_i, edges_i, t, out_actions, out_visits):
    """Per root edge of tree ``t``: its hop action and its child's visits (int64 ``[E_root]``
    each). Returns E_root, the number of root edges (0: the root was not expanded)."""
    ne = nodes_i[t, 0, NI_N_EDGES]
    if ne <= 0:
        return 0
    first = nodes_i[t, 0, NI_FIRST_EDGE]
    for e in range(ne):
        out_actions[e] = edges_i[t, first + e, EI_ACTION]
        out_visits[e] = child_visits(nodes_i, t, edges_i[t, first + e, EI_CHILD])
    return ne


def root_edge_slice(nodes_i: np.ndarray, t: int) -> slice:
    """The root edges of tree ``t`` as a slice of its edge arrays (empty before expansion)."""
    first = int(nodes_i[t, 0, NI_FIRST_EDGE])
    return slice(first, first + max(0, int(nodes_i[t, 0, NI_N_EDGES])))


def root_value(nodes_i: np.ndarray, nodes_f: np.ndarray, t: int) -> float:
    """The searched value of tree ``t``'s root for its side to move (0 before any visit)."""
    value = float(nodes_f[t, 0, NF_VALUE_SUM]) / max(1, int(nodes_i[t, 0, NI_VISITS]))
    return value if int(nodes_i[t, 0, NI_SIDE]) == 0 else -value


def principal_hops(nodes_i: np.ndarray, edges_i: np.ndarray, t: int, first: int, length: int) -> list[int]:
    """Root hop ``first`` of tree ``t``, then the most-visited hop at each node below it
    (hops, not moves: a capture chain is several), at most ``length`` of them."""
    ni, ei = nodes_i[t], edges_i[t]
    hops = [int(first)]
    sl = root_edge_slice(nodes_i, t)
    node = -1
    for e in range(sl.start, sl.stop):
        if ei[e, EI_ACTION] == first:
            node = int(ei[e, EI_CHILD])
    while node >= 0 and len(hops) < length and ni[node, NI_N_EDGES] > 0:
        start = int(ni[node, NI_FIRST_EDGE])
        best, best_visits = -1, 0
        for e in range(start, start + int(ni[node, NI_N_EDGES])):
            child = int(ei[e, EI_CHILD])
            visits = int(ni[child, NI_VISITS]) if child >= 0 else 0
            if visits > best_visits:
                best, best_visits = e, visits
        if best < 0:
            break
        hops.append(int(ei[best, EI_ACTION]))
        node = int(ei[best, EI_CHILD])
    return hops
