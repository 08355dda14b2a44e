"""Board pictures: ANSI text, RGB arrays (numpy only) and SVG, with the last move and jumped pieces marked.

All three draw a `BoardView`: a position as it stands (mid-chain included), the squares
of the last move (or of the hops played so far this turn), the captured squares and
the piece that must continue. White's back row is at the bottom.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol
from xml.sax.saxutils import escape

import numpy as np

from tammi_rl.rules.engine import Rules
from tammi_rl.rules.geometry import FILES
from tammi_rl.rules.position import COLOR_NAMES, Move, Position
from tammi_rl.rules.results import GameResult


@dataclass(frozen=True)
class BoardView:
    """What a picture shows."""

    rules: Rules
    position: Position
    path: tuple[int, ...] = ()
    """Squares of the last move, or of this turn's hops so far."""
    captured: int = 0
    """Bitboard of captured squares: jumped pieces mid-chain, or the last move's captures."""
    chain_piece: int = -1
    """Square of the piece that must continue a capture chain (-1: none)."""
    status: str = ""


class EnvState(Protocol):
    """What a picture needs of an env (`tammi_rl.env.draughts_env.DraughtsEnv` has it); a
    protocol, so this module does not import the env that imports it."""

    rules: Rules
    last_move: Move | None

    @property
    def to_play(self) -> int: ...

    @property
    def result(self) -> GameResult | None: ...

    def chain_state(self) -> tuple[Position, int, int]: ...

    def chain_path(self) -> list[int]: ...


def env_view(env: EnvState) -> BoardView:
    """The view of an env's current state."""
    pos, cur, jumped = env.chain_state()
    if cur >= 0:
        path, captured = tuple(env.chain_path()), jumped
    elif env.last_move is not None:
        path, captured = env.last_move.path, env.last_move.captured_mask
    else:
        path, captured = (), 0
    if env.result is not None:
        status = f"game over: {env.result}"
    else:
        status = f"{COLOR_NAMES[env.to_play]} to move"
        if cur >= 0:
            status += f", must continue the capture from {env.rules.square_name(cur)}"
    return BoardView(env.rules, pos, path, captured, cur, status)


def position_view(rules: Rules, position: Position, last_move: Move | None = None) -> BoardView:
    """The view of a position (optionally with the move that led to it)."""
    path = last_move.path if last_move else ()
    captured = last_move.captured_mask if last_move else 0
    return BoardView(rules, position, path, captured, -1, f"{COLOR_NAMES[position.side]} to move")


def _cells(view: BoardView):
    """(square, display row from the top, column, piece letter or None) for every playable square."""
    g = view.rules.geometry
    for sq, (r, c) in enumerate(g.coords):
        yield sq, g.size - 1 - r, c, view.position.piece_at(sq)


# --- ANSI --------------------------------------------------------------------------
def render_ansi(view: BoardView, square_numbers: bool = False) -> str:
    """Text board: ``w``/``b`` men, ``W``/``B`` kings, ``.`` empty playable squares (their
    number instead, with ``square_numbers`` in a numeric variant), ``( )`` around squares
    of the last move, ``[ ]`` around captured or jumped squares, ``< >`` around the piece
    that must continue; files and rows at the edges."""
    g = view.rules.geometry
    size = g.size
    numbers = square_numbers and view.rules.variant.notation == "numeric"
    grid = [["   "] * size for _ in range(size)]
    for sq, row, col, piece in _cells(view):
        if piece is None and numbers:
            grid[row][col] = f"{g.names[sq]:>2} "  # two digits leave no room for a mark
            continue
        ch = piece or "."
        if sq == view.chain_piece:
            cell = f"<{ch}>"
        elif view.captured >> sq & 1:
            cell = f"[{ch}]"
        elif sq in view.path:
            cell = f"({ch})"
        else:
            cell = f" {ch} "
        grid[row][col] = cell
    lines = []
    for row in range(size):
        lines.append(f"{size - row:>2} " + "".join(grid[row]))
    lines.append("   " + "".join(f" {FILES[c]} " for c in range(size)))
    if view.rules.variant.notation == "numeric":
        legend = ", ".join(
            f"{g.names[sq]}={FILES[c]}{r + 1}" for sq, (r, c) in enumerate(g.coords) if sq in (0, g.n_squares - 1)
        )
        lines.append(f"   numeric squares run 1 (top left) .. {g.n_squares}: {legend}")
    if view.status:
        lines.append(view.status)
    return "\n".join(lines) + "\n"


# --- RGB ---------------------------------------------------------------------------
LIGHT = (238, 221, 187)
DARK = (120, 85, 60)
HIGHLIGHT = (190, 160, 60)
WHITE_PIECE = (245, 245, 240)
BLACK_PIECE = (30, 30, 30)
OUTLINE = (90, 90, 90)
KING_MARK = (212, 175, 55)
CAPTURE_MARK = (200, 30, 30)
CHAIN_MARK = (40, 140, 220)


