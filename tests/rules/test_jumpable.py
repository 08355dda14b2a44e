"""`jumpable` (the pieces under attack, for the network's attack planes) against a direct
walk of the board and against the legal moves of every variant."""

from __future__ import annotations

import numpy as np
import pytest

from tammi_rl.rules import movegen as mg
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.position import BLACK, WHITE, Position

VARIANTS = ["russian", "english", "italian", "turkish", "brazilian", "international"]


def walked_victims(rules: Rules, position: Position, color: int) -> set[int]:
    """The opponent's pieces a piece of ``color`` can jump, found square by square along the
    rays: the reference, written from the rules' wording rather than from the generator."""
    v = rules.variant
    rays, params = rules.rays, rules.params
    own_kings = position.white_kings if color == WHITE else position.black_kings
    opp_kings = position.black_kings if color == WHITE else position.white_kings
    own, opp = position.pieces(color), position.pieces(1 - color)
    occupied = own | opp
    victims = set()
    for sq in range(rules.geometry.n_squares):
        if not (own >> sq) & 1:
            continue
        king = bool((own_kings >> sq) & 1)
        flying = king and v.king_range == "flying"
        for d in range(4):
            if not king and not (params[mg.P_CAPTURE_DIRS + color] >> d) & 1:
                continue
            ray = [int(s) for s in rays[sq, d] if s >= 0]
            k = 0
            while flying and k < len(ray) and not (occupied >> ray[k]) & 1:
                k += 1
            if k + 1 >= len(ray) or not (opp >> ray[k]) & 1 or (occupied >> ray[k + 1]) & 1:
                continue
            if not king and not v.men_capture_kings and (opp_kings >> ray[k]) & 1:
                continue
            victims.add(ray[k])
    return victims


def jumpable_set(rules: Rules, position: Position, color: int) -> set[int]:
    mw, kw, mb, kb, _side = position.as_int64()
    men, kings, opp_men, opp_kings = (mw, kw, mb, kb) if color == WHITE else (mb, kb, mw, kw)
    bits = mg.jumpable(men, kings, opp_men, opp_kings, color, 0, mw | kw | mb | kb, rules.rays, rules.params)
    return {sq for sq in range(rules.geometry.n_squares) if (int(bits) >> sq) & 1}


@pytest.mark.parametrize("variant", VARIANTS)
def test_jumpable_matches_a_walk_of_the_board_and_covers_every_legal_capture(variant):
    rules = Rules.for_variant(variant)
    rng = np.random.default_rng(5)
    attacked_positions = 0
    for _ in range(25):
        position = rules.start_position()
        for _ in range(150):
            for color in (WHITE, BLACK):
                found = jumpable_set(rules, position, color)
                assert found == walked_victims(rules, position, color), rules.fen(position)
                attacked_positions += bool(found)
            moves = rules.legal_moves(position)
            # every first hop the rules allow is a jump found; the capture-choice rules only remove some
            assert {m.captures[0] for m in moves if m.captures} <= jumpable_set(rules, position, position.side)
            if not moves:
                break
            position = rules.play(position, moves[int(rng.integers(len(moves)))])
    assert attacked_positions > 200


@pytest.mark.parametrize(
    ("variant", "fen", "white_attacks", "black_attacks"),
    [
        # a man on c3 and one on d4: each can take the other; f6 stands guarded by g7
        ("russian", "W:Wc3:Bd4,f6,g7", {"d4"}, {"c3"}),
        # Italian men cannot take kings: the king on 18 is safe from 22, the man on 22 is not
        ("italian", "W:W22:BK18", set(), {"22"}),
        # a flying king takes at a distance; the English king steps one square at a time
        ("russian", "W:WKa1:Bf6", {"f6"}, set()),
        ("english", "W:WK29:B18", set(), set()),
    ],
)
def test_jumpable_in_set_positions(variant, fen, white_attacks, black_attacks):
    rules = Rules.for_variant(variant)
    position = rules.parse_fen(fen)
    names = {color: {rules.square_name(sq) for sq in jumpable_set(rules, position, color)} for color in (WHITE, BLACK)}
    assert names[WHITE] == white_attacks
    assert names[BLACK] == black_attacks
