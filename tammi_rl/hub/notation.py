"""Hub positions and moves, both ways, for one variant.

Squares are numbered as pydraughts' `HubEngine` numbers them, so that its
``HubEngine.play(board)`` works unchanged on every board:

* positions count the squares in the standard order: 1 is the top-left playable square
  as White sees the board, then left to right and row by row towards White
  (International 1-50; on 8x8 b8 = 1 and a1 = 29: Scan's position strings, and the order
  of pydraughts' ``initial_hub_fen`` and ``get_fen()`` on every board);
* moves on a board whose own notation is numeric (International) use the same numbers;
  on a board with algebraic notation (Russian, Brazilian) they count from a1 instead:
  a1 = 1, c1 = 2, ..., b2 = 5, ..., h8 = 32, row by row from White's side (pydraughts'
  numbering of those boards' moves, ``Move.hub_move``; the geometry's internal order).

So on 8x8 the start position is ``Wbbbbbbbbbbbbeeeeeeeewwwwwwwwwwww`` (Black's men on
1-12) and White's first moves are ``9-13`` ... ``12-16`` (c3-b4 is ``10-13``).

* position: the side to move (``W``/``B``) then one character per square: ``w``/``b``
  a man, ``W``/``B`` a king, ``e`` empty (``Wbbbb...eeee...wwww``);
* move: ``32-28`` (a quiet move), ``28x19x23``: start x end x every captured piece, in
  any order, landing squares between them left out.

Anything malformed or illegal raises `HubNotationError` with the reason.
"""

from __future__ import annotations

import dataclasses
import re

from tammi_rl.rules.engine import Rules
from tammi_rl.rules.errors import TammiError
from tammi_rl.rules.geometry import build_geometry
from tammi_rl.rules.position import BLACK, WHITE, Move, Position

_PIECES = {"w": (WHITE, False), "W": (WHITE, True), "b": (BLACK, False), "B": (BLACK, True)}
_MOVE = re.compile(r"\d{1,3}(?:[-xX:]\d{1,3})+")


class HubNotationError(TammiError):
    """A Hub position or move that cannot be read, or is not legal here."""


class HubNotation:
    """Hub squares, positions and moves of one variant (see the module docstring)."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        numeric = rules.variant.notation == "numeric"
        standard = rules.geometry if numeric else build_geometry(dataclasses.replace(rules.variant, notation="numeric"))
        self.number_of_square: tuple[int, ...] = tuple(int(name) for name in standard.names)
        """Position number (standard order) of each internal square."""
        self.square_of_number: tuple[int, ...] = _inverse(self.number_of_square)
        """Internal square of position number k + 1."""
        n = len(self.number_of_square)
        self.move_number_of_square: tuple[int, ...] = self.number_of_square if numeric else tuple(range(1, n + 1))
        """Move number of each internal square (algebraic boards: the internal order, a1 = 1)."""
        self.square_of_move_number: tuple[int, ...] = _inverse(self.move_number_of_square)
        """Internal square of move number k + 1."""

    @property
    def n_squares(self) -> int:
        return len(self.square_of_number)

    # --- positions ---------------------------------------------------------------------
    def format_position(self, position: Position) -> str:
        """The Hub string of ``position``."""
        chars = [position.piece_at(sq) or "e" for sq in self.square_of_number]
        return ("W" if position.side == WHITE else "B") + "".join(chars)

    def parse_position(self, text: str) -> Position:
        """The position a Hub string gives; `HubNotationError` says what is wrong with it."""
        n = self.n_squares
        if len(text) != n + 1:
            raise HubNotationError(
                f"position {text!r} has {len(text)} characters; {self.rules.variant.name} needs {n + 1} "
                f"(side to move W or B, then one of w, b, W, B, e for each of the {n} squares)"
            )
        if text[0] not in "WB":
            raise HubNotationError(f"position {text!r}: the first character must be W or B (side to move)")
        boards = [0, 0, 0, 0]  # white men, white kings, black men, black kings
        for k, char in enumerate(text[1:]):
            if char == "e":
                continue
            if char not in _PIECES:
                raise HubNotationError(f"position: square {k + 1} holds {char!r}; use w, b, W, B or e")
            color, king = _PIECES[char]
            boards[2 * color + int(king)] |= 1 << self.square_of_number[k]
        position = Position(boards[0], boards[1], boards[2], boards[3], WHITE if text[0] == "W" else BLACK)
        self._check_men(position)
        return position

    def _check_men(self, position: Position) -> None:
        """A man never stands on its own promotion row (it would have been crowned)."""
        g = self.rules.geometry
        for color, row in ((WHITE, g.size - 1), (BLACK, 0)):
            stuck = position.men(color) & g.row_mask(row)
            if stuck:
                sq = (stuck & -stuck).bit_length() - 1
                name = "white" if color == WHITE else "black"
                raise HubNotationError(
                    f"position: a {name} man on square {self.number_of_square[sq]}, its promotion row (make it a king)"
                )

    # --- moves -------------------------------------------------------------------------
    def format_move(self, move: Move) -> str:
        """``from-to`` or ``fromxtoxcaptured...`` (captured pieces in the order taken)."""
        number = self.move_number_of_square
        if not move.captures:
            return f"{number[move.start]}-{number[move.end]}"
        return "x".join(str(number[sq]) for sq in (move.start, move.end, *move.captures))

    def parse_move(self, position: Position, text: str) -> Move:
        """The legal move of ``position`` that a Hub move names (the first, where routes that
        take the same pieces differ only in the way); `HubNotationError` if none."""
        body = text.strip()
        if not _MOVE.fullmatch(body):
            raise HubNotationError(f"move {text!r}: write it as from-to (32-28) or from x to x captured (28x19x23)")
        numbers = [int(part) for part in re.split(r"[-xX:]", body)]
        bad = [k for k in numbers if not 1 <= k <= self.n_squares]
        if bad:
            raise HubNotationError(f"move {text!r}: square {bad[0]} is not on the board (1-{self.n_squares})")
        squares = [self.square_of_move_number[k - 1] for k in numbers]
        frm, to, taken = squares[0], squares[1], sorted(squares[2:])
        legal = self.rules.legal_moves(position)
        ends = [m for m in legal if m.start == frm and m.end == to]
        if taken:
            ends = [m for m in ends if sorted(m.captures) == taken]
        if ends:  # also "28-19" or "28x19" for a capture when no other move shares its ends
            quiet = [m for m in ends if not m.captures]
            if quiet and "x" not in body.lower():
                return quiet[0]
            if len({tuple(sorted(m.captures)) for m in ends}) == 1 or taken:
                return ends[0]
            listed = " ".join(self.format_move(m) for m in ends)
            raise HubNotationError(f"ambiguous move {body}: name the captured pieces ({listed})")
        texts = sorted((self.format_move(m) for m in legal), key=lambda t: [int(k) for k in re.split("[-x]", t)])
        listed = " ".join(texts) or "(none: the game is over)"
        raise HubNotationError(f"illegal move {body} in {self.format_position(position)}; legal moves: {listed}")


def _inverse(numbers: tuple[int, ...]) -> tuple[int, ...]:
    """The internal square of each number 1..n, from the number of each internal square."""
    squares = [0] * len(numbers)
    for sq, k in enumerate(numbers):
        squares[k - 1] = sq
    return tuple(squares)
