"""What a player thinks of a position: its move, value, principal variation and hop shares.

    analysis = analyse(player, game, SearchLimits(time_s=1.0))
    analysis.move, analysis.value, analysis.pv, analysis.hops

One shape for every player, so the Hub engine and the web page show any of them alike:
alpha-beta (`tammi_rl.players.analysis_alphabeta`), MCTS (`tammi_rl.players.analysis_mcts`,
imported only for an MCTS player: it needs torch) and any other player, such as
`RandomPlayer`, through its `choose`. The shapes and helpers they share are in
`tammi_rl.players.analysis_common`; this module only dispatches.

The game may be mid-chain (hops of a multi-capture already played): ``move`` is then the
whole move from the start of the turn that continues the hops played, and ``hops`` are
the choices for the next hop. Nothing is played on ``game``; the player's own state (a
transposition table, random generator) may advance as when it chooses a move.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from tammi_rl.players.alphabeta import AlphaBetaPlayer
from tammi_rl.players.analysis_common import (
    Analysis,
    HopStat,
    ProgressCallback,
    SearchLimits,
    continuing_moves,
    move_shares,
    value_to_men,
)
from tammi_rl.players.base import Player
from tammi_rl.players.simple import HumanPlayer, RandomPlayer
from tammi_rl.rules.game import Game

__all__ = ["Analysis", "HopStat", "ProgressCallback", "SearchLimits", "analyse", "value_to_men"]


def analyse(
    player: Player,
    game: Game,
    limits: SearchLimits | None = None,
    should_stop: Callable[[], bool] | None = None,
    on_progress: ProgressCallback | None = None,
) -> Analysis:
    """The analysis of ``game`` now by ``player`` within ``limits``; ``should_stop`` (polled
    between alpha-beta slices and between MCTS hops) ends a search early with what it has."""
    if game.is_over:
        raise ValueError(f"cannot analyse a finished game ({game.result})")
    limits = limits or SearchLimits()
    if isinstance(player, AlphaBetaPlayer):
        from tammi_rl.players.analysis_alphabeta import analyse_alphabeta

        return analyse_alphabeta(player, game, limits, should_stop, on_progress)
    mcts = sys.modules.get("tammi_rl.players.mcts")  # loaded whenever an MCTS player exists
    if mcts is not None and isinstance(player, mcts.MCTSPlayer):
        from tammi_rl.players.analysis_mcts import analyse_mcts

        return analyse_mcts(player, game, limits, should_stop)
    if isinstance(player, HumanPlayer):
        raise TypeError("a human player cannot be analysed")
    return analyse_by_choice(player, game)


def analyse_by_choice(player: Player, game: Game) -> Analysis:
    """Any other player: its choice, value 0 and no search. A `RandomPlayer` mid-chain picks
    among the moves that continue the chain; its hop shares are its true odds (moves through
    each hop over all moves, uniform where every hop starts one move)."""
    start = time.perf_counter()
    moves = continuing_moves(game)
    if isinstance(player, RandomPlayer):
        move = player.rng.choice(moves) if game.chain_path() else player.choose(game)
        hops = move_shares(game, {m: 1.0 for m in moves})
    else:
        if game.chain_path():
            raise ValueError(f"{player.name} chooses whole moves only; it cannot continue a capture chain")
        move = player.choose(game)
        hops = move_shares(game, {move: 1.0})
    return Analysis(move, 0.0, None, 0, 0, (move,), hops, time.perf_counter() - start)
