"""FEN in the PDN form pydraughts reads and writes: ``W:W21,22,K23:B1,2,3``.

The first field is the side to move, then one field per colour listing its pieces;
``K`` marks a king. Squares are named in the variant's notation (``c3`` for Russian,
Brazilian and Turkish, ``1``-``32`` for English and Italian). Ranges (``W1-12``) and a
trailing ``.`` are accepted on input. A FEN must give each side at least one piece: a
side without pieces is a finished game, reached by play, never a position to set up.
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


def fen_example(geometry: Geometry) -> str:
    """A small FEN in this board's own notation (``W:W21,22,K23:B1,2,3`` on 8x8 numbers,
    ``W:Wa3,c3,Ke3:Bb8,d8,f8`` on 8x8 algebraic), for error messages."""
    home, far = geometry.row_mask(2), geometry.row_mask(geometry.size - 1)
    white = [sq for sq in range(geometry.n_squares) if home >> sq & 1][:3]
    black = [sq for sq in range(geometry.n_squares) if far >> sq & 1][:3]
    men = (1 << white[0]) | (1 << white[1])
    return format_fen(geometry, Position(men, 1 << white[2], sum(1 << sq for sq in black), 0, WHITE))


def missing_side(pos: Position) -> str | None:
    """Why ``pos`` cannot be set up (a side without pieces), or None when both sides have one."""
    white, black = pos.men(WHITE) | pos.kings(WHITE), pos.men(BLACK) | pos.kings(BLACK)
    if not white and not black:
        return "no pieces at all"
    if not white:
        return "white has no piece"
    if not black:
        return "black has no piece"
    return None


def parse_fen(geometry: Geometry, fen: str) -> Position:
    """Read a FEN string into a `Position`; `FenError` says what is wrong (also when a
    side has no piece: such a game is already over, so it is not a position to set up)."""
    text = fen.strip().rstrip(".").replace(" ", "")
    if not text:
        raise FenError(f"FEN {fen!r} is empty; give a position such as {fen_example(geometry)!r}")
    fields = text.split(":")
    if len(fields) != 3 or fields[0].upper() not in ("W", "B"):
        raise FenError(f"FEN {fen!r}: expected 'W|B:W<squares>:B<squares>', e.g. {fen_example(geometry)!r}")
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
    pos = Position(boards[WHITE][0], boards[WHITE][1], boards[BLACK][0], boards[BLACK][1], side)
    reason = missing_side(pos)
    if reason is not None:
        raise FenError(f"FEN {fen!r}: {reason} (each side needs at least one piece)")
    return pos


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
