"""The game record: end of game, draw rules, adjudication, and random-game invariants.

Positions are hand-built FEN in each variant's notation (Russian/Turkish algebraic,
English numeric 1-32). Long quiet sequences are played by `quiet_move`, a
deterministic helper that picks non-capturing moves which give the opponent no
capture and, where it can, lead to a position not seen before in the game.
"""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tammi_rl.rules.engine import Rules
from tammi_rl.rules.errors import MoveError
from tammi_rl.rules.game import REASONS, DrawCounters, Game, GameResult
from tammi_rl.rules.position import BLACK, WHITE, Move, Position
from tammi_rl.rules.variant import available_variants

# --- helpers ---------------------------------------------------------------------


def start(rules: Rules, fen: str, max_plies: int | None = None) -> Game:
    return Game(rules, rules.parse_fen(fen), max_plies=max_plies)


def find(game: Game, *squares: str) -> Move:
    """The legal move visiting exactly these squares (names in the variant's notation)."""
    path = tuple(game.rules.square(s) for s in squares)
    for m in game.legal_moves():
        if m.path == path:
            return m
    raise AssertionError(f"no legal move {'-'.join(squares)} in {game.rules.fen(game.position)}")


def play_path(game: Game, *paths: str) -> None:
    """Play moves written as 'a1-b2' (or 'c3xe5')."""
    for text in paths:
        game.play(find(game, *text.replace("x", "-").split("-")))


def quiet_move(game: Game, kings_only: bool = True) -> Move:
    """A non-capture (king) move after which the opponent cannot capture; prefers new positions."""
    rules, pos = game.rules, game.position
    seen = {p.key() for p in game.positions}
    fallback = None
    for m in game.legal_moves():
        if m.captures or (kings_only and not pos.kings(pos.side) >> m.start & 1):
            continue
        after = rules.play(pos, m)
        if any(x.captures for x in rules.legal_moves(after)):
            continue
        if after.key() not in seen:
            return m
        fallback = fallback or m
    assert fallback is not None, f"no quiet move in {rules.fen(pos)}"
    return fallback


def sacrifice(game: Game) -> Move:
    """A non-capture move after which the opponent has a capture."""
    rules, pos = game.rules, game.position
    for m in game.legal_moves():
        if not m.captures and any(x.captures for x in rules.legal_moves(rules.play(pos, m))):
            return m
    raise AssertionError(f"no sacrifice in {rules.fen(pos)}")


def play_quiet(game: Game, n: int, kings_only: bool = True) -> None:
    for _ in range(n):
        assert not game.is_over, f"ended early: {game.result} after {len(game.moves)} plies"
        game.play(quiet_move(game, kings_only))


# --- GameResult ------------------------------------------------------------------


def test_result_score_and_pdn() -> None:
    white = GameResult(WHITE, "no_moves")
    black = GameResult(BLACK, "resignation")
    draw = GameResult(None, "repetition")
    assert (white.score(WHITE), white.score(BLACK), white.pdn) == (1.0, 0.0, "1-0")
    assert (black.score(WHITE), black.score(BLACK), black.pdn) == (0.0, 1.0, "0-1")
    assert (draw.score(WHITE), draw.score(BLACK), draw.pdn) == (0.5, 0.5, "1/2-1/2")
    assert draw.is_draw and not white.is_draw
    with pytest.raises(ValueError, match="reason"):
        GameResult(None, "boredom")
    with pytest.raises(ValueError, match="winner"):
        GameResult(2, "no_moves")


# --- no legal move loses -----------------------------------------------------------


def test_no_pieces_loses_at_start(russian: Rules) -> None:
    # built directly: a FEN without a white piece is refused, a Position is not
    game = Game(russian, Position(0, 0, 0, 1 << russian.square("c3"), WHITE))
    assert game.result == GameResult(BLACK, "no_moves")
    assert game.legal_moves() == []


def test_all_blocked_loses(russian: Rules) -> None:
    # White's only man on a1 is blocked by b2, which cannot be jumped (c3 occupied).
    game = start(russian, "W:Wa1:Bb2,c3")
    assert game.result == GameResult(BLACK, "no_moves")


