"""Backward compatibility: every old format `tammi_rl.legacy` reads, built by hand and upgraded."""

import dataclasses

import numpy as np
import pytest
import torch

from tammi_rl.config import Config, NetworkConfig, TrainConfig
from tammi_rl.legacy import (
    one_file_replay_snapshot,
    upgrade_checkpoint_config,
    upgrade_counters,
    upgrade_learner_state,
    upgrade_network,
    upgrade_replay_snapshot,
    upgrade_retired_keys,
    upgrade_saved_config,
    upgrade_selfplay_state,
)
from tammi_rl.nn.model import build_model, input_planes
from tammi_rl.selfplay.samples import MAX_LEGAL, outcome_values
from tammi_rl.store.checkpoint import load_checkpoint, load_model_weights, make_checkpoint, save_checkpoint
from tammi_rl.store.rundir import RunDir
from tammi_rl.train.learner import Learner
from tammi_rl.train.replay import ReplayBuffer
from tammi_rl.train.resume import load_replay
from tammi_rl.train.trainer import Counters

SHAPE = (11, 8, 8)


# --- configs ---------------------------------------------------------------------------
def test_config_from_before_the_replay_ratio_drops_steps_per_iteration():
    old = {"train": {"steps_per_iteration": 40, "lr": 0.01}}
    new, notes = upgrade_retired_keys(old)
    assert new == {"train": {"lr": 0.01}}
    assert old == {"train": {"steps_per_iteration": 40, "lr": 0.01}}  # a copy: the caller's mapping is kept
    assert len(notes) == 1 and "'train.steps_per_iteration' is retired and ignored" in notes[0]
    assert "train.replay_ratio" in notes[0]


def test_config_from_before_selfplay_max_restarts_moves_the_distributed_key():
    new, notes = upgrade_retired_keys({"distributed": {"max_restarts": 7, "backend": "ray"}})
    assert new == {"distributed": {"backend": "ray"}, "selfplay": {"max_restarts": 7}}
    assert notes == [
        "key 'distributed.max_restarts' is retired and moved to selfplay.max_restarts: "
        "it now counts the deaths of workers and actors alike"
    ]
    both, _ = upgrade_retired_keys({"distributed": {"max_restarts": 7}, "selfplay": {"max_restarts": 2}})
    assert both == {"distributed": {}, "selfplay": {"max_restarts": 2}}  # the new key, when set, wins


def test_config_from_before_streamed_games_drops_games_per_actor():
    new, notes = upgrade_retired_keys({"distributed": {"games_per_actor": 3}})
    assert new == {"distributed": {}}
    assert len(notes) == 1 and "'distributed.games_per_actor' is retired and ignored" in notes[0]


def test_todays_config_and_non_mappings_pass_unchanged():
    today = Config().to_dict()
    assert upgrade_retired_keys(today) == (today, [])
    assert upgrade_retired_keys(["not", "a", "mapping"]) == (["not", "a", "mapping"], [])


# --- checkpoint counters ---------------------------------------------------------------
FIRST_COUNTERS = {
    "iteration": 12,
    "games": 480,
    "positions": 30_000,
    "samples_trained": 120_000,
    "replay_total_added": 30_000,
    "eval_scores": {2: 0.75},
}
"""The counters of the first checkpoint format."""


def test_counters_from_before_worker_pools_have_no_restarts():
    new = upgrade_counters(FIRST_COUNTERS)
    assert {k: new[k] for k in FIRST_COUNTERS} == FIRST_COUNTERS
    assert new["worker_restarts"] == 0
    assert set(new) == {f.name for f in dataclasses.fields(Counters)}  # every counter today's trainer keeps
    assert Counters(**new).iteration == 12
    assert "worker_restarts" not in FIRST_COUNTERS  # a copy


def test_counters_from_before_pacing_from_the_ratio_have_no_ratio_set():
    old = {**FIRST_COUNTERS, "worker_restarts": 2}
    new = upgrade_counters(old)
    assert (new["pace_ratio"], new["pace_positions"], new["pace_samples"]) == (0.0, 0, 0)
    assert new["worker_restarts"] == 2
    counters = Counters(**new)
    said = counters.pace_from_here(4.0)
    assert said == "the replay ratio was not set (a run from before pacing) and is now 4; pacing counts from here"
    assert (counters.pace_ratio, counters.pace_positions, counters.pace_samples) == (4.0, 30_000, 120_000)


