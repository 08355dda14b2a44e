"""The MCTS player on the clock and its batched-search options: ``time=``, ``batch=``,
``cache=``, the share of a move's time per hop of a capture chain, and stops."""

from __future__ import annotations

import time

import pytest

from tammi_rl.config import NetworkConfig
from tammi_rl.nn.model import build_model
from tammi_rl.players import PlayerSpecError, parse_player_spec
from tammi_rl.players.analysis import SearchLimits, analyse
from tammi_rl.players.mcts import MCTSPlayer, hop_share
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game

TINY = NetworkConfig(blocks=1, channels=8, value_hidden=8)
CHAIN_FEN = "W:Wc3,a1:Bd4,d6,f6,h8"
"""c3:e5 then on over d6 or over f6: the first hop leaves a later choice."""
SINGLE_FEN = "W:Wc3,a1:Bd4,d6,f8,h8,h6"
"""c3:e5 then on over d6 only: no later choice."""
HANG_S = 3.0
"""Generous wall-clock bound for searches given 0.1-0.3 s (a loaded machine)."""


@pytest.fixture(scope="module")
def rules() -> Rules:
    return Rules.for_variant("russian")


def player(rules: Rules, **kwargs) -> MCTSPlayer:  # type: ignore[no-untyped-def]
    return MCTSPlayer(rules, build_model(rules, TINY), seed=0, **kwargs)


def test_hop_share_halves_the_time_only_when_a_later_hop_is_a_choice(rules: Rules) -> None:
    assert hop_share(Game(rules)) == 1.0  # quiet moves: one hop each
    chain = Game(rules, start=rules.parse_fen(CHAIN_FEN))
    assert hop_share(chain) == 0.5  # c3:e5, then over d6 or over f6
    chain.play_hop(chain.legal_hops()[0])
    assert len(chain.legal_hops()) == 2 and hop_share(chain) == 1.0  # the last choice takes the rest
    single = Game(rules, start=rules.parse_fen(SINGLE_FEN))
    assert hop_share(single) == 1.0


@pytest.mark.parametrize("seconds", [0.1, 0.3])
def test_a_timed_player_searches_until_its_deadline(rules: Rules, seconds: float) -> None:
    p = player(rules, time_s=seconds)
    game = Game(rules)
    p.choose(game)  # compile, build the sessions
    tic = time.perf_counter()
    move = p.choose(game)
    spent = time.perf_counter() - tic
    assert move in game.legal_moves()
    assert seconds * 0.9 <= spent < seconds + HANG_S
    made = p.last_results[0].simulations
    assert made > 16  # far past what a count would have given: the clock set the budget
    assert p.name == f"mcts:time={seconds:g}"


def test_more_time_makes_more_simulations(rules: Rules) -> None:
    short, long = player(rules, time_s=0.05), player(rules, time_s=0.4)
    game = Game(rules)
    short.choose(game), long.choose(game)
    short.choose(game), long.choose(game)
    assert long.last_results[0].simulations > 2 * short.last_results[0].simulations


def test_a_simulation_cap_bounds_a_timed_search(rules: Rules) -> None:
    p = player(rules, time_s=5.0, simulations_cap=40)
    tic = time.perf_counter()
    p.choose(Game(rules))
    assert p.last_results[0].simulations == 40 and time.perf_counter() - tic < 5.0


def test_analysis_stops_within_a_network_call_of_the_request(rules: Rules) -> None:
    """`should_stop` is polled between network calls: a search on an infinite budget ends
    promptly once it says stop (the Hub's ``stop``)."""
    p = player(rules, simulations=16)
    game = Game(rules)
    analyse(p, game, SearchLimits(nodes=64))  # warm
    asked: list[float] = []
    start = time.perf_counter()

    def stop() -> bool:
        if time.perf_counter() - start > 0.3:
            asked.append(time.perf_counter())
            return True
        return False

    a = analyse(p, game, SearchLimits(time_s=1e6), should_stop=stop)
    latency = time.perf_counter() - asked[0]
    assert a.move in game.legal_moves() and a.nodes > 16
    assert latency < 0.05


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("batch=0", "batch must be >= 1"),
        ("batch=1000", "batch must be <= 256"),
        ("cache=1000", "cache must be 0 or a power of two"),
        ("time=0", "time must be > 0"),
        ("time=soon", "time"),
    ],
)
def test_bad_search_options_are_spec_errors(rules: Rules, tmp_path, options: str, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(PlayerSpecError, match=message):
        parse_player_spec(f"mcts:checkpoint={tmp_path / 'x.pt'},{options}", rules)


def test_spec_options_reach_the_player(rules: Rules) -> None:
    p = parse_player_spec("mcts:model=russian,time=0.25,sims=500,batch=4,cache=1024", rules)
    assert isinstance(p, MCTSPlayer)
    assert (p.time_s, p.simulations_cap, p.search.leaves_per_call) == (0.25, 500, 4)
    assert len(p.search.cache[0]) == 1024
    assert p.name == "mcts:model=russian,time=0.25"
    assert p.runtime.name == "onnx-int8"  # a player's auto on the CPU
    plain = parse_player_spec("mcts:model=russian,runtime=onnx,batch=1,cache=0", rules)
    assert isinstance(plain, MCTSPlayer)
    assert (plain.runtime.name, plain.search.leaves_per_call, len(plain.search.cache[0])) == ("onnx", 1, 0)
    assert plain.time_s is None and plain.budget() == 64


def test_calibration_positions_span_a_game(rules: Rules) -> None:
    """The warm-up's positions reach past the opening: kings on the board in some of them,
    so the 8-bit ranges cover endgames (calibrated on the start alone, 8 bits misjudged
    positions with kings by 0.10 on average)."""
    from tammi_rl.players.mcts import calibration_positions

    games = calibration_positions(rules)
    assert len(games) == 10 and games[0].position == rules.start_position()
    assert not any(g.is_over for g in games)
    kings = [g for g in games if g.position.as_int64()[1] or g.position.as_int64()[3]]
    assert kings, "no position with a king: the calibration would miss the endgame"
    assert calibration_positions(rules)[5].position == games[5].position  # seeded


def test_a_player_quantizes_before_its_first_move(rules: Rules) -> None:
    p = player(rules, runtime="onnx-int8")
    assert p.runtime.quantized  # type: ignore[attr-defined]
