"""`HopCursor`: the hops played so far in the current turn of a `Game`.

A turn is one whole move, played as a sequence of hop actions (`tammi_rl.env.actions`).
The cursor lists the legal next hops, turns a hop into the whole move once the hops
complete one, and gives the search its root state. It never changes the game: the
caller plays the returned move.
"""

from __future__ import annotations

from tammi_rl.env.actions import ActionCodec
from tammi_rl.mcts.search import RootState
from tammi_rl.rules.game import Game
from tammi_rl.rules.position import Move


class HopCursor:
    """Hop-level view of the current turn of ``game``."""

    def __init__(self, game: Game, codec: ActionCodec) -> None:
        self.game = game
        self.codec = codec
        self.prefix: list[int] = []
        """Squares visited this turn: the start square, then each landing square."""

    def candidates(self) -> list[Move]:
        """The legal whole moves that continue the hops played so far."""
        k = len(self.prefix)
        moves = self.game.legal_moves()
        if k == 0:
            return moves
        return [m for m in moves if len(m.path) >= k and list(m.path[:k]) == self.prefix]

    def legal_actions(self) -> list[int]:
        """Sorted hop actions legal now."""
        k = max(0, len(self.prefix) - 1)
        hop_action = self.codec.hop_action
        side = self.game.position.side
        return sorted({int(hop_action[side, m.path[k], m.path[k + 1]]) for m in self.candidates()})

    def advance(self, action: int) -> Move | None:
        """Play one hop; return the whole move when this hop completes it (and reset)."""
        side = self.game.position.side
        frm = int(self.codec.action_from[side, action])
        to = int(self.codec.action_to[side, action])
        if action not in self.legal_actions():
            raise ValueError(f"hop action {action} ({frm}->{to}) is not legal here; legal: {self.legal_actions()}")
        if not self.prefix:
            self.prefix = [frm]
        self.prefix.append(to)
        path = tuple(self.prefix)
        for move in self.candidates():
            if move.path == path:
                self.prefix = []
                return move
        return None

    def root(self) -> RootState:
        """The search root for the current state (board at turn start, prefix, counters)."""
        c = self.game.counters()
        return RootState(
            board=self.game.position.as_int64(), path=tuple(self.prefix), no_progress=c.no_progress_plies,
            kings_only=c.kings_only_plies, three_kings=c.three_kings_plies, repetition=c.repetitions,
        )