def test_capturing_the_last_piece_wins(russian: Rules) -> None:
    game = start(russian, "W:Wc3:Bd4")
    game.play(find(game, "c3", "e5"))
    assert game.result == GameResult(WHITE, "no_moves")
    assert game.result.pdn == "1-0"


def test_blocked_man_after_move(english: Rules) -> None:
    # White's only man on 29 (a1) can step to 25 (b2) only; black holds 25 and closes the
    # jump 29x22 by 18-22, leaving white without a move.
    game = start(english, "B:W29:B25,18")
    game.play(find(game, "18", "22"))
    assert game.result == GameResult(BLACK, "no_moves")
    assert game.result.pdn == "0-1"


# --- repetition ----------------------------------------------------------------------


def test_threefold_repetition_russian(russian: Rules) -> None:
    game = start(russian, "W:WKa1:BKg1")
    cycle = ("a1-b2", "g1-h2", "b2-a1", "h2-g1")
    play_path(game, *cycle)
    assert game.counters().repetitions == 2
    play_path(game, *cycle[:3])
    assert game.result is None
    play_path(game, cycle[3])
    assert game.result == GameResult(None, "repetition")
    assert len(game.moves) == 8


def test_threefold_repetition_english(english: Rules) -> None:
    game = start(english, "B:WK29:BK4")
    cycle = ("4-8", "29-25", "8-4", "25-29")
    play_path(game, *cycle, *cycle[:3])
    assert game.result is None and game.counters().repetitions == 2
    play_path(game, cycle[3])
    assert game.result == GameResult(None, "repetition")


def test_repetition_table_cleared_by_irreversible_move(russian: Rules) -> None:
    game = start(russian, "W:WKa1,c3:BKg1")
    play_path(game, "a1-b2", "g1-h2", "b2-a1", "h2-g1")
    assert game.counters().repetitions == 2
    play_path(game, "c3-d4")  # a man move: nothing earlier can come back
    assert game.counters().repetitions == 1


def test_turkish_sideways_man_moves_can_repeat(turkish: Rules) -> None:
    # Turkish men move sideways, so a man move is not irreversible there.
    game = start(turkish, "W:Wa2:Bh7")
    play_path(game, "a2-b2", "h7-g7", "b2-a2", "g7-h7", "a2-b2", "h7-g7", "b2-a2")
    assert game.result is None
    play_path(game, "g7-h7")
    assert game.result == GameResult(None, "repetition")


# --- Russian kings only: 15 moves of each side --------------------------------------


def test_kings_only_draw_exactly_at_ply_30(russian: Rules) -> None:
    game = start(russian, "W:WKa1,Kc1:BKh8,Kf8")
    play_quiet(game, 29)
    assert game.result is None
    assert game.counters().kings_only_plies == 29
    play_quiet(game, 1)
    assert game.result == GameResult(None, "kings_only")
    assert game.counters() == DrawCounters(30, 30, 30, 0, 1)


def test_kings_only_counter_reset_by_capture(russian: Rules) -> None:
    game = start(russian, "W:WKa1,Kc1:BKh8,Kf8")
    play_quiet(game, 20)
    game.play(sacrifice(game))
    assert game.counters().kings_only_plies == 21
    game.play(next(m for m in game.legal_moves() if m.captures))
    assert game.counters().kings_only_plies == 0
    assert game.counters().no_progress_plies == 0
    play_quiet(game, 29)
    assert game.result is None
    play_quiet(game, 1)
    assert game.result == GameResult(None, "kings_only")
    assert len(game.moves) == 52


def test_kings_only_counts_from_promotion(russian: Rules) -> None:
    # The last man promotes: the kings-only balance arises there, the count starts at 0.
    game = start(russian, "W:WKa1,g7:BKb8")
    assert game.counters().kings_only_plies == 0
    play_path(game, "g7-h8")
    assert game.counters().kings_only_plies == 0
    play_quiet(game, 29)
    assert game.result is None
    play_quiet(game, 1)
    assert game.result == GameResult(None, "kings_only")


