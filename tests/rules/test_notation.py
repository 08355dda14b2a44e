"""Move text: formatting per variant, parse(format(m)) == m, and the error messages."""

from __future__ import annotations

import random

import pytest

from tammi_rl.rules.engine import Rules
from tammi_rl.rules.errors import MoveError
from tammi_rl.rules.notation import format_move, parse_move
from tammi_rl.rules.position import Position

ALL_VARIANTS = ["russian", "english", "italian", "turkish", "brazilian", "international"]


def random_positions(rules: Rules, seed: int, games: int = 4, max_plies: int = 120) -> list[Position]:
    """Positions met in seeded random playouts (start position included)."""
    rng = random.Random(seed)
    seen: list[Position] = []
    for _ in range(games):
        pos = rules.start_position()
        for _ in range(max_plies):
            moves = rules.legal_moves(pos)
            if not moves:
                break
            seen.append(pos)
            pos = rules.play(pos, rng.choice(moves))
    return seen


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_format_parse_round_trip_every_legal_move(variant: str) -> None:
    rules = Rules.for_variant(variant)
    checked = captures = 0
    for pos in random_positions(rules, seed=1234):
        legal = rules.legal_moves(pos)
        for move in legal:
            text = format_move(rules, move)
            assert parse_move(rules, pos, text) == move, text
            assert parse_move(rules, pos, text.upper()) == move, text
            # Start and end only: either this move, or an ambiguity naming it in full.
            sep = text[len(rules.square_name(move.start))]
            short = f"{rules.square_name(move.start)}{sep}{rules.square_name(move.end)}"
            same_ends = [m for m in legal if m.start == move.start and m.end == move.end]
            if len(same_ends) == 1:
                assert parse_move(rules, pos, short) == move
            else:
                with pytest.raises(MoveError, match="ambiguous") as err:
                    parse_move(rules, pos, short)
                assert text in str(err.value)
            checked += 1
            captures += move.is_capture
    assert checked > 500 and captures > 20, (checked, captures)


def test_move_styles_per_notation() -> None:
    russian, english = Rules.for_variant("russian"), Rules.for_variant("english")
    start = {format_move(russian, m) for m in russian.legal_moves(russian.start_position())}
    assert start == {"a3-b4", "c3-b4", "c3-d4", "e3-d4", "e3-f4", "g3-f4", "g3-h4"}
    # English: Black (1-12) moves first; the seven classic openings.
    start = {format_move(english, m) for m in english.legal_moves(english.start_position())}
    assert start == {"9-13", "9-14", "10-14", "10-15", "11-15", "11-16", "12-16"}

    pos = russian.parse_fen("W:Wc3:Bd4,d6")
    assert [format_move(russian, m) for m in russian.legal_moves(pos)] == ["c3:e5:c7"]
    pos = english.parse_fen("W:W22:B18,11")
    assert [format_move(english, m) for m in english.legal_moves(pos)] == ["22x15x8"]


def test_separators_and_partial_paths() -> None:
    rules = Rules.for_variant("russian")
    pos = rules.parse_fen("W:Wc3:Bd4,d6")
    full = rules.legal_moves(pos)[0]
    for text in ("c3:e5:c7", "c3xe5xc7", "c3-e5-c7", "C3:C7", "c3 : c7", "c3xc7", "c3-c7"):
        assert parse_move(rules, pos, text) == full, text
    with pytest.raises(MoveError, match="illegal"):
        parse_move(rules, pos, "c3:e5")  # ends too early: a chain must be finished


def english_two_routes() -> tuple[Rules, Position]:
    """White man on c1 (30) can take b2+b4 via a3 or d2+d4 via e3, both ending on c5 (14)."""
    rules = Rules.for_variant("english")
    return rules, rules.parse_fen("W:W30:B25,26,17,18")


def test_ambiguous_capture_lists_both_routes_and_how_to_choose() -> None:
    rules, pos = english_two_routes()
    moves = rules.legal_moves(pos)
    assert {frozenset(m.captures) for m in moves} == {
        frozenset({rules.square("25"), rules.square("17")}),
        frozenset({rules.square("26"), rules.square("18")}),
    }
    with pytest.raises(MoveError) as err:
        parse_move(rules, pos, "30x14")
    message = str(err.value)
    assert "ambiguous" in message and "'30x14'" in message
    assert "30x21x14" in message and "30x23x14" in message
    assert "full path" in message
    assert parse_move(rules, pos, "30x21x14").captures == (rules.square("25"), rules.square("17"))
    assert parse_move(rules, pos, "30-23-14").captures == (rules.square("26"), rules.square("18"))


def test_loop_walked_the_other_way_is_the_same_move() -> None:
    # A Russian man can take four men round a diamond either way; the engine keeps one
    # route per (start, end, captured set), and the other spelling must still read.
    rules = Rules.for_variant("russian")
    pos = rules.parse_fen("W:Wa3:Bb2,d2,b4,d4")
    [move] = rules.legal_moves(pos)
    assert parse_move(rules, pos, "a3:c5:e3:c1:a3") == move
    assert parse_move(rules, pos, "a3:c1:e3:c5:a3") == move
    with pytest.raises(MoveError, match="illegal"):
        parse_move(rules, pos, "a3:c1:e3:c1:a3")


def test_illegal_move_lists_legal_moves() -> None:
    rules = Rules.for_variant("russian")
    with pytest.raises(MoveError) as err:
        parse_move(rules, rules.start_position(), "c3-c5")
    message = str(err.value)
    assert "illegal move 'c3-c5' for white" in message
    assert "c3-d4" in message and "g3-h4" in message
    # A capture is compulsory: the quiet move is refused and the capture offered.
    pos = rules.parse_fen("W:Wc3,g3:Bd4")
    with pytest.raises(MoveError, match=r"legal moves: c3:e5$"):
        parse_move(rules, pos, "g3-h4")


@pytest.mark.parametrize(
    "text, needle",
    [
        ("", "empty move text"),
        ("   ", "empty move text"),
        ("c3", "expected squares joined by"),
        ("c3--d4", "empty square between separators"),
        ("c3-d4!", "'d4!' is not a square name"),
        ("z9-a1", "unknown square 'z9'"),
        ("c3-d5", "unknown square 'd5'"),  # a light square is not a square of the board
        ("c3/d4", "expected squares joined by"),
    ],
)
def test_malformed_and_unknown_square_messages(text: str, needle: str) -> None:
    rules = Rules.for_variant("russian")
    with pytest.raises(MoveError) as err:
        parse_move(rules, rules.start_position(), text)
    assert needle in str(err.value)


def test_numeric_unknown_square() -> None:
    rules = Rules.for_variant("english")
    with pytest.raises(MoveError, match="unknown square '33'"):
        parse_move(rules, rules.start_position(), "9-33")
