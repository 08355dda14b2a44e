"""Checkpoints: round trip, atomic writes, and clear errors for bad files."""

import random
import re

import numpy as np
import pytest
import torch

from tammi_rl.config import Config, NetworkConfig, TrainConfig
from tammi_rl.nn.model import build_model
from tammi_rl.rules.errors import TammiError
from tammi_rl.store.checkpoint import (
    CheckpointError,
    capture_rng,
    load_checkpoint,
    load_model_weights,
    make_checkpoint,
    restore_rng,
    save_checkpoint,
)
from tammi_rl.train.learner import Learner

TINY = NetworkConfig(blocks=1, channels=16, value_hidden=16)


def _checkpoint(rules, network=TINY, variant="russian", worker=None):
    model = build_model(rules, network)
    learner = Learner(model, TrainConfig())
    gen = np.random.default_rng(5)
    return model, make_checkpoint(
        variant=variant,
        network=network,
        model=model,
        learner=learner.state_dict(),
        counters={"iteration": 3, "games": 12},
        rng=capture_rng(gen),
        worker=worker,
        config=Config(variant=variant).to_dict(),
    )


def test_round_trip(tmp_path, russian):
    worker_state = {
        "rng": np.random.default_rng(1).bit_generator.state,
        "arr": np.arange(5, dtype=np.uint32),
        "n": np.int64(4),
        "t": (1, 2),
    }
    model, ckpt = _checkpoint(russian, worker=worker_state)
    path = tmp_path / "ck.pt"
    save_checkpoint(path, ckpt)
    assert [p.name for p in tmp_path.iterdir()] == ["ck.pt"]  # the temp file was renamed away
    back = load_checkpoint(path, variant="russian", network=TINY)
    assert back["counters"] == {"iteration": 3, "games": 12}
    assert back["config"]["variant"] == "russian"
    assert back["worker"]["rng"] == worker_state["rng"]
    np.testing.assert_array_equal(back["worker"]["arr"], worker_state["arr"])
    assert back["worker"]["arr"].dtype == np.uint32 and back["worker"]["t"] == (1, 2)
    other = build_model(russian, TINY)
    load_model_weights(other, back, path)
    for a, b in zip(model.state_dict().values(), other.state_dict().values(), strict=False):
        assert torch.equal(a, b)
    Learner(other, TrainConfig()).load_state_dict(back["learner"])


def test_rng_round_trip():
    gen = np.random.default_rng(9)
    random.seed(1), np.random.seed(2), torch.manual_seed(3)
    state = capture_rng(gen)
    expect = (random.random(), np.random.rand(), torch.rand(1).item(), gen.random())
    random.random(), np.random.rand(), torch.rand(1), gen.random()
    restore_rng(state, gen)
    assert (random.random(), np.random.rand(), torch.rand(1).item(), gen.random()) == expect


def test_missing_file(tmp_path):
    with pytest.raises(CheckpointError, match=re.escape("nope.pt: no checkpoint there")):
        load_checkpoint(tmp_path / "nope.pt")


@pytest.mark.parametrize("content", [b"", b"not a checkpoint at all", b"PK\x03\x04truncated zip"])
def test_corrupt_file(tmp_path, content):
    path = tmp_path / "bad.pt"
    path.write_bytes(content)
    with pytest.raises(CheckpointError, match=r"bad\.pt: not a readable checkpoint"):
        load_checkpoint(path)


def test_truncated_checkpoint(tmp_path, russian):
    _, ckpt = _checkpoint(russian)
    path = tmp_path / "cut.pt"
    save_checkpoint(path, ckpt)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match=re.escape("cut.pt")):
        load_checkpoint(path)


def test_not_a_tammi_checkpoint(tmp_path):
    path = tmp_path / "other.pt"
    torch.save({"state_dict": {}}, path)
    with pytest.raises(CheckpointError, match=re.escape("other.pt: not a tammi-rl checkpoint")):
        load_checkpoint(path)


def test_other_variant(tmp_path, russian):
    _, ckpt = _checkpoint(russian)
    path = tmp_path / "ru.pt"
    save_checkpoint(path, ckpt)
    with pytest.raises(
        CheckpointError, match=re.escape("ru.pt: checkpoint is for variant 'russian', this run is 'english'")
    ):
        load_checkpoint(path, variant="english")


def test_other_network_shape(tmp_path, russian):
    _, ckpt = _checkpoint(russian)
    path = tmp_path / "net.pt"
    save_checkpoint(path, ckpt)
    with pytest.raises(CheckpointError, match=r"net.pt: network shape .*network.channels: checkpoint 16, config 32"):
        load_checkpoint(path, network=NetworkConfig(blocks=1, channels=32, value_hidden=16))


def test_weights_of_another_board(tmp_path, russian, english):
    _, ckpt = _checkpoint(english, variant="english")  # the same network config, short kings: fewer policy planes
    with pytest.raises(CheckpointError, match=r"x.pt: weights do not fit this network"):
        load_model_weights(build_model(russian, TINY), ckpt, tmp_path / "x.pt")


def test_other_format_version(tmp_path, russian):
    _, ckpt = _checkpoint(russian)
    ckpt["format_version"] = 99
    path = tmp_path / "v.pt"
    save_checkpoint(path, ckpt)
    with pytest.raises(CheckpointError, match="format version 99"):
        load_checkpoint(path)


def test_error_is_a_tammi_error():
    assert issubclass(CheckpointError, TammiError)


def test_resume_prefers_the_newest_numbered_checkpoint(tmp_path):
    """A kill between writing ckpt_N and copying it to latest.pt must not lose iteration N."""
    from tammi_rl.store.rundir import RunDir

    run = RunDir(tmp_path / "run")
    run.checkpoints_dir.mkdir(parents=True)
    for name in ("ckpt_000001.pt", "ckpt_000002.pt", "latest.pt"):
        (run.checkpoints_dir / name).write_bytes(b"x")
    assert run.resume_checkpoint().name == "ckpt_000002.pt"