def test_kings_only_rule_off_in_english(english: Rules) -> None:
    game = start(english, "W:WK29,K30:BK1,K2")
    play_quiet(game, 40)
    assert game.result is None
    assert game.counters().kings_only_plies == 40


# --- Russian three kings against one: 15 moves --------------------------------------


def test_three_kings_v_one_draw_exactly_after_15_moves(russian: Rules) -> None:
    game = start(russian, "W:WKa1,Kc1,Ke1:BKd8")
    play_quiet(game, 29)
    assert game.result is None
    assert game.counters().three_kings_plies == 29
    play_quiet(game, 1)
    # Kings only fires at the same ply; the more specific rule is reported.
    assert game.result == GameResult(None, "three_kings_vs_one")


def test_three_kings_v_one_win_on_the_last_move_counts(russian: Rules) -> None:
    # The lone king moves first; the stronger side's 15th move is ply 30.
    game = start(russian, "B:WKa1,Kc1,Ke1:BKd8")
    play_quiet(game, 28)
    game.play(sacrifice(game))
    assert game.result is None and game.counters().three_kings_plies == 29
    game.play(next(m for m in game.legal_moves() if m.captures))
    assert len(game.moves) == 30
    assert game.result == GameResult(WHITE, "no_moves")


def test_three_kings_counter_kept_through_capture_within_balance(russian: Rules) -> None:
    # 4 kings v 1 becomes 3 v 1: the balance holds, so the count goes on; kings-only resets.
    game = start(russian, "W:WKa1,Kc1,Ke1,Kg1:BKb8")
    play_quiet(game, 4)
    game.play(sacrifice(game))
    game.play(next(m for m in game.legal_moves() if m.captures))
    counters = game.counters()
    assert (counters.three_kings_plies, counters.kings_only_plies) == (6, 0)
    play_quiet(game, 23)
    assert game.result is None
    play_quiet(game, 1)
    assert game.result == GameResult(None, "three_kings_vs_one")
    assert len(game.moves) == 30


def test_three_kings_counter_starts_when_balance_arises(russian: Rules) -> None:
    game = start(russian, "W:WKa1,Kc1:BKd8")
    play_quiet(game, 3)
    assert game.counters().three_kings_plies == 0
    # Two kings v one is not the balance; a man promoting to the third king is.
    game2 = start(russian, "W:WKa1,Kc1,g7:BKb8")
    play_path(game2, "g7-h8")
    assert game2.counters().three_kings_plies == 0
    play_quiet(game2, 1)
    assert game2.counters().three_kings_plies == 1


# --- English 40-move rule ------------------------------------------------------------


def test_english_40_move_rule(english: Rules) -> None:
    game = start(english, "W:WK29,K30,21:BK1,K2,12")
    play_quiet(game, 79)
    assert game.result is None
    assert game.counters().no_progress_plies == 79
    play_quiet(game, 1)
    assert game.result == GameResult(None, "no_progress")


def test_english_40_move_rule_reset_by_man_move(english: Rules) -> None:
    game = start(english, "W:WK29,K30,21:BK1,K2,12")
    play_quiet(game, 50)
    pos = game.position
    man_move = next(m for m in game.legal_moves() if pos.men(pos.side) >> m.start & 1 and not m.captures)
    game.play(man_move)
    assert game.counters().no_progress_plies == 0
    play_quiet(game, 79)
    assert game.result is None
    play_quiet(game, 1)
    assert game.result == GameResult(None, "no_progress")
    assert len(game.moves) == 131


# --- Turkish king against a lone man -------------------------------------------------


def test_turkish_king_vs_lone_man_is_a_draw(turkish: Rules) -> None:
    game = start(turkish, "W:WKa1:Ba4,h7")
    game.play(next(iter(game.legal_moves())))  # the king must take a4
    assert game.result == GameResult(None, "king_vs_lone_man")


def test_turkish_king_vs_lone_man_at_start(turkish: Rules) -> None:
    assert start(turkish, "B:Wd2:BKe8").result == GameResult(None, "king_vs_lone_man")


def with_king_vs_lone_man(rules: Rules, option: str) -> Rules:
    """The same variant with another ``draw.king_vs_lone_man`` option."""
    variant = rules.variant
    return Rules(dataclasses.replace(variant, draw=dataclasses.replace(variant.draw, king_vs_lone_man=option)))


