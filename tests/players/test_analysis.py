"""`tammi_rl.players.analysis.analyse` for alpha-beta, MCTS and random players: the move is
legal, the PV starts with it and is playable, hop shares sum to 1, limits are honoured,
and a state in the middle of a capture chain is continued."""

from __future__ import annotations

import io
import time

import pytest

from tammi_rl.config import NetworkConfig
from tammi_rl.players import HumanPlayer, RandomPlayer, parse_player_spec
from tammi_rl.players.analysis import Analysis, SearchLimits, analyse
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game
from tammi_rl.rules.position import BLACK, Position

TINY = NetworkConfig(blocks=1, channels=8, value_hidden=8)
CHAIN_FEN = "W:Wc3,a1:Bd4,d6,f6,h8"
"""c3:e5 then on over d6 or over f6: two ways to continue the chain. Over d6 (c3:e5:c7)
wins; over f6 (c3:e5:g7) is answered h8:f6, taking the man back."""
SINGLE_FEN = "W:Wc3,a1:Bd4,d6,f8,h8,h6"
"""c3:e5 then on over d6 only: one way to continue the chain (c3:e5:c7)."""
TWO_CHOICES_FEN = "W:We1,a1:Bb2,d2,b4,d4,g5,h4"
"""a1:c3 or e1:c3, then on over b4 or over d4: two searched hops."""
HANG_S = 3.0
"""Wall-clock bound of the timed searches below (budgets of 0.2-0.3 s): loose enough for a
loaded machine, tight enough to catch a search that ignores its budget."""


@pytest.fixture(scope="module")
def rules() -> Rules:
    return Rules.for_variant("russian")


@pytest.fixture(scope="module")
def mcts_player(rules: Rules):  # type: ignore[no-untyped-def]
    from tammi_rl.nn.model import build_model
    from tammi_rl.players.mcts import MCTSPlayer

    return MCTSPlayer(rules, build_model(rules, TINY), simulations=16, seed=0)


def _check(game: Game, a: Analysis) -> None:
    """The invariants every analysis keeps."""
    chain = game.chain_path()
    assert a.move in game.legal_moves() and a.move.path[: len(chain)] == chain
    assert a.pv[0] == a.move
    line = Game(game.rules, start=game.position)
    for move in a.pv:
        line.play(move)  # raises on an illegal move
    assert sorted(h.hop for h in a.hops) == game.legal_hops()
    assert sum(h.share for h in a.hops) == pytest.approx(1.0)
    codec_moves = {(h.start, h.end) for h in a.hops}
    k = max(0, len(chain) - 1)
    assert (a.move.path[k], a.move.path[k + 1]) in codec_moves
    assert -1.0 <= a.value <= 1.0
    if a.wdl is not None:
        assert sum(a.wdl) == pytest.approx(1.0, abs=1e-5)


def _mid_chain(rules: Rules) -> Game:
    game = Game(rules, start=rules.parse_fen(CHAIN_FEN))
    assert game.play_hop(game.legal_hops()[0]) is None  # c3:e5, the chain goes on
    assert len(game.legal_hops()) == 2
    return game


# --- alpha-beta -----------------------------------------------------------------------------
def test_alphabeta_depth_nodes_and_time_limits(rules: Rules) -> None:
    player = parse_player_spec("alphabeta:depth=6", rules)
    game = Game(rules)
    a = analyse(player, game, SearchLimits(depth=3))
    _check(game, a)
    assert a.depth == 3 and a.nodes > 0 and a.score is not None and len(a.pv) >= 3
    assert [h.share for h in a.hops].count(1.0) == 1  # no margin: all on the chosen move's hop
    a = analyse(player, game, SearchLimits(nodes=2000))
    assert a.nodes <= 2001
    tic = time.perf_counter()
    a = analyse(player, game, SearchLimits(time_s=0.2))
    assert time.perf_counter() - tic < HANG_S and a.depth >= 1
    _check(game, a)


def test_alphabeta_reports_each_depth_and_stops_when_asked(rules: Rules) -> None:
    player = parse_player_spec("alphabeta:depth=6", rules)
    game = Game(rules)
    seen: list[int] = []
    analyse(player, game, SearchLimits(depth=4), on_progress=lambda a: seen.append(a.depth))
    assert seen == [1, 2, 3, 4]
    tic = time.perf_counter()
    a = analyse(player, game, SearchLimits(time_s=100.0), should_stop=lambda: time.perf_counter() - tic > 0.2)
    assert time.perf_counter() - tic < HANG_S
    _check(game, a)