def _disc_masks(cell: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    yy, xx = np.mgrid[0:cell, 0:cell]
    d = np.hypot(yy - (cell - 1) / 2, xx - (cell - 1) / 2)
    r = cell * 0.38
    disc = d <= r
    ring = (d <= r) & (d > r - max(1.5, cell * 0.05))
    crown = d <= r * 0.4
    cross = (np.abs(yy - xx) <= 1) | (np.abs(yy + xx - (cell - 1)) <= 1)
    return disc, ring, crown, cross & (d <= r * 0.8)


def render_rgb(view: BoardView, cell: int = 40) -> np.ndarray:
    """``uint8 [size*cell, size*cell, 3]`` picture of the board."""
    size = view.rules.geometry.size
    img = np.empty((size * cell, size * cell, 3), dtype=np.uint8)
    playable = {(row, col) for _, row, col, _ in _cells(view)}
    for row in range(size):
        for col in range(size):
            img[row * cell : (row + 1) * cell, col * cell : (col + 1) * cell] = (
                DARK if (row, col) in playable else LIGHT
            )
    disc, ring, crown, cross = _disc_masks(cell)
    for sq, row, col, piece in _cells(view):
        tile = img[row * cell : (row + 1) * cell, col * cell : (col + 1) * cell]
        if sq in view.path:
            tile[:] = HIGHLIGHT
        if piece is not None:
            tile[disc] = WHITE_PIECE if piece in "wW" else BLACK_PIECE
            tile[ring] = CHAIN_MARK if sq == view.chain_piece else OUTLINE
            if piece.isupper():
                tile[crown] = KING_MARK
        if view.captured >> sq & 1:
            tile[cross] = CAPTURE_MARK
    return img


# --- SVG ---------------------------------------------------------------------------
def _hex(rgb: tuple[int, int, int]) -> str:
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def render_svg(view: BoardView, cell: int = 40) -> str:
    """An SVG document of the board, with file letters and row numbers at the edges."""
    g = view.rules.geometry
    size = g.size
    m = cell // 2  # margin for coordinates
    total = size * cell + 2 * m
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="{total}" viewBox="0 0 {total} {total}">',
        f'<rect width="{total}" height="{total}" fill="#ffffff"/>',
    ]
    playable = {(row, col): sq for sq, row, col, _ in _cells(view)}
    for row in range(size):
        for col in range(size):
            sq = playable.get((row, col))
            fill = LIGHT if sq is None else (HIGHLIGHT if sq in view.path else DARK)
            out.append(
                f'<rect x="{m + col * cell}" y="{m + row * cell}" width="{cell}" height="{cell}" fill="{_hex(fill)}"/>'
            )
    font = f'font-family="sans-serif" font-size="{cell // 3}" text-anchor="middle"'
    for i in range(size):
        out.append(f'<text x="{m + i * cell + cell // 2}" y="{total - m // 4}" {font}>{FILES[i]}</text>')
        out.append(f'<text x="{m // 2}" y="{m + i * cell + cell // 2 + cell // 8}" {font}>{size - i}</text>')
    r = cell * 0.38
    for sq, row, col, piece in _cells(view):
        cx, cy = m + col * cell + cell / 2, m + row * cell + cell / 2
        if piece is not None:
            fill = WHITE_PIECE if piece in "wW" else BLACK_PIECE
            stroke = CHAIN_MARK if sq == view.chain_piece else OUTLINE
            out.append(
                f'<circle cx="{cx}" cy="{cy}" r="{r:.1f}" fill="{_hex(fill)}" stroke="{_hex(stroke)}" '
                f'stroke-width="{max(1.5, cell * 0.05):.1f}"/>'
            )
            if piece.isupper():
                out.append(f'<circle cx="{cx}" cy="{cy}" r="{r * 0.4:.1f}" fill="{_hex(KING_MARK)}"/>')
        if view.captured >> sq & 1:
            d = r * 0.55
            out.append(
                f'<path d="M{cx - d:.1f},{cy - d:.1f}L{cx + d:.1f},{cy + d:.1f}M{cx - d:.1f},{cy + d:.1f}'
                f'L{cx + d:.1f},{cy - d:.1f}" stroke="{_hex(CAPTURE_MARK)}" stroke-width="3"/>'
            )
    if view.status:
        out.append(f"<title>{escape(view.status)}</title>")
    out.append("</svg>")
    return "\n".join(out)


@dataclass(frozen=True)
class SvgBoard:
    """A position that shows itself as SVG in Jupyter (``_repr_svg_``)."""

    view: BoardView

    def _repr_svg_(self) -> str:
        return render_svg(self.view)

    def __str__(self) -> str:
        return render_ansi(self.view)


def board_text(rules: Rules, position: Position, last_move: Move | None = None) -> str:
    """The terminal board of a position: `render_ansi` with square numbers and no status line."""
    path = last_move.path if last_move else ()
    captured = last_move.captured_mask if last_move else 0
    return render_ansi(BoardView(rules, position, path, captured), square_numbers=True)


def board_svg(rules: Rules, position: Position, last_move: Move | None = None) -> SvgBoard:
    """A notebook-displayable board of ``position`` (the variant's rules give its geometry)."""
    return SvgBoard(position_view(rules, position, last_move))


def render_env(env: EnvState, mode: str):
    """The env's current state in one of its render modes."""
    view = env_view(env)
    if mode == "ansi":
        return render_ansi(view)
    if mode == "rgb_array":
        return render_rgb(view)
    if mode == "svg":
        return render_svg(view)
    raise ValueError(f"unknown render mode {mode!r}; use ansi, rgb_array or svg")
