"""Perft against published counts, and the compiled engine against an independent reference.

`reference_movegen.Reference` is a slow pure-Python move generator written from
the rules text (envs/README.md; coordinates, recursion, no bitboards). Here it is first checked against the
published perft counts itself, then used as the oracle for the compiled engine over
thousands of positions from seeded random playouts and random placements in every
variant: the legal move sets must be equal (start, end, captured set, promotion), each
route the engine reports must be a legal route of that move, and playing a move must
give the same position in both.
"""

from __future__ import annotations

import dataclasses
import random

import pytest
from support.reference_movegen import Reference, board_of, describe, engine_key

from tammi_rl.rules.engine import Rules
from tammi_rl.rules.position import BLACK, WHITE, Position

PUBLISHED = {
    "russian": [7, 49, 302, 1469, 7482, 37986],
    "english": [7, 49, 302, 1469, 7361, 36768],
    "italian": [7, 49, 302, 1469, 7361, 36473],
    "turkish": [8, 64, 708, 7538, 85090, 931312],
    "brazilian": [7, 49, 302, 1469, 7473, 37628],
    "international": [9, 81, 658, 4265, 27117, 167140],
}
VARIANTS = list(PUBLISHED)


@pytest.fixture(scope="module", params=VARIANTS)
def pair(request) -> tuple[Rules, Reference]:
    rules = Rules.for_variant(request.param)
    return rules, Reference(rules.variant)


# --- published counts ----------------------------------------------------------------
@pytest.mark.parametrize("name", VARIANTS)
def test_engine_perft_from_start_matches_published(name):
    rules = Rules.for_variant(name)
    start = rules.start_position()
    assert [rules.perft(start, d) for d in range(1, 7)] == PUBLISHED[name]


@pytest.mark.parametrize("name", VARIANTS)
def test_reference_perft_from_start_matches_published(name):
    """The oracle itself must reproduce the published numbers before it judges anything."""
    ref = Reference(Rules.for_variant(name).variant)
    board, side = ref.start_board()
    depth = 4 if name in ("turkish", "international") else 5
    assert [ref.perft(board, side, d) for d in range(1, depth + 1)] == PUBLISHED[name][:depth]


def test_perft_divide_sums_to_perft():
    rules = Rules.for_variant("russian")
    start = rules.start_position()
    divide = rules.perft_divide(start, 4)
    assert len(divide) == 7
    assert sum(n for _, n in divide) == PUBLISHED["russian"][3]


# --- engine vs reference ---------------------------------------------------------------
def assert_agrees(rules: Rules, ref: Reference, pos: Position) -> None:
    """Same legal moves, legal routes, and same positions after each move."""
    board = board_of(rules, pos)
    expected = ref.moves(board, pos.side)
    got = {}
    for move in rules.legal_moves(pos):
        key = engine_key(rules, move)
        assert key not in got, f"{rules.fen(pos)}: move {describe(rules, key)} listed twice"
        got[key] = move
    if set(got) != set(expected):
        extra = sorted(describe(rules, k) for k in set(got) - set(expected))
        missing = sorted(describe(rules, k) for k in set(expected) - set(got))
        pytest.fail(f"{rules.variant.name} {rules.fen(pos)}: engine has extra moves {extra}, lacks {missing}")
    coords = rules.geometry.coords
    for key, move in got.items():
        route = (tuple(coords[s] for s in move.path), tuple(coords[s] for s in move.captures))
        routes = {(r.path, r.captures) for r in expected[key]}
        assert route in routes, f"{rules.fen(pos)}: {move} is not a legal route of {describe(rules, key)}"
        after = ref.play(board, pos.side, key)
        assert board_of(rules, rules.play(pos, move)) == after, f"{rules.fen(pos)}: play({move}) differs"
        assert rules.play(pos, move).side == 1 - pos.side


def playout_positions(rules: Rules, seed: int, count: int, max_plies: int = 200) -> list[Position]:
    """Every position of seeded random games from the start, until ``count`` are collected."""
    rng = random.Random(seed)
    out: list[Position] = []
    while len(out) < count:
        pos = rules.start_position()
        for _ in range(max_plies):
            out.append(pos)
            moves = rules.legal_moves(pos)
            if not moves:
                break
            pos = rules.play(pos, rng.choice(moves))
    return out


def random_position(rules: Rules, rng: random.Random, max_per_side: int = 12) -> Position:
    """A random placement with kings: rich in long captures, flying kings and promotions."""
    g = rules.geometry
    squares = list(range(g.n_squares))
    rng.shuffle(squares)
    n_white, n_black = rng.randint(1, max_per_side), rng.randint(1, max_per_side)
    king_share = rng.random()
    bits = {"w": 0, "W": 0, "b": 0, "B": 0}
    for i, sq in enumerate(squares[: n_white + n_black]):
        white = i < n_white
        row = g.coords[sq][0]
        on_own_far_row = row == (g.size - 1 if white else 0)
        king = on_own_far_row or rng.random() < king_share
        bits[("W" if king else "w") if white else ("B" if king else "b")] |= 1 << sq
    return Position(bits["w"], bits["W"], bits["b"], bits["B"], rng.choice((WHITE, BLACK)))


