"""What every analyser shares: the `Analysis` shape, the `SearchLimits` of a call, and hop helpers.

`tammi_rl.players.analysis` dispatches to the analysers (`analysis_alphabeta`,
`analysis_mcts`); they and it import this module, which imports none of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from tammi_rl.rules.actions import codec_for
from tammi_rl.rules.game import Game
from tammi_rl.rules.position import Move

VALUE_SCALE = 300.0
"""Alpha-beta points (a man = 100) per unit of ``atanh(value)``: value = tanh(score / VALUE_SCALE)."""


@dataclass(frozen=True)
class SearchLimits:
    """Budget of one analysis; None everywhere: the player's own settings."""

    time_s: float | None = None
    """Wall-clock budget for this move."""
    depth: int | None = None
    """Alpha-beta depth cap."""
    nodes: int | None = None
    """MCTS: simulations per searched hop; alpha-beta: node cap."""

    def __post_init__(self) -> None:
        if self.time_s is not None and not self.time_s > 0:
            raise ValueError(f"time_s must be > 0, got {self.time_s}")
        if self.depth is not None and self.depth < 1:
            raise ValueError(f"depth must be >= 1, got {self.depth}")
        if self.nodes is not None and self.nodes < 1:
            raise ValueError(f"nodes must be >= 1, got {self.nodes}")


@dataclass(frozen=True)
class HopStat:
    """One choice for the next hop."""

    hop: int
    """Action index as in `Game.legal_hops` / `Game.play_hop`."""
    start: int
    """Internal square the piece leaves for this hop."""
    end: int
    """Internal square it lands on."""
    prior: float
    """Network prior (0 where the player has none)."""
    visits: int
    """MCTS visits (0 where none)."""
    share: float
    """The search's policy share over the hops here (they sum to 1)."""


@dataclass(frozen=True)
class Analysis:
    """A player's view of a game state (see the module docstring)."""

    move: Move
    """The whole move the player would play."""
    value: float
    """For the side to move, in [-1, 1]."""
    wdl: tuple[float, float, float] | None
    """Win/draw/loss probabilities for the side to move, where the player has them."""
    depth: int
    """Alpha-beta: completed depth; MCTS: length of the PV in moves."""
    nodes: int
    """Alpha-beta: nodes searched; MCTS: simulations summed over the searched hops."""
    pv: tuple[Move, ...]
    """Principal variation, whole moves; ``pv[0] == move``."""
    hops: tuple[HopStat, ...]
    """The choices at the FIRST hop from the given game state."""
    elapsed_s: float
    score: float | None = None
    """Alpha-beta: the score in men (a man = 1.0); None for other players."""
    mate_in: int | None = None
    """Alpha-beta: plies to a forced end (positive: the side to move wins), or None."""


ProgressCallback = Callable[[Analysis], None]
"""Receives intermediate analyses (alpha-beta: one per completed depth)."""


def continuing_moves(game: Game) -> list[Move]:
    """The legal whole moves that continue the hops already played this turn (all of them at
    the start of a turn)."""
    chain = game.chain_path()
    moves = game.legal_moves()
    if not chain:
        return list(moves)
    return [m for m in moves if m.path[: len(chain)] == chain]


def next_hop(game: Game, move: Move) -> int:
    """The hop action that takes ``move`` one step further from the state of ``game``."""
    k = max(0, len(game.chain_path()) - 1)
    return codec_for(game.rules).hop(game.side, move.path[k], move.path[k + 1])


def hop_stat(game: Game, hop: int, share: float, prior: float = 0.0, visits: int = 0) -> HopStat:
    """A `HopStat` of ``hop`` for the side to move in ``game``."""
    codec = codec_for(game.rules)
    side = game.side
    return HopStat(int(hop), int(codec.action_from[side, hop]), int(codec.action_to[side, hop]), prior, visits, share)


def move_shares(game: Game, weights: dict[Move, float]) -> tuple[HopStat, ...]:
    """Hop shares from whole-move weights: each hop gets the summed weight of the moves through it."""
    total = sum(weights.values()) or 1.0
    per_hop: dict[int, float] = {h: 0.0 for h in game.legal_hops()}
    for move, weight in weights.items():
        hop = next_hop(game, move)
        per_hop[hop] = per_hop.get(hop, 0.0) + weight / total
    return tuple(hop_stat(game, h, share) for h, share in sorted(per_hop.items()))


def points_to_value(points: float) -> float:
    """An alpha-beta score (a man = 100) as a value in [-1, 1]."""
    return math.tanh(points / VALUE_SCALE)


def value_to_men(value: float) -> float:
    """The inverse of `points_to_value`, in men (capped at +-50 for a sure result)."""
    v = min(max(value, -0.999999), 0.999999)
    return max(-50.0, min(50.0, VALUE_SCALE * math.atanh(v) / 100.0))
