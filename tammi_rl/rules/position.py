"""Positions and moves as small immutable Python values."""

from __future__ import annotations

from dataclasses import dataclass

WHITE, BLACK = 0, 1
COLOR_NAMES = ("white", "black")

_MASK64 = (1 << 64) - 1


def to_int64(bits: int) -> int:
    """A non-negative 64-bit bitboard as the signed int64 numba works with."""
    return bits - (1 << 64) if bits >= 1 << 63 else bits


def from_int64(bits: int) -> int:
    """The signed int64 numba returns, back as a non-negative bitboard."""
    return int(bits) & _MASK64


@dataclass(frozen=True, slots=True)
class Position:
    """A board position: four bitboards (bit i = internal square i) and the side to move."""

    white_men: int
    white_kings: int
    black_men: int
    black_kings: int
    side: int = WHITE

    def men(self, color: int) -> int:
        return self.white_men if color == WHITE else self.black_men

    def kings(self, color: int) -> int:
        return self.white_kings if color == WHITE else self.black_kings

    def pieces(self, color: int) -> int:
        return self.men(color) | self.kings(color)

    @property
    def occupied(self) -> int:
        return self.white_men | self.white_kings | self.black_men | self.black_kings

    def key(self) -> tuple[int, int, int, int, int]:
        """Hashable identity used for repetition counting."""
        return (self.white_men, self.white_kings, self.black_men, self.black_kings, self.side)

    def as_int64(self) -> tuple[int, int, int, int, int]:
        """Arguments for the compiled core."""
        return (
            to_int64(self.white_men),
            to_int64(self.white_kings),
            to_int64(self.black_men),
            to_int64(self.black_kings),
            self.side,
        )

    def piece_at(self, sq: int) -> str | None:
        """'w', 'W', 'b', 'B' (capital = king) or None for an empty square."""
        bit = 1 << sq
        if self.white_men & bit:
            return "w"
        if self.white_kings & bit:
            return "W"
        if self.black_men & bit:
            return "b"
        if self.black_kings & bit:
            return "B"
        return None


@dataclass(frozen=True, slots=True)
class Move:
    """A whole legal move: the squares the piece visits and the pieces it captures.

    ``path[0]`` is the start square, ``path[-1]`` the end square, and every square in
    between a landing square of a capture. ``captures`` lists captured squares in the
    order they were jumped. Squares are internal indices (see `geometry`).
    """

    path: tuple[int, ...]
    captures: tuple[int, ...] = ()
    promotes: bool = False

    @property
    def start(self) -> int:
        return self.path[0]

    @property
    def end(self) -> int:
        return self.path[-1]

    @property
    def is_capture(self) -> bool:
        return bool(self.captures)

    @property
    def captured_mask(self) -> int:
        mask = 0
        for sq in self.captures:
            mask |= 1 << sq
        return mask
