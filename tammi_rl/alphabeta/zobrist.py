"""Zobrist keys: one random 64-bit key per (piece kind, square), plus one for the side to move.

Kinds are 0 white man, 1 white king, 2 black man, 3 black king; the side key is
``keys[4, 0]`` and is XORed in when Black is to move. Keys are int64 (numba's integer
type); every bit, the sign bit included, is random.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from tammi_rl.rules.position import Position, to_int64

KIND_WHITE_MAN, KIND_WHITE_KING, KIND_BLACK_MAN, KIND_BLACK_KING, SIDE_KEY_ROW = 0, 1, 2, 3, 4
N_SQUARES_MAX = 64


def make_keys(seed: int = 0x7A3311) -> np.ndarray:
    """The key table ``int64[5, 64]`` (deterministic for a seed)."""
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 2**64, size=(5, N_SQUARES_MAX), dtype=np.uint64)
    return raw.view(np.int64)


@njit(cache=True, _nrt=False)
def hash_bitboards(men_w, kings_w, men_b, kings_b, side, keys):
    """The Zobrist key of a position given as four int64 bitboards and the side to move."""
    h = np.int64(0)
    boards = (men_w, kings_w, men_b, kings_b)
    for kind in range(4):
        b = boards[kind]
        while b != 0:
            h ^= keys[kind, trailing_zeros(b)]
            b &= b - 1
    if side == 1:
        h ^= keys[SIDE_KEY_ROW, 0]
    return h


def hash_position(pos: Position, keys: np.ndarray) -> int:
    """The Zobrist key of a `Position` (a Python int in int64 range)."""
    return int(hash_bitboards(*(to_int64(b) for b in pos.key()[:4]), pos.side, keys))


DEFAULT_KEYS = make_keys()
"""The key table every search uses unless given another."""
