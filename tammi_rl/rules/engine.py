"""`Rules`: one variant's engine, the Python face of the compiled core.

rules = Rules.for_variant("russian")
pos = rules.start_position()
moves = rules.legal_moves(pos)
pos = rules.play(pos, moves[0])
rules.perft(pos, 6)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import numpy as np

from tammi_rl.rules import movegen as mg
from tammi_rl.rules.errors import EngineLimitError
from tammi_rl.rules.fen import format_fen, parse_fen, square_index
from tammi_rl.rules.geometry import Geometry, build_geometry
from tammi_rl.rules.position import BLACK, WHITE, Move, Position, from_int64
from tammi_rl.rules.variant import Variant, load_variant

_CHOICE = {"free": mg.CHOICE_FREE, "maximum": mg.CHOICE_MAXIMUM, "italian": mg.CHOICE_ITALIAN}
_PROMO = {"continue": mg.PROMO_CONTINUE, "stop": mg.PROMO_STOP, "at_end": mg.PROMO_AT_END}


def _direction_mask(geometry: Geometry, color: int, kinds: tuple[str, ...]) -> int:
    """Bitmask of the directions that are 'forward'/'backward'/'sideways' for ``color``."""
    forward = 1 if color == WHITE else -1
    mask = 0
    for d, (dr, _) in enumerate(geometry.steps):
        kind = "sideways" if dr == 0 else ("forward" if dr * forward > 0 else "backward")
        if kind in kinds:
            mask |= 1 << d
    return mask


def build_params(variant: Variant, geometry: Geometry) -> np.ndarray:
    """The int64 parameter vector the compiled core reads (layout: ``movegen.P_*``)."""
    p = np.zeros(mg.N_PARAMS, dtype=np.int64)
    p[mg.P_NSQ] = geometry.n_squares
    p[mg.P_FLYING] = variant.king_range == "flying"
    p[mg.P_CHOICE] = _CHOICE[variant.capture_choice]
    p[mg.P_PROMO] = _PROMO[variant.promotion_in_chain]
    p[mg.P_IMMEDIATE] = variant.capture_removal == "immediate"
    p[mg.P_MEN_CAPTURE_KINGS] = variant.men_capture_kings
    p[mg.P_NO_180] = not variant.king_turn_180
    for color in (WHITE, BLACK):
        p[mg.P_MOVE_DIRS + color] = _direction_mask(geometry, color, variant.man_moves)
        p[mg.P_CAPTURE_DIRS + color] = _direction_mask(geometry, color, variant.man_captures)
        for sq in range(geometry.n_squares):
            reach = 0
            for d in range(4):
                if p[mg.P_CAPTURE_DIRS + color] >> d & 1 and geometry.rays[sq, d, 0] >= 0:
                    reach |= 1 << int(geometry.rays[sq, d, 0])
            p[mg.P_MAN_REACH + 64 * color + sq] = reach - (1 << 64) if reach >= 1 << 63 else reach
        far = geometry.size - 1 if color == WHITE else 0
        far_mask = geometry.row_mask(far)
        p[mg.P_FAR_ROW + color] = far_mask - (1 << 64) if far_mask >= 1 << 63 else far_mask
    return p


def engine_limit_error(where: str, exc: IndexError) -> EngineLimitError:
    """The error for a move-generator buffer overflow (``exc``) in position ``where``."""
    return EngineLimitError(f"{where}: {exc} (a limit of the move generator)")


class engine_limits:
    """Context manager turning the move generator's buffer overflows into an `EngineLimitError`
    naming ``where()`` (called only then). A class, not a generator: it wraps every `Game.play`."""

    __slots__ = ("where",)

    def __init__(self, where: Callable[[], str]) -> None:
        self.where = where

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if kind is IndexError and isinstance(exc, IndexError):
            raise engine_limit_error(self.where(), exc) from None


class Rules:
    """Legal moves, move application and perft for one variant."""

    def __init__(self, variant: Variant) -> None:
        self.variant = variant
        self.geometry = build_geometry(variant)
        self.params = build_params(variant, self.geometry)
        self.rays = self.geometry.rays
        self._buf = np.zeros((mg.MAX_MOVES, mg.N_FIELDS), dtype=np.int64)

    @staticmethod
    @functools.cache
    def _cached(name: str) -> Rules:
        return Rules(load_variant(name))

    @classmethod
    def for_variant(cls, variant: str | Path | Variant) -> Rules:
        """The engine of a shipped variant name, a variant file path, or a `Variant`."""
        if isinstance(variant, Variant):
            return cls(variant)
        if isinstance(variant, str) and not variant.endswith(".toml") and "/" not in variant:
            return cls._cached(variant.lower())
        return cls(load_variant(variant))

    # --- positions -------------------------------------------------------------
    def start_position(self) -> Position:
        """The variant's initial position."""
        g = self.geometry
        white = black = 0
        for row in self.variant.men_rows:
            white |= g.row_mask(row)
            black |= g.row_mask(g.size - 1 - row)
        side = WHITE if self.variant.first_player == "white" else BLACK
        return Position(white, 0, black, 0, side)

    def parse_fen(self, fen: str) -> Position:
        """A position from FEN (``W:W21,22,K23:B1,2,3``, ``W:Wc3,e3:Bd6``: squares in this variant's
        notation); `FenError` when it is empty, malformed, or a side has no piece."""
        return parse_fen(self.geometry, fen)

    def fen(self, pos: Position) -> str:
        """The FEN of ``pos``."""
        return format_fen(self.geometry, pos)

    def square(self, name: str) -> int:
        """Internal index of a square named in this variant's notation (``c3``, ``22``)."""
        return square_index(self.geometry, name)

    def square_name(self, sq: int) -> str:
        return self.geometry.names[sq]

    # --- moves -----------------------------------------------------------------
    def _generate(self, pos: Position) -> int:
        with engine_limits(lambda: self.fen(pos)):
            return mg.generate_moves(*pos.as_int64(), self.rays, self.params, self._buf)

    def _row_to_move(self, i: int) -> Move:
        row = self._buf[i]
        plen = int(row[mg.F_PATH_LEN])
        ncap = int(row[mg.F_NCAP])
        return Move(
            path=tuple(int(s) for s in row[mg.F_PATH : mg.F_PATH + plen]),
            captures=tuple(int(s) for s in row[mg.F_CAPS : mg.F_CAPS + ncap]),
            promotes=bool(row[mg.F_PROMOTES]),
        )

    def legal_moves(self, pos: Position) -> list[Move]:
        """Every legal whole move of the side to move (only captures when one exists)."""
        n = self._generate(pos)
        return [self._row_to_move(i) for i in range(n)]

    def play(self, pos: Position, move: Move) -> Position:
        """The position after ``move`` (assumed legal; see `legal_moves`)."""
        own = 1 << move.start
        color = pos.side
        men, kings = pos.men(color), pos.kings(color)
        dest = 1 << move.end
        if kings & own:
            kings = (kings & ~own) | dest
        else:
            men &= ~own
            if move.promotes:
                kings |= dest
            else:
                men |= dest
        captured = move.captured_mask
        if color == WHITE:
            return Position(men, kings, pos.black_men & ~captured, pos.black_kings & ~captured, BLACK)
        return Position(pos.white_men & ~captured, pos.white_kings & ~captured, men, kings, WHITE)

    def perft(self, pos: Position, depth: int) -> int:
        """Leaf count of whole moves ``depth`` plies below ``pos``."""
        return mg.perft(*pos.as_int64()[:5], depth, self.rays, self.params)

    def perft_divide(self, pos: Position, depth: int) -> list[tuple[Move, int]]:
        """Leaf count below each legal move (depth >= 1)."""
        moves = self.legal_moves(pos)
        if depth <= 1:
            return [(m, 1) for m in moves]
        return [(m, self.perft(self.play(pos, m), depth - 1)) for m in moves]


def bitboard_squares(bits: int) -> list[int]:
    """Internal square indices of the set bits, in increasing order."""
    out = []
    while bits:
        low = bits & -bits
        out.append(low.bit_length() - 1)
        bits ^= low
    return out


__all__ = ["Rules", "bitboard_squares", "build_params", "from_int64"]
