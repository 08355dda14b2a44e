"""Gumbel MuZero (Danihelka et al. 2022): Gumbel root noise and the considered set, sequential
halving at the root, improved-policy selection inside the tree, the completed-Q policy target
and the final move choice.

The tree machinery is `tammi_rl.mcts.tree`; `select_leaves` is the compiled selection step
with this module's rule inlined. E below is the number of edges of the node in question.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from tammi_rl.mcts import tree as tr

NOT_CONSIDERED = -1e300
"""``EF_GUMBEL`` of a root edge outside the considered set (`root_noise`)."""


def considered_visit_schedule(max_considered: int, simulations: int) -> np.ndarray:
    """Sequential halving as a schedule (int64 ``[simulations]``): at simulation s, the root
    visits a considered action whose visit count equals ``schedule[s]``."""
    if max_considered <= 1:
        return np.arange(simulations, dtype=np.int64)
    rounds = max(1, math.ceil(math.log2(max_considered)))
    schedule: list[int] = []
    visits = [0] * max_considered
    considered = max_considered
    while len(schedule) < simulations:
        extra = max(1, int(simulations / (rounds * considered)))
        for _ in range(extra):
            schedule.extend(visits[:considered])
            for i in range(considered):
                visits[i] += 1
        considered = max(2, considered // 2)
    return np.asarray(schedule[:simulations], dtype=np.int64)


def root_noise(
    logits: np.ndarray, max_considered: int, explore: bool, rng: np.random.Generator
) -> tuple[np.ndarray, int]:
    """Gumbel noise for the root edges and the size m of the considered set.

    ``logits``: float64 ``[E]``. Returns float64 ``[E]``: the noise (zeros unless ``explore``;
    then E draws from ``rng``) of the m = min(``max_considered``, E) edges with the largest
    noise + logit, `NOT_CONSIDERED` for the others (ties: the first edge).
    """
    ne = len(logits)
    gumbel = rng.gumbel(size=ne) if explore else np.zeros(ne)
    m = min(max_considered, ne)
    score = gumbel + logits
    considered = np.argsort(-score, kind="stable")[:m]
    noise = np.full(ne, NOT_CONSIDERED)
    noise[considered] = gumbel[considered]
    return noise, m


@njit(cache=True, _nrt=False)
def completed_q(nodes_i, nodes_f, edges_i, edges_f, t, node, out_q, virtual=tr.VIRTUAL_VALUE):
    """Completed Q of every child of ``node``, rescaled to [0, 1], into ``out_q[:E]`` (float64).

    A visited child's Q is its mean value for the player moving at ``node``; an unvisited
    child gets v_mix, the node's network value blended with the prior-weighted Q of the
    visited children (mctx's ``qtransform_completed_by_mix_value``). The rescaling maps the
    smallest Q to 0 and the largest to 1 (all 0.5 when they are equal). Returns the largest
    child visit count.
    """
    side = nodes_i[t, node, tr.NI_SIDE]
    first = nodes_i[t, node, tr.NI_FIRST_EDGE]
    ne = nodes_i[t, node, tr.NI_N_EDGES]
    net_v = nodes_f[t, node, tr.NF_NET_VALUE]
    total_visits = 0
    weighted = 0.0
    prior_visited = 0.0
    max_visits = 0
    for e in range(ne):
        c = edges_i[t, first + e, tr.EI_CHILD]
        v = tr.child_visits(nodes_i, t, c)
        if v > 0:
            total_visits += v
            max_visits = max(max_visits, v)
            weighted += edges_f[t, first + e, tr.EF_PRIOR] * tr.child_q(nodes_i, nodes_f, t, c, side, 0.0, virtual)
            prior_visited += edges_f[t, first + e, tr.EF_PRIOR]
    v_mix = (net_v + total_visits * weighted / prior_visited) / (1 + total_visits) if prior_visited > 0 else net_v
    lo = 1e9
    hi = -1e9
    for e in range(ne):
        q = tr.child_q(nodes_i, nodes_f, t, edges_i[t, first + e, tr.EI_CHILD], side, v_mix, virtual)
        out_q[e] = q
        lo = min(lo, q)
        hi = max(hi, q)
    span = max(hi - lo, 1e-6)
    for e in range(ne):
        out_q[e] = (out_q[e] - lo) / span if hi > lo else 0.5
    return max_visits


@njit(cache=True, inline="always")
def sigma_scale(params, max_visits):
    """sigma(q) = sigma_scale * q: (c_visit + largest child visit count) * c_scale."""
    return (params[tr.SP_C_VISIT] + max_visits) * params[tr.SP_C_SCALE]


@njit(cache=True, _nrt=False)
def select_root(nodes_i, edges_i, edges_f, t, node, target, scale, q):
    """Sequential halving at the root: among the considered edges with ``target`` visits, the
    one with the largest gumbel + logit + ``scale * q[e]`` (``q``: `completed_q`, float64
    ``[E]``); if none has ``target`` visits (the schedule ran short), the least visited
    considered edge. Returns its index in ``[0, E)``; ties: the first."""
    first = nodes_i[t, node, tr.NI_FIRST_EDGE]
    ne = nodes_i[t, node, tr.NI_N_EDGES]
    best = -1
    best_score = -1e300
    for e in range(ne):
        if edges_f[t, first + e, tr.EF_GUMBEL] < -1e200:
            continue  # not among the considered actions
        if tr.child_visits(nodes_i, t, edges_i[t, first + e, tr.EI_CHILD]) != target:
            continue
        score = edges_f[t, first + e, tr.EF_GUMBEL] + edges_f[t, first + e, tr.EF_LOGIT] + scale * q[e]
        if score > best_score:
            best_score = score
            best = e
    if best >= 0:
        return best
    fewest = 1 << 60
    for e in range(ne):
        if edges_f[t, first + e, tr.EF_GUMBEL] < -1e200:
            continue
        visits = tr.child_visits(nodes_i, t, edges_i[t, first + e, tr.EI_CHILD])
        if visits < fewest:
            fewest = visits
            best = e
    return best


@njit(cache=True, _nrt=False)
def select_interior(nodes_i, edges_i, edges_f, t, node, scale, q):
    """Below the root: the edge whose improved-policy share, softmax(logit + ``scale * q``),
    most exceeds its share of the visits, n / (1 + N) (Gumbel MuZero's deterministic selection).
    ``q`` (`completed_q`, float64 ``[E]``) is overwritten. Returns an index in ``[0, E)``."""
    first = nodes_i[t, node, tr.NI_FIRST_EDGE]
    ne = nodes_i[t, node, tr.NI_N_EDGES]
    mx = -1e300
    for e in range(ne):
        q[e] = edges_f[t, first + e, tr.EF_LOGIT] + scale * q[e]
        mx = max(mx, q[e])
    z = 0.0
    for e in range(ne):
        q[e] = np.exp(q[e] - mx)
        z += q[e]
    total = 0
    for e in range(ne):
        total += tr.child_visits(nodes_i, t, edges_i[t, first + e, tr.EI_CHILD])
    best = -1
    best_score = -1e300
    for e in range(ne):
        visits = tr.child_visits(nodes_i, t, edges_i[t, first + e, tr.EI_CHILD])
        score = q[e] / z - visits / (1.0 + total)
        if score > best_score:
            best_score = score
            best = e
    return best


@njit(cache=True, _nrt=False)
def select_edge(nodes_i, nodes_f, edges_i, edges_f, t, node, is_root, target, params, scratch_q):
    """The Gumbel rule in the signature `tammi_rl.mcts.tree.select_leaves` expects: `select_root`
    at the root (``target``: this simulation's sequential-halving visit count), `select_interior`
    below; ``scratch_q`` float64 ``[>= E]`` holds the completed Q."""
    max_visits = completed_q(nodes_i, nodes_f, edges_i, edges_f, t, node, scratch_q, params[tr.SP_VIRTUAL_VALUE])
    scale = sigma_scale(params, max_visits)
    if is_root:
        return select_root(nodes_i, edges_i, edges_f, t, node, target, scale, scratch_q)
    return select_interior(nodes_i, edges_i, edges_f, t, node, scale, scratch_q)


@njit(cache=True)
def select_leaves(
    nodes_i, nodes_f, edges_i, edges_f, trees_i, schedules, params, tables, obs, leaf_actions, leaves, cache, work
):
    """One Gumbel selection step for every active tree (`tammi_rl.mcts.tree.select_leaves`);
    ``schedules[t, s]`` is tree t's sequential-halving visit target at simulation s
    (`considered_visit_schedule`)."""
    tr.select_leaves(
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
    )


@njit(cache=True)
def root_targets(nodes_i, nodes_f, edges_i, edges_f, t, params, out_q, out_improved, out_score):
    """Per root edge of tree ``t`` (float64 ``[E]`` each): the completed Q (rescaled), the
    improved policy softmax(logit + sigma(q)) (the policy target) and the final-choice score
    gumbel + logit + sigma(q). Returns E (0: the root was not expanded)."""
    ne = nodes_i[t, 0, tr.NI_N_EDGES]
    if ne <= 0:
        return 0
    first = nodes_i[t, 0, tr.NI_FIRST_EDGE]
    max_visits = completed_q(nodes_i, nodes_f, edges_i, edges_f, t, 0, out_q)
    scale = sigma_scale(params, max_visits)
    mx = -1e300
    for e in range(ne):
        out_improved[e] = edges_f[t, first + e, tr.EF_LOGIT] + scale * out_q[e]
        out_score[e] = edges_f[t, first + e, tr.EF_GUMBEL] + out_improved[e]
        mx = max(mx, out_improved[e])
    z = 0.0
    for e in range(ne):
        out_improved[e] = np.exp(out_improved[e] - mx)
        z += out_improved[e]
    for e in range(ne):
        out_improved[e] /= z
    return ne


def choose(visits: np.ndarray, noise: np.ndarray, score: np.ndarray) -> int:
    """The root edge to play, in ``[0, E)``: among the considered edges (``noise`` > `NOT_CONSIDERED`,
    float64 ``[E]``) with the most ``visits`` (int64 ``[E]``), the largest ``score`` (`root_targets`;
    ties: the first)."""
    considered = noise > NOT_CONSIDERED / 2
    most = visits[considered].max()
    candidates = np.flatnonzero(considered & (visits == most))
    return int(candidates[np.argmax(score[candidates])])
