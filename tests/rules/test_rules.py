"""One hand-built position per rule of every variant (envs/README.md), each with its exact set of legal moves.

Moves are written as notation paths (``c3xe5xg7``, ``22-18``) with the set of captured
squares; squares follow each variant's notation (algebraic for Russian, Brazilian and
Turkish; 1-32 for English and Italian, square 1 top-left as White sees the board,
Black's men starting on 1-12). Every expected set was worked out by hand from the rules;
each test also checks that the independent reference generator agrees with it.
"""

from __future__ import annotations

import dataclasses

import pytest
from support.reference_movegen import Reference, board_of

from tammi_rl.rules.engine import Rules
from tammi_rl.rules.position import BLACK, WHITE


@pytest.fixture(scope="module")
def russian() -> Rules:
    return Rules.for_variant("russian")


@pytest.fixture(scope="module")
def english() -> Rules:
    return Rules.for_variant("english")


@pytest.fixture(scope="module")
def italian() -> Rules:
    return Rules.for_variant("italian")


@pytest.fixture(scope="module")
def turkish() -> Rules:
    return Rules.for_variant("turkish")


@pytest.fixture(scope="module")
def brazilian() -> Rules:
    return Rules.for_variant("brazilian")


def with_axes(rules: Rules, **changes) -> Rules:
    return Rules(dataclasses.replace(rules.variant, **changes))


def mv(path: str, captured: str = "") -> tuple[str, frozenset[str]]:
    """A move as its notation path and captured squares (space separated)."""
    return path, frozenset(captured.split())


def moves(rules: Rules, fen: str) -> set[tuple[str, frozenset[str]]]:
    """Legal moves of the engine as (path, captured squares); also checks the reference."""
    pos = rules.parse_fen(fen)
    out = set()
    for m in rules.legal_moves(pos):
        sep = "x" if m.captures else "-"
        out.add((sep.join(rules.square_name(s) for s in m.path), frozenset(rules.square_name(s) for s in m.captures)))
    assert len(out) == len(rules.legal_moves(pos)), "a move is listed twice"
    return out


def keys(rules: Rules, fen: str) -> set[tuple[str, str, frozenset[str]]]:
    """Legal moves as (start, end, captured squares): the identity of a move."""
    pos = rules.parse_fen(fen)
    name = rules.square_name
    return {(name(m.start), name(m.end), frozenset(name(s) for s in m.captures)) for m in rules.legal_moves(pos)}


def reference_keys(rules: Rules, fen: str) -> set[tuple[str, str, frozenset[str]]]:
    pos = rules.parse_fen(fen)
    index = rules.geometry.index_of_coord
    name = lambda rc: rules.square_name(index[rc])  # noqa: E731
    ref = Reference(rules.variant).moves(board_of(rules, pos), pos.side)
    return {(name(k[0]), name(k[1]), frozenset(name(c) for c in k[2])) for k in ref}


def check(rules: Rules, fen: str, expected: set[tuple[str, frozenset[str]]]) -> None:
    """The engine's legal moves are exactly ``expected``, and so are the reference's."""
    as_keys = {(p.replace("x", "-").split("-")[0], p.replace("x", "-").split("-")[-1], c) for p, c in expected}
    assert reference_keys(rules, fen) == as_keys, "the hand-worked expectation disagrees with the reference"
    assert moves(rules, fen) == expected


def promoting(rules: Rules, fen: str) -> set[str]:
    """Paths of the legal moves that crown a man."""
    pos = rules.parse_fen(fen)
    sep = lambda m: "x" if m.captures else "-"  # noqa: E731
    return {sep(m).join(rules.square_name(s) for s in m.path) for m in rules.legal_moves(pos) if m.promotes}


