"""Shipped models by name: the registry, the player spec, `tammi-rl play` and `tammi-rl eval`.

A throw-away "shipped" directory holds a real (untrained, tiny) checkpoint; the registry
is pointed at it, so these tests check the plumbing whatever ships in checkpoints/.
"""

from pathlib import Path

import pytest
import torch

from tammi_rl.config import NetworkConfig, load_config
from tammi_rl.mcts import tree as tr
from tammi_rl.nn.model import build_model
from tammi_rl.players import PlayerSpecError, parse_player_spec
from tammi_rl.players.mcts import MCTSPlayer
from tammi_rl.store import shipped
from tammi_rl.store.checkpoint import make_checkpoint, save_checkpoint
from tammi_rl.store.shipped import ShippedModelError, shipped_model, shipped_models

TINY = NetworkConfig(blocks=1, channels=8, value_hidden=8)


def plant(directory: Path, name: str, variant: str, rules) -> Path:
    cfg = load_config(None, [f"variant={variant}", "network.blocks=1", "network.channels=8", "network.value_hidden=8"])
    ckpt = make_checkpoint(
        variant=variant,
        network=TINY,
        model=build_model(rules, TINY),
        learner=None,
        counters={},
        rng={},
        worker=None,
        config=cfg.to_dict(),
    )
    path = directory / f"{name}.pt"
    save_checkpoint(path, ckpt)
    return path


@pytest.fixture
def models(tmp_path, monkeypatch, russian):
    plant(tmp_path, "russian", "russian", russian)
    plant(tmp_path, "russian-latest", "russian", russian)  # a training export: never shipped
    monkeypatch.setattr(shipped, "models_dir", lambda: tmp_path)
    return tmp_path


def test_registry_lists_models_by_name_and_skips_training_exports(models):
    assert list(shipped_models()) == ["russian"]
    assert shipped_model("russian") == models / "russian.pt" == shipped_model(" Russian ")
    with pytest.raises(ShippedModelError, match=r"no shipped model named 'klingon'; shipped models: russian"):
        shipped_model("klingon")


def test_an_empty_install_says_none_ships(tmp_path):
    with pytest.raises(ShippedModelError, match=r"shipped models: none \(this install ships no trained model\)"):
        shipped_model("russian", directory=tmp_path)


def test_player_spec_names_a_shipped_model(models, russian):
    player = parse_player_spec("mcts:model=russian,sims=8", russian)
    assert isinstance(player, MCTSPlayer) and player.name == "mcts:model=russian" and player.simulations == 8
    with pytest.raises(PlayerSpecError, match=r"no shipped model named 'dutch'; shipped models: russian"):
        parse_player_spec("mcts:model=dutch", russian)
    with pytest.raises(PlayerSpecError, match=r"either checkpoint=PATH .* or model=NAME"):
        parse_player_spec(f"mcts:model=russian,checkpoint={models / 'russian.pt'}", russian)
    with pytest.raises(PlayerSpecError, match=r"either checkpoint=PATH .* or model=NAME"):
        parse_player_spec("mcts:sims=8", russian)


def test_player_spec_sets_search_constants_over_the_checkpoints(models, russian):
    saved = parse_player_spec("mcts:model=russian,sims=8", russian).cfg
    tuned = parse_player_spec(
        "mcts:model=russian,sims=8,algorithm=puct,c_puct=2.5,c_scale=1,c_visit=20,max_actions=4", russian
    )
    assert (tuned.cfg.algorithm, tuned.cfg.c_puct, tuned.cfg.gumbel_c_scale) == ("puct", 2.5, 1.0)
    assert (tuned.cfg.gumbel_c_visit, tuned.cfg.gumbel_max_actions) == (20.0, 4)
    assert tuned.cfg.temperature == saved.temperature and saved.c_puct != 2.5  # the rest stays the checkpoint's
    assert tuned.search.params[1] == 2.5  # the compiled search reads the new constant
    assert saved.play_forced_hops and saved.fpu_reduction == 0.0  # a new run's play defaults
    switched = parse_player_spec("mcts:model=russian,sims=8,forced=off,fpu=0.3", russian)
    assert (switched.cfg.play_forced_hops, switched.cfg.fpu_reduction) == (False, 0.3)
    assert (switched.search.params[tr.SP_FORCED], switched.search.params[tr.SP_FPU_REDUCTION]) == (0.0, 0.3)
    assert parse_player_spec("mcts:model=russian,sims=8,fpu=0", russian).cfg.fpu_reduction == 0.0
    for bad, message in [
        ("c_puct=0", "c_puct must be a finite number > 0"),
        ("c_scale=nan", "c_scale must be"),
        ("c_visit=fast", "c_visit must be a number, got 'fast'"),
        ("max_actions=0", "max_actions must be >= 1"),
        ("forced=maybe", "forced must be on or off, got 'maybe'"),
        ("fpu=-1", "fpu must be a finite number >= 0, got '-1'"),
    ]:
        with pytest.raises(PlayerSpecError, match=message):
            parse_player_spec(f"mcts:model=russian,{bad}", russian)


