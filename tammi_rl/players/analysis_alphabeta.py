"""`analyse` for the alpha-beta player: iterative deepening within the limits, PV from the TT.

At the start of a turn this is the player's own search (`AlphaBeta.search`) with the
limits of the call (none given: the player's config), reporting each completed depth.
Mid-chain, each whole move that continues the hops played (a single one included) is
searched one ply shallower from its resulting position, the budget (the limits of the
call, else the player's config) split between them, and the best is kept. A forced move
(the only legal one at the start of a turn) is searched the same way: the player's own
search would answer it at depth 0 with the static value of a position nobody searched,
while the user wants to know how good the forced capture is.

The hop shares are the search's real policy: all on the first hop of the chosen move, or
spread over the candidates' first hops when the player randomises (``margin``).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from tammi_rl.alphabeta import core
from tammi_rl.alphabeta.driver import MAX_DEPTH, AlphaBetaResult
from tammi_rl.players.alphabeta import AlphaBetaPlayer
from tammi_rl.players.analysis_common import (
    Analysis,
    ProgressCallback,
    SearchLimits,
    continuing_moves,
    move_shares,
    points_to_value,
)
from tammi_rl.rules.game import Game
from tammi_rl.rules.position import Move, Position

PV_LENGTH = 24
"""Longest principal variation reported, in moves."""


def _limits(player: AlphaBetaPlayer, limits: SearchLimits, share: int = 1) -> dict[str, float | int | None]:
    """Keyword limits for `AlphaBeta.search` (the player's config when the call sets none),
    the time and nodes split ``share`` ways."""
    if limits.time_s is None and limits.depth is None and limits.nodes is None:
        cfg = player.config
        time_s, depth, nodes = cfg.time, cfg.depth, cfg.nodes
    else:
        time_s, depth, nodes = limits.time_s, limits.depth, limits.nodes
    return {
        "depth": min(depth, MAX_DEPTH) if depth is not None else None,
        "time_limit": time_s / share if time_s is not None else None,
        "nodes": max(1, nodes // share) if nodes is not None else None,
    }


def _analysis(
    player: AlphaBetaPlayer,
    position: Position,
    result: AlphaBetaResult,
    game: Game,
    elapsed: float,
    pv: tuple[Move, ...] | None = None,
) -> Analysis:
    """The `Analysis` of one alpha-beta result."""
    mate = result.mate_in
    value = (1.0 if mate > 0 else -1.0) if mate is not None else points_to_value(result.score)
    if pv is None:
        pv = player.search.principal_variation(position, result.move, PV_LENGTH)
    hops = move_shares(game, {m: 1.0 for m in result.candidates})
    return Analysis(result.move, value, None, result.depth, result.nodes, pv, hops, elapsed, result.score / 100.0, mate)


def analyse_alphabeta(
    player: AlphaBetaPlayer,
    game: Game,
    limits: SearchLimits,
    should_stop: Callable[[], bool] | None = None,
    on_progress: ProgressCallback | None = None,
) -> Analysis:
    """See the module docstring."""
    start = time.perf_counter()
    if game.chain_path() or len(game.legal_moves()) == 1:
        return _analyse_each_move(player, game, limits, should_stop, start)
    position = game.position

    def progress(partial: AlphaBetaResult) -> None:
        if on_progress is not None:
            on_progress(_analysis(player, position, partial, game, time.perf_counter() - start))

    result = player.search.search(
        position,
        game.reversible_history(),
        should_stop=should_stop,
        on_iteration=progress if on_progress is not None else None,
        **_limits(player, limits),  # type: ignore[arg-type]
    )
    player.last = result
    return _analysis(player, position, result, game, time.perf_counter() - start)


def _analyse_each_move(
    player: AlphaBetaPlayer,
    game: Game,
    limits: SearchLimits,
    should_stop: Callable[[], bool] | None,
    start: float,
) -> Analysis:
    """Search each move that continues the turn from its resulting position; keep the best."""
    rules = game.rules
    moves = continuing_moves(game)
    history = [*game.reversible_history(), game.position]
    kwargs = _limits(player, limits, share=len(moves))
    if kwargs["depth"] is not None:
        kwargs["depth"] = max(1, int(kwargs["depth"]) - 1)
    best: tuple[int, Move, tuple[Move, ...]] | None = None
    nodes, depth = 0, core.MAX_PLY
    line: tuple[Move, ...]
    for move in moves:
        child = rules.play(game.position, move)
        if not rules.legal_moves(child):
            score, line, reached = core.MATE - 1, (move,), 1
        else:
            reply = player.search.search(child, history, should_stop=should_stop, **kwargs)  # type: ignore[arg-type]
            nodes += reply.nodes
            score = -_step_back(reply.score)
            line = (move, *player.search.principal_variation(child, reply.move, PV_LENGTH - 1))
            reached = reply.depth + 1
        depth = min(depth, reached)
        if best is None or score > best[0]:
            best = (score, move, line)
    assert best is not None
    score, move, pv = best
    elapsed = time.perf_counter() - start
    result = AlphaBetaResult(move, score, depth, nodes, elapsed, (move,))
    return _analysis(player, game.position, result, game, elapsed, pv=pv)


def _step_back(score: int) -> int:
    """A child's mate score seen one ply further up (mate distances count plies)."""
    if score > core.MATE_BOUND:
        return score - 1
    if score < -core.MATE_BOUND:
        return score + 1
    return score
