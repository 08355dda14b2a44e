"""The action codec: one action = one hop, in the side to move's canonical frame.

This module is the ONE place the action encoding is defined; the env, MCTS and the
network's policy head all use it.

Hop
    A hop moves the piece of the side to move from one square along one of the four
    directions by some distance: a quiet move is a single hop, a capture chain is a
    sequence of hops (one per captured piece) played by the same player, who keeps
    the turn until the chain ends. ``distance`` counts squares along the ray from the
    hop's start to its landing square (a jump over an adjacent piece has distance 2;
    a flying king's hop counts every square it passes, the captured one included).

Canonical frame
    Actions are written from the point of view of the side to move. For White the
    frame is the internal one (`tammi_rl.rules.geometry`). For Black the board is
    rotated 180 degrees: internal square ``sq`` becomes ``n_squares - 1 - sq`` and
    direction ``d`` becomes ``3 - d`` (directions are ``geometry.steps`` order, where
    ``3 - d`` is always the opposite direction). So "forward" is the same action for
    both colours, and one network serves both.

Index
    ``max_distance = board_size - 1`` when kings fly (``king_range = "flying"``), else
    ``2`` (a step or a jump), and::

        action = (from_canonical * 4 + direction_canonical) * max_distance + (distance - 1)

    The space is ``Discrete(n_squares * 4 * max_distance)``: Russian/Brazilian 896,
    English/Italian 256, Turkish 1792, International 1800. Many indices can never be
    legal (they leave the board); the mask says which are legal now.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from tammi_rl.rules.engine import Rules
from tammi_rl.rules.position import Move

DIAGONAL_NAMES = ("NE", "NW", "SE", "SW")
ORTHOGONAL_NAMES = ("N", "E", "W", "S")


def canonical_square(n_squares: int, side: int, sq: int) -> int:
    """Internal square -> the side to move's frame (and back: the map is its own inverse)."""
    return n_squares - 1 - sq if side else sq


def canonical_direction(side: int, direction: int) -> int:
    """Internal direction -> the side to move's frame (its own inverse too)."""
    return 3 - direction if side else direction


@dataclass(frozen=True)
class Hop:
    """A decoded action in the INTERNAL frame; ``to`` is -1 when the hop leaves the board."""

    action: int
    side: int
    frm: int
    direction: int
    distance: int
    to: int


@dataclass(frozen=True, eq=False)
class ActionCodec:
    """Encode/decode hops for one variant; lookup tables for the compiled env core."""

    rules: Rules
    n_squares: int
    max_distance: int
    n_actions: int
    hop_action: np.ndarray
    """int64 [2, n_squares, n_squares]: action of the hop ``from -> to`` for each side, -1 if not on a line."""
    action_from: np.ndarray
    """int64 [2, n_actions]: internal start square of each action, per side."""
    action_to: np.ndarray
    """int64 [2, n_actions]: internal landing square of each action, per side (-1 off the board)."""

    @classmethod
    def for_rules(cls, rules: Rules) -> ActionCodec:
        g = rules.geometry
        nsq = g.n_squares
        maxd = g.size - 1 if rules.variant.king_range == "flying" else 2
        n = nsq * 4 * maxd
        hop_action = np.full((2, nsq, nsq), -1, dtype=np.int64)
        action_from = np.full((2, n), -1, dtype=np.int64)
        action_to = np.full((2, n), -1, dtype=np.int64)
        for side in (0, 1):
            for sq in range(nsq):
                for d in range(4):
                    for dist in range(1, maxd + 1):
                        a = (canonical_square(nsq, side, sq) * 4 + canonical_direction(side, d)) * maxd + dist - 1
                        to = int(g.rays[sq, d, dist - 1]) if dist - 1 < g.rays.shape[2] else -1
                        action_from[side, a] = sq
                        action_to[side, a] = to
                        if to >= 0:
                            hop_action[side, sq, to] = a
        return cls(rules, nsq, maxd, n, hop_action, action_from, action_to)

    # --- encode / decode -----------------------------------------------------------
    def encode(self, side: int, frm: int, direction: int, distance: int) -> int:
        """Action of a hop given in the INTERNAL frame by ``side``."""
        if not (0 <= frm < self.n_squares and 0 <= direction < 4 and 1 <= distance <= self.max_distance):
            raise ValueError(f"hop out of range: from {frm}, direction {direction}, distance {distance}")
        c_sq = canonical_square(self.n_squares, side, frm)
        return (c_sq * 4 + canonical_direction(side, direction)) * self.max_distance + distance - 1

    def decode(self, side: int, action: int) -> Hop:
        """The hop ``action`` means when ``side`` is to move (internal frame)."""
        action = int(action)
        if not 0 <= action < self.n_actions:
            raise ValueError(f"action {action} out of range 0..{self.n_actions - 1}")
        dist = action % self.max_distance + 1
        rest = action // self.max_distance
        c_dir, c_sq = rest % 4, rest // 4
        frm = canonical_square(self.n_squares, side, c_sq)
        return Hop(action, side, frm, canonical_direction(side, c_dir), dist, int(self.action_to[side, action]))

    def hop(self, side: int, frm: int, to: int) -> int:
        """Action of the hop ``frm -> to`` (internal squares) by ``side``; ValueError if not on a line."""
        a = int(self.hop_action[side, frm, to])
        if a < 0:
            raise ValueError(f"no hop from {self.rules.square_name(frm)} to {self.rules.square_name(to)}")
        return a

    def move_actions(self, side: int, move: Move) -> list[int]:
        """The hops of a whole move, in order."""
        return [self.hop(side, a, b) for a, b in itertools.pairwise(move.path)]

    # --- text ------------------------------------------------------------------
    def direction_name(self, direction: int) -> str:
        names = ORTHOGONAL_NAMES if self.rules.variant.geometry == "orthogonal" else DIAGONAL_NAMES
        return names[direction]

    def hop_text(self, side: int, action: int, capture: bool | None = None) -> str:
        """Readable hop: ``c3-d4`` (step), ``c3:e5`` / ``22x15`` (capture), or a description if off the board.

        Without ``capture`` given, a hop of distance 1 is written as a step and a
        longer one as a capture (a flying king's long quiet move reads ``a1-h8``
        only when ``capture=False`` is passed).
        """
        h = self.decode(side, action)
        name = self.rules.square_name
        if h.to < 0:
            return f"{name(h.frm)} {self.direction_name(h.direction)} {h.distance}, off the board"
        is_capture = capture if capture is not None else h.distance > 1
        sep = ("x" if self.rules.variant.notation == "numeric" else ":") if is_capture else "-"
        return f"{name(h.frm)}{sep}{name(h.to)}"


_CODECS: dict[object, ActionCodec] = {}


def codec_for(rules: Rules) -> ActionCodec:
    """The codec of an engine (cached per variant)."""
    codec = _CODECS.get(rules.variant)
    if codec is None:
        codec = _CODECS[rules.variant] = ActionCodec.for_rules(rules)
    return codec