# --- board, notation and start positions ------------------------------------------------
def test_square_names_and_coordinates(russian, english, italian, turkish):
    g = russian.geometry
    assert g.coords[russian.square("a1")] == (0, 0)  # dark corner on White's left
    assert g.coords[russian.square("c3")] == (2, 2)
    assert g.coords[russian.square("h8")] == (7, 7)
    assert len(g.coords) == 32 and all((r + c) % 2 == 0 for r, c in g.coords)
    # English: 1 is the top-left playable square as White sees the board (b8), 32 is g1.
    assert english.geometry.coords[english.square("1")] == (7, 1)
    assert english.geometry.coords[english.square("29")] == (0, 0)
    assert english.geometry.coords[english.square("32")] == (0, 6)
    # Turkish uses all 64 squares.
    assert len(turkish.geometry.coords) == 64
    assert turkish.geometry.coords[turkish.square("d4")] == (3, 3)


def test_italian_board_is_mirrored(italian, russian):
    """Each player's RIGHT-hand corner is dark in Italian; the LEFT one elsewhere."""
    coords = set(italian.geometry.coords)
    assert (0, 7) in coords and (0, 0) not in coords  # White's right corner h1 is dark
    assert (7, 0) in coords and (7, 7) not in coords  # Black's right corner (a8 from White) is dark
    assert len(coords) == 32 and all((r + c) % 2 == 1 for r, c in coords)
    assert italian.geometry.coords[italian.square("32")] == (0, 7)
    assert italian.geometry.coords[italian.square("1")] == (7, 0)
    assert (0, 0) in set(russian.geometry.coords) and (0, 7) not in set(russian.geometry.coords)


START = {
    "russian": "W:Wa1,a3,b2,c1,c3,d2,e1,e3,f2,g1,g3,h2:Ba7,b6,b8,c7,d6,d8,e7,f6,f8,g7,h6,h8",
    "brazilian": "W:Wa1,a3,b2,c1,c3,d2,e1,e3,f2,g1,g3,h2:Ba7,b6,b8,c7,d6,d8,e7,f6,f8,g7,h6,h8",
    "english": "B:W" + ",".join(map(str, range(21, 33))) + ":B" + ",".join(map(str, range(1, 13))),
    "italian": "W:W" + ",".join(map(str, range(21, 33))) + ":B" + ",".join(map(str, range(1, 13))),
    "turkish": "W:W"
    + ",".join(f"{f}{r}" for f in "abcdefgh" for r in (2, 3))
    + ":B"
    + ",".join(f"{f}{r}" for f in "abcdefgh" for r in (6, 7)),
    "international": "W:W" + ",".join(map(str, range(31, 51))) + ":B" + ",".join(map(str, range(1, 21))),
}
COUNTS = {"russian": 12, "brazilian": 12, "english": 12, "italian": 12, "turkish": 16, "international": 20}


@pytest.mark.parametrize("name", sorted(START))
def test_start_position(name):
    rules = Rules.for_variant(name)
    start = rules.start_position()
    assert bin(start.pieces(WHITE)).count("1") == COUNTS[name]
    assert bin(start.pieces(BLACK)).count("1") == COUNTS[name]
    assert start.white_kings == start.black_kings == 0
    assert start == rules.parse_fen(START[name])
    # White's men on White's nearest rows: the lowest row index holding a white man.
    rows = [rules.geometry.coords[s][0] for s in range(rules.geometry.n_squares) if start.white_men >> s & 1]
    assert min(rows) == (1 if name == "turkish" else 0)  # Turkish back row is empty


def test_who_moves_first(russian, english, italian, turkish, brazilian):
    assert russian.start_position().side == WHITE
    assert english.start_position().side == BLACK  # Black (squares 1-12) moves first
    assert italian.start_position().side == WHITE
    assert turkish.start_position().side == WHITE
    assert brazilian.start_position().side == WHITE
    assert {rules_square(english, m) for m in english.legal_moves(english.start_position())} == {
        "9-13",
        "9-14",
        "10-14",
        "10-15",
        "11-15",
        "11-16",
        "12-16",
    }


def rules_square(rules, m) -> str:
    return "-".join(rules.square_name(s) for s in m.path)


# --- Russian ----------------------------------------------------------------------------
def test_russian_men_move_only_forward(russian):
    check(russian, "W:Wc3:Bh8", {mv("c3-b4"), mv("c3-d4")})
    check(russian, "B:Wa1:Bd6", {mv("d6-c5"), mv("d6-e5")})