def test_turkish_king_wins_option(turkish: Rules) -> None:
    rules = with_king_vs_lone_man(turkish, "king_wins")
    game = start(rules, "W:WKa1:Ba4,h7")
    game.play(game.legal_moves()[0])
    assert game.result == GameResult(WHITE, "king_vs_lone_man")
    assert start(rules, "W:Wd2:BKe8").result == GameResult(BLACK, "king_vs_lone_man")


def test_turkish_play_option_plays_on(turkish: Rules) -> None:
    rules = with_king_vs_lone_man(turkish, "play")
    game = start(rules, "W:WKa1:Ba4,h7")
    game.play(game.legal_moves()[0])
    assert game.result is None


def test_king_vs_lone_man_not_applied_in_russian(russian: Rules) -> None:
    assert start(russian, "W:WKa1:Bh6").result is None


# --- adjudication at the length cap ----------------------------------------------------


@pytest.mark.parametrize(
    "fen, winner",
    [
        ("B:WK29,K31,22:BK4,K2", WHITE),  # more pieces wins
        ("W:W29,30:BK4,K2,K3", BLACK),  # more pieces wins
        ("B:WK29,K31:BK4,5", WHITE),  # equal pieces, more kings wins
        ("B:W29,30:BK4,K2", BLACK),  # equal pieces, more kings wins
        ("B:WK29,30:BK4,5", None),  # equal pieces and kings: draw
    ],
)
def test_english_material_adjudication(english: Rules, fen: str, winner: int | None) -> None:
    game = start(english, fen, max_plies=2)
    play_quiet(game, 1, kings_only=False)
    assert game.result is None
    play_quiet(game, 1, kings_only=False)
    assert game.result == GameResult(winner, "adjudication")
    with pytest.raises(MoveError, match="over"):
        game.play(english.legal_moves(game.position)[0])


def test_russian_adjudication_is_a_draw(russian: Rules) -> None:
    game = start(russian, "W:WKa1,Kc1,e1:BKd8", max_plies=4)
    play_quiet(game, 4)
    assert game.result == GameResult(None, "adjudication")


def test_adjudicate_now(english: Rules, russian: Rules) -> None:
    game = start(english, "B:WK29,K31,22:BK4,K2")
    assert game.adjudicate() == GameResult(WHITE, "adjudication")
    assert game.adjudicate() == GameResult(WHITE, "adjudication")  # unchanged once over
    assert Game(english).adjudicate() == GameResult(None, "adjudication")
    assert Game(russian, russian.parse_fen("W:WKa1,Kc1:BKh8")).adjudicate().winner is None
    assert Game(english, max_plies=0).result == GameResult(None, "adjudication")


# --- players ending the game, errors ----------------------------------------------------


def test_resign_and_agree(russian: Rules) -> None:
    game = Game(russian)
    assert game.resign(WHITE) == GameResult(BLACK, "resignation")
    assert game.result.pdn == "0-1" and game.is_over and game.legal_moves() == []
    with pytest.raises(MoveError, match="over"):
        game.resign(BLACK)
    with pytest.raises(MoveError, match="over"):
        game.agree_draw()
    draw = Game(russian)
    assert draw.agree_draw() == GameResult(None, "agreement")
    assert draw.result.pdn == "1/2-1/2"
    with pytest.raises(ValueError, match="color"):
        Game(russian).resign(2)


def test_play_after_end_raises(russian: Rules) -> None:
    game = start(russian, "W:Wc3:Bd4")
    move = find(game, "c3", "e5")
    game.play(move)
    with pytest.raises(MoveError, match="over"):
        game.play(move)


def test_illegal_moves_raise(russian: Rules) -> None:
    game = Game(russian)
    with pytest.raises(MoveError, match="illegal move c3-c5"):
        game.play(Move((russian.square("c3"), russian.square("c5"))))
    with pytest.raises(MoveError, match="expected a Move"):
        game.play("c3-d4")  # type: ignore[arg-type]
    # A quiet move while a capture is compulsory.
    game = start(russian, "W:Wc3,g3:Bd4")
    with pytest.raises(MoveError, match="illegal"):
        game.play(Move((russian.square("g3"), russian.square("h4"))))
    assert game.moves == [] and game.position == russian.parse_fen("W:Wc3,g3:Bd4")


