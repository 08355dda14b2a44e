"""Observation planes: the ONE place their order and meaning are defined.

An observation is ``float32 [N_PLANES, H, W]`` with ``H = W = board_size``, seen from
the side to move: ``obs[p, r, c]`` is row ``r`` counted from the side to move's own back
row and column ``c`` counted from its left (for Black the board is rotated 180 degrees,
the same canonical frame as the actions, see `tammi_rl.rules.actions`). Only playable
squares can be non-zero in the piece planes.

Planes, in order:

====  ====================  =====================================================
 0    OWN_MEN               men of the side to move
 1    OWN_KINGS             kings of the side to move
 2    OPP_MEN               the opponent's men
 3    OPP_KINGS             the opponent's kings
 4    CHAIN_PIECE           the piece that must continue the capture chain (mid-chain only)
 5    JUMPED                pieces already jumped in this chain (still on the board under
                            end-of-chain removal, already gone under immediate removal)
 6    PLAYABLE              1 on every playable square (constant)
 7    NO_PROGRESS           plies without progress / the no-progress limit (constant plane)
 8    KINGS_ONLY            kings-only plies / the kings-only limit (constant plane)
 9    THREE_KINGS           three-kings-vs-one plies / its limit (constant plane)
10    REPETITION            times the position has occurred / the repetition limit
====  ====================  =====================================================

Two more planes follow when the network asks for them (``network.attack_planes``; an
observation then has ``N_PLANES + N_ATTACK_PLANES`` planes, and every encoder writes them
when its buffer has room):

====  ====================  =====================================================
11    OPP_ATTACKED          opponent's pieces the side to move could jump with its next
                            hop (mid-chain: with the piece that must continue)
12    OWN_ATTACKED          pieces of the side to move the opponent could jump, were it
                            the opponent's move (pieces jumped in the chain left out)
====  ====================  =====================================================

They are facts of the rules (`tammi_rl.rules.movegen.jumpable`), as Go programs give their
networks liberties: what is under attack, which a small tower would otherwise have to find
along a flying king's whole diagonal. No judgement of who stands better goes into them.

Ownership targets (`ObservationEncoder.square_owners`) use the same frame: per playable
square, in the canonical square order of the actions, who holds it (`OWN`, `EMPTY`,
`OPPONENT`, the classes of the network's auxiliary ownership output).

Mid-chain, the piece planes show the board as it stands: the moving piece on its
current square (a king once promoted under ``promotion_in_chain = "continue"``).
Counter planes are clipped to [0, 1] and are 0 when the variant has no such rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from tammi_rl.rules import movegen as mg
from tammi_rl.rules import turn as tm
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.position import BLACK, WHITE, Position

OWN_MEN, OWN_KINGS, OPP_MEN, OPP_KINGS = 0, 1, 2, 3
CHAIN_PIECE, JUMPED, PLAYABLE = 4, 5, 6
NO_PROGRESS, KINGS_ONLY, THREE_KINGS, REPETITION = 7, 8, 9, 10
N_PLANES = 11
OPP_ATTACKED, OWN_ATTACKED = 11, 12
N_ATTACK_PLANES = 2
OWN, EMPTY, OPPONENT = 0, 1, 2
"""Ownership classes of a square, seen by the side to move (`ObservationEncoder.square_owners`)."""
PLANE_NAMES = (
    "own_men",
    "own_kings",
    "opp_men",
    "opp_kings",
    "chain_piece",
    "jumped",
    "playable",
    "no_progress",
    "kings_only",
    "three_kings",
    "repetition",
)
ATTACK_PLANE_NAMES = ("opp_attacked", "own_attacked")


def plane_count(attack_planes: bool) -> int:
    """Planes of an observation, with or without the two attack planes (``network.attack_planes``)."""
    return N_PLANES + (N_ATTACK_PLANES if attack_planes else 0)


def plane_names(planes: int) -> tuple[str, ...]:
    """The names of the first ``planes`` planes, in order."""
    names = PLANE_NAMES + ATTACK_PLANE_NAMES
    if planes not in (N_PLANES, N_PLANES + N_ATTACK_PLANES):
        raise ValueError(f"an observation has {N_PLANES} or {N_PLANES + N_ATTACK_PLANES} planes, not {planes}")
    return names[:planes]


@njit(cache=True, _nrt=False)
def encode_planes(mw, kw, mb, kb, cur, jumped, side, counters, tables, obs):
    """Write the planes of a board seen by ``side`` into ``obs`` (``float32 [P, H, W]``, zeroed;
    the attack planes too when ``P`` has room for them): the four bitboards as they stand
    (mid-chain: `tammi_rl.rules.turn.chain_view`), the square of the piece that must continue
    (-1: none), the bitboard of jumped pieces, and the raw ``counters`` (int64 [4]: no
    progress, kings only, three kings, repetitions).

    The one plane encoder: the env and the search trees both call it."""
    if side == 0:
        own_men, own_kings, opp_men, opp_kings = mw, kw, mb, kb
    else:
        own_men, own_kings, opp_men, opp_kings = mb, kb, mw, kw
    nsq = tables[tm.X_NSQ]
    rows = tables[tables[tm.X_CELL_ROW] + side * nsq :]
    cols = tables[tables[tm.X_CELL_COL] + side * nsq :]
    for sq in range(nsq):
        r = rows[sq]
        c = cols[sq]
        obs[PLAYABLE, r, c] = 1.0
        if (own_men >> sq) & 1:
            obs[OWN_MEN, r, c] = 1.0
        elif (own_kings >> sq) & 1:
            obs[OWN_KINGS, r, c] = 1.0
        elif (opp_men >> sq) & 1:
            obs[OPP_MEN, r, c] = 1.0
        elif (opp_kings >> sq) & 1:
            obs[OPP_KINGS, r, c] = 1.0
        if (jumped >> sq) & 1:
            obs[JUMPED, r, c] = 1.0
    if cur >= 0:
        obs[CHAIN_PIECE, rows[cur], cols[cur]] = 1.0
    for i in range(4):
        limit = tables[tm.X_LIMITS + i]
        if limit > 0:
            v = min(1.0, max(0.0, counters[i] / limit))
            if v != 0.0:
                obs[NO_PROGRESS + i, :, :] = v
    if obs.shape[0] > N_PLANES:
        _encode_attacks(own_men, own_kings, opp_men, opp_kings, cur, jumped, side, rows, cols, tables, obs)


@njit(cache=True, _nrt=False)
def _encode_attacks(own_men, own_kings, opp_men, opp_kings, cur, jumped, side, rows, cols, tables, obs):
    """The two attack planes (`OPP_ATTACKED`, `OWN_ATTACKED`) of `encode_planes`."""
    rays = tm.rays_of(tables)
    params = tm.params_of(tables)
    occ = own_men | own_kings | opp_men | opp_kings
    men, kings = own_men, own_kings
    if cur >= 0:  # mid-chain only the moving piece hops
        men &= np.int64(1) << cur
        kings &= np.int64(1) << cur
    ours = mg.jumpable(men, kings, opp_men, opp_kings, side, jumped, occ, rays, params)
    theirs = mg.jumpable(opp_men & ~jumped, opp_kings & ~jumped, own_men, own_kings, 1 - side, 0, occ, rays, params)
    for sq in range(tables[tm.X_NSQ]):
        if (ours >> sq) & 1:
            obs[OPP_ATTACKED, rows[sq], cols[sq]] = 1.0
        if (theirs >> sq) & 1:
            obs[OWN_ATTACKED, rows[sq], cols[sq]] = 1.0


@njit(cache=True)
def observe(state, buf, tables, side, planes=N_PLANES):
    """A fresh observation (``planes`` planes) of the game in ``state`` seen by ``side`` and its
    action mask (empty unless ``side`` is to move)."""
    size = tables[tm.X_SIZE]
    obs = np.zeros((planes, size, size), np.float32)
    mw, kw, mb, kb, cur, jumped = tm.state_chain_view(state, buf, tables)
    encode_planes(mw, kw, mb, kb, cur, jumped, side, state[tm.S_COUNTERS : tm.S_COUNTERS + 4], tables, obs)
    mask = np.zeros(tables[tm.X_NACT], np.int8)
    if side == state[tm.S_SIDE]:
        tm.fill_mask(state, buf, tables, mask)
    return obs, mask


@dataclass(frozen=True, eq=False)
class ObservationEncoder:
    """The shape and per-variant tables of the observations (for inspection and plotting)."""

    size: int
    cell_row: np.ndarray
    """int64 [2, n_squares]: canonical row of each internal square, per side to move."""
    cell_col: np.ndarray
    playable: np.ndarray
    """float32 [H, W]: 1 on playable squares (the same in both frames)."""
    limits: tuple[int, int, int, int]
    """Plies (occurrences for repetition) at which each counter's rule fires; 0 = no rule.
    The counters are `Game.counters` ``no_progress_plies``, ``kings_only_plies``,
    ``three_kings_plies`` and ``repetitions``, in plane order."""
    cells: np.ndarray
    """int64 [n_squares]: the flat index ``row * size + col`` of each canonical square in the
    side to move's frame (where the network reads its per-square outputs)."""
    planes: int = N_PLANES
    """Planes of an observation: `N_PLANES`, or with the attack planes (`plane_count`)."""

    @property
    def shape(self) -> tuple[int, int, int]:
        return (self.planes, self.size, self.size)

    @classmethod
    def for_rules(cls, rules: Rules, attack_planes: bool = False) -> ObservationEncoder:
        size = rules.geometry.size
        cell_row, cell_col = tm.canonical_cells(rules)
        playable = np.zeros((size, size), dtype=np.float32)
        playable[cell_row[0], cell_col[0]] = 1.0
        cells = np.asarray([r * size + c for r, c in rules.geometry.coords], np.int64)
        return cls(size, cell_row, cell_col, playable, tm.counter_limits(rules), cells, plane_count(attack_planes))

    def square_owners(self, position: Position) -> np.ndarray:
        """int8 ``[2, n_squares]``: for each side to move (row 0 White, row 1 Black), who
        holds each playable square of ``position``, in that side's canonical square order:
        `OWN`, `EMPTY` or `OPPONENT`. Self-play labels each sample with the row of its side
        to move at its game's last position (the auxiliary ownership target)."""
        nsq = self.cell_row.shape[1]
        white = np.fromiter(((position.pieces(WHITE) >> sq) & 1 for sq in range(nsq)), bool, nsq)
        black = np.fromiter(((position.pieces(BLACK) >> sq) & 1 for sq in range(nsq)), bool, nsq)
        owners = np.empty((2, len(self.cells)), np.int8)
        for side in (WHITE, BLACK):
            grid = np.full(self.size * self.size, EMPTY, np.int8)
            flat = self.cell_row[side] * self.size + self.cell_col[side]
            grid[flat[white]] = OWN if side == WHITE else OPPONENT
            grid[flat[black]] = OPPONENT if side == WHITE else OWN
            owners[side] = grid[self.cells]
        return owners
