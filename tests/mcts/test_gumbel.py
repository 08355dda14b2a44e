"""Gumbel's pieces on their own: completed Q, the root's sequential halving, the interior rule,
the improved-policy target, root noise and the final choice."""

from __future__ import annotations

import numpy as np
import pytest

from tammi_rl.mcts import gumbel
from tammi_rl.mcts import tree as tr

NC = gumbel.NOT_CONSIDERED


def completed(tree, n: int) -> tuple[np.ndarray, int]:
    out = np.full(n, np.nan)
    return out, gumbel.completed_q(*tree.arrays, 0, 0, out)


@pytest.mark.parametrize("side", [0, 1])
def test_completed_q_mixes_the_unvisited_and_rescales(hand_tree, side):
    """Visited: their Q; unvisited: v_mix = (v + N * sum(p q) / sum(p)) / (1 + N) over the
    visited children; then min -> 0, max -> 1. Here v_mix = (0 + 3 * (1/3)) / 4 = 0.25."""
    tree = hand_tree([0.5, 0.25, 0.25], [2, 1, 0], [0.6, -0.2, 0.0], side=side, net_value=0.0)
    q, most = completed(tree, 3)
    np.testing.assert_allclose(q, [1.0, 0.0, (0.25 + 0.2) / 0.8])
    assert most == 2
    tree = hand_tree([0.5, 0.25, 0.25], [2, 1, 0], [0.6, -0.2, 0.0], side=side, net_value=0.5)
    np.testing.assert_allclose(completed(tree, 3)[0][2], (0.375 + 0.2) / 0.8)


def test_completed_q_without_visits_is_flat(hand_tree):
    q, most = completed(hand_tree([0.2, 0.8], [0, 0], [0.0, 0.0], net_value=0.7), 2)
    assert q.tolist() == [0.5, 0.5] and most == 0


def test_root_targets_are_the_improved_policy_and_the_choice_score(hand_tree):
    params = tr.search_params(c_puct=1.5, c_visit=50.0, c_scale=0.1)
    priors = [0.5, 0.25, 0.25]
    tree = hand_tree(priors, [2, 1, 0], [0.6, -0.2, 0.0], params=params)
    tree.edges_f[0, :3, tr.EF_GUMBEL] = [0.3, NC, -0.1]
    q, improved, score = np.zeros(3), np.zeros(3), np.zeros(3)
    assert gumbel.root_targets(*tree.arrays, 0, params, q, improved, score) == 3
    sigma = (50.0 + 2) * 0.1 * q
    logits = tree.edges_f[0, :3, tr.EF_LOGIT]
    expected = np.exp(logits + sigma) / np.exp(logits + sigma).sum()
    np.testing.assert_allclose(improved, expected)
    assert improved.sum() == pytest.approx(1.0) and improved[0] > priors[0]  # the best child gains
    np.testing.assert_allclose(score[[0, 2]], [0.3 + logits[0] + sigma[0], -0.1 + logits[2] + sigma[2]])


def test_select_root_halves_among_the_considered(hand_tree):
    """The considered edge with the target visit count and the best gumbel + logit + sigma(q)."""
    tree = hand_tree([0.25] * 4, [1, 1, 0, 2], [0.0] * 4)
    tree.edges_f[0, :4, tr.EF_GUMBEL] = [0.0, 2.0, NC, 0.0]
    q = np.array([1.0, 0.0, 0.0, 0.0])
    assert gumbel.select_root(tree.nodes_i, tree.edges_i, tree.edges_f, 0, 0, 1, 1.0, q) == 1
    assert gumbel.select_root(tree.nodes_i, tree.edges_i, tree.edges_f, 0, 0, 1, 3.0, q) == 0  # sigma outweighs
    assert gumbel.select_root(tree.nodes_i, tree.edges_i, tree.edges_f, 0, 0, 2, 1.0, q) == 3
    # Edge 2 has the target count 0 but is not considered; an exhausted schedule takes the least visited.
    assert gumbel.select_root(tree.nodes_i, tree.edges_i, tree.edges_f, 0, 0, 0, 1.0, q) == 0
    assert gumbel.select_root(tree.nodes_i, tree.edges_i, tree.edges_f, 0, 0, 7, 1.0, q) == 0


def test_select_interior_tracks_the_improved_policy(hand_tree):
    """argmax of softmax(logit + sigma q) - n / (1 + N): the edge most under-visited."""
    for visits, best in (([0, 0, 0], 0), ([1, 0, 0], 1), ([5, 0, 0], 1), ([5, 3, 0], 2)):
        tree = hand_tree([0.5, 0.3, 0.2], visits, [0.0] * 3)
        q = np.full(3, 0.5)
        assert gumbel.select_interior(tree.nodes_i, tree.edges_i, tree.edges_f, 0, 0, 0.0, q) == best, visits
    tree = hand_tree([0.5, 0.3, 0.2], [0, 0, 0], [0.0] * 3)
    assert gumbel.select_interior(tree.nodes_i, tree.edges_i, tree.edges_f, 0, 0, 10.0, np.array([0.0, 0.0, 1.0])) == 2


def test_select_edge_halves_at_the_root_only(hand_tree):
    params = tr.search_params(c_puct=1.5, c_visit=50.0, c_scale=1.0)
    tree = hand_tree([0.8, 0.1, 0.1], [0, 0, 0], [0.0] * 3, params=params)
    tree.edges_f[0, :3, tr.EF_GUMBEL] = [NC, 0.0, 0.5]
    scratch = np.zeros(8)
    assert gumbel.select_edge(*tree.arrays, 0, 0, True, 0, params, scratch) == 2  # considered, best noise
    assert gumbel.select_edge(*tree.arrays, 0, 0, False, 0, params, scratch) == 0  # the prior rules below


def test_root_noise_considers_the_top_noisy_logits():
    logits = np.array([-1.0, 0.0, -3.0, -0.5, -2.0])
    rng = np.random.default_rng(9)
    noise, m = gumbel.root_noise(logits, 3, False, rng)
    assert m == 3 and noise.tolist() == [0.0, 0.0, NC, 0.0, NC]
    assert rng.bit_generator.state == np.random.default_rng(9).bit_generator.state  # nothing drawn
    draw = np.random.default_rng(9).gumbel(size=5)
    noise, m = gumbel.root_noise(logits, 3, True, rng)
    top = set(np.argsort(-(draw + logits))[:3].tolist())
    assert {i for i in range(5) if noise[i] > NC} == top
    np.testing.assert_array_equal(noise[sorted(top)], draw[sorted(top)])
    assert gumbel.root_noise(logits, 16, False, rng)[1] == 5


def test_choose_takes_the_most_visited_considered_then_the_score():
    visits = np.array([3, 5, 5, 9])
    noise = np.array([0.0, 0.0, 0.0, NC])
    assert gumbel.choose(visits, noise, np.array([9.0, 1.0, 2.0, 100.0])) == 2
    assert gumbel.choose(visits, noise, np.array([9.0, 2.0, 1.0, 100.0])) == 1