def test_counters_from_before_the_run_clock_start_it_at_zero():
    old = {**FIRST_COUNTERS, "worker_restarts": 0, "pace_ratio": 4.0, "pace_positions": 0, "pace_samples": 0}
    new = upgrade_counters(old)
    assert new["seconds"] == 0.0 and new["pace_ratio"] == 4.0


def test_counters_from_before_train_hours_have_no_evaluation_timed_and_no_budget_spent():
    old = {**FIRST_COUNTERS, "worker_restarts": 0, "pace_ratio": 4.0, "pace_positions": 0, "pace_samples": 0}
    old["seconds"] = 3600.0
    new = upgrade_counters(old)
    assert new["eval_seconds"] == 0.0 and new["budget_spent"] is False and new["seconds"] == 3600.0


def test_todays_counters_pass_unchanged():
    today = dataclasses.asdict(Counters(iteration=3, seconds=12.5, budget_spent=True, eval_seconds=4.0, pace_ratio=2))
    assert upgrade_counters(today) == today


# --- the learner, the self-play worker and the saved config -----------------------------
def test_learner_state_from_before_progress_driven_lr_drops_the_scheduler(russian):
    network = NetworkConfig(blocks=1, channels=8, value_hidden=8)
    first = Learner(build_model(russian, network), TrainConfig())
    scheduler = torch.optim.lr_scheduler.LambdaLR(first.optimizer, lambda step: 1.0)  # what it kept then
    old = {"optimizer": first.optimizer.state_dict(), "scheduler": scheduler.state_dict(), "step": 7}
    new = upgrade_learner_state(old)
    assert set(new) == {"optimizer", "step"} and "scheduler" in old
    learner = Learner(build_model(russian, network), TrainConfig())
    learner.load_state_dict(new)
    assert learner.step_count == 7


def old_game(records: int) -> dict:
    return {
        "start": "W:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12",
        "moves": [],
        "prefix": np.zeros(0, np.int64),
        "play_out": False,
        "would_resign": -1,
        "obs": np.zeros((records, *SHAPE), np.float32),
        "legal": np.zeros((records, MAX_LEGAL), np.int32),
        "policy": np.zeros((records, MAX_LEGAL), np.float32),
        "sides": np.arange(records, dtype=np.int64) % 2,
    }


def test_selfplay_games_from_before_search_values_get_nan_values():
    rng_state = np.random.default_rng(1).bit_generator.state
    today = {
        **old_game(2),
        "values": np.array([0.5, -0.25], np.float32),
        "surprise": np.zeros(2, np.float32),
        "record_move": np.array([0, 1], np.int64),
        "record_first_hop": np.array([True, True]),
    }
    old = {"rng": rng_state, "games": [old_game(3), today]}
    new = upgrade_selfplay_state(old)
    assert new["rng"] == rng_state and len(new["games"]) == 2
    values = new["games"][0]["values"]
    assert values.dtype == np.float32 and values.shape == (3,) and np.isnan(values).all()
    assert np.isnan(new["games"][0]["surprise"]).all() and new["games"][0]["surprise"].shape == (3,)
    assert (new["games"][0]["record_move"] == -1).all() and not new["games"][0]["record_first_hop"].any()
    assert new["games"][1] is today  # games in today's format are kept as they are
    assert "values" not in old["games"][0]  # a copy
    assert upgrade_selfplay_state({"rng": rng_state}) == {"rng": rng_state}  # no games: nothing added


def test_checkpoint_without_a_config_reads_as_a_saved_config_lacking_every_key():
    for missing in (None, "not a mapping"):
        config = upgrade_checkpoint_config(missing)
        assert config["train"]["hours"] == 0.0
        assert config["eval"]["algorithm"] == "puct" and config["eval"]["play_forced_hops"] is False
        assert config["mcts"] == upgrade_saved_config({})["mcts"]


def test_checkpoint_config_from_before_train_hours_has_no_budget():
    old = Config().to_dict()
    del old["train"]["hours"]
    assert upgrade_checkpoint_config(old)["train"]["hours"] == 0.0
    assert "hours" not in old["train"]  # a copy


def test_checkpoint_config_from_before_eval_algorithm_plays_puct():
    old = Config().to_dict()
    old["mcts"]["algorithm"] = "gumbel"
    del old["eval"]["algorithm"]
    new = upgrade_checkpoint_config(old)
    assert new["eval"]["algorithm"] == "puct" and new["mcts"]["algorithm"] == "gumbel"


