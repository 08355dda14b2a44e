"""Hub squares, positions and moves (`tammi_rl.hub.notation`), both ways."""

from __future__ import annotations

import random

import pytest

from tammi_rl.hub import HubNotation, HubNotationError
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game

VARIANTS = ["russian", "brazilian", "international"]


def test_square_numbers_are_the_standard_order() -> None:
    international = Rules.for_variant("international")
    notation = HubNotation(international)
    assert [str(notation.number_of_square[sq]) for sq in range(50)] == list(international.geometry.names)
    russian = Rules.for_variant("russian")
    notation = HubNotation(russian)
    number = {russian.square_name(sq): notation.number_of_square[sq] for sq in range(32)}
    assert (number["b8"], number["h8"], number["a7"], number["a1"], number["g1"], number["c3"]) == (1, 4, 5, 29, 32, 22)


def test_moves_count_from_a1_on_8x8_and_as_positions_on_international() -> None:
    international = HubNotation(Rules.for_variant("international"))
    assert international.move_number_of_square == international.number_of_square
    for variant in ("russian", "brazilian"):
        rules = Rules.for_variant(variant)
        number = {rules.square_name(sq): HubNotation(rules).move_number_of_square[sq] for sq in range(32)}
        names = ("a1", "g1", "b2", "c3", "b8", "h8")
        assert tuple(number[name] for name in names) == (1, 4, 5, 10, 29, 32)


@pytest.mark.parametrize("variant", VARIANTS)
def test_start_position_and_moves_match_pydraughts(variant: str) -> None:
    import draughts  # pydraughts, in the test extra: a missing one fails, never skips

    rules = Rules.for_variant(variant)
    notation = HubNotation(rules)
    board = draughts.Board(variant="standard" if variant == "international" else variant)
    assert notation.format_position(rules.start_position()) == board._game.get_fen() == board._game.initial_hub_fen
    ours = {notation.format_move(m) for m in rules.legal_moves(rules.start_position())}
    assert ours == {m.hub_move for m in board.legal_moves()}  # what HubEngine.play sends and reads


@pytest.mark.parametrize("variant", VARIANTS)
def test_positions_and_moves_round_trip_through_random_games(variant: str) -> None:
    rules = Rules.for_variant(variant)
    notation = HubNotation(rules)
    rng = random.Random(7)
    captures = 0
    for _ in range(6):
        game = Game(rules, max_plies=200)
        while not game.is_over:
            position = game.position
            assert notation.parse_position(notation.format_position(position)) == position
            for move in game.legal_moves():
                text = notation.format_move(move)
                back = notation.parse_move(position, text)
                assert (back.start, back.end, sorted(back.captures)) == (move.start, move.end, sorted(move.captures))
                captures += bool(move.captures)
            game.play(rng.choice(game.legal_moves()))
    assert captures > 50


def test_captures_may_be_listed_in_any_order_and_quiet_moves_are_strict() -> None:
    rules = Rules.for_variant("international")
    notation = HubNotation(rules)
    # White man on 28 takes 23 and 19? A single capture: 28x19 over 23 (standard numbering).
    position = notation.parse_position("W" + "".join("b" if k == 23 else "w" if k == 28 else "e" for k in range(1, 51)))
    move = notation.parse_move(position, "28x19x23")
    assert notation.format_move(move) == "28x19x23"
    assert notation.parse_move(position, "28x19") == move  # the captured pieces may be left out
    assert notation.parse_move(position, "28-19") == move  # and a capture written like a quiet move
    with pytest.raises(HubNotationError, match="illegal move 28-22"):
        notation.parse_move(position, "28-22")  # capturing is compulsory
    with pytest.raises(HubNotationError, match="illegal move 28x19x24"):
        notation.parse_move(position, "28x19x24")