def test_russian_men_capture_forward_and_backward(russian):
    check(russian, "W:Wd4:Be5", {mv("d4xf6", "e5")})
    check(russian, "W:Wd4:Bc3", {mv("d4xb2", "c3")})


def test_men_capture_kings_in_russian(russian):
    check(russian, "W:Wd4:BKe5", {mv("d4xf6", "e5")})


def test_capture_is_compulsory(russian):
    # g3 has quiet moves, but c3 can capture: only the capture is legal.
    check(russian, "W:Wc3,g3:Bd4", {mv("c3xe5", "d4")})


def test_russian_free_choice_allows_shorter_capture(russian):
    # The same man may take one piece (to a5) or two (to g7).
    check(russian, "W:Wc3:Bb4,d4,f6", {mv("c3xa5", "b4"), mv("c3xe5xg7", "d4 f6")})
    # Another man's single capture stands beside a double one.
    check(russian, "W:Wc3,e1:Bd4,f2,f6", {mv("c3xe5xg7", "d4 f6"), mv("e1xg3", "f2")})


def test_chain_must_continue_changing_direction(russian):
    check(russian, "W:Wc3:Bd4,f6", {mv("c3xe5xg7", "d4 f6")})
    check(russian, "W:Wc3:Bd4,d6", {mv("c3xe5xc7", "d4 d6")})


def test_no_piece_is_jumped_twice(russian):
    # After d4xf6 the man could jump e5 back to the empty d4: not allowed.
    check(russian, "W:Wd4:Be5", {mv("d4xf6", "e5")})
    check(russian, "W:WKd4:Be5", {mv("d4xf6", "e5"), mv("d4xg7", "e5"), mv("d4xh8", "e5")})


def test_russian_jumped_piece_blocks_no_turkish_strike(russian):
    # a1xe5xc7xa5 cannot go on over d2: the already jumped c3 still stands on a5-e1.
    fen = "W:WKa1:Bc3,d6,b6,d2"
    check(russian, fen, {mv("a1xd4xa7", "c3 b6"), mv("a1xe5xc7xa5", "c3 d6 b6")})
    # With immediate removal (the Turkish strike) the chain would take d2 too.
    strike = with_axes(russian, capture_removal="immediate")
    assert ("a1", "e1", frozenset({"c3", "d6", "b6", "d2"})) in keys(strike, fen)


def test_russian_flying_king_must_land_where_it_can_go_on(russian):
    # Beyond c3 the king could stop on d4..h8, but only from e5 can it capture f4.
    check(russian, "W:WKa1:Bc3,f4", {mv("a1xe5xg3", "c3 f4"), mv("a1xe5xh2", "c3 f4")})


def test_russian_flying_king_captures_at_distance_and_lands_anywhere_beyond(russian):
    check(russian, "W:WKa1:Bd4", {mv("a1xe5", "d4"), mv("a1xf6", "d4"), mv("a1xg7", "d4"), mv("a1xh8", "d4")})


def test_russian_man_promoted_mid_chain_goes_on_as_king(russian):
    # b6xd8 crowns; the new king takes f6 at a distance, in the same move.
    fen = "W:Wb6:Bc7,f6"
    check(russian, fen, {mv("b6xd8xg5", "c7 f6"), mv("b6xd8xh4", "c7 f6")})
    assert promoting(russian, fen) == {"b6xd8xg5", "b6xd8xh4"}
    fen = "W:Wb6:Bc7,e7"
    check(russian, fen, {mv("b6xd8xf6", "c7 e7"), mv("b6xd8xg5", "c7 e7"), mv("b6xd8xh4", "c7 e7")})
    assert promoting(russian, fen) == {"b6xd8xf6", "b6xd8xg5", "b6xd8xh4"}


def test_man_reaching_far_row_is_crowned(russian):
    fen = "W:Wc7:Ba1"
    check(russian, fen, {mv("c7-b8"), mv("c7-d8")})
    assert promoting(russian, fen) == {"c7-b8", "c7-d8"}
    pos = russian.play(russian.parse_fen(fen), russian.legal_moves(russian.parse_fen(fen))[0])
    assert pos.white_men == 0 and bin(pos.white_kings).count("1") == 1


