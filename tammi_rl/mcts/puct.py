"""PUCT (AlphaZero): Dirichlet root noise, in-tree selection with first-play reduction, the
visit-share policy target and the final move choice.

The tree machinery is `tammi_rl.mcts.tree`; `select_leaves` is the compiled selection step
with this module's rule inlined. E below is the number of edges of the node in question.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tammi_rl.mcts import tree as tr


@njit(cache=True, _nrt=False)
def select(nodes_i, nodes_f, edges_i, edges_f, t, node, c_puct, fpu_reduction, virtual=tr.VIRTUAL_VALUE):
    """Index in ``[0, E)`` of ``node``'s edge with the largest Q + c_puct * P * sqrt(N) / (1 + n).

    Q is the child's mean value for the player moving at ``node``, P its prior, N the node's
    visits (at least 1), n the child's (pending walks included: `tammi_rl.mcts.tree.child_q`).
    An unvisited child's Q is the node's own network value,
    lowered by ``fpu_reduction * sqrt(prior mass already visited)`` (first-play urgency: once
    good moves have been tried, an untried one is presumed a little worse). Ties: the first.
    """
    first = nodes_i[t, node, tr.NI_FIRST_EDGE]
    side = nodes_i[t, node, tr.NI_SIDE]
    sqrt_n = np.sqrt(max(tr.node_visits(nodes_i, t, node), 1))
    fpu = nodes_f[t, node, tr.NF_NET_VALUE]
    if fpu_reduction > 0.0:
        visited = 0.0
        for e in range(nodes_i[t, node, tr.NI_N_EDGES]):
            if tr.child_visits(nodes_i, t, edges_i[t, first + e, tr.EI_CHILD]) > 0:
                visited += edges_f[t, first + e, tr.EF_PRIOR]
        fpu -= fpu_reduction * np.sqrt(visited)
    best = -1
    best_score = -1e300
    for e in range(nodes_i[t, node, tr.NI_N_EDGES]):
        c = edges_i[t, first + e, tr.EI_CHILD]
        q = tr.child_q(nodes_i, nodes_f, t, c, side, fpu, virtual)
        score = q + c_puct * edges_f[t, first + e, tr.EF_PRIOR] * sqrt_n / (1 + tr.child_visits(nodes_i, t, c))
        if score > best_score:
            best_score = score
            best = e
    return best


@njit(cache=True, _nrt=False)
def select_edge(nodes_i, nodes_f, edges_i, edges_f, t, node, is_root, target, params, scratch_q):
    """`select` with the settings of ``params`` (float64 ``[SP_COUNT]``), in the signature
    `tammi_rl.mcts.tree.select_leaves` expects; the root is not special, so ``is_root``,
    ``target`` and ``scratch_q`` are unused."""
    return select(
        nodes_i,
        nodes_f,
        edges_i,
        edges_f,
        t,
        node,
        params[tr.SP_C_PUCT],
        params[tr.SP_FPU_REDUCTION],
        params[tr.SP_VIRTUAL_VALUE],
    )


@njit(cache=True)
def select_leaves(
    nodes_i, nodes_f, edges_i, edges_f, trees_i, schedules, params, tables, obs, leaf_actions, leaves, cache, work
):
    """One PUCT selection step for every active tree (`tammi_rl.mcts.tree.select_leaves`)."""
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


def root_noise(prior: np.ndarray, alpha: float, fraction: float, rng: np.random.Generator) -> np.ndarray:
    """The root priors (float64 ``[E]``) mixed with Dirichlet(``alpha``) noise:
    ``(1 - fraction) * prior + fraction * noise`` (float64 ``[E]``; draws E values from ``rng``)."""
    noise = rng.dirichlet([alpha] * len(prior))
    return (1 - fraction) * prior + fraction * noise


def policy_target(visits: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """The search policy over the root edges: visit shares (float64 ``[E]``), or ``prior`` when
    no child was visited (a one-simulation search)."""
    total = visits.sum()
    return visits / total if total > 0 else prior


def choose(policy: np.ndarray, visits: np.ndarray, temperature: float, sample: bool, rng: np.random.Generator) -> int:
    """The root edge to play, in ``[0, E)``: sampled from ``policy ** (1 / temperature)`` when
    ``sample`` and ``temperature > 0`` (one draw from ``rng``), else the most visited (first on ties;
    the largest prior when a search was stopped before any child was visited)."""
    if sample and temperature > 0:
        weights = policy ** (1.0 / temperature)
        return int(rng.choice(len(policy), p=weights / weights.sum()))
    return int(np.argmax(visits)) if visits.sum() > 0 else int(np.argmax(policy))
