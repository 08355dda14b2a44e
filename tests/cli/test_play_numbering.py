"""`tammi-rl play` numbers moves in pairs as draughts software does (``1. c3-d4``,
``1... f6-g5``), in the prompt, the move lines, ``history`` and the final move list."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pytest

from tammi_rl.cli.play import run_play
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.pdn import move_label


def test_move_labels_count_pairs_from_the_first_player() -> None:
    russian = Rules.for_variant("russian")
    assert [move_label(russian, ply) for ply in range(4)] == ["1.", "1...", "2.", "2..."]
    black_first = russian.parse_fen("B:Wc3:Bf6")
    assert [move_label(russian, ply, black_first) for ply in range(3)] == ["1...", "2.", "2..."]
    english = Rules.for_variant("english")  # Black moves first in English draughts
    assert [move_label(english, ply) for ply in range(3)] == ["1.", "1...", "2."]


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the games are saved to ./play_russian.pdn


def _args(**kw: object) -> argparse.Namespace:
    base = {"variant": "russian", "white": "human", "black": "alphabeta:depth=1", "fen": None, "max_plies": None}
    return argparse.Namespace(**{**base, "out": None, **kw})


def test_play_numbers_prompts_moves_and_history(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("c3-d4\nhistory\nquit\n"))
    out = io.StringIO()
    assert run_play(_args(), out) == 0
    text = out.getvalue()
    assert "1. white to move> " in text and "1. white plays c3-d4" in text
    assert "1... black plays " in text and "2. white to move> " in text
    reply = text.split("1... black plays ")[1].split()[0]
    assert f"1. c3-d4 {reply}" in text  # the history command
    assert text.rstrip().endswith("game stopped.\ngame written to " + str(Path("play_russian.pdn").resolve()))
    assert f"moves: 1. c3-d4 {reply}" in text


def test_a_game_from_a_black_to_move_position_starts_with_an_ellipsis() -> None:
    out = io.StringIO()
    args = _args(white="alphabeta:depth=1", fen="B:Wc3,e3:Bf6,h6", max_plies=3)
    assert run_play(args, out) == 0
    lines = out.getvalue().splitlines()
    plays = [line.split(" plays ")[0] for line in lines if " plays " in line]
    assert plays == ["1... black", "2. white", "2... black"]
    assert any(line.startswith("moves: 1... ") and " 2. " in line for line in lines)
