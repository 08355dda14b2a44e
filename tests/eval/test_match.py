"""Games and matches: colours alternate, openings load, seeds replay, deeper beats shallower."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pytest

from tammi_rl.cli.matches import run_match_command
from tammi_rl.cli.play import run_play
from tammi_rl.env.render import board_text
from tammi_rl.eval.match import match_pdn, play_game, run_match
from tammi_rl.eval.openings import OPENINGS_DIR, START, load_openings, read_openings
from tammi_rl.players import parse_player_spec
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.pdn import read_pdn
from tammi_rl.rules.variant import available_variants


@pytest.mark.parametrize("variant", available_variants())
def test_shipped_openings_are_legal_and_varied(variant: str) -> None:
    rules = Rules.for_variant(variant)
    openings = load_openings(rules)
    assert (OPENINGS_DIR / f"{variant}.txt").exists()
    assert len(openings) >= 8 and len({o.text for o in openings}) == len(openings)
    for opening in openings:
        assert rules.legal_moves(opening.position(rules))


@pytest.mark.parametrize("variant", ["russian", "turkish"])
def test_the_held_out_openings_are_new_legal_and_balanced(variant: str) -> None:
    """The second opening set (4 plies, seed 1) that final ratings use and no recipe choice saw."""
    rules = Rules.for_variant(variant)
    path = OPENINGS_DIR / "heldout" / f"{variant}.txt"
    held_out = read_openings(rules, path)
    assert len(held_out) == 50 and len({o.text for o in held_out}) == 50
    assert all(len(o.moves) == 4 and rules.legal_moves(o.position(rules)) for o in held_out)
    shipped = {o.position(rules) for o in load_openings(rules)}
    assert not shipped & {o.position(rules) for o in held_out}
    scores = [int(line.split("#")[1]) for line in path.read_text().splitlines() if line and line[0] != "#"]
    assert len(scores) == 50 and max(abs(s) for s in scores) <= 25


def test_same_seed_same_game() -> None:
    rules = Rules.for_variant("russian")
    opening = load_openings(rules)[0]

    def game(seed: int):
        white = parse_player_spec(f"alphabeta:depth=3,margin=40,seed={seed}", rules)
        black = parse_player_spec(f"alphabeta:depth=2,margin=40,seed={seed + 100}", rules)
        return play_game(rules, white, black, opening, max_plies=60).moves

    assert game(1) == game(1)
    assert len({tuple(game(s)) for s in (1, 2, 3)}) > 1  # the margin does vary play


def test_match_alternates_colours_and_writes_pdn() -> None:
    rules = Rules.for_variant("english")
    a = parse_player_spec("alphabeta:depth=2", rules)
    b = parse_player_spec("random:seed=1", rules)
    result = run_match(rules, a, b, games=4, max_plies=80)
    assert [g.a_color for g in result.games] == [1, 0, 1, 0]  # English: Black moves first
    assert result.games[0].opening == result.games[1].opening != result.games[2].opening
    assert result.wins + result.draws + result.losses == 4
    lo, hi = result.confidence_interval()
    assert 0.0 <= lo <= result.score <= hi <= 1.0
    games = read_pdn(match_pdn(rules, result))
    assert [g.moves for g in games] == [g.game.moves for g in result.games]
    assert [g.result for g in games] == [g.game.result.pdn for g in result.games]


def test_deeper_beats_shallower() -> None:
    rules = Rules.for_variant("russian")
    deep = parse_player_spec("alphabeta:depth=5", rules)
    shallow = parse_player_spec("alphabeta:depth=1", rules)
    result = run_match(rules, deep, shallow, games=12, max_plies=200)
    assert result.score > 0.75, result.summary()
    lo, hi = result.confidence_interval()
    assert lo < result.score <= hi and lo > 0.5
    deep_s, shallow_s = result.seconds_per_move(), result.seconds_per_move(player_a=False)
    assert deep_s > shallow_s > 0  # the deeper search thinks longer
    assert f"seconds a move: {deep.name} {deep_s:.3f}, {shallow.name} {shallow_s:.3f}" in result.summary()


def test_match_command(tmp_path: Path) -> None:
    out = io.StringIO()
    pdn = tmp_path / "m.pdn"
    args = argparse.Namespace(
        variant="turkish",
        player_a="alphabeta:depth=2",
        player_b="random:seed=4",
        games=2,
        out=str(pdn),
        seed=0,
        max_plies=60,
        openings=None,
        quiet=False,
    )
    assert run_match_command(args, out) == 0
    text = out.getvalue()
    assert "W/D/L" in text and "95% CI" in text and "game 2:" in text
    assert len(read_pdn(pdn.read_text())) == 2


def test_play_command_with_typed_moves(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("c3-d4\nnonsense\nquit\n"))
    out = io.StringIO()
    args = argparse.Namespace(
        variant="russian",
        white="human",
        black="alphabeta:depth=2",
        fen=None,
        max_plies=None,
        out=str(tmp_path / "g.pdn"),
    )
    assert run_play(args, out) == 0
    text = out.getvalue()
    assert "white plays c3-d4" in text and "black plays" in text and "legal moves:" in text
    assert "game stopped." in text
    assert len(read_pdn((tmp_path / "g.pdn").read_text())[0].moves) == 2


def test_render_board_shows_coordinates() -> None:
    rules = Rules.for_variant("russian")
    board = board_text(rules, rules.start_position())
    assert " a  b  c" in board and board.count("w") == 12 and board.count("b") == 13  # 12 men + file b
    numeric = board_text(Rules.for_variant("english"), Rules.for_variant("english").start_position())
    assert "13" in numeric and "20" in numeric
    assert START.moves == ()


def test_match_times_each_player_per_move() -> None:
    import time

    from tammi_rl.players.simple import RandomPlayer

    class Slow(RandomPlayer):
        def choose(self, game):
            time.sleep(0.01)
            return super().choose(game)

    rules = Rules.for_variant("russian")
    slow, fast = Slow(seed=1), RandomPlayer(seed=2)
    slow.name, fast.name = "slow", "fast"
    result = run_match(rules, slow, fast, games=2, max_plies=40)
    for g in result.games:
        played = len(g.game.moves) - len(g.opening.moves)
        assert sum(g.clock.moves) == played and g.clock.moves[g.a_color] >= played // 2
    assert result.seconds_per_move() >= 0.01 > result.seconds_per_move(player_a=False)