def test_checkpoint_config_from_before_eval_play_forced_hops_searches_every_hop():
    old = Config().to_dict()
    old["mcts"]["play_forced_hops"] = True  # self-play's own: not the agent's
    del old["eval"]["play_forced_hops"]
    assert upgrade_checkpoint_config(old)["eval"]["play_forced_hops"] is False


def test_todays_checkpoint_config_passes_unchanged():
    today = Config(train=TrainConfig(hours=2.0)).to_dict()
    today["eval"]["algorithm"] = "gumbel"
    today["eval"]["play_forced_hops"] = True
    assert upgrade_checkpoint_config(today) == today


def save_with_network_keys(path, rules, network, keys):
    """A checkpoint of ``network`` whose saved ``network`` entry holds only ``keys``, as an
    older version wrote it."""
    ckpt = make_checkpoint(
        variant="russian",
        network=network,
        model=build_model(rules, network),
        learner=None,
        counters={"iteration": 1},
        rng={},
        worker=None,
        config={},
    )
    ckpt["network"] = keys
    save_checkpoint(path, ckpt)


def test_network_from_before_the_extra_heads_has_none_of_them(tmp_path, russian):
    old_shape = {"blocks": 1, "channels": 8, "value_hidden": 8}  # what checkpoints held then
    network = NetworkConfig(**upgrade_network(old_shape))
    assert network == NetworkConfig(
        **old_shape,
        global_pooling=False,
        soft_policy=False,
        ownership=False,
        short_value=False,
        opponent_policy=False,
        attack_planes=False,
    )
    assert "ownership" not in old_shape  # a copy
    save_with_network_keys(tmp_path / "old.pt", russian, network, old_shape)
    back = load_checkpoint(tmp_path / "old.pt", variant="russian", network=network)  # a resume's check
    assert NetworkConfig(**back["network"]) == network
    load_model_weights(build_model(russian, NetworkConfig(**back["network"])), back, tmp_path / "old.pt")


def test_saved_config_from_before_the_extra_heads_names_the_same_network():
    old = Config().to_dict()
    old["network"] = {"blocks": 3, "channels": 32, "value_hidden": 64}
    assert upgrade_saved_config(old)["network"] == upgrade_network(old["network"])
    assert len(old["network"]) == 3  # a copy


def test_a_run_from_before_the_attack_planes_resumes_with_11_planes(tmp_path, russian):
    """A checkpoint with every other network key but not ``attack_planes`` passes a resume's
    check against today's config, and its network reads 11 planes."""
    network = NetworkConfig()
    before = {k: v for k, v in dataclasses.asdict(network).items() if k != "attack_planes"}
    save_with_network_keys(tmp_path / "old.pt", russian, network, before)
    back = load_checkpoint(tmp_path / "old.pt", variant="russian", network=network)
    model = build_model(russian, NetworkConfig(**back["network"]))
    load_model_weights(model, back, tmp_path / "old.pt")
    assert input_planes(model) == 11


def test_todays_network_passes_unchanged():
    today = dataclasses.asdict(NetworkConfig(ownership=True, soft_policy=True))
    assert upgrade_network(today) == today


# --- replay snapshots --------------------------------------------------------------------
def version_1_arrays(n: int) -> dict[str, np.ndarray]:
    ids = np.arange(n)
    return {
        "version": np.array(1),
        "total_added": np.array(n, np.int64),
        "obs": np.broadcast_to(ids[:, None, None, None], (n, *SHAPE)).astype(np.float16),
        "legal": np.zeros((n, MAX_LEGAL), np.int16),
        "policy": np.zeros((n, MAX_LEGAL), np.float16),
        "outcome": (ids % 3).astype(np.int8),
    }


def test_replay_snapshot_version_1_takes_the_outcomes_as_values(tmp_path):
    """Format 1 (before samples kept their search value): outcome codes 0/1/2 -> values 1/0/-1."""
    old = version_1_arrays(6)
    new = upgrade_replay_snapshot(old)
    assert int(new["version"]) == 4 and "value" not in old and np.isnan(new["surprise"]).all()
    np.testing.assert_array_equal(new["value"], np.array([1, 0, -1, 1, 0, -1], np.float32))
    np.testing.assert_array_equal(new["value"], outcome_values(old["outcome"]))  # today's reading of the codes
    path = tmp_path / "v1.npz"
    np.savez(path, **old)
    back = ReplayBuffer.load(path, 10, SHAPE)
    assert back.contents().obs[:, 0, 0, 0].tolist() == list(range(6)) and back.total_added == 6
    np.testing.assert_array_equal(back.contents().value, new["value"])


