"""`EnvGame`: the rules' `Game` (draw rules, result) fed by the env's compiled core.

The env already knows, from its compiled turn state, that a completed move is legal
and how many legal moves the next position has. `EnvGame.play_checked` hands both to
`Game` so it neither re-checks the move nor rebuilds the next position's move list
(the list is built lazily, only if someone asks for it). Everything else -- counters,
repetition table, result -- is the real `Game` logic, unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game, GameResult
from tammi_rl.rules.position import Move, Position


class _CountedMoves(Sequence):
    """The legal moves of a position whose count is known; the list is built on first use.

    ``trusted`` (the move about to be played was checked by the env core) makes
    membership tests answer True without building the list.
    """

    __slots__ = ("_rules", "_position", "_count", "_list", "_trusted")

    def __init__(self, rules: Rules, position: Position, count: int, trusted: bool = False) -> None:
        self._rules = rules
        self._position = position
        self._count = count
        self._list: list[Move] | None = None
        self._trusted = trusted

    def _moves(self) -> list[Move]:
        if self._list is None:
            self._list = self._rules.legal_moves(self._position)
        return self._list

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        return self._count > 0

    def __getitem__(self, i):  # type: ignore[override]
        return self._moves()[i]

    def __iter__(self) -> Iterator[Move]:
        return iter(self._moves())

    def __contains__(self, move: object) -> bool:
        return True if self._trusted else move in self._moves()

    def __eq__(self, other: object) -> bool:
        return list(self._moves()) == list(other) if isinstance(other, Sequence) else NotImplemented

    def __repr__(self) -> str:
        return repr(self._moves())


_TRUSTED = _CountedMoves(None, None, 1, trusted=True)  # type: ignore[arg-type]
"""Stands for the current position's moves while a move checked by the env core is played."""


class EnvGame(Game):
    """A `Game` whose per-ply move generation is supplied by the env core."""

    _next_count: int | None = None

    def __init__(self, rules: Rules, start: Position | None = None, max_plies: int | None = None,
                 legal_count: int | None = None) -> None:
        """``legal_count``: the number of legal moves in ``start``, when the caller knows it."""
        self._next_count = legal_count
        try:
            super().__init__(rules, start, max_plies)
        finally:
            self._next_count = None

    def play_checked(self, move: Move, next_count: int) -> GameResult | None:
        """Play ``move`` (already known legal); ``next_count`` = legal moves after it."""
        self._legal = _TRUSTED
        self._next_count = next_count
        try:
            return self.play(move)
        finally:
            self._next_count = None

    def _moves_here(self):  # type: ignore[override]
        if self._legal is None and self._next_count is not None:
            self._legal = _CountedMoves(self.rules, self.position, self._next_count)
        return super()._moves_here()

    def raw_counters(self) -> tuple[int, int, int, int]:
        """``(no_progress_plies, kings_only_plies, three_kings_plies, repetitions)`` of `counters`,
        read without building the dataclass (the env reads them after every move)."""
        try:
            return (self._no_progress, self._kings_only, self._three_kings,
                    self._seen.get(self.position.key(), 1))
        except AttributeError:  # Game's internals changed: take the public, slower path
            c = self.counters()
            return (c.no_progress_plies, c.kings_only_plies, c.three_kings_plies, c.repetitions)

    def legal_moves(self) -> list[Move]:
        """Legal moves of the side to move, as a real list; [] once the game is over."""
        return list(super().legal_moves())
