"""Board geometry: playable squares, their names, and the ray tables the compiled core walks.

Squares are indexed 0..n-1 in a fixed internal order: row by row from White's back row
(row 0, the bottom of the board as White sees it) upwards, and left to right within a
row, counting playable squares only. Square ``i`` is bit ``i`` of a bitboard. Names
(``c3``, ``22``) are a notation concern and live here too because they depend only on
the geometry.

Directions are always four: diagonal boards use NE, NW, SE, SW; orthogonal boards
use N, E, W, S (as White sees the board). ``rays[sq, d, k]`` is the k-th square from
``sq`` along direction ``d`` (``-1`` past the edge).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tammi_rl.rules.variant import Variant

DIAGONAL_STEPS = ((1, 1), (1, -1), (-1, 1), (-1, -1))  # NE, NW, SE, SW
ORTHOGONAL_STEPS = ((1, 0), (0, 1), (0, -1), (-1, 0))  # N, E, W, S
FILES = "abcdefghij"


@dataclass(frozen=True, eq=False)
class Geometry:
    """Squares, coordinates, names and ray tables of one variant's board."""

    size: int
    coords: tuple[tuple[int, int], ...]
    """(row, col) of each internal square, row 0 = White's back row, col 0 = White's left."""
    steps: tuple[tuple[int, int], ...]
    """(drow, dcol) of the four directions."""
    rays: np.ndarray
    """int64 [n_squares, 4, size-1]: squares along each direction, -1 past the edge."""
    opposite: tuple[int, ...]
    """Index of the reverse of each direction."""
    names: tuple[str, ...]
    """Each square's name in the variant's notation."""
    index_of_coord: dict[tuple[int, int], int]

    @property
    def n_squares(self) -> int:
        return len(self.coords)

    def row_mask(self, row: int) -> int:
        """Bitboard of the playable squares on one row."""
        return sum(1 << i for i, (r, _) in enumerate(self.coords) if r == row)


def algebraic_name(row: int, col: int) -> str:
    return f"{FILES[col]}{row + 1}"


def build_geometry(variant: Variant) -> Geometry:
    """Build the board of ``variant``: playable squares, names and rays."""
    size = variant.board_size
    if variant.geometry == "orthogonal":
        playable = [(r, c) for r in range(size) for c in range(size)]
        steps = ORTHOGONAL_STEPS
    else:
        parity = 0 if variant.dark_corner == "left" else 1  # a1 dark <=> (row+col) even
        playable = [(r, c) for r in range(size) for c in range(size) if (r + c) % 2 == parity]
        steps = DIAGONAL_STEPS
    index = {rc: i for i, rc in enumerate(playable)}
    rays = np.full((len(playable), 4, size - 1), -1, dtype=np.int64)
    for i, (r, c) in enumerate(playable):
        for d, (dr, dc) in enumerate(steps):
            k, rr, cc = 0, r + dr, c + dc
            while 0 <= rr < size and 0 <= cc < size:
                rays[i, d, k] = index[(rr, cc)]
                k, rr, cc = k + 1, rr + dr, cc + dc
    opposite = tuple(steps.index((-dr, -dc)) for dr, dc in steps)
    if variant.notation == "algebraic":
        names = tuple(algebraic_name(r, c) for r, c in playable)
    else:
        # Numeric: 1 is the top-left playable square as White sees the board, counting
        # left to right, then row by row towards White (the PDN convention).
        order = sorted(range(len(playable)), key=lambda i: (-playable[i][0], playable[i][1]))
        number = {sq: k + 1 for k, sq in enumerate(order)}
        names = tuple(str(number[i]) for i in range(len(playable)))
    return Geometry(
        size=size,
        coords=tuple(playable),
        steps=steps,
        rays=rays,
        opposite=opposite,
        names=names,
        index_of_coord=index,
    )
