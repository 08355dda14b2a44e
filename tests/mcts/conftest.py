"""A hand-built one-level tree, for testing the selection rules and targets on their own."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from tammi_rl.mcts import tree as tr


@dataclass
class HandTree:
    """Tree 0: a root (node 0) with one edge per prior; child ``k`` created for each visited edge."""

    nodes_i: np.ndarray
    nodes_f: np.ndarray
    edges_i: np.ndarray
    edges_f: np.ndarray
    trees_i: np.ndarray
    params: np.ndarray

    @property
    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self.nodes_i, self.nodes_f, self.edges_i, self.edges_f


def build_hand_tree(
    priors: list[float],
    visits: list[int],
    q: list[float],
    side: int = 0,
    net_value: float = 0.0,
    params: np.ndarray | None = None,
) -> HandTree:
    """Root with ``side`` to move and network value ``net_value`` (its own view); edge e has
    prior ``priors[e]`` (logit log(prior) minus the largest) and, when ``visits[e] > 0``, a child
    with that many visits whose mean value is ``q[e]`` for the ROOT's side to move."""
    n = len(priors)
    nodes_i, nodes_f, edges_i, edges_f, trees_i = tr.allocate(1, n + 1, n)
    root = nodes_i[0, 0]
    root[tr.NI_SIDE] = side
    root[tr.NI_PARENT] = -1
    root[tr.NI_FIRST_EDGE] = 0
    root[tr.NI_N_EDGES] = n
    root[tr.NI_VISITS] = 1 + sum(visits)
    nodes_f[0, 0, tr.NF_NET_VALUE] = net_value
    logits = np.log(np.asarray(priors, np.float64))
    node = 1
    for e in range(n):
        edges_i[0, e, tr.EI_ACTION] = 100 + e
        edges_f[0, e, tr.EF_PRIOR] = priors[e]
        edges_f[0, e, tr.EF_LOGIT] = logits[e] - logits.max()
        edges_i[0, e, tr.EI_CHILD] = -1
        if visits[e] > 0:
            edges_i[0, e, tr.EI_CHILD] = node
            nodes_i[0, node, tr.NI_PARENT] = 0
            nodes_i[0, node, tr.NI_SIDE] = 1 - side
            nodes_i[0, node, tr.NI_N_EDGES] = -1
            nodes_i[0, node, tr.NI_VISITS] = visits[e]
            white_view = q[e] if side == 0 else -q[e]
            nodes_f[0, node, tr.NF_VALUE_SUM] = visits[e] * white_view
            node += 1
    trees_i[0, tr.TI_N_NODES] = node
    trees_i[0, tr.TI_N_EDGES] = n
    if params is None:
        params = tr.search_params(c_puct=1.5, c_visit=50.0, c_scale=1.0)
    return HandTree(nodes_i, nodes_f, edges_i, edges_f, trees_i, params)


@pytest.fixture
def hand_tree():
    return build_hand_tree