def test_flying_king_quiet_moves(russian):
    check(
        russian,
        "W:WKd4:Bh2",
        {mv(f"d4-{s}") for s in ("c3", "b2", "a1", "e5", "f6", "g7", "h8", "c5", "b6", "a7", "e3", "f2", "g1")},
    )


def test_kings_never_pass_through_pieces_on_quiet_moves(russian, english):
    check(russian, "W:WKa1,c3:Bh8", {mv("a1-b2"), mv("c3-b4"), mv("c3-d4")})
    # g7 cannot be taken (h8 behind it is occupied) and cannot be passed.
    check(russian, "W:WKa1:Bg7,h8", {mv(f"a1-{s}") for s in ("b2", "c3", "d4", "e5", "f6")})
    check(english, "W:WK18,22,23:B1", {mv("18-14"), mv("18-15"), mv("22-17"), mv("23-19")})


def test_no_legal_move_is_an_empty_list(russian):
    # a1 is blocked by b2, and cannot capture it because c3 is occupied.
    assert russian.legal_moves(russian.parse_fen("W:Wa1:Bb2,c3")) == []


# --- Brazilian ----------------------------------------------------------------------------
def test_brazilian_maximum_capture_is_compulsory(brazilian):
    check(brazilian, "W:Wc3:Bb4,d4,f6", {mv("c3xe5xg7", "d4 f6")})
    check(brazilian, "W:Wc3,e1:Bd4,f2,f6", {mv("c3xe5xg7", "d4 f6")})


def test_brazilian_man_crossing_far_row_stays_a_man(brazilian):
    # On d8 the man is not crowned: it must go on capturing backwards, as a man.
    fen = "W:Wb6:Bc7,e7"
    check(brazilian, fen, {mv("b6xd8xf6", "c7 e7")})
    assert promoting(brazilian, fen) == set()
    # As a man on d8 it cannot reach f6 (not adjacent): the move ends on d8, crowned.
    fen = "W:Wb6:Bc7,f6"
    check(brazilian, fen, {mv("b6xd8", "c7")})
    assert promoting(brazilian, fen) == {"b6xd8"}


# --- English ------------------------------------------------------------------------------
def test_english_men_move_and_capture_only_forward(english):
    check(english, "W:W18:B22", {mv("18-14"), mv("18-15")})  # 22 is behind: no capture
    check(english, "B:W32:B9", {mv("9-13"), mv("9-14")})  # Black moves down the board
    check(english, "W:W22:B18", {mv("22x15", "18")})


def test_english_kings_are_short(english):
    check(english, "W:WK18:B1", {mv("18-14"), mv("18-15"), mv("18-22"), mv("18-23")})
    check(english, "W:WK18:B22", {mv("18x25", "22")})  # captures backwards, lands adjacent
    check(english, "W:WK18:B22,25", {mv("18-14"), mv("18-15"), mv("18-23")})  # no room behind


def test_english_free_choice_and_chain(english):
    check(english, "W:W22,30:B18,11,25", {mv("22x15x8", "18 11"), mv("30x21", "25")})


def test_english_promotion_ends_the_move(english):
    # 9x2 crowns on d8; a king could go on over 7, but the move ends there.
    fen = "W:W9:B6,7"
    check(english, fen, {mv("9x2", "6")})
    assert promoting(english, fen) == {"9x2"}
    # The same with the man already a king: it goes on.
    check(english, "W:WK9:B6,7", {mv("9x2x11", "6 7")})


def test_two_routes_with_same_start_end_and_captures_are_one_move(english):
    # The king on 26 (d2) takes the four men round d4 clockwise or anticlockwise.
    fen = "W:WK26:B14,15,22,23"
    legal = english.legal_moves(english.parse_fen(fen))
    assert len(legal) == 1
    assert keys(english, fen) == {("26", "26", frozenset({"14", "15", "22", "23"}))}
    assert rules_square(english, legal[0]) in ("26-17-10-19-26", "26-19-10-17-26")
    assert reference_keys(english, fen) == keys(english, fen)


