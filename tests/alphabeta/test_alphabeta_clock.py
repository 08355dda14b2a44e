"""Alpha-beta on a time budget (`tammi_rl.alphabeta.driver`): the budget is a deadline, not a
node cap guessed from the speed, so a search whose first depths the transposition table
answers still uses its time; an iteration cut by the clock keeps the best root move it
resolved. Bounds are generous: the test machine is shared and busy."""

from __future__ import annotations

import time

import numpy as np
import pytest

from tammi_rl.alphabeta import core
from tammi_rl.alphabeta.driver import AlphaBeta, AlphaBetaConfig
from tammi_rl.players import parse_player_spec
from tammi_rl.players.alphabeta import AlphaBetaPlayer
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game

BUDGET_S = 0.3


def _unproven(score: int) -> bool:
    return abs(score) <= core.MATE_BOUND


@pytest.mark.slow
def test_a_warm_table_does_not_cut_the_time_budget_short() -> None:
    """Follow the search's own expected line two plies at a time: the table answers the
    first depths at once. Each unforced, unproven search must still use most of its 0.3 s
    (it stopped after 0.05 s when the node cap came from those depths' speed)."""
    rules = Rules.for_variant("russian")
    search = AlphaBeta(rules, AlphaBetaConfig(depth=None, time=BUDGET_S))
    search.search(rules.start_position(), depth=2)  # compiled code loaded before the clock matters
    pos = rules.start_position()
    spent = []
    for _ in range(5):
        result = search.search(pos)
        if result.depth > 0 and _unproven(result.score):
            spent.append(result.seconds)
        pv = search.principal_variation(pos, result.move, 3)
        if len(pv) < 3:
            break
        pos = rules.play(rules.play(pos, pv[0]), pv[1])
    assert len(spent) >= 3, spent
    assert min(spent) > 0.5 * BUDGET_S, spent
    assert max(spent) < BUDGET_S + 0.5, spent  # checked between slices of ~20 ms


@pytest.mark.slow
def test_the_alphabeta_player_deepens_until_its_time_is_up() -> None:
    """``alphabeta:time=T`` over a game: every searched move takes most of T and never much more."""
    rules = Rules.for_variant("russian")
    player = parse_player_spec(f"alphabeta:time={BUDGET_S}", rules)
    assert isinstance(player, AlphaBetaPlayer) and player.config.depth is None
    game = Game(rules)
    player.search.search(rules.start_position(), depth=2)
    spent, depths = [], []
    while not game.is_over and len(spent) < 6:
        tic = time.perf_counter()
        move = player.choose(game)
        seconds = time.perf_counter() - tic
        assert player.last is not None
        if player.last.depth > 0 and _unproven(player.last.score):
            spent.append(seconds)
            depths.append(player.last.depth)
        game.play(move)
        if not game.is_over:
            game.play(game.legal_moves()[0])
    assert len(spent) >= 4, spent
    assert min(spent) > 0.5 * BUDGET_S and max(spent) < BUDGET_S + 0.5, spent
    assert min(depths) >= 5, depths


def test_a_stop_request_mid_depth_keeps_the_deeper_best_move() -> None:
    """An iteration cut by a stop returns a legal move and the last completed depth."""
    rules = Rules.for_variant("russian")
    search = AlphaBeta(rules, AlphaBetaConfig(depth=None, time=30.0))
    tic = time.perf_counter()
    result = search.search(rules.start_position(), should_stop=lambda: time.perf_counter() - tic > 0.3)
    assert time.perf_counter() - tic < 3.0
    assert result.move in rules.legal_moves(rules.start_position()) and result.depth >= 3


def _iteration(search: AlphaBeta, depth: int, limit: int) -> tuple[int, int, int, bool]:
    pos = search.rules.start_position()
    path = np.zeros(core.MAX_PLY + 2, dtype=np.int64)
    t = search.tables
    score, idx, nodes, aborted = core.search_iteration(
        np.array(pos.as_int64(), dtype=np.int64),
        depth,
        0,
        limit,
        search.rules.rays,
        search.rules.params,
        t.pst,
        t.reach,
        t.mobility,
        search.keys,
        search.tt_key,
        search.tt_val,
        search.killers,
        search.history,
        path,
        0,
        search.men_reversible,
        1,
        search.bufs,
        search.order,
        search.perm,
        search.root_scores,
    )
    return int(score), int(idx), int(nodes), bool(aborted)


def test_an_aborted_iteration_returns_the_best_root_move_it_resolved() -> None:
    """Cut just before its end, an iteration still names a root move, with a score no better
    than the full iteration's best (it saw a subset of the root moves); cut at once, none."""
    rules = Rules.for_variant("russian")
    full = _iteration(AlphaBeta(rules, AlphaBetaConfig(depth=5, tt_bits=16)), 5, 1 << 62)
    assert not full[3] and full[1] >= 0
    cut = _iteration(AlphaBeta(rules, AlphaBetaConfig(depth=5, tt_bits=16)), 5, full[2] - 1)
    assert cut[3] and 0 <= cut[1] < len(rules.legal_moves(rules.start_position()))
    assert cut[0] <= full[0]
    none = _iteration(AlphaBeta(rules, AlphaBetaConfig(depth=5, tt_bits=16)), 5, 1)
    assert none[3] and none[1] == -1
