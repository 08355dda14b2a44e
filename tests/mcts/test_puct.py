"""PUCT's pieces on their own: selection (first-play reduction, the mover's sign), root noise,
policy target, final choice."""

from __future__ import annotations

import numpy as np
import pytest

from tammi_rl.mcts import puct
from tammi_rl.mcts import tree as tr


def puct_choice(tree, c_puct: float, fpu_reduction: float) -> int:
    return puct.select(*tree.arrays, 0, 0, c_puct, fpu_reduction)


def expected_choice(priors, visits, q, net_value, c_puct) -> int:
    """argmax of Q + c * P * sqrt(N) / (1 + n), unvisited Q = the node's network value."""
    n_total = 1 + sum(visits)
    qs = np.where(np.asarray(visits) > 0, q, net_value)
    score = qs + c_puct * np.asarray(priors) * np.sqrt(n_total) / (1 + np.asarray(visits))
    return int(np.argmax(score))


@pytest.mark.parametrize("side", [0, 1])
def test_select_follows_the_formula_for_the_side_to_move(hand_tree, side):
    priors, visits, q = [0.5, 0.3, 0.2], [3, 1, 0], [0.2, 0.5, 0.0]
    tree = hand_tree(priors, visits, q, side=side, net_value=0.1)
    assert puct_choice(tree, 1.5, 0.0) == expected_choice(priors, visits, q, 0.1, 1.5) == 1
    # Black reading White's values unflipped would take edge 2 (its Q would be -0.2, -0.5).
    assert expected_choice(priors, visits, [-0.2, -0.5, 0.0], 0.1, 1.5) == 2


def test_first_play_reduction_keeps_the_search_on_tried_moves(hand_tree):
    """An untried edge starts at the node's value minus reduction * sqrt(visited prior mass)."""
    tree = hand_tree([0.5, 0.25, 0.25], [4, 0, 0], [0.0, 0.0, 0.0], net_value=0.0)
    assert puct_choice(tree, 1.0, 0.0) == 1  # 0.25 * sqrt(5) beats 0.5 * sqrt(5) / 5
    assert puct_choice(tree, 1.0, 1.0) == 0  # -sqrt(0.5) + 0.56 falls below 0.22
    assert puct_choice(tree, 1.0, 0.2) == 1  # -0.14 + 0.56 still above 0.22
    # Through the settings record, as the compiled search reads them.
    params = tr.search_params(c_puct=1.0, c_visit=50.0, c_scale=1.0, fpu_reduction=1.0)
    assert puct.select_edge(*tree.arrays, 0, 0, True, 0, params, np.zeros(8)) == 0


def test_first_play_reduction_is_void_before_any_visit(hand_tree):
    tree = hand_tree([0.2, 0.5, 0.3], [0, 0, 0], [0.0] * 3, net_value=0.3)
    assert puct_choice(tree, 1.0, 0.0) == puct_choice(tree, 1.0, 5.0) == 1  # highest prior


def test_root_noise_mixes_a_dirichlet_draw():
    prior = np.array([0.7, 0.2, 0.1])
    assert np.array_equal(puct.root_noise(prior, 0.3, 0.0, np.random.default_rng(4)), prior)
    noise = np.random.default_rng(4).dirichlet([0.3] * 3)
    mixed = puct.root_noise(prior, 0.3, 0.25, np.random.default_rng(4))
    np.testing.assert_allclose(mixed, 0.75 * prior + 0.25 * noise)
    assert mixed.sum() == pytest.approx(1.0) and not np.allclose(mixed, prior)


def test_policy_target_is_the_visit_shares():
    prior = np.array([0.1, 0.2, 0.7])
    np.testing.assert_allclose(puct.policy_target(np.array([3, 1, 0]), prior), [0.75, 0.25, 0.0])
    assert puct.policy_target(np.array([0, 0, 0]), prior) is prior  # one simulation: nothing visited


def test_choose_greedy_or_sampled_with_temperature():
    visits = np.array([1, 4, 3])
    policy = visits / visits.sum()
    rng = np.random.default_rng(0)
    assert puct.choose(policy, visits, 1.0, False, rng) == 1
    assert puct.choose(policy, visits, 0.0, True, rng) == 1
    draws = np.bincount([puct.choose(policy, visits, 1.0, True, rng) for _ in range(4000)], minlength=3) / 4000
    np.testing.assert_allclose(draws, policy, atol=0.03)
    sharp = np.bincount([puct.choose(policy, visits, 0.25, True, rng) for _ in range(4000)], minlength=3) / 4000
    weights = policy**4
    np.testing.assert_allclose(sharp, weights / weights.sum(), atol=0.03)
    assert sharp[1] > draws[1] + 0.1