# --- Italian ------------------------------------------------------------------------------
def test_italian_men_move_and_capture_only_forward(italian):
    check(italian, "W:W22:B26", {mv("22-18"), mv("22-19")})
    check(italian, "W:W22:B18", {mv("22x13", "18")})


def test_italian_men_do_not_capture_kings(italian):
    check(italian, "W:W22:BK18", {mv("22-19")})
    check(italian, "W:WK22:BK18", {mv("22x13", "18")})  # a king may


def test_italian_kings_are_short(italian):
    check(italian, "W:WK22:B1", {mv("22-18"), mv("22-19"), mv("22-26"), mv("22-27")})


def test_italian_promotion_ends_the_move(italian):
    fen = "W:W10:B6,7"
    check(italian, fen, {mv("10x3", "6")})
    assert promoting(italian, fen) == {"10x3"}


def test_italian_rule_1_most_pieces(italian):
    check(italian, "W:W22,27:B10,18,23", {mv("22x13x6", "18 10")})


def test_italian_rule_2_king_rather_than_man(italian):
    check(italian, "W:W22,K31:B18,28", {mv("31x24", "28")})


def test_italian_rule_3_most_kings(italian):
    check(italian, "W:WK22:B18,K19", {mv("22x15", "19")})


def test_italian_rule_4_king_captured_earliest(italian):
    # Both take two pieces with a king, one king each: c4 (king) first wins over g6 second.
    check(italian, "W:WK22:BK18,10,19,K12", {mv("22x13x6", "18 10")})


def test_italian_rule_4_looks_at_the_best_route_of_a_move(italian):
    """ENGINE BUG (see report): precedence is decided on one route per move.

    The king on 23 takes four pieces (two kings) in three ways:
      23x16x7x14x5   takes 20, K12, 11, K10  (first king 2nd)
      23x16x7x14x23  takes 20, K12, 11, K19  (first king 2nd)
      23x14x7x16x23  takes K19, 11, K12, 20  (first king 1st)
    The last two are the same move (start, end and captured set); by rule 4 only it is
    legal, because its anticlockwise route captures a king first.
    """
    fen = "W:WK23:BK10,11,K12,K19,20"
    assert reference_keys(italian, fen) == {("23", "23", frozenset({"11", "12", "19", "20"}))}
    assert keys(italian, fen) == {("23", "23", frozenset({"11", "12", "19", "20"}))}


def test_italian_rule_4_does_not_drop_a_move_whose_best_route_wins(italian):
    """ENGINE BUG (see report), the other face: a legal move goes missing.

    22x15x6x13x22 takes 19, 11, K10, K18 (kings 3rd and 4th) but the same move the
    other way round, 22x13x6x15x22, takes K18, K10 first, as does 22x13x6x15x8.
    """
    fen = "W:WK22,28:BK10,11,12,14,K18,19,K25"
    expected = {
        ("22", "8", frozenset({"18", "10", "11", "12"})),
        ("22", "22", frozenset({"18", "10", "11", "19"})),
    }
    assert reference_keys(italian, fen) == expected
    assert keys(italian, fen) == expected


# --- Turkish ------------------------------------------------------------------------------
def test_turkish_men_move_forward_and_sideways_not_backwards(turkish):
    check(turkish, "W:Wd4:Ba8", {mv("d4-d5"), mv("d4-c4"), mv("d4-e4")})
    check(turkish, "B:Wh1:Bd5", {mv("d5-d4"), mv("d5-c5"), mv("d5-e5")})


def test_turkish_men_capture_forward_and_sideways_only(turkish):
    check(turkish, "W:Wd4:Be4", {mv("d4xf4", "e4")})
    check(turkish, "W:Wd4:Bd5", {mv("d4xd6", "d5")})
    # Behind (d3) and diagonal (e5) pieces cannot be captured by a man.
    check(turkish, "W:Wd4:Bd3,e5", {mv("d4-d5"), mv("d4-c4"), mv("d4-e4")})