@pytest.mark.slow
def test_alphabeta_stop_latency_does_not_grow_with_the_search_time(rules: Rules) -> None:
    player = parse_player_spec("alphabeta:depth=6", rules)
    tic = time.perf_counter()
    a = analyse(player, Game(rules), SearchLimits(time_s=100.0), should_stop=lambda: time.perf_counter() - tic > 3.0)
    late = time.perf_counter() - tic - 3.0
    assert late < 1.0, f"stop seen {late:.2f} s late"  # slices of ~50 ms (doubling without a cap: ~2 s here)
    assert a.depth >= 6


def test_alphabeta_finds_the_winning_capture_mid_chain(rules: Rules) -> None:
    player = parse_player_spec("alphabeta:depth=4", rules)
    game = _mid_chain(rules)
    a = analyse(player, game, SearchLimits(depth=4))
    _check(game, a)
    names = [rules.square_name(sq) for sq in a.move.path]
    assert names == ["c3", "e5", "c7"] and sorted(rules.square_name(sq) for sq in a.move.captures) == ["d4", "d6"]
    assert len(a.pv) > 1


def test_alphabeta_searches_a_single_continuation_mid_chain(rules: Rules) -> None:
    game = Game(rules, start=rules.parse_fen(SINGLE_FEN))
    assert game.play_hop(game.legal_hops()[0]) is None and len(game.legal_hops()) == 1
    a = analyse(parse_player_spec("alphabeta:depth=6", rules), game, SearchLimits(depth=3))
    _check(game, a)
    assert [rules.square_name(sq) for sq in a.move.path] == ["c3", "e5", "c7"]
    reply = parse_player_spec("alphabeta:depth=6", rules).search.search(rules.play(game.position, a.move), depth=2)
    assert (a.depth, a.score) == (reply.depth + 1, -reply.score / 100)  # the child searched, not a static score
    assert len(a.pv) > 1


def test_alphabeta_mid_chain_splits_the_players_own_budget(rules: Rules) -> None:
    from tammi_rl.players.analysis_alphabeta import _limits

    player = parse_player_spec("alphabeta:depth=5,time=0.4,nodes=1000", rules)
    assert _limits(player, SearchLimits(), share=2) == {"depth": 5, "time_limit": 0.2, "nodes": 500}
    assert _limits(player, SearchLimits(time_s=1.0), share=4) == {"depth": None, "time_limit": 0.25, "nodes": None}


# --- MCTS -------------------------------------------------------------------------------------
def test_mcts_visits_priors_wdl_and_pv(rules: Rules, mcts_player) -> None:  # type: ignore[no-untyped-def]
    game = Game(rules)
    a = analyse(mcts_player, game, SearchLimits(nodes=24))
    _check(game, a)
    assert a.wdl is not None and a.depth == len(a.pv) >= 1
    assert a.nodes == 24  # the first move has one searched hop
    assert sum(h.prior for h in a.hops) == pytest.approx(1.0, abs=1e-5)
    assert 0 < sum(h.visits for h in a.hops) <= 24


def test_mcts_time_budget_and_mid_chain(rules: Rules, mcts_player) -> None:  # type: ignore[no-untyped-def]
    game = Game(rules)
    tic = time.perf_counter()
    a = analyse(mcts_player, game, SearchLimits(time_s=0.3, nodes=100_000))
    assert time.perf_counter() - tic < HANG_S and a.nodes >= 16
    _check(game, a)
    game = _mid_chain(rules)
    a = analyse(mcts_player, game, SearchLimits(nodes=8))
    _check(game, a)
    chosen = next(h for h in a.hops if (h.start, h.end) == (a.move.path[1], a.move.path[2]))
    assert a.nodes == 8 and chosen.visits == max(h.visits for h in a.hops)  # the move the search chose


def test_mcts_time_budget_spent_before_a_second_searched_hop(rules: Rules, mcts_player) -> None:  # type: ignore[no-untyped-def]
    game = Game(rules, start=rules.parse_fen(TWO_CHOICES_FEN))
    assert len(game.legal_hops()) == 2
    a = analyse(mcts_player, game, SearchLimits(time_s=1e-6, nodes=1000))  # the time is gone at once
    _check(game, a)
    assert len(a.move.captures) == 2 and a.nodes == 1 + 1  # each searched hop: its root's evaluation only


