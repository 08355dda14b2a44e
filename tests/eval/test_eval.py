"""Evaluation: arena symmetry, `tammi-rl eval` outputs (single and gauntlet), clear errors.

Everything uses tiny randomly initialised networks written through the checkpoint
module, 2 simulations per hop and short ply caps, so no training run is needed.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import torch
from support.tiny_checkpoint import TINY_NETWORK, tiny_checkpoint

from tammi_rl.cli import main
from tammi_rl.cli.matches import expand_specs
from tammi_rl.config import Config
from tammi_rl.eval.arena import Arena
from tammi_rl.nn.model import build_model
from tammi_rl.players import PlayerSpecError
from tammi_rl.players.mcts import load_agent
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.pdn import read_pdn
from tammi_rl.store.rundir import RunDir

FAST = ["--sims", "2", "--max-plies", "30", "--quiet"]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, russian: Rules) -> Path:
    """A run directory with two tiny checkpoints (iterations 1 and 2)."""
    run = RunDir(tmp_path_factory.mktemp("runs") / "tiny")
    run.prepare(Config(network=TINY_NETWORK), resume=False)
    for it in (1, 2):
        run.save_checkpoint(tiny_checkpoint(russian, it, games=8 * it), it, keep=5)
    return run.root


def test_checkpoint_vs_itself_scores_exactly_half(run_dir: Path, russian: Rules) -> None:
    path = str(run_dir / "checkpoints" / "latest.pt")
    a = load_agent(russian, path, simulations=2, device="cpu", name="a")
    b = load_agent(russian, path, simulations=2, device="cpu", name="b")
    arena = Arena(russian, max_plies=30)
    result = arena.play(a, b, games=4)
    # Deterministic search, same network, colours swapped within each opening pair:
    # the two games of a pair are the same game, so A's score is exactly 1/2.
    assert result.score == 0.5
    for k in (0, 2):
        assert arena.records[k].first_score == arena.records[k + 1].first_score
        assert arena.records[k].first != arena.records[k + 1].first
        assert arena.records[k].opening == arena.records[k + 1].opening


def test_expand_specs() -> None:
    assert expand_specs("alphabeta:depth=1,2,4") == [f"alphabeta:depth={d}" for d in (1, 2, 4)]
    assert expand_specs("alphabeta:depth=1,2,seed=3") == ["alphabeta:depth=1,seed=3", "alphabeta:depth=2,seed=3"]
    assert expand_specs("random") == ["random"]
    quoted = 'hub:cmd="tammi-rl hub --player alphabeta:depth=2,time=1",time=0.1,0.2'
    assert expand_specs(quoted) == [
        'hub:cmd="tammi-rl hub --player alphabeta:depth=2,time=1",time=0.1',
        'hub:cmd="tammi-rl hub --player alphabeta:depth=2,time=1",time=0.2',
    ]  # a comma inside quotes belongs to the value
    with pytest.raises(PlayerSpecError, match="key=value"):
        expand_specs("alphabeta:2")


def test_eval_checkpoint_prints_and_writes_summary(run_dir: Path, tmp_path: Path, capsys) -> None:
    ckpt = run_dir / "checkpoints" / "ckpt_000002.pt"
    out = tmp_path / "single"
    rc = main(
        [
            "eval",
            str(ckpt),
            "--vs",
            "alphabeta:depth=1,2",
            "--vs",
            f"mcts:checkpoint={ckpt},sims=2,name=self",
            "--games",
            "2",
            "--anchor",
            "alphabeta:depth=2",
            "--out",
            str(out),
            *FAST,
        ]
    )
    text = capsys.readouterr().out
    assert rc == 0, text
    for opponent in ("alphabeta(depth=1)", "alphabeta(depth=2)", "self"):
        assert f"ckpt_000002 vs {opponent}: W/D/L " in text
    assert "95% CI" in text and "anchor" in text
    summary = json.loads((out / "summary.json").read_text())
    assert summary["mode"] == "single" and summary["anchor"] == "alphabeta(depth=2)"
    rows = {r["opponent"]: r for r in summary["matches"]}
    assert rows["self"]["score"] == 0.5
    assert all(r["wins"] + r["draws"] + r["losses"] == 2 for r in rows.values())
    elo = {p["name"]: p for p in summary["elo"]["players"]}
    assert elo["alphabeta(depth=2)"]["elo"] == 0.0 and elo["ckpt_000002"]["error"] > 0
    assert len(summary["games"]) == 6
    with (out / "summary.csv").open() as fh:
        assert [r["opponent"] for r in csv.DictReader(fh)] == ["alphabeta(depth=1)", "alphabeta(depth=2)", "self"]
    assert len(read_pdn((out / "games.pdn").read_text())) == 6


def test_gauntlet_of_a_run_writes_every_output(run_dir: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    rc = main(
        [
            "eval",
            str(run_dir),
            "--gauntlet",
            "--vs",
            "alphabeta:depth=1",
            "--vs",
            "random:seed=1",
            "--games",
            "2",
            *FAST,
        ]
    )
    text = capsys.readouterr().out
    assert rc == 0, text
    out = tmp_path / "gauntlet_tiny"  # the default: in the current directory, named after the run
    # 2 checkpoints x 2 opponents + 1 neighbour pairing, 2 games each.
    assert len(read_pdn((out / "games.pdn").read_text())) == 10
    summary = json.loads((out / "summary.json").read_text())
    assert summary["mode"] == "gauntlet" and len(summary["matches"]) == 5
    ladder = {r["name"]: r for r in summary["ladder"]}
    assert ladder["iter_000001"]["iteration"] == 1 and ladder["iter_000002"]["selfplay_games"] == 16
    assert ladder["alphabeta(depth=1)"]["elo"] == 0.0
    with (out / "ladder.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert [r["name"] for r in rows[:2]] == ["iter_000001", "iter_000002"]
    assert "score_vs_alphabeta(depth=1)" in rows[0]
    assert (out / "ladder.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "summary.csv").is_file()
    assert "iter_000002" in text and "first-move advantage" in text


@pytest.mark.parametrize(
    "args, message",
    [
        (["eval", "{tmp}/nowhere.pt"], "no checkpoint file or run directory"),
        (["eval", "{tmp}/empty_run"], "no checkpoints in"),
        (["eval", "{tmp}/garbage.pt"], "not a readable checkpoint"),
        (["eval", "{ckpt}", "--vs", "alphabta:depth=2"], "unknown player kind 'alphabta'"),
        (["eval", "{ckpt}", "--vs", "alphabeta:deep=2"], "unknown option 'deep'"),
        (["eval", "{ckpt}", "--gauntlet"], "--gauntlet needs a run directory"),
        (["eval", "{ckpt}", "--games", "0"], "--games must be >= 1"),
    ],
)
def test_bad_inputs_exit_2_with_a_message(args: list[str], message: str, run_dir: Path, tmp_path: Path, capsys) -> None:
    (tmp_path / "empty_run").mkdir()
    (tmp_path / "garbage.pt").write_bytes(b"not a checkpoint")
    ckpt = run_dir / "checkpoints" / "ckpt_000001.pt"
    argv = [a.format(tmp=tmp_path, ckpt=ckpt) for a in args]
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2
    assert message in err and err.startswith("tammi-rl: error:")


def test_training_eval_reports_elo_and_gating_keeps_an_equal_network(russian: Rules) -> None:
    from tammi_rl.config import EvalConfig, GatingConfig
    from tammi_rl.train.ladder import evaluate_vs_alphabeta, gate_vs_incumbent

    torch.manual_seed(0)
    model = build_model(russian, TINY_NETWORK)
    result = evaluate_vs_alphabeta(
        russian, model, EvalConfig(games=2, alphabeta_depths=[1, 0], simulations=2), torch.device("cpu"), max_plies=30
    )
    assert result.anchor == "alphabeta(depth=1)"
    assert result.elo is not None and result.elo_error > 0 and "Elo" in result.summary()
    gated = gate_vs_incumbent(
        russian, model, model, GatingConfig(enabled=True, max_games=2, simulations=2), torch.device("cpu"), max_plies=30
    )
    assert not gated.accepted and gated.games == 2 and gated.score == 0.5