@pytest.mark.slow
def test_a_checkpoint_plays_with_its_runs_eval_algorithm(tmp_path, russian):
    from tammi_rl.store.checkpoint import CheckpointError, load_checkpoint

    def player(path: Path, spec: str = "") -> MCTSPlayer:
        return parse_player_spec(f"mcts:checkpoint={path},sims=4{spec}", russian)

    default = plant(tmp_path, "default", "russian", russian)
    assert player(default).cfg.algorithm == "puct"  # self-play searched with gumbel (the config default)
    assert load_checkpoint(default)["config"]["mcts"]["algorithm"] == "gumbel"
    assert player(default, ",algorithm=gumbel").cfg.algorithm == "gumbel"  # the spec overrides
    for name, edit in [("gumbel", "gumbel"), ("older", None), ("broken", "alphazero")]:
        path = plant(tmp_path, name, "russian", russian)
        ckpt = load_checkpoint(path)
        if edit is None:
            del ckpt["config"]["eval"]["algorithm"]  # a run from before eval.algorithm existed
        else:
            ckpt["config"]["eval"]["algorithm"] = edit
        save_checkpoint(path, ckpt)
    assert player(tmp_path / "gumbel.pt").cfg.algorithm == "gumbel"
    assert player(tmp_path / "older.pt").cfg.algorithm == "puct"
    with pytest.raises((PlayerSpecError, CheckpointError), match=r"broken\.pt.*eval\.algorithm 'alphazero'"):
        player(tmp_path / "broken.pt")


@pytest.mark.slow
def test_a_checkpoint_plays_forced_hops_through_when_its_run_says_so(tmp_path, russian):
    """eval.play_forced_hops is the agent's (on for new runs; off for runs from before the key,
    as they were rated); mcts.play_forced_hops is self-play's and does not reach the player."""
    from tammi_rl.store.checkpoint import CheckpointError, load_checkpoint

    def planted(name: str, value: object) -> Path:
        path = plant(tmp_path, name, "russian", russian)
        ckpt = load_checkpoint(path)
        ckpt["config"]["mcts"]["play_forced_hops"] = value is not True  # self-play's own, never the player's
        if value is None:
            del ckpt["config"]["eval"]["play_forced_hops"]  # a run from before the key existed
        else:
            ckpt["config"]["eval"]["play_forced_hops"] = value
        save_checkpoint(path, ckpt)
        return path

    def forced(path: Path, spec: str = "") -> bool:
        return parse_player_spec(f"mcts:checkpoint={path},sims=4{spec}", russian).cfg.play_forced_hops

    assert forced(planted("on", True)) is True
    assert forced(planted("older", None)) is False
    assert forced(planted("off", False)) is False
    assert forced(tmp_path / "off.pt", ",forced=on") is True  # the spec overrides
    assert forced(tmp_path / "on.pt", ",forced=off") is False
    with pytest.raises(
        (PlayerSpecError, CheckpointError), match=r"yes\.pt.*eval\.play_forced_hops must be true or false"
    ):
        forced(planted("yes", "yes"))


@pytest.mark.slow
def test_a_checkpoint_plays_with_repetition_draws_unless_its_run_turned_them_off(tmp_path, russian):
    """eval.repetition_draws is the agent's: on by default, also for runs from before the key;
    a run's `false` is kept, and anything but true or false names the file and the key."""
    from tammi_rl.store.checkpoint import CheckpointError, load_checkpoint

    def planted(name: str, value: object) -> Path:
        path = plant(tmp_path, name, "russian", russian)
        ckpt = load_checkpoint(path)
        if value is None:
            ckpt["config"]["eval"].pop("repetition_draws", None)  # a run from before the key existed
        else:
            ckpt["config"]["eval"]["repetition_draws"] = value
        save_checkpoint(path, ckpt)
        return path

    def repetition(path: Path) -> bool:
        return parse_player_spec(f"mcts:checkpoint={path},sims=4", russian).cfg.repetition_draws

    assert repetition(planted("older", None)) is True
    assert repetition(planted("off", False)) is False
    with pytest.raises(
        (PlayerSpecError, CheckpointError), match=r"maybe\.pt.*eval\.repetition_draws must be true or false"
    ):
        repetition(planted("maybe", 1))


def test_a_shipped_model_of_another_variant_is_refused(models, english):
    from tammi_rl.store.checkpoint import CheckpointError

    with pytest.raises((PlayerSpecError, CheckpointError), match="russian"):
        parse_player_spec("mcts:model=russian", english)


def test_play_offers_the_shipped_agent_by_default(models, monkeypatch):
    from tammi_rl.players.defaults import default_player_spec

    assert default_player_spec("russian") == "mcts:model=russian,sims=400"
    assert default_player_spec("italian") == "alphabeta:depth=6"  # nothing ships for it here


def test_eval_takes_a_shipped_model_name(models, tmp_path):
    from tammi_rl.cli.main import main

    out = tmp_path / "eval_out"
    code = main(["eval", "russian", "--vs", "random", "--games", "2", "--sims", "4", "--out", str(out)])
    assert code == 0
    assert list(out.glob("*.pdn"))
    assert main(["eval", "klingon", "--vs", "random", "--games", "2"]) != 0


def test_export_model_writes_a_small_playing_checkpoint(models, tmp_path, russian):
    from tammi_rl.cli.main import main
    from tammi_rl.nn.saved import load_network
    from tammi_rl.store.checkpoint import load_checkpoint

    source = models / "russian.pt"
    full = torch.load(source, weights_only=True)
    full["learner"] = {"optimizer": {"state": {0: {"exp_avg": torch.zeros(50_000)}}}}  # a fat learner
    torch.save(full, source)
    target = tmp_path / "out" / "model.pt"
    target.parent.mkdir()
    assert main(["export", str(source), "--model", str(target)]) == 0
    slim = load_checkpoint(target, variant="russian")
    assert slim["learner"] is None and slim["worker"] is None and slim["rng"] == {}
    assert slim["config"] == full["config"] and slim["counters"] == full["counters"]
    assert target.stat().st_size < source.stat().st_size / 4
    a, b = load_network(source, russian).model, load_network(target, russian).model
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True))
    assert main(["export", str(source), "--model", str(target), "--onnx", str(tmp_path / "x.onnx")]) != 0
