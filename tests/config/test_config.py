"""Run configs: validation errors name the key, overrides, the resolved config."""

import re
from pathlib import Path

import pytest
import yaml

from tammi_rl.config import Config, ConfigError, load_config, save_config

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted((ROOT / "configs").glob("*.yaml"))


def write(tmp_path, text: str) -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(text)
    return path


def test_defaults():
    cfg = load_config(None)
    assert isinstance(cfg, Config) and cfg.variant == "russian" and cfg.run_name == "russian"


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_configs_load(path):
    cfg = load_config(path)
    assert cfg.train.iterations > 0 and cfg.network.blocks > 0


def test_shipped_configs_exist():
    names = {p.name for p in SHIPPED}
    assert {"russian.yaml", "english.yaml", "italian.yaml", "turkish.yaml", "smoke.yaml"} <= names


def test_unknown_key_named(tmp_path):
    path = write(tmp_path, "train:\n  lr: 0.01\n  learning_rate: 0.1\n")
    with pytest.raises(ConfigError, match=r"run.yaml: unknown key 'train.learning_rate'"):
        load_config(path)
    with pytest.raises(ConfigError, match="unknown key 'colour'"):
        load_config(write(tmp_path, "colour: red\n"))


@pytest.mark.parametrize(
    "text, key",
    [
        ("train:\n  lr: fast\n", "train.lr"),
        ("network:\n  blocks: 2.5\n", "network.blocks"),
        ("network:\n  blocks: 0\n", "network.blocks"),
        ("mcts:\n  algorithm: alphazero\n", "mcts.algorithm"),
        ("eval:\n  algorithm: mcts\n", "eval.algorithm"),
        ("train:\n  optimizer: adam\n", "train.optimizer"),
        ("mcts:\n  playout_cap_fraction: 1.5\n", "mcts.playout_cap_fraction"),
        ("eval:\n  alphabeta_depths: 2\n", "eval.alphabeta_depths"),
        ("eval:\n  alphabeta_depths: [1, x]\n", "eval.alphabeta_depths"),
        ("variant: checkers-9000\n", "variant"),
        ("device: tpu\n", "device"),
        ("train: 5\n", "train"),
        ("checkpoint:\n  buffer_snapshot: maybe\n", "checkpoint.buffer_snapshot"),
    ],
)
def test_bad_value_named(tmp_path, text, key):
    with pytest.raises(ConfigError, match=rf"run.yaml.*'{key}"):
        load_config(write(tmp_path, text))


def test_play_search_is_the_mcts_section_with_the_eval_algorithm():
    cfg = load_config(None, ["mcts.algorithm=gumbel", "mcts.c_puct=2.5"])
    assert (cfg.mcts.algorithm, cfg.play_search.algorithm, cfg.play_search.c_puct) == ("gumbel", "puct", 2.5)
    assert load_config(None, ["eval.algorithm=gumbel"]).play_search.algorithm == "gumbel"


def test_not_yaml_or_missing(tmp_path):
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(write(tmp_path, "train: [unclosed\n"))
    with pytest.raises(ConfigError, match=re.escape("nope.yaml: cannot read config")):
        load_config(tmp_path / "nope.yaml")


def test_overrides(tmp_path):
    path = write(tmp_path, "variant: english\ntrain:\n  lr: 0.01\n")
    cfg = load_config(
        path,
        [
            "train.lr=3e-4",
            "mcts.simulations=32",
            "eval.alphabeta_depths=[1,3]",
            "name=exp1",
            "checkpoint.buffer_snapshot=false",
        ],
    )
    assert cfg.train.lr == pytest.approx(3e-4) and cfg.mcts.simulations == 32
    assert cfg.eval.alphabeta_depths == [1, 3] and cfg.run_name == "exp1"
    assert cfg.checkpoint.buffer_snapshot is False and cfg.variant == "english"


@pytest.mark.parametrize(
    "override, key",
    [
        ("train.lrr=1", "train.lrr"),
        ("mcts.simulations=lots", "mcts.simulations"),
    ],
)
def test_bad_override_named(override, key):
    with pytest.raises(ConfigError, match=rf"'{key}'"):
        load_config(None, [override])


def test_override_syntax():
    with pytest.raises(ConfigError, match=re.escape("must look like key.sub=value")):
        load_config(None, ["train.lr"])


def test_resolved_config_round_trip(tmp_path):
    cfg = load_config(None, ["variant=italian", "network.channels=24", "eval.alphabeta_depths=[2]"])
    out = tmp_path / "config.yaml"
    save_config(cfg, out)
    data = yaml.safe_load(out.read_text())
    assert data["network"]["channels"] == 24 and data["variant"] == "italian"
    assert load_config(out) == cfg


def test_min_samples_above_capacity_is_an_error():
    with pytest.raises(ConfigError, match=re.escape("replay.min_samples")):
        load_config(None, ["replay.capacity=100", "replay.min_samples=200"])


def test_retired_keys_still_load_with_a_warning_that_says_what_replaced_them(tmp_path):
    from tammi_rl.config import ConfigWarning

    old = tmp_path / "old.yaml"
    old.write_text("train:\n  steps_per_iteration: 40\ndistributed:\n  max_restarts: 7\n  games_per_actor: 3\n")
    with pytest.warns(ConfigWarning) as caught:
        cfg = load_config(old)
    texts = " | ".join(str(w.message) for w in caught)
    assert "'train.steps_per_iteration' is retired" in texts and "train.replay_ratio" in texts
    assert "'distributed.max_restarts' is retired and moved to selfplay.max_restarts" in texts
    assert "'distributed.games_per_actor' is retired and ignored" in texts
    assert str(old) in texts
    assert cfg.selfplay.max_restarts == 7 and cfg.train.replay_ratio == 4.0