def test_copy_is_independent(russian: Rules) -> None:
    game = Game(russian)
    game.play(game.legal_moves()[0])
    twin = game.copy()
    twin.play(twin.legal_moves()[0])
    assert len(game.moves) == 1 and len(twin.moves) == 2
    assert len(game.positions) == 2 and game.position == game.positions[-1]
    assert game.counters().plies == 1 and twin.counters().plies == 2


def test_legal_moves_cached_per_position(russian: Rules) -> None:
    game = Game(russian)
    assert game.legal_moves() is game.legal_moves()
    assert game.legal_moves() == russian.legal_moves(game.position)


# --- property: random games in every variant ---------------------------------------------

_RULES: dict[str, Rules] = {}


def _rules(name: str) -> Rules:
    if name not in _RULES:
        _RULES[name] = Rules.for_variant(name)
    return _RULES[name]


def _check_position(rules: Rules, pos: Position) -> None:
    boards = (pos.white_men, pos.white_kings, pos.black_men, pos.black_kings)
    total = sum(b.bit_count() for b in boards)
    assert (pos.white_men | pos.white_kings | pos.black_men | pos.black_kings).bit_count() == total
    assert pos.occupied < 1 << rules.geometry.n_squares


def _check_move(rules: Rules, pos: Position, move: Move) -> Position:
    side, other = pos.side, 1 - pos.side
    after = rules.play(pos, move)
    _check_position(rules, after)
    assert after.side == other
    assert pos.pieces(side) >> move.start & 1
    assert after.pieces(side) >> move.end & 1
    # The end square is empty unless the piece came back to its start, or (Turkish, pieces
    # removed at once) it lands where a piece it captured stood.
    blockers = pos.occupied & ~move.captured_mask & ~(1 << move.start)
    assert not blockers >> move.end & 1
    assert len(set(move.captures)) == len(move.captures)
    for sq in move.captures:
        assert pos.pieces(other) >> sq & 1
        assert sq == move.end or not after.occupied >> sq & 1
    assert after.pieces(side).bit_count() == pos.pieces(side).bit_count()
    assert after.pieces(other).bit_count() == pos.pieces(other).bit_count() - len(move.captures)
    assert after.kings(side).bit_count() >= pos.kings(side).bit_count()
    return after


@settings(max_examples=60, deadline=None)
@given(
    variant=st.sampled_from(available_variants()),
    seed=st.integers(0, 2**32 - 1),
    cap=st.sampled_from([10, 60, 400]),
)
def test_random_games_end_validly(variant: str, seed: int, cap: int) -> None:
    rules = _rules(variant)
    rng = random.Random(seed)
    game = Game(rules, max_plies=cap)
    while not game.is_over:
        pos = game.position
        moves = game.legal_moves()
        assert moves
        for move in moves:
            _check_move(rules, pos, move)
        move = rng.choice(moves)
        before = game.counters()
        game.play(move)
        new = game.position
        assert game.positions[-1] == new and game.moves[-1] == move
        for c in (WHITE, BLACK):
            assert new.pieces(c).bit_count() <= pos.pieces(c).bit_count()
        progress = move.is_capture or pos.men(pos.side) >> move.start & 1
        assert game.counters().no_progress_plies == (0 if progress else before.no_progress_plies + 1)
        assert game.counters().repetitions >= 1
    result = game.result
    assert result is not None and result.reason in REASONS
    assert result.winner in (WHITE, BLACK, None)
    assert len(game.moves) <= cap
    assert len(game.positions) == len(game.moves) + 1
    assert game.legal_moves() == []
    if result.reason == "no_moves":
        assert rules.legal_moves(game.position) == [] and result.winner == 1 - game.position.side
    elif result.reason == "adjudication":
        assert len(game.moves) == cap
    else:
        assert result.winner is None or result.reason == "king_vs_lone_man"
