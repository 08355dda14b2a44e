"""Every shipped model (``checkpoints/<variant>.pt``) is what its file says and plays well.

These read the real files of the installed ``tammi_rl.checkpoints`` package, not planted
stand-ins: a model that is missing, mislabelled, too large, cut to the wrong shape or
untrained fails here. (`tests/integration/test_shipped_models.py` tests the plumbing on planted files.)
"""

from pathlib import Path

import pytest
import torch

from tammi_rl.config import EvalConfig, NetworkConfig, config_from_dict, load_config
from tammi_rl.eval.match import run_match
from tammi_rl.nn.model import build_model
from tammi_rl.nn.saved import load_network
from tammi_rl.players import parse_player_spec
from tammi_rl.players.simple import RandomPlayer
from tammi_rl.rules.engine import Rules
from tammi_rl.store.checkpoint import load_checkpoint
from tammi_rl.store.shipped import shipped_model, shipped_models

SHIPPED = ("english", "international", "italian", "russian", "turkish")
CONFIGS = Path(__file__).resolve().parents[2] / "configs"
RECIPE = ("network", "mcts", "selfplay", "replay", "train")
"""The config sections that make the model; a shipped model was trained by its variant's
shipped config (``configs/<variant>.yaml``), so changing the recipe means shipping anew.
Only the budget, ``train.iterations``, may be shorter (its model card says so); the run
must have finished it, or been ended by its ``train.hours`` budget, so its learning-rate
schedule ran to its end. A recipe key added after
a model was trained counts at its default, and a new key's default is the behaviour from
before it existed, so adding one does not change what the old recipe meant."""
RECIPE_KEYS = ("runtime",)
"""Top-level config keys that make the model too: the self-play network's runtime (8-bit
self-play plays other games than float32)."""
MAX_BYTES_PER_PARAMETER = 5
"""A shipped model is a playing checkpoint: float32 weights (4 bytes a parameter), its config
and counters, and no optimizer state (AdamW's two moments would add 8 bytes a parameter)."""


def test_a_model_ships_for_every_first_class_variant_and_international() -> None:
    assert list(shipped_models()) == sorted(SHIPPED)


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_model_is_its_variant_and_network(name: str) -> None:
    path = shipped_model(name)
    ckpt = load_checkpoint(path)
    assert ckpt["variant"] == name
    assert ckpt["learner"] is None and ckpt["worker"] is None  # made by `tammi-rl export --model`
    config = ckpt["config"]
    assert config["variant"] == name
    assert config["network"] == ckpt["network"]  # the shape it declares is the shape it was trained as
    counters = ckpt["counters"]
    assert counters["games"] > 0
    assert counters["iteration"] == config["train"]["iterations"] or counters.get("budget_spent", False)
    shipped_config = load_config(CONFIGS / f"{name}.yaml").to_dict()
    trained = config_from_dict(config, f"{name}.pt").to_dict()  # a key the model predates: its default
    for section in RECIPE:
        ours, theirs = dict(trained[section]), dict(shipped_config[section])
        if section == "train":
            assert ours.pop("iterations") <= theirs.pop("iterations")
        assert ours == theirs, f"{name}.pt: {section} differs from configs/{name}.yaml"
    for key in RECIPE_KEYS:
        assert trained[key] == shipped_config[key], f"{name}.pt: {key} differs from configs/{name}.yaml"
    rules = Rules.for_variant(name)
    saved = load_network(path, rules)  # every weight fits that shape
    fresh = build_model(rules, NetworkConfig(**ckpt["network"]))
    parameters = sum(p.numel() for p in fresh.parameters())
    assert sum(p.numel() for p in saved.model.parameters()) == parameters
    assert path.stat().st_size < MAX_BYTES_PER_PARAMETER * parameters
    assert all(torch.isfinite(p).all() for p in saved.model.parameters())


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_model_beats_the_random_player(name: str) -> None:
    rules = Rules.for_variant(name)
    agent = parse_player_spec(f"mcts:model={name},sims=8", rules)
    result = run_match(rules, agent, RandomPlayer(seed=7), games=4, seed=0)
    assert result.losses == 0 and result.score >= 0.75, result.summary()


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_model_plays_with_todays_play_settings(name: str) -> None:
    """A shipped model searches as a model trained today would: forced hops played through
    without a network call, repetitions scored as draws (the settings its current ratings used)."""
    player = parse_player_spec(f"mcts:model={name},sims=8", Rules.for_variant(name))
    assert player.cfg.play_forced_hops is EvalConfig().play_forced_hops is True
    assert player.cfg.repetition_draws is EvalConfig().repetition_draws is True
