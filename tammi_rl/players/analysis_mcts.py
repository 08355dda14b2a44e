"""`analyse` for the MCTS player: the hops of its turn searched as `MCTSPlayer.choose` does,
with the visit counts, priors and PV of the trees.

Budget per searched hop: ``limits.nodes`` simulations, else with ``limits.time_s`` the search
runs until the move's deadline (a hop that leaves later choices gets half of the time left:
`tammi_rl.players.mcts.hop_share`), else the player's own setting (its simulations or its
time per move). ``should_stop`` is polled between network calls (every few milliseconds), so
a stop ends the search at once with what it has. The value is the root search value; the
WDL is the network's own head at the first state; the PV follows the last tree's
most-visited children past the move. When the move is forced (one legal move from the given
state, a single hop or a whole chain), the position after it is searched instead, the
opponent to move, and the value, WDL and PV are reported for the mover: the value of the
forced move.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import torch

from tammi_rl.mcts.search import MCTSResult
from tammi_rl.players.analysis_common import Analysis, HopStat, SearchLimits, continuing_moves, hop_stat, next_hop
from tammi_rl.players.mcts import TIMED_SIMULATIONS, MCTSPlayer, hop_share
from tammi_rl.rules.game import Game
from tammi_rl.rules.position import Move

PV_HOPS = 64


class _Budget:
    """What each searched hop may spend under the limits (see the module docstring)."""

    def __init__(
        self, player: MCTSPlayer, limits: SearchLimits, start: float, should_stop: Callable[[], bool] | None
    ) -> None:
        seconds = limits.time_s
        if seconds is None and limits.nodes is None:
            seconds = player.time_s
        if limits.nodes is not None:
            self.cap = limits.nodes
        elif seconds is not None:
            self.cap = player.simulations_cap or TIMED_SIMULATIONS
        else:
            self.cap = player.simulations
        self.deadline = start + seconds if seconds is not None else None
        self.should_stop = should_stop

    def search(self, player: MCTSPlayer, game: Game) -> tuple[MCTSResult, int]:
        """Search ``game`` within the budget; the result and the simulations spent."""
        deadline = None
        if self.deadline is not None:
            now = time.perf_counter()
            deadline = now + hop_share(game) * max(0.0, self.deadline - now)
        result = player.analyse(game, self.cap, deadline, self.should_stop)
        return result, result.simulations


def _wdl(player: MCTSPlayer, obs: np.ndarray) -> tuple[float, float, float]:
    """The network's win/draw/loss probabilities for the side to move at ``obs``.

    One small forward in torch on one thread: with torch's default pool of a thread per core,
    a busy machine made this single position take 0.3-0.7 s (threads waiting for each other),
    which a ``stop`` answered after the search would pay for."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.inference_mode():
            _, wdl = player.model(torch.from_numpy(obs[None]).to(player.device))
            p = wdl.float().softmax(-1)[0].cpu().tolist()
    finally:
        torch.set_num_threads(threads)
    return (float(p[0]), float(p[1]), float(p[2]))


def _hop_stats(game: Game, result: MCTSResult) -> tuple[HopStat, ...]:
    total = float(np.sum(result.policy)) or 1.0
    stats = [
        hop_stat(game, int(a), float(result.policy[i]) / total, float(result.prior[i]), int(result.visits[i]))
        for i, a in enumerate(result.actions)
    ]
    return tuple(sorted(stats, key=lambda h: h.hop))


def analyse_mcts(
    player: MCTSPlayer, game: Game, limits: SearchLimits, should_stop: Callable[[], bool] | None = None
) -> Analysis:
    """See the module docstring."""
    start = time.perf_counter()
    budget = _Budget(player, limits, start, should_stop)
    moves = continuing_moves(game)
    if len(moves) == 1:
        return _analyse_forced(player, game, moves[0], budget, start)
    turn = game.copy()
    played: list[int] = []  # every hop of the move, from the given state
    first: MCTSResult | None = None  # the turn's first search: the mover's value and WDL
    last_search: tuple[int, int] | None = None  # (index in played, chosen hop) of the last searched hop
    nodes = first_spent = 0
    move: Move | None = None
    while move is None:
        legal = turn.legal_hops()
        stopped = should_stop is not None and should_stop() and first is not None
        if len(legal) == 1 or stopped:
            action = legal[0] if len(legal) == 1 else _greedy_continuation(turn)
        else:
            result, spent = budget.search(player, turn)
            nodes += spent
            action = result.action
            if first is None:
                first, first_spent = result, spent
            last_search = (len(played), action)
        played.append(action)
        move = turn.play_hop(action)
    assert first is not None  # two moves or more continue the turn: some hop was a choice
    if len(game.legal_hops()) > 1:
        hops = _hop_stats(game, first)
    else:  # a forced first hop: every simulation of the first search went through it
        hops = (hop_stat(game, played[0], 1.0, 1.0, first_spent),)
    pv = _principal_variation(player, game, played, move, last_search)
    return Analysis(
        move=move,
        value=float(first.value),
        wdl=_wdl(player, first.obs),
        depth=len(pv),
        nodes=nodes,
        pv=pv,
        hops=hops,
        elapsed_s=time.perf_counter() - start,
    )


def _analyse_forced(player: MCTSPlayer, game: Game, move: Move, budget: _Budget, start: float) -> Analysis:
    """The only legal move (a single hop or a forced chain): the position after it is searched,
    the opponent to move, and reported for the mover, so the value says how good the forced
    move is (the state before it, searched, would have no choice to count visits on)."""
    after = game.copy()
    played: list[int] = []
    while not played or after.chain_path():
        played.append(next_hop(after, move))
        after.play_hop(played[-1])
    result_after = after.result
    if result_after is not None:  # the move ends the game: its result is the value
        value = 0.0 if result_after.winner is None else (1.0 if result_after.winner == game.side else -1.0)
        wdl = (max(value, 0.0), 1.0 - abs(value), max(-value, 0.0))
        hops = (hop_stat(game, played[0], 1.0, 1.0, 0),)
        return Analysis(move, value, wdl, 1, 0, (move,), hops, time.perf_counter() - start)
    result, spent = budget.search(player, after)
    win, draw, loss = _wdl(player, result.obs)  # the opponent's
    pv = _principal_variation(player, after, [], move, (0, result.action))
    return Analysis(
        move=move,
        value=-float(result.value),
        wdl=(loss, draw, win),
        depth=len(pv),
        nodes=spent,
        pv=pv,
        hops=(hop_stat(game, played[0], 1.0, 1.0, spent),),
        elapsed_s=time.perf_counter() - start,
    )


def _greedy_continuation(game: Game) -> int:
    """After a stop: the first hop of the first move that continues the chain."""
    return next_hop(game, continuing_moves(game)[0])


def _principal_variation(
    player: MCTSPlayer, game: Game, played: list[int], move: Move, last_search: tuple[int, int] | None
) -> tuple[Move, ...]:
    """``move``, then the whole moves along the last tree's most-visited hops past it."""
    pv = [move]
    if last_search is None:
        return tuple(pv)
    index, chosen = last_search
    tail = player.search.principal_hops(0, chosen, PV_HOPS)
    rest = played[index:]
    if tail[: len(rest)] != rest:
        return tuple(pv)
    line = game.copy()
    for action in played:
        line.play_hop(action)
    for action in tail[len(rest) :]:
        if line.is_over or action not in line.legal_hops():
            break
        done = line.play_hop(action)
        if done is not None:
            pv.append(done)
    return tuple(pv)
