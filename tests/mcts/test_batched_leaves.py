"""Several leaves of one tree per network call (virtual loss), the evaluation cache, growing
tree storage, deadlines and stops: each simulation still backs up its own exact value."""

from __future__ import annotations

import hashlib
import time

import numpy as np
import pytest

from tammi_rl.config import MCTSConfig
from tammi_rl.mcts import tree as tr
from tammi_rl.mcts.search import BatchedSearch, RootState
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game

ALGORITHMS = ["gumbel", "puct"]


def hashed_evaluator(n_actions: int, calls: list[int] | None = None):
    """Logits and value drawn from a hash of each position's planes: deterministic per position,
    different between positions, so any mix-up of leaves, rows or cache slots shows."""

    def evaluate(obs: np.ndarray):
        logits = np.zeros((len(obs), n_actions), np.float32)
        values = np.zeros(len(obs), np.float32)
        for i, planes in enumerate(obs):
            seed = int.from_bytes(hashlib.blake2b(planes.tobytes(), digest_size=8).digest(), "little")
            rng = np.random.default_rng(seed)
            logits[i] = rng.normal(size=n_actions)
            values[i] = rng.uniform(-0.9, 0.9)
        if calls is not None:
            calls.append(len(obs))
        return logits, values

    return evaluate


def middlegame(rules: Rules, plies: int = 10, seed: int = 3) -> Game:
    rng = np.random.default_rng(seed)
    game = Game(rules)
    for _ in range(plies):
        moves = game.legal_moves()
        game.play(moves[int(rng.integers(len(moves)))])
    return game


def search_once(
    rules: Rules,
    algorithm: str,
    sims: int,
    leaves: int,
    cache: int = 0,
    pool: int | None = None,
    virtual_value: float = tr.VIRTUAL_VALUE,
):
    search = BatchedSearch(
        rules,
        MCTSConfig(algorithm=algorithm),
        max_trees=1,
        max_simulations=pool or sims,
        leaves_per_call=leaves,
        cache_slots=cache,
        virtual_value=virtual_value,
    )
    calls: list[int] = []
    evaluator = hashed_evaluator(search.codec.n_actions, calls)
    result = search.run([RootState.of_game(middlegame(rules))], evaluator, sims, False, np.random.default_rng(0))[0]
    return search, result, calls


def check_backups(search: BatchedSearch) -> None:
    """Every node: no walk left pending, visits = 1 (its own evaluation) + its children's, and
    its value sum = its own value + its children's sums (White's view): exact backups."""
    n = int(search.trees_i[0, tr.TI_N_NODES])
    ni, nf, ei = search.nodes_i[0], search.nodes_f[0], search.edges_i[0]
    assert np.all(ni[:n, tr.NI_PENDING] == 0)
    for node in range(n):
        if ni[node, tr.NI_VISITS] == 0 or ni[node, tr.NI_TERMINAL] == 1:
            continue
        first, count = ni[node, tr.NI_FIRST_EDGE], max(0, ni[node, tr.NI_N_EDGES])
        children = [int(ei[e, tr.EI_CHILD]) for e in range(first, first + count) if ei[e, tr.EI_CHILD] >= 0]
        own = nf[node, tr.NF_NET_VALUE] * (1 if ni[node, tr.NI_SIDE] == 0 else -1)
        if count == 1 and search.cfg.play_forced_hops and nf[node, tr.NF_NET_VALUE] == 0:
            own = 0.0  # a forced node passed through: no evaluation of its own
        visits = sum(int(ni[c, tr.NI_VISITS]) for c in children)
        assert ni[node, tr.NI_VISITS] in (visits, visits + 1)
        total = sum(float(nf[c, tr.NF_VALUE_SUM]) for c in children)
        if ni[node, tr.NI_VISITS] == visits + 1:
            total += own
        assert nf[node, tr.NF_VALUE_SUM] == pytest.approx(total, abs=1e-9)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("leaves", [1, 4, 16])
def test_every_simulation_is_counted_and_backed_up_exactly(russian: Rules, algorithm: str, leaves: int) -> None:
    search, result, calls = search_once(russian, algorithm, 200, leaves)
    assert result.simulations == 200 == int(search.nodes_i[0, 0, tr.NI_VISITS])
    assert result.visits.sum() == 199  # every simulation after the root's own went through a root edge
    assert max(calls) <= leaves
    check_backups(search)


@pytest.mark.parametrize("budget", [1, 2, 3, 7, 17, 33])
def test_a_budget_is_met_exactly_whatever_the_batch(russian: Rules, budget: int) -> None:
    _, result, _ = search_once(russian, "puct", budget, 8)
    assert result.simulations == budget


def test_virtual_loss_sends_the_walks_of_one_step_to_distinct_leaves(russian: Rules) -> None:
    """After the root's evaluation, one step of 4 walks reaches 4 different children when a
    pending walk counts as a loss (the root has more than 4 moves)."""
    _, result, calls = search_once(russian, "puct", 5, 4, virtual_value=-1.0)
    assert len(result.actions) > 4
    assert calls == [1, 4]
    assert sorted(result.visits.tolist()) == [0] * (len(result.visits) - 4) + [1, 1, 1, 1]


