"""Self-play worker: full batches, carried-over games, exact continuation from its state."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
import torch
from support.tiny_worker import OVERRIDES, make_worker

from tammi_rl.config import load_config
from tammi_rl.env.observation import ObservationEncoder
from tammi_rl.legacy import upgrade_selfplay_state
from tammi_rl.rules.engine import Rules
from tammi_rl.selfplay.samples import MAX_LEGAL, policy_surprise, short_horizon_values
from tammi_rl.selfplay.worker import END_KEYS, SelfPlayWorker, StoredDecision, opponent_replies
from tammi_rl.store.checkpoint import from_plain, to_plain


def test_play_returns_finished_games_and_keeps_the_batch_full():
    worker = make_worker()
    result = worker.play(3)
    assert len(result.games) >= 3 and all(g.is_over for g in result.games)
    assert len(worker._active) + len(result.games) >= 4  # slots refilled up to parallel_games
    assert result.samples.obs.shape[1:] == worker.search.obs_shape
    legal = result.samples.legal
    assert np.all(np.abs(result.samples.policy.sum(1) - 1) < 1e-5)
    assert np.all(result.samples.policy[legal < 0] == 0)  # no mass outside the legal hops
    values = result.samples.value
    assert values.shape == (len(result.samples),) and np.all(np.abs(values) <= 1.0 + 1e-6)
    assert np.any(values != 0)  # the searched root values, not a placeholder
    surprise = result.samples.surprise
    assert surprise.shape == (len(result.samples),) and np.isfinite(surprise).all() and (surprise >= 0).all()
    assert np.any(surprise > 0)  # a 4-simulation search moves the untrained prior somewhere
    # Ownership: each sample is labelled with its game's last position, seen by its side to move.
    encoder = ObservationEncoder.for_rules(worker.rules)
    finals = {tuple(row) for g in result.games for row in encoder.square_owners(g.positions[-1])}
    ownership = result.samples.ownership
    assert ownership.shape == (len(result.samples), 32) and ownership.dtype == np.int8
    assert {tuple(row) for row in ownership} <= finals
    short = result.samples.short_value
    assert short.shape == (len(result.samples),) and np.isfinite(short).all() and (np.abs(short) <= 1.0).all()
    # Opponent replies: a stored decision's own legal hops and policy, where one was stored.
    has_reply = (result.samples.reply_legal >= 0).any(axis=1)
    assert has_reply.any()
    stored = {tuple(row) for row in result.samples.legal}
    assert {tuple(row) for row in result.samples.reply_legal[has_reply]} <= stored
    np.testing.assert_allclose(result.samples.reply_policy[has_reply].sum(1), 1.0, rtol=1e-5)
    # How the games ended: one count per reason, each game counted once under its own.
    ended = {reason: result.stats[key] for reason, key in END_KEYS.items() if result.stats[key]}
    assert ended == dict(Counter(g.result.reason for g in result.games))
    assert sum(result.stats[key] for key in END_KEYS.values()) == result.stats["games"] == len(result.games)


def record(move: int, first_hop: bool, tag: int) -> StoredDecision:
    legal = np.full(MAX_LEGAL, -1, np.int32)
    legal[0] = tag
    return StoredDecision(
        np.zeros(0), legal, np.eye(1, MAX_LEGAL, 0, np.float32)[0], move % 2, 0.0, 0.0, move, first_hop
    )


def test_the_opponent_reply_is_the_first_hop_of_the_next_move_where_stored():
    records = [
        record(0, True, 10),
        record(1, True, 11),
        record(1, False, 12),  # a later hop of move 1's capture: the same answer as its first hop
        record(2, True, 13),
        record(4, True, 14),  # move 3 was forced or searched cheaply, so move 2 has no reply stored
        record(-1, True, 15),  # from an old checkpoint: its move is not known
    ]
    replies = [int(legal[0]) for legal, _ in opponent_replies(records)]
    assert replies == [11, 13, 13, -1, -1, -1]
    assert all(policy.sum() == (1.0 if legal[0] >= 0 else 0.0) for legal, policy in opponent_replies(records))


def test_short_horizon_values_mix_the_next_search_values_and_the_outcome():
    values, sides = np.array([0.5, -0.2, 0.8]), np.array([0, 1, 0])  # each for its own side to move
    # White's view: 0.5, 0.2, 0.8, then White won (+1); horizon 2 keeps half of what lies ahead.
    third = 0.5 * 0.8 + 0.5 * 1.0
    second = 0.5 * 0.2 + 0.5 * third
    first = 0.5 * 0.5 + 0.5 * second
    got = short_horizon_values(values, sides, 0, horizon=2.0)
    np.testing.assert_allclose(got, [first, -second, third], rtol=1e-6)  # back in each side's view
    np.testing.assert_allclose(short_horizon_values(values, sides, 0, horizon=1.0), values, rtol=1e-6)
    far = short_horizon_values(values, sides, None, horizon=1e9)  # a draw, seen from very far
    np.testing.assert_allclose(far, 0.0, atol=1e-6)
    unknown = short_horizon_values(np.array([np.nan, np.nan]), np.array([0, 1]), 1, horizon=1.0)
    np.testing.assert_array_equal(unknown, [-1.0, 1.0])  # no search value: the outcome
    assert short_horizon_values(np.zeros(0), np.zeros(0), 0, 6.0).shape == (0,)


def test_policy_surprise_is_the_kl_of_the_target_from_the_prior():
    assert policy_surprise(np.array([0.5, 0.5]), np.array([0.5, 0.5])) == 0.0
    assert policy_surprise(np.array([1.0, 0.0]), np.array([0.25, 0.75])) == pytest.approx(math.log(4))
    kl = 0.8 * math.log(0.8 / 0.5) + 0.2 * math.log(0.2 / 0.5)
    assert policy_surprise(np.array([0.8, 0.2]), np.array([0.5, 0.5])) == pytest.approx(kl)
    assert np.isnan(policy_surprise(np.zeros(0), np.zeros(0)))  # no hop: nothing to measure
    assert np.isnan(policy_surprise(np.array([1.0]), np.zeros(0)))  # no prior recorded


def test_state_round_trip_continues_games_exactly():
    a = make_worker()
    a.play(2)
    assert a._active, "some games should still be running"
    state = from_plain(to_plain(a.state_dict()))  # the way checkpoints store it
    b = make_worker(seed=99)
    b.set_weights(a.model.state_dict())
    b.load_state_dict(state)
    ra, rb = a.play(4), b.play(4)
    assert [g.moves for g in ra.games] == [g.moves for g in rb.games]
    np.testing.assert_array_equal(ra.samples.obs, rb.samples.obs)
    np.testing.assert_array_equal(ra.samples.policy, rb.samples.policy)
    np.testing.assert_array_equal(ra.samples.outcome, rb.samples.outcome)
    np.testing.assert_array_equal(ra.samples.value, rb.samples.value)
    np.testing.assert_array_equal(ra.samples.surprise, rb.samples.surprise)


def test_games_saved_without_search_values_resume_with_outcomes_as_values():
    """Checkpoints from before search values were stored: their records take the game outcome."""
    a = make_worker()
    a.play(2)
    state = from_plain(to_plain(a.state_dict()))
    stored = sum(len(g["sides"]) for g in state["games"])
    assert stored > 0
    for g in state["games"]:
        del g["values"]
    b = make_worker(seed=99)
    b.set_weights(a.model.state_dict())
    b.load_state_dict(upgrade_selfplay_state(state))
    carried = list(b._active)
    assert sum(len(slot.records) for slot in carried) == stored
    from_outcome = 0
    while not all(slot.game.is_over for slot in carried):  # play until every carried game is over
        result = b.play(1)
        assert not np.isnan(result.samples.value).any()
        z = np.select([result.samples.outcome == 0, result.samples.outcome == 2], [1.0, -1.0], 0.0)
        from_outcome += int((result.samples.value == z).sum())
    assert from_outcome >= stored  # the old records, valued by their games' outcomes


def test_playout_cap_searches_the_whole_batch_full_or_cheap_and_stores_only_full():
    """With a playout cap, each search step is all-full or all-cheap (the batch stays whole),
    both kinds occur, and only full searches become training samples."""
    torch.manual_seed(0)
    cfg = load_config(
        None, [*OVERRIDES, "mcts.playout_cap_fraction=0.5", "mcts.simulations=6", "mcts.cheap_simulations=2"]
    )
    worker = SelfPlayWorker(Rules.for_variant("russian"), cfg, torch.device("cpu"), 0)
    calls = []
    run = worker.search.run

    def spy(roots, evaluator, simulations, **kwargs):
        calls.append((len(roots), np.unique(np.asarray(simulations)).tolist()))
        return run(roots, evaluator, simulations, **kwargs)

    worker.search.run = spy
    result = worker.play(4)
    kinds = [sims for _, sims in calls]
    assert all(len(k) == 1 for k in kinds)  # one simulation count per batched search
    full = sum(n for n, k in calls if k == [6])
    assert {6, 2} == {k[0] for k in kinds}
    assert full < sum(n for n, _ in calls)
    # Every full search of a finished game is one sample; games still running keep theirs.
    running = sum(len(slot.records) for slot in worker._active)
    assert len(result.samples) + running == full
