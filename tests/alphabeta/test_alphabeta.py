"""Alpha-beta baseline: legal moves everywhere, exact scores, composed wins, determinism."""

from __future__ import annotations

import random

import pytest

from tammi_rl.alphabeta import core
from tammi_rl.alphabeta.driver import AlphaBeta, AlphaBetaConfig
from tammi_rl.alphabeta.heuristic import EvalWeights, default_weights
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.errors import TammiError
from tammi_rl.rules.notation import format_move
from tammi_rl.rules.position import Position

ALL_VARIANTS = ["russian", "english", "italian", "turkish", "brazilian", "international"]


def fen_from_coords(rules: Rules, side: str, white: list[str], black: list[str]) -> str:
    """FEN from algebraic coordinates (row 1 = White's back row) in any diagonal variant's numbering."""
    g = rules.geometry

    def name(token: str) -> str:
        king = token.startswith("K")
        cell = token[1:] if king else token
        sq = g.index_of_coord[(int(cell[1:]) - 1, ord(cell[0]) - ord("a"))]
        return ("K" if king else "") + g.names[sq]

    return f"{side}:W{','.join(map(name, white))}:B{','.join(map(name, black))}"


def random_positions(rules: Rules, count: int, seed: int, max_plies: int = 80) -> list[Position]:
    """Positions met in random playouts (each still has a legal move)."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        pos = rules.start_position()
        for _ in range(rng.randrange(max_plies)):
            moves = rules.legal_moves(pos)
            if not moves:
                break
            pos = rules.play(pos, rng.choice(moves))
        if rules.legal_moves(pos):
            out.append(pos)
    return out


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_every_move_returned_is_legal(variant: str) -> None:
    rules = Rules.for_variant(variant)
    search = AlphaBeta(rules, AlphaBetaConfig(depth=3, tt_bits=14))
    for i, pos in enumerate(random_positions(rules, 8, seed=len(variant))):
        limits = [dict(depth=3), dict(nodes=500), dict(time_limit=0.02)][i % 3]
        result = search.search(pos, **limits)
        assert result.move in rules.legal_moves(pos), rules.fen(pos)
        assert set(result.candidates) <= set(rules.legal_moves(pos))


def _minimax(rules: Rules, search: AlphaBeta, pos: Position, depth: int, ply: int, kings: list) -> int:
    """Plain negamax with the compiled search's leaf rules (forced-move extension off).

    Positions with kings are noted in ``kings``.
    """
    if pos.white_kings or pos.black_kings:
        kings.append(pos)
    moves = rules.legal_moves(pos)
    if not moves:
        return -(core.MATE - ply)
    if depth <= 0 and not moves[0].captures:
        return search.evaluate(pos)
    return max(-_minimax(rules, search, rules.play(pos, m), depth - 1, ply + 1, kings) for m in moves)


def _minimax_extended(rules: Rules, search: AlphaBeta, pos: Position, depth: int, ply: int, seen: dict) -> int:
    """Plain negamax with the forced-move extension: a single legal move uses no depth.

    ``seen`` maps each position to the remaining depths it was met at (to spot transpositions)."""
    seen.setdefault(pos.key(), set()).add(depth)
    moves = rules.legal_moves(pos)
    if not moves:
        return -(core.MATE - ply)
    if depth <= 0 and not moves[0].captures:
        return search.evaluate(pos)
    if len(moves) == 1 and ply < core.MAX_PLY // 2:
        depth += 1
    return max(-_minimax_extended(rules, search, rules.play(pos, m), depth - 1, ply + 1, seen) for m in moves)


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["russian", "english", "italian", "brazilian"])
def test_score_with_forced_move_extension_equals_plain_minimax(variant: str) -> None:
    """PVS re-searches keep the depth they were asked for, extension included.

    Compared where no position is met twice in the tree (no transposition and no
    repetition), so the exact extended minimax value is the reference.
    """
    rules = Rules.for_variant(variant)
    compared = 0
    for pos in random_positions(rules, 60, seed=5, max_plies=16):
        moves = rules.legal_moves(pos)
        if len(moves) == 1:
            continue
        seen: dict = {}
        search = AlphaBeta(rules, AlphaBetaConfig(depth=3, forced_extension=True))
        expected = max(-_minimax_extended(rules, search, rules.play(pos, m), 2, 1, seen) for m in moves)
        if any(len(depths) > 1 for depths in seen.values()):
            continue
        assert search.search(pos).score == expected, rules.fen(pos)
        compared += 1
    assert compared >= 6


@pytest.mark.parametrize("variant", ["russian", "english", "italian", "brazilian"])
def test_score_equals_plain_minimax(variant: str) -> None:
    """TT, PVS and move ordering must not change the value.

    Compared only where no king appears in the tree, and without the forced-move
    extension: then no position repeats or is met at two remaining depths, so the
    exact minimax value is the reference.
    """
    rules = Rules.for_variant(variant)
    compared = 0
    for pos in random_positions(rules, 12, seed=7, max_plies=10):
        kings: list = []
        moves = rules.legal_moves(pos)
        if len(moves) == 1:
            continue  # a forced move is played without search
        search = AlphaBeta(rules, AlphaBetaConfig(depth=3, forced_extension=False))
        expected = max(-_minimax(rules, search, rules.play(pos, m), 2, 1, kings) for m in moves)
        if kings:
            continue
        assert search.search(pos).score == expected, rules.fen(pos)
        compared += 1
    assert compared >= 3


@pytest.mark.parametrize("variant", ["russian", "english", "brazilian"])
def test_finds_shot_sacrificing_a_man_to_win_three(variant: str) -> None:
    """e3-d4! c5xe3 f2xd4xf6xh8: one man given, three taken (and a crown)."""
    rules = Rules.for_variant(variant)
    pos = rules.parse_fen(fen_from_coords(rules, "W", ["a1", "c3", "e3", "f2", "g1"], ["c5", "e5", "g7", "a7", "b8"]))
    e3, d4 = (rules.geometry.index_of_coord[rc] for rc in ((2, 4), (3, 3)))
    shot = next(m for m in rules.legal_moves(pos) if m.path == (e3, d4))
    assert not shot.captures
    reply = rules.legal_moves(rules.play(pos, shot))
    assert len(reply) == 1 and len(reply[0].captures) == 1  # the sacrifice must be taken
    result = AlphaBeta(rules, AlphaBetaConfig(depth=4)).search(pos)
    assert result.move == shot, format_move(rules, result.move)
    assert result.score >= 150  # about two men up


def test_finds_king_trap() -> None:
    """Russian: d2-c3! forces the black king to take on the long diagonal, where Kh8 takes it."""
    rules = Rules.for_variant("russian")
    pos = rules.parse_fen("W:WKh8,d2:BKa1")
    result = AlphaBeta(rules, AlphaBetaConfig(depth=4)).search(pos)
    assert format_move(rules, result.move) == "d2-c3"
    assert result.mate_in == 3


def test_prefers_the_shorter_win_and_sees_the_loss() -> None:
    rules = Rules.for_variant("russian")
    pos = rules.parse_fen("B:WKh8,c3:BKa1")  # black must take c3 and is then taken
    result = AlphaBeta(rules, AlphaBetaConfig(depth=4)).search(pos)
    assert result.depth == 0 or (result.mate_in is not None and result.mate_in < 0)


def test_repetition_scores_as_a_draw() -> None:
    """Two kings each: a position already on the path counts 0, so a level ending stays near 0."""
    rules = Rules.for_variant("russian")
    pos = rules.parse_fen("W:WKa1:BKh2")
    result = AlphaBeta(rules, AlphaBetaConfig(depth=8)).search(pos)
    assert abs(result.score) < 50


def test_depth_limited_search_is_deterministic() -> None:
    rules = Rules.for_variant("russian")
    pos = random_positions(rules, 1, seed=3, max_plies=20)[0]
    a = AlphaBeta(rules, AlphaBetaConfig(depth=5, margin=20), seed=11).search(pos)
    b = AlphaBeta(rules, AlphaBetaConfig(depth=5, margin=20), seed=11).search(pos)
    assert (a.move, a.score, a.nodes) == (b.move, b.score, b.nodes)


def test_margin_candidates_are_within_margin() -> None:
    rules = Rules.for_variant("russian")
    pos = rules.start_position()
    search = AlphaBeta(rules, AlphaBetaConfig(depth=4, margin=1000))
    result = search.search(pos)
    assert len(result.candidates) == len(rules.legal_moves(pos))  # a huge margin admits every move
    exact = AlphaBeta(rules, AlphaBetaConfig(depth=4)).search(pos)
    narrow = AlphaBeta(rules, AlphaBetaConfig(depth=4, margin=5)).search(pos)
    assert exact.move in narrow.candidates


def test_weights_defaults_and_overrides() -> None:
    assert default_weights(Rules.for_variant("russian")).king > default_weights(Rules.for_variant("english")).king
    assert EvalWeights().with_overrides({"king": 333}).king == 333
    with pytest.raises(TammiError, match="unknown evaluation weight 'kingg'"):
        EvalWeights().with_overrides({"kingg": 1})
    with pytest.raises(TammiError, match="must be an integer"):
        EvalWeights().with_overrides({"man": "a lot"})


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_start_position_evaluates_level(variant: str) -> None:
    rules = Rules.for_variant(variant)
    assert AlphaBeta(rules, AlphaBetaConfig(depth=1)).evaluate(rules.start_position()) == 0


def test_time_limit_is_kept() -> None:
    rules = Rules.for_variant("russian")
    result = AlphaBeta(rules, AlphaBetaConfig(depth=None, time=0.3)).search(rules.start_position())
    assert result.seconds < 1.0 and result.depth >= 4  # generous: the test machine may be busy


def test_config_errors() -> None:
    with pytest.raises(ValueError, match="needs a limit"):
        AlphaBetaConfig(depth=None)
    with pytest.raises(ValueError, match="depth must be"):
        AlphaBetaConfig(depth=0)