def test_virtual_visits_spread_the_walks_and_drop_collisions(russian: Rules) -> None:
    """The default counts a pending walk as a visit only (the child's mean is kept): walks still
    spread through the exploration term, and one that meets a leaf of its step is dropped, so
    every network position of a step is a different leaf."""
    assert np.isnan(tr.VIRTUAL_VALUE)
    search, result, calls = search_once(russian, "puct", 400, 16)
    assert result.simulations == 400
    assert 2 < np.mean(calls[1:]) <= 16
    check_backups(search)


def test_batched_search_finds_what_the_sequential_one_finds(russian: Rules) -> None:
    """With a strong enough budget both searches agree on the move and nearly on the value."""
    _, one, _ = search_once(russian, "puct", 400, 1)
    _, many, calls = search_once(russian, "puct", 400, 16)
    assert np.mean(calls[1:]) > 4  # the batch really filled
    assert abs(one.value - many.value) < 0.15
    top_one = set(one.actions[np.argsort(-one.visits)[:3]].tolist())
    assert many.action in top_one


@pytest.mark.parametrize("leaves", [1, 8])
def test_the_cache_changes_no_result_and_saves_network_calls(russian: Rules, leaves: int) -> None:
    plain, plain_result, plain_calls = search_once(russian, "puct", 300, leaves)
    cached, cached_result, cached_calls = search_once(russian, "puct", 300, leaves, cache=1 << 12)
    if leaves == 1:  # a sequential search takes the same path whatever the source of a value
        np.testing.assert_array_equal(plain_result.visits, cached_result.visits)
        assert plain_result.value == cached_result.value
        n = int(plain.trees_i[0, tr.TI_N_NODES])
        np.testing.assert_array_equal(plain.nodes_f[0, :n], cached.nodes_f[0, :n])
    assert cached.cache_hits > 0  # transpositions inside one tree
    assert sum(cached_calls) + cached.cache_hits == sum(plain_calls)
    check_backups(cached)


def test_the_cache_carries_over_to_the_next_search_and_clears(russian: Rules) -> None:
    search = BatchedSearch(russian, MCTSConfig(algorithm="puct"), 1, 200, leaves_per_call=8, cache_slots=1 << 12)
    calls: list[int] = []
    evaluator = hashed_evaluator(search.codec.n_actions, calls)
    root = [RootState.of_game(middlegame(russian))]
    first = search.run(root, evaluator, 200, False, np.random.default_rng(0))[0]
    spent = sum(calls)
    again = search.run(root, evaluator, 200, False, np.random.default_rng(0))[0]
    assert sum(calls) - spent < spent / 4  # the same search again: mostly from the cache
    assert again.action == first.action
    search.clear_cache()
    before = sum(calls)
    search.run(root, evaluator, 200, False, np.random.default_rng(0))
    assert sum(calls) - before > spent / 2


def test_cache_keys_tell_apart_the_state_of_a_capture_chain(russian: Rules) -> None:
    """Mid-chain nodes differ from the turn's start only by hops and path: both are in the key."""
    game = Game(russian, start=russian.parse_fen("W:Wc3:Bd4,f6,d6"))
    search = BatchedSearch(russian, MCTSConfig(algorithm="puct"), 1, 50, leaves_per_call=4, cache_slots=1 << 10)
    evaluator = hashed_evaluator(search.codec.n_actions)
    result = search.run([RootState.of_game(game)], evaluator, 50, False, np.random.default_rng(0))[0]
    check_backups(search)
    keys = search.cache[0][search.cache[1] >= 0]
    assert len({tuple(k) for k in keys}) == len(keys)
    assert result.simulations == 50


def test_a_search_grows_past_the_storage_it_was_built_for(russian: Rules) -> None:
    search, result, _ = search_once(russian, "puct", 600, 8, pool=32)
    assert result.simulations == 600
    assert search.nodes_i.shape[1] >= 600
    check_backups(search)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_a_deadline_or_a_stop_ends_the_search_after_the_root(russian: Rules, algorithm: str) -> None:
    search = BatchedSearch(russian, MCTSConfig(algorithm=algorithm), 1, 64, leaves_per_call=4)
    evaluator = hashed_evaluator(search.codec.n_actions)
    root = [RootState.of_game(middlegame(russian))]
    rng = np.random.default_rng(0)
    past = search.run(root, evaluator, 10**6, False, rng, deadline=time.perf_counter() - 1)[0]
    assert past.simulations == 1 and past.action in past.actions  # the root's priors choose
    polls: list[int] = []

    def stop_after_three() -> bool:
        polls.append(1)
        return len(polls) > 3

    before = search.nn_calls
    stopped = search.run(root, evaluator, 10**6, False, rng, should_stop=stop_after_three)[0]
    assert 1 + 3 <= stopped.simulations <= 1 + 3 * 4  # the root, then three steps of at most 4 walks
    assert search.nn_calls - before == 1 + 3
    check_backups(search)


def test_leaves_per_call_must_be_positive(russian: Rules) -> None:
    with pytest.raises(ValueError, match="leaves_per_call"):
        BatchedSearch(russian, MCTSConfig(), 1, 8, leaves_per_call=0)
    with pytest.raises(ValueError, match="power of two"):
        BatchedSearch(russian, MCTSConfig(), 1, 8, cache_slots=1000)