# --- others -------------------------------------------------------------------------------------
def test_random_player_has_uniform_shares_and_continues_chains(rules: Rules) -> None:
    player = RandomPlayer(seed=1)
    game = Game(rules)
    a = analyse(player, game)
    _check(game, a)
    assert {round(h.share, 9) for h in a.hops} == {round(1 / len(game.legal_hops()), 9)}
    assert (a.depth, a.nodes, a.wdl) == (0, 0, None)
    game = _mid_chain(rules)
    _check(game, analyse(player, game))


def test_humans_and_finished_games_are_refused(rules: Rules) -> None:
    with pytest.raises(TypeError, match="human"):
        analyse(HumanPlayer(io.StringIO(), io.StringIO()), Game(rules))
    over = Game(rules, start=Position(1 << rules.square("c3"), 0, 0, 0, BLACK))
    with pytest.raises(ValueError, match="finished game"):
        analyse(RandomPlayer(), over)


def test_search_limits_are_checked() -> None:
    with pytest.raises(ValueError):
        SearchLimits(time_s=0)
    with pytest.raises(ValueError):
        SearchLimits(depth=0)


# --- forced moves -------------------------------------------------------------------------------
FORCED_FEN = "W:Wc3,g1:Bd4,f6,b8"
"""c3:e5:g7, taking two men, is White's only move: its value is that of the position after it."""
LAST_PIECE_FEN = "W:Wc3:Bd4"
"""c3:e5 takes Black's last piece: the only move, and it wins."""


def test_alphabeta_searches_the_position_after_a_forced_move(rules: Rules) -> None:
    """The player's own search answers a forced move at depth 0 with a static score; the
    analysis searches the position after it instead, so the value is that of the capture."""
    game = Game(rules, start=rules.parse_fen(FORCED_FEN))
    assert len(game.legal_moves()) == 1
    player = parse_player_spec("alphabeta:depth=6", rules)
    a = analyse(player, game, SearchLimits(depth=4))
    _check(game, a)
    assert [rules.square_name(sq) for sq in a.move.path] == ["c3", "e5", "g7"]
    reply = parse_player_spec("alphabeta:depth=6", rules).search.search(rules.play(game.position, a.move), depth=3)
    assert (a.depth, a.score) == (reply.depth + 1, -reply.score / 100) and a.depth >= 2 and a.nodes > 0
    assert a.score is not None and a.score > 0 and a.value > 0  # two men up
    assert len(a.pv) > 1
    won = analyse(player, Game(rules, start=rules.parse_fen(LAST_PIECE_FEN)), SearchLimits(depth=4))
    assert won.value == 1.0 and won.mate_in == 1


def test_mcts_searches_the_position_after_a_forced_move(rules: Rules, mcts_player) -> None:  # type: ignore[no-untyped-def]
    """A forced move (here a whole forced chain) is reported from a search of the position
    after it, not from an unsearched network value with 0 visits."""
    game = Game(rules, start=rules.parse_fen(FORCED_FEN))
    a = analyse(mcts_player, game, SearchLimits(nodes=24))
    _check(game, a)
    assert [rules.square_name(sq) for sq in a.move.path] == ["c3", "e5", "g7"]
    assert a.nodes == 24 and [h.visits for h in a.hops] == [24] and a.hops[0].share == 1.0
    assert a.wdl is not None and a.depth == len(a.pv) >= 2  # the forced move, then the reply searched
    after = Game(rules, start=rules.play(game.position, a.move))
    reply = analyse(mcts_player, after, SearchLimits(nodes=24))
    assert a.value == pytest.approx(-reply.value) and a.pv[1] == reply.move
    won = analyse(mcts_player, Game(rules, start=rules.parse_fen(LAST_PIECE_FEN)), SearchLimits(nodes=24))
    assert (won.value, won.wdl, won.nodes) == (1.0, (1.0, 0.0, 0.0), 0)


def test_mcts_a_forced_first_hop_takes_the_value_of_the_searched_hop(rules: Rules, mcts_player) -> None:  # type: ignore[no-untyped-def]
    """c3:e5 is forced, then a choice: the value and the first hop's visits come from that search."""
    game = Game(rules, start=rules.parse_fen(CHAIN_FEN))
    assert len(game.legal_hops()) == 1 and len(game.legal_moves()) == 2
    a = analyse(mcts_player, game, SearchLimits(nodes=24))
    _check(game, a)
    assert a.nodes == 24 and [h.visits for h in a.hops] == [24]
    mid = _mid_chain(rules)
    assert a.value == pytest.approx(analyse(mcts_player, mid, SearchLimits(nodes=24)).value)
