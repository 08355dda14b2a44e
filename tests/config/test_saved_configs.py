"""Configs a run saved before the defaults became the recipe keep their meaning.

A run directory's ``config.yaml`` and a checkpoint's ``config`` hold the whole resolved config
of their day, so they lack only keys added since; such a key takes the default it had before
the defaults moved (`tammi_rl.legacy.upgrade_saved_config`), never today's. A config file a
user writes means today's defaults.
"""

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tammi_rl.config import Config, NetworkConfig, config_from_dict, load_config
from tammi_rl.legacy import DEFAULTS_BEFORE_THE_RECIPE, upgrade_saved_config
from tammi_rl.nn.model import build_model
from tammi_rl.store.checkpoint import load_checkpoint, make_checkpoint, save_checkpoint
from tammi_rl.train.trainer import resume_config

RESOLVED = Path(__file__).parent / "resolved"
ADDED_LATER = {
    "runtime": "auto",
    "mcts.play_forced_hops": False,
    "train.hours": 0.0,
    "train.value_target_search_weight": 0.0,
}
"""Keys added after the first saved configs whose default has moved since: what a run saved
before each existed ran with."""


def flat(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out.update(flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def without(data: dict[str, Any], keys) -> dict[str, Any]:
    """A copy of a nested config mapping without some dotted keys: a config saved before they existed."""
    data = json.loads(json.dumps(data))
    for dotted in keys:
        *sections, key = dotted.split(".")
        node = data
        for section in sections:
            node = node[section]
        del node[key]
    return data


def test_the_table_holds_every_moved_default_and_only_those():
    today = flat(Config().to_dict())
    assert set(DEFAULTS_BEFORE_THE_RECIPE) <= set(today)
    assert all(DEFAULTS_BEFORE_THE_RECIPE[key] != today[key] for key in DEFAULTS_BEFORE_THE_RECIPE)
    old = config_from_dict(upgrade_saved_config({}))  # the defaults as they were: still valid
    moved = {key for key, value in flat(old.to_dict()).items() if value != today[key]}
    assert moved == set(DEFAULTS_BEFORE_THE_RECIPE)
    assert ADDED_LATER.items() <= DEFAULTS_BEFORE_THE_RECIPE.items()


def test_a_missing_key_takes_its_old_default_and_a_saved_one_stays():
    saved = without(json.loads((RESOLVED / "smoke.json").read_text()), ADDED_LATER)
    saved["mcts"]["gumbel_c_scale"] = 0.25
    upgraded = upgrade_saved_config(saved)
    assert "hours" not in saved["train"]  # a copy: the input is not touched
    got = flat(config_from_dict(upgraded).to_dict())
    assert {key: got[key] for key in ADDED_LATER} == ADDED_LATER
    assert got["mcts.gumbel_c_scale"] == 0.25 and got["network.blocks"] == 1
    assert config_from_dict(saved).train.hours == Config().train.hours == 2.0  # without the shim: today's


@pytest.mark.parametrize("bad", [None, 3, "text", [1, 2]])
def test_anything_but_a_mapping_is_left_for_the_loader(bad):
    assert upgrade_saved_config(bad) == bad
    assert upgrade_saved_config({"train": bad})["train"] == bad  # a bad section too
    assert upgrade_saved_config({"train": bad})["mcts"]["simulations"] == 64


def test_a_run_directory_config_resumes_with_its_old_defaults(tmp_path):
    recipe = json.loads((RESOLVED / "russian.json").read_text())
    run = tmp_path / "old-run"
    run.mkdir()
    (run / "config.yaml").write_text(yaml.safe_dump(without(recipe, ADDED_LATER), sort_keys=False))
    cfg = resume_config(run, ["train.iterations=7"])
    got = flat(cfg.to_dict())
    assert {key: got[key] for key in ADDED_LATER} == ADDED_LATER
    assert cfg.train.iterations == 7 and cfg.network.channels == 48  # overrides and saved keys as given
    mine = load_config(run / "config.yaml")  # the same file as a user's config: today's defaults
    assert (mine.train.hours, mine.runtime) == (2.0, "onnx-int8")


def test_a_checkpoint_config_reads_with_its_old_defaults(tmp_path, russian):
    network = NetworkConfig(blocks=1, channels=8, value_hidden=8)
    config = without(Config(network=network).to_dict(), [*ADDED_LATER, "eval.algorithm"])
    ckpt = make_checkpoint(
        variant="russian",
        network=network,
        model=build_model(russian, network),
        learner=None,
        counters={"iteration": 1, "games": 2},
        rng={},
        worker=None,
        config=config,
    )
    save_checkpoint(tmp_path / "old.pt", ckpt)
    back = flat(load_checkpoint(tmp_path / "old.pt")["config"])
    assert {key: back[key] for key in ADDED_LATER} == ADDED_LATER
    assert back["network.blocks"] == 1 and "eval.algorithm" not in back  # saved keys kept; others not invented