def test_engine_matches_reference_on_playouts(pair):
    rules, ref = pair
    positions = playout_positions(rules, seed=1234, count=1500)
    for pos in positions:
        assert_agrees(rules, ref, pos)


def test_engine_matches_reference_on_random_positions(pair):
    rules, ref = pair
    rng = random.Random(99)
    for _ in range(1500):
        assert_agrees(rules, ref, random_position(rules, rng))


@pytest.mark.parametrize(
    "name, changes",
    [
        ("turkish", {"promotion_in_chain": "continue"}),  # the rules' option
        ("russian", {"capture_choice": "maximum"}),
        ("russian", {"promotion_in_chain": "at_end"}),
        ("brazilian", {"promotion_in_chain": "continue", "capture_choice": "free"}),
        ("english", {"promotion_in_chain": "continue", "man_captures": ("forward", "backward")}),
        ("turkish", {"capture_removal": "end_of_chain", "king_turn_180": True}),
    ],
    ids=lambda x: x if isinstance(x, str) else ",".join(f"{k}={v}" for k, v in x.items()),
)
def test_engine_matches_reference_on_axis_variations(name, changes):
    """The axes combine: the engine agrees with the reference off the shipped settings too."""
    variant = dataclasses.replace(Rules.for_variant(name).variant, **changes)
    rules, ref = Rules(variant), Reference(variant)
    rng = random.Random(7)
    for _ in range(250):
        assert_agrees(rules, ref, random_position(rules, rng))


def test_perft_from_midgame_positions_matches_reference(pair):
    rules, ref = pair
    positions = playout_positions(rules, seed=77, count=150, max_plies=60)
    rng = random.Random(5)
    picks = [p for p in positions[8::9] if rules.legal_moves(p)]
    rng.shuffle(picks)
    for i, pos in enumerate(picks[:4]):
        depth = 4 if i == 0 and rules.variant.name != "turkish" else 3
        board = board_of(rules, pos)
        assert rules.perft(pos, depth) == ref.perft(board, pos.side, depth), rules.fen(pos)


MIDGAME = [
    # Kings of both sides on an open board: long flying captures, promotions.
    ("russian", "W:WKa1,c3,e3,g3,b2,Kh6:Bb6,d6,f6,Kh8,c7,e5"),
    ("brazilian", "W:WKa1,c3,e3,g3,b2,Kh6:Bb6,d6,f6,Kh8,c7,e5"),
    ("english", "B:W18,19,K22,27,30:B6,K10,11,14,K23"),
    ("italian", "W:W18,19,K22,27,30:B6,K10,11,14,K23"),
    ("turkish", "W:WKa1,b3,d3,e4,g3:Ba6,c6,Kd8,e6,g6,h5"),
]


@pytest.mark.parametrize("name, fen", MIDGAME)
def test_perft_of_hand_built_positions_matches_reference(name, fen):
    rules = Rules.for_variant(name)
    ref = Reference(rules.variant)
    pos = rules.parse_fen(fen)
    board = board_of(rules, pos)
    for depth in (1, 2, 3):
        assert rules.perft(pos, depth) == ref.perft(board, pos.side, depth), (fen, depth)


def test_engine_matches_reference_on_italian_king_rings():
    """Italian kings capturing around a ring of four pieces, some of them kings.

    Two routes round a ring share start, end and captured set but capture the kings
    in a different order, so Italian rule 4 (king captured earliest) must look at the
    best route of each move, not at whichever route was found first.
    """
    rules = Rules.for_variant("italian")
    ref = Reference(rules.variant)
    index = rules.geometry.index_of_coord
    rng = random.Random(5)
    for _ in range(400):
        r, c = rng.randint(2, 5), rng.randint(2, 5)
        if (r - 2, c) not in index:
            c += 1
        if c > 5:
            continue
        ring = [(r + dr, c + dc) for dr, dc in ((-1, 1), (1, 1), (1, -1), (-1, -1))]
        landings = {(r - 2, c), (r, c + 2), (r + 2, c), (r, c - 2)}
        bits = {"w": 0, "W": 1 << index[(r - 2, c)], "b": 0, "B": 0}
        for sq in ring:
            bits["B" if rng.random() < 0.4 else "b"] |= 1 << index[sq]
        for sq in rng.sample(sorted(index), rng.randint(0, 8)):
            bit = 1 << index[sq]
            if sq in landings or sq in ring or any(bit & b for b in bits.values()):
                continue
            piece = rng.choice("wWbB")
            if (piece == "w" and sq[0] == 7) or (piece == "b" and sq[0] == 0):
                piece = piece.upper()
            bits[piece] |= bit
        assert_agrees(rules, ref, Position(bits["w"], bits["W"], bits["b"], bits["B"], WHITE))