def test_replay_snapshot_version_2_gets_unmeasured_surprises(tmp_path):
    """Format 2 (before samples kept their policy surprise): NaN, read by the learner as an
    average sample; a run's chunk directory of format 2 still resumes."""
    old = {**version_1_arrays(4), "version": np.array(2), "value": np.full(4, 0.5, np.float16)}
    new = upgrade_replay_snapshot(old)
    assert int(new["version"]) == 4 and new["surprise"].shape == (4,) and np.isnan(new["surprise"]).all()
    chunks = tmp_path / "replay"
    chunks.mkdir()
    np.savez(chunks / "chunk_000000000000_000000000004.npz", **{k: v for k, v in old.items() if k != "total_added"})
    back = ReplayBuffer.load_chunks(chunks, 10, SHAPE)
    assert len(back) == 4 and np.isnan(back.contents().surprise).all()
    np.testing.assert_array_equal(back.contents().value, np.full(4, 0.5, np.float32))


def test_replay_snapshot_version_3_gets_unrecorded_auxiliary_targets(tmp_path):
    """Format 3 (before samples kept their ownership, short-horizon value and opponent-reply
    targets): -1 on every playable square, NaN short values and no reply, which the learner
    leaves out of those losses; a chunk of format 3 still resumes."""
    old = {
        **version_1_arrays(4),
        "version": np.array(3),
        "value": np.full(4, 0.5, np.float16),
        "surprise": np.full(4, 0.25, np.float16),
    }
    new = upgrade_replay_snapshot(old)
    assert int(new["version"]) == 4 and new["ownership"].shape == (4, 32) and (new["ownership"] == -1).all()
    chunks = tmp_path / "replay"
    chunks.mkdir()
    np.savez(chunks / "chunk_000000000000_000000000004.npz", **{k: v for k, v in old.items() if k != "total_added"})
    back = ReplayBuffer.load_chunks(chunks, 10, SHAPE)
    assert len(back) == 4 and (back.contents().ownership == -1).all() and np.isnan(back.contents().short_value).all()
    assert (back.contents().reply_legal == -1).all() and (back.contents().reply_policy == 0).all()
    np.testing.assert_array_equal(back.contents().surprise, np.full(4, 0.25, np.float32))


def test_replay_snapshot_of_today_passes_unchanged():
    today = {
        **version_1_arrays(3),
        "version": np.array(4),
        "value": np.full(3, 0.5, np.float32),
        "surprise": np.full(3, 0.25, np.float16),
        "ownership": np.zeros((3, 32), np.int8),
        "short_value": np.full(3, -0.5, np.float16),
        "reply_legal": np.ones((3, MAX_LEGAL), np.int16),
        "reply_policy": np.ones((3, MAX_LEGAL), np.float16),
    }
    assert upgrade_replay_snapshot(today).keys() == today.keys()
    for key in ("value", "surprise", "ownership", "short_value", "reply_legal", "reply_policy"):
        np.testing.assert_array_equal(upgrade_replay_snapshot(today)[key], today[key])


@pytest.mark.parametrize("version", [0, 5])
def test_unknown_replay_snapshot_formats_are_left_for_the_reader_to_refuse(version):
    arrays = {**version_1_arrays(2), "version": np.array(version)}
    new = upgrade_replay_snapshot(arrays)
    assert new.keys() == arrays.keys() and all(new[k] is arrays[k] for k in arrays)


# --- run directories -----------------------------------------------------------------------
def test_run_from_before_chunked_replay_saves_resumes_its_one_file_snapshot(tmp_path):
    run = RunDir(tmp_path / "old-run")
    run.root.mkdir()
    np.savez(run.root / "replay.npz", **version_1_arrays(5))  # no replay/ folder: the layout before chunks
    said: list[str] = []
    buf = load_replay(run, 100, SHAPE, 32, known=5, say=said.append)
    assert buf is not None and len(buf) == buf.total_added == 5 and not said
    assert buf.contents().obs[:, 0, 0, 0].tolist() == [0, 1, 2, 3, 4]
    # written just before a checkpoint that never landed: lined up with the one that did
    lined_up = load_replay(run, 100, SHAPE, 32, known=3, say=said.append)
    assert lined_up is not None and lined_up.contents().obs[:, 0, 0, 0].tolist() == [0, 1, 2]
    assert one_file_replay_snapshot(run.root) == run.root / "replay.npz"
