"""Move text: write a move in its variant's notation and read one back.

Algebraic variants (Russian, Brazilian, Turkish) write ``c3-d4`` and captures as the
full path joined by colons (``c3:e5:c7``); numeric variants (English, Italian,
International) write ``22-18`` and ``22x15x6``. Reading accepts any of ``-``, ``x``
and ``:`` as separators, any letter case, and either the full path or any part of it
that keeps the start and end squares (``c3:c7`` for ``c3:e5:c7``), so long as exactly
one legal move fits.
"""

from __future__ import annotations

import itertools
import re
from typing import TYPE_CHECKING

from tammi_rl.rules.errors import FenError, MoveError
from tammi_rl.rules.position import COLOR_NAMES, Move, Position

if TYPE_CHECKING:  # engine imports nothing from here; avoid a cycle all the same
    from tammi_rl.rules.engine import Rules

_SEPARATORS = re.compile(r"\s*[-x:]\s*", re.IGNORECASE)
_SQUARE_TEXT = re.compile(r"[a-z]\d{1,2}|\d{1,3}")


def format_move(rules: Rules, move: Move) -> str:
    """The text of ``move`` in the variant's notation (full path for captures)."""
    names = [rules.square_name(sq) for sq in move.path]
    if rules.variant.notation == "algebraic":
        return (":" if move.is_capture else "-").join(names)
    return ("x" if move.is_capture else "-").join(names)


def format_moves(rules: Rules, moves: list[Move]) -> str:
    """Moves as a comma-separated list, for error messages and listings."""
    return ", ".join(format_move(rules, m) for m in moves) or "(none)"


def _describe(rules: Rules, move: Move) -> str:
    """Full-path text, plus the captured squares when the path alone does not say them."""
    caps = ",".join(rules.square_name(sq) for sq in move.captures)
    return f"{format_move(rules, move)} (captures {caps})" if caps else format_move(rules, move)


def split_move_text(rules: Rules, text: str) -> list[int]:
    """The squares named in a move text, as internal indices; `MoveError` if malformed."""
    body = text.strip()
    if not body:
        raise MoveError("empty move text; write a move like " + _example(rules))
    parts = _SEPARATORS.split(body)
    if len(parts) < 2:
        raise MoveError(f"move {text!r}: expected squares joined by '-', 'x' or ':', like {_example(rules)}")
    squares = []
    for part in parts:
        if not part:
            raise MoveError(f"move {text!r}: empty square between separators")
        if not _SQUARE_TEXT.fullmatch(part.lower()):
            names = ", ".join(rules.geometry.names[:3])
            raise MoveError(f"move {text!r}: {part!r} is not a square name (squares here are named like {names}, ...)")
        try:
            squares.append(rules.square(part))
        except FenError as exc:
            raise MoveError(f"move {text!r}: {exc}") from None
    return squares


def _example(rules: Rules) -> str:
    return "c3-d4 or c3:e5" if rules.variant.notation == "algebraic" else "22-18 or 22x15"


def _fits(move: Move, squares: list[int]) -> bool:
    """Whether ``squares`` starts and ends like ``move`` and is a subsequence of its path."""
    if squares[0] != move.start or squares[-1] != move.end or len(squares) > len(move.path):
        return False
    i = 1  # the path index from which the next inner square may be matched
    for sq in squares[1:-1]:
        while i < len(move.path) - 1 and move.path[i] != sq:
            i += 1
        if i >= len(move.path) - 1:
            return False
        i += 1
    return True


def _route_captures(rules: Rules, position: Position, squares: list[int]) -> frozenset[int] | None:
    """The pieces a full capture route would jump, or None if it is not one.

    Each hop must run along one line and pass exactly one enemy piece, and no piece may
    be passed twice. Used to recognise a route the engine folded into an equivalent
    move (same start, end and captured set, e.g. a loop walked the other way round).
    """
    enemy = position.pieces(1 - position.side)
    rays = rules.geometry.rays
    jumped: set[int] = set()
    for a, b in itertools.pairwise(squares):
        hits = [(d, k) for d in range(rays.shape[1]) for k in range(rays.shape[2]) if rays[a, d, k] == b]
        if not hits:
            return None
        d, k = hits[0]
        passed = [int(sq) for sq in rays[a, d, :k] if enemy >> int(sq) & 1]
        if len(passed) != 1 or passed[0] in jumped:
            return None
        jumped.add(passed[0])
    return frozenset(jumped)


def matching_moves(rules: Rules, position: Position, text: str) -> list[Move]:
    """Every legal move the text fits.

    An exact full-path match wins; then paths the text is a start-to-end subsequence
    of; then a full route equivalent to a legal move (same start, end, captured set).
    """
    squares = split_move_text(rules, text)
    legal = rules.legal_moves(position)
    exact = [m for m in legal if list(m.path) == squares]
    fits = exact or [m for m in legal if _fits(m, squares)]
    if fits:
        return fits
    route = _route_captures(rules, position, squares)
    if route is None:
        return []
    return [m for m in legal if m.start == squares[0] and m.end == squares[-1] and frozenset(m.captures) == route]


def parse_move(rules: Rules, position: Position, text: str) -> Move:
    """The one legal move in ``position`` that ``text`` names; `MoveError` says why not."""
    candidates = matching_moves(rules, position, text)
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        legal = rules.legal_moves(position)
        side = COLOR_NAMES[position.side]
        raise MoveError(f"illegal move {text.strip()!r} for {side}; legal moves: {format_moves(rules, legal)}")
    listed = "; ".join(_describe(rules, m) for m in candidates)
    paths = {m.path for m in candidates}
    hint = (
        "give the full path of squares to choose one"
        if len(paths) == len(candidates)
        else "these moves share a path and differ only in what they capture; choose by index from legal_moves()"
    )
    raise MoveError(f"ambiguous move {text.strip()!r} fits {len(candidates)} legal moves: {listed}; {hint}")
