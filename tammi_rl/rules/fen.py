"""FEN in the PDN form pydraughts reads and writes: ``W:W21,22,K23:B1,2,3``.

The first field is the side to move, then one field per colour listing its pieces;
``K`` marks a king. Squares are named in the variant's notation (``c3`` for Russian,
Brazilian and Turkish, ``1``-``32`` for English and Italian). Ranges (``W1-12``) and a
trailing ``.`` are accepted on input.
"""

from __future__ import annotations

from tammi_rl.rules.errors import FenError
from tammi_rl.rules.geometry import Geometry
from tammi_rl.rules.position import BLACK, WHITE, Position


def square_index(geometry: Geometry, name: str) -> int:
    """Internal index of a square named in the variant's notation; `FenError` if unknown."""
    key = name.strip().lower()
    try:
        return _name_index(geometry)[key]
    except KeyError:
        example = ", ".join(geometry.names[:3])
        raise FenError(f"unknown square {name!r} (squares here are named like {example}, ...)") from None


def _name_index(geometry: Geometry) -> dict[str, int]:
    cached = getattr(geometry, "_name_index_cache", None)
    if cached is None:
        cached = {n.lower(): i for i, n in enumerate(geometry.names)}
        object.__setattr__(geometry, "_name_index_cache", cached)
    return cached


def _expand(geometry: Geometry, token: str) -> list[int]:
    if "-" in token:
        lo, hi = token.split("-", 1)
        if not (lo.isdigit() and hi.isdigit()):
            raise FenError(f"range {token!r} must be numeric (like 1-12)")
        a, b = square_index(geometry, lo), square_index(geometry, hi)
        numbers = sorted(int(n) for n in (lo, hi))
        return [square_index(geometry, str(k)) for k in range(numbers[0], numbers[1] + 1)] if a != b else [a]
    return [square_index(geometry, token)]


def parse_fen(geometry: Geometry, fen: str) -> Position:
    """Read a FEN string into a `Position`; `FenError` says what is wrong."""
    text = fen.strip().rstrip(".").replace(" ", "")
    fields = text.split(":")
    if len(fields) != 3 or fields[0].upper() not in ("W", "B"):
        raise FenError(f"FEN {fen!r}: expected 'W|B:W<squares>:B<squares>', e.g. 'W:W21,22,K23:B1,2,3'")
    side = WHITE if fields[0].upper() == "W" else BLACK
    boards = {WHITE: [0, 0], BLACK: [0, 0]}
    seen_colors = set()
    for field in fields[1:]:
        if not field or field[0].upper() not in ("W", "B"):
            raise FenError(f"FEN {fen!r}: piece field {field!r} must start with W or B")
        color = WHITE if field[0].upper() == "W" else BLACK
        if color in seen_colors:
            raise FenError(f"FEN {fen!r}: colour {field[0]} listed twice")
        seen_colors.add(color)
        body = field[1:]
        for token in filter(None, body.split(",")):
            is_king = token[0].upper() == "K"
            name = token[1:] if is_king else token
            try:
                squares = _expand(geometry, name)
            except FenError as exc:
                raise FenError(f"FEN {fen!r}: {exc}") from None
            for sq in squares:
                bit = 1 << sq
                if (boards[WHITE][0] | boards[WHITE][1] | boards[BLACK][0] | boards[BLACK][1]) & bit:
                    raise FenError(f"FEN {fen!r}: square {geometry.names[sq]} is given twice")
                boards[color][1 if is_king else 0] |= bit
    return Position(boards[WHITE][0], boards[WHITE][1], boards[BLACK][0], boards[BLACK][1], side)


def _sort_key(geometry: Geometry, sq: int) -> tuple:
    name = geometry.names[sq]
    return (0, int(name)) if name.isdigit() else (1, name[0], int(name[1:]))


def format_fen(geometry: Geometry, pos: Position) -> str:
    """The FEN of a position (men and kings of one colour in square order)."""
    parts = ["W" if pos.side == WHITE else "B"]
    for color, letter in ((WHITE, "W"), (BLACK, "B")):
        men, kings = pos.men(color), pos.kings(color)
        squares = [sq for sq in range(geometry.n_squares) if (men | kings) >> sq & 1]
        squares.sort(key=lambda sq: _sort_key(geometry, sq))
        tokens = [("K" if kings >> sq & 1 else "") + geometry.names[sq] for sq in squares]
        parts.append(letter + ",".join(tokens))
    return ":".join(parts)
