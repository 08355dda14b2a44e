"""``--time SECONDS`` of ``tammi-rl match`` and ``tammi-rl eval``: a time per move for both
sides, added to every spec that searches on the clock, stated in the output, refused when
it is not a positive number of seconds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tammi_rl.cli.main import main
from tammi_rl.cli.matches import with_time
from tammi_rl.rules.pdn import read_pdn


@pytest.mark.parametrize(
    ("spec", "timed"),
    [
        ("alphabeta", "alphabeta:time=0.2"),
        ("alphabeta:", "alphabeta:time=0.2"),
        ("ab:depth=6,", "ab:depth=6,time=0.2"),
        ("mcts:model=russian,sims=800", "mcts:model=russian,sims=800,time=0.2"),
        ('hub:cmd="scan hub",depth=3', 'hub:cmd="scan hub",depth=3,time=0.2'),
        ("alphabeta:time=1", "alphabeta:time=1"),  # its own time stays
        ("mcts:model=russian,TIME=1", "mcts:model=russian,TIME=1"),
        ("random:seed=3", "random:seed=3"),  # no clock
        ("human", "human"),
    ],
)
def test_with_time_adds_the_time_where_a_spec_takes_one(spec: str, timed: str) -> None:
    assert with_time(spec, 0.2) == timed
    assert with_time(spec, None) == spec


def test_match_time_reaches_both_players(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pdn = tmp_path / "m.pdn"
    argv = ["match", "russian", "alphabeta", "ab:depth=3", "--time", "0.05", "--games", "2", "--max-plies", "12"]
    assert main([*argv, "--out", str(pdn), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "0.05 s a move for both: alphabeta(time=0.05) vs alphabeta(depth=3,time=0.05)"
    games = read_pdn(pdn.read_text())
    assert len(games) == 2 and all(g.tags["Event"].endswith(", 0.05 s a move") for g in games)


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "1e12"])
def test_a_bad_time_is_one_clear_line(capsys: pytest.CaptureFixture[str], tmp_path: Path, value: str) -> None:
    argv = ["match", "russian", "alphabeta", "random", f"--time={value}", "--out", str(tmp_path / "m.pdn")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("tammi-rl: error: --time must be a number of seconds > 0") and len(err.splitlines()) == 1
    assert not (tmp_path / "m.pdn").exists()


def test_eval_refuses_a_bad_time_before_playing(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["eval", "russian", "--time", "-0.5", "--vs", "random", "--out", str(tmp_path / "e")]) == 2
    assert "--time must be a number of seconds > 0" in capsys.readouterr().err
    assert not (tmp_path / "e").exists()


@pytest.mark.slow
def test_eval_time_reaches_the_agent_and_the_opponents(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_dir = tmp_path / "e"
    argv = ["eval", "russian", "--time", "0.05", "--vs", "random", "--vs", "alphabeta:depth=2"]
    assert main([*argv, "--games", "2", "--max-plies", "8", "--out", str(out_dir), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert " at 0.05 s a move vs random, alphabeta(depth=2,time=0.05)" in printed
    summary = json.loads((out_dir / "summary.json").read_text())
    assert summary["time_per_move"] == 0.05 and summary["sims"] is None
    assert summary["opponents"] == ["random", "alphabeta(depth=2,time=0.05)"]
    games = read_pdn((out_dir / "games.pdn").read_text())
    assert games and all(g.tags["Event"].startswith("tammi-rl eval, 0.05 s a move: ") for g in games)