def test_turkish_maximum_capture_is_compulsory(turkish):
    fen = "W:Wa4,g4:Bb4,g5,g7"
    check(turkish, fen, {mv("g4xg6xg8", "g5 g7")})
    assert promoting(turkish, fen) == {"g4xg6xg8"}


def test_turkish_king_moves_like_a_rook(turkish):
    squares = [f"d{r}" for r in (1, 2, 3, 5, 6, 7, 8)] + [f"{f}4" for f in "abcefgh"]
    check(turkish, "W:WKd4:Bh8", {mv(f"d4-{s}") for s in squares})
    check(
        turkish,
        "W:WKd4,d6:Bh8",
        {mv(f"d4-{s}") for s in squares if s not in ("d6", "d7", "d8")} | {mv("d6-d7"), mv("d6-c6"), mv("d6-e6")},
    )


def test_turkish_king_captures_at_distance_and_lands_anywhere_beyond(turkish):
    check(turkish, "W:WKa1:Bd1", {mv(f"a1x{s}", "d1") for s in ("e1", "f1", "g1", "h1")})


def test_turkish_immediate_removal_lets_a_chain_cross_a_square_again(turkish):
    # a1xa5 (a3) xd5 (c5) xd2 (d3) xa2 (b2) xa8 (a7): the last jump runs up the a-file
    # through a3, empty because a3 was removed at once. Five pieces.
    fen = "W:WKa1:Ba3,c5,d3,b2,a7"
    check(turkish, fen, {mv("a1xa5xd5xd2xa2xa8", "a3 c5 d3 b2 a7")})
    # Removed only at the end of the chain, a3 would block: the best is four pieces.
    blocked = with_axes(turkish, capture_removal="end_of_chain")
    check(blocked, fen, {mv("a1xa5xd5xd2xa2", "a3 c5 d3 b2")})


def test_turkish_king_may_not_turn_180_degrees(turkish):
    fen = "W:WKd4:Bd6,d2"
    check(turkish, fen, {mv("d4xd7", "d6"), mv("d4xd8", "d6"), mv("d4xd1", "d2")})
    # Allowed to turn back, it would take both (d6 is gone, so d4..d2 is open).
    turning = with_axes(turkish, king_turn_180=True)
    both = frozenset({"d6", "d2"})
    assert keys(turning, fen) == {("d4", "d1", both), ("d4", "d7", both), ("d4", "d8", both)}
    assert reference_keys(turning, fen) == keys(turning, fen)


def test_turkish_promotion_at_end_by_default_continue_as_option(turkish):
    fen = "W:Wd6:Bd7,f8"
    # Default: on d8 it is still a man; f8 is not adjacent, so the move ends, crowned.
    assert turkish.variant.promotion_in_chain == "at_end"
    check(turkish, fen, {mv("d6xd8", "d7")})
    assert promoting(turkish, fen) == {"d6xd8"}
    # Option: crowned on d8, it goes on as a king and takes f8 at a distance.
    cont = with_axes(turkish, promotion_in_chain="continue")
    check(cont, fen, {mv("d6xd8xg8", "d7 f8"), mv("d6xd8xh8", "d7 f8")})
    assert promoting(cont, fen) == {"d6xd8xg8", "d6xd8xh8"}


def test_turkish_man_on_far_row_goes_on_capturing_sideways_as_a_man(turkish):
    fen = "W:Wd6:Bd7,e8"
    check(turkish, fen, {mv("d6xd8xf8", "d7 e8")})
    assert promoting(turkish, fen) == {"d6xd8xf8"}


def test_turkish_crowned_mid_chain_may_not_turn_back(turkish):
    # "continue" option: the man jumped north onto d8 and is a king for the next jump;
    # going south would be a 180-degree turn between two jumps.
    cont = with_axes(turkish, promotion_in_chain="continue")
    check(cont, "W:Wd6:Bd7,d3", {mv("d6xd8", "d7")})


def test_turkish_men_capture_kings(turkish):
    check(turkish, "W:Wd4:BKd5", {mv("d4xd6", "d5")})
