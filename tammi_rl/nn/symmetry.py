"""The board's left-right mirror, where a variant has one, and a network evaluation averaged
over it.

A draughts board has few symmetries. The 180-degree turn is already used up: observations and
actions are written from the side to move (`tammi_rl.rules.actions`), so one network serves
both colours. The left-right mirror is a symmetry only where it maps playable squares onto
playable squares and directions onto directions: on the orthogonal Turkish board (all 64
squares) it is; on the diagonal boards it is not, since with an even number of columns it
sends every dark square to a light one. `mirror_for` finds out from the geometry and the start position, so a variant
file needs no flag.

Where it exists, the mirror of a position is an equally good position for the same side, so
the network's value there should be the same and its policy the mirrored one. Averaging the
two readings (`MirrorAveraged`) costs a second leaf in the same batch and removes the part of
the network's error that breaks the symmetry.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tammi_rl.mcts.search import Evaluator
from tammi_rl.rules.actions import codec_for
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.position import Position


@dataclass(frozen=True, eq=False)
class Mirror:
    """The left-right mirror of one variant's board, as index permutations (each its own inverse)."""

    squares: np.ndarray
    """int64 ``[n_squares]``: the square each square mirrors to (internal and canonical order alike)."""
    actions: np.ndarray
    """int64 ``[n_actions]``: the action each action mirrors to, in the side to move's frame."""

    def position(self, position: Position) -> Position:
        """``position`` mirrored (same side to move)."""

        def flip(bits: int) -> int:
            return sum(1 << int(self.squares[sq]) for sq in range(len(self.squares)) if bits >> sq & 1)

        return Position(
            flip(position.white_men),
            flip(position.white_kings),
            flip(position.black_men),
            flip(position.black_kings),
            position.side,
        )

    @staticmethod
    def planes(obs: np.ndarray) -> np.ndarray:
        """Observations ``[..., H, W]`` mirrored: the columns reversed (a copy)."""
        return np.ascontiguousarray(obs[..., ::-1])


def mirror_for(rules: Rules) -> Mirror | None:
    """The mirror of ``rules``' board, or None where the variant has none (every diagonal board
    of even width; any board whose start position is not mirror-symmetric)."""
    g = rules.geometry
    last = g.size - 1
    mirrored_coords = [(r, last - c) for r, c in g.coords]
    if any(rc not in g.index_of_coord for rc in mirrored_coords):
        return None
    mirrored_steps = [(dr, -dc) for dr, dc in g.steps]
    if any(step not in g.steps for step in mirrored_steps):
        return None
    squares = np.array([g.index_of_coord[rc] for rc in mirrored_coords], dtype=np.int64)
    directions = np.array([g.steps.index(step) for step in mirrored_steps], dtype=np.int64)
    codec = codec_for(rules)
    # The canonical frame of Black is the internal one turned by 180 degrees, which commutes
    # with the mirror, so one square and one direction permutation serve both frames.
    action = np.arange(codec.n_actions)
    distance = action % codec.max_distance
    square, direction = divmod(action // codec.max_distance, 4)
    actions = (squares[square] * 4 + directions[direction]) * codec.max_distance + distance
    mirror = Mirror(squares, actions.astype(np.int64))
    start = rules.start_position()
    return mirror if mirror.position(start) == start else None


class MirrorAveraged:
    """An `Evaluator` that reads each position and its mirror in one call and averages them:
    the values, and the policy logits (the mean of log-probabilities, renormalised over the
    legal hops by the search as any logits are)."""

    def __init__(self, evaluate: Evaluator, mirror: Mirror) -> None:
        self.inner = evaluate
        self.mirror = mirror

    def __call__(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """obs float32 ``[L, C, H, W]`` -> (logits float32 ``[L, A]``, values float32 ``[L]``)."""
        n = len(obs)
        logits, values = self.inner(np.concatenate([obs, Mirror.planes(obs)]))
        back = logits[n:, self.mirror.actions]  # the mirror's logit for each action of the position
        return (0.5 * (logits[:n] + back)).astype(np.float32), (0.5 * (values[:n] + values[n:])).astype(np.float32)
