"""Alpha-beta search driver: iterative deepening, time/node limits, near-equal move randomisation.

    search = AlphaBeta(Rules.for_variant("russian"), AlphaBetaConfig(depth=6))
    result = search.search(position)          # AlphaBetaResult: move, score, depth, nodes...
    result.move                               # a Move from rules.legal_moves(position)

Each depth is one call of the compiled `core.search_iteration`; the transposition
table, killers and history persist between depths and between moves of a game
(`new_game` clears them). A time limit is a deadline: with one (or with ``should_stop``)
every depth is searched in node slices of about `POLL_SECONDS` at the measured speed,
and the clock is read between slices, so the search deepens until the deadline and
overruns it by at most about one slice. When the time runs out mid-depth, the best root
move that depth has resolved (its first move is the last depth's best) is played; the
reported depth stays the last completed one.

Determinism: with a depth or node limit (no time limit) the result depends only on the
position, the history and the search state, so a seeded player replays the same game.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tammi_rl.alphabeta import core
from tammi_rl.alphabeta.heuristic import EvalWeights, build_tables, default_weights, evaluate
from tammi_rl.alphabeta.zobrist import DEFAULT_KEYS, hash_position
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.position import Move, Position

MAX_DEPTH = core.MAX_PLY // 2
MIN_SLICE = 2_000
"""Fewest nodes in a slice between deadline checks and ``should_stop`` polls."""
POLL_SECONDS = 0.02
"""With a time limit or ``should_stop``, an iteration runs in node slices of about this long
(at the measured speed) between checks; an interrupted slice's work stays in the
transposition table, so the next slice of the same depth goes on nearly where it stopped."""
GUESS_NPS = 5e5
"""Nodes per second assumed until a slice or an iteration lasts long enough to measure."""
RATE_MIN_SECONDS = 2e-3
"""A call shorter than this (often one the transposition table answers) does not set the speed."""


@dataclass(frozen=True)
class AlphaBetaConfig:
    """Limits and options of one alpha-beta player."""

    depth: int | None = 6
    """Maximum nominal depth in plies (None: as deep as the time allows)."""
    time: float | None = None
    """Seconds per move (None: no time limit)."""
    nodes: int | None = None
    """Node budget per move (None: no limit)."""
    margin: int = 0
    """Randomise among root moves scoring within this many points (a man = 100) of the best."""
    forced_extension: bool = True
    """A position with a single legal move does not use up depth."""
    tt_bits: int = 20
    """The transposition table holds 2**tt_bits entries (16 bytes each)."""
    weights: Mapping[str, int] = field(default_factory=dict)
    """Evaluation weight overrides (see `EvalWeights`)."""

    def __post_init__(self) -> None:
        if self.depth is None and self.time is None and self.nodes is None:
            raise ValueError("alpha-beta needs a limit: depth, time or nodes")
        if self.depth is not None and not 1 <= self.depth <= MAX_DEPTH:
            raise ValueError(f"depth must be in 1..{MAX_DEPTH}, got {self.depth}")
        if self.time is not None and self.time <= 0:
            raise ValueError(f"time must be > 0 seconds, got {self.time}")
        if self.nodes is not None and self.nodes < 1:
            raise ValueError(f"nodes must be >= 1, got {self.nodes}")
        if self.margin < 0:
            raise ValueError(f"margin must be >= 0, got {self.margin}")
        if not 4 <= self.tt_bits <= 28:
            raise ValueError(f"tt_bits must be in 4..28, got {self.tt_bits}")


@dataclass(frozen=True)
class AlphaBetaResult:
    """The outcome of one search."""

    move: Move
    score: int
    """Score of ``move`` for the side to move (a man = 100; beyond ±`core.MATE_BOUND`: a forced result)."""
    depth: int
    """Deepest completed iteration (0: the move was forced, no search)."""
    nodes: int
    seconds: float
    candidates: tuple[Move, ...]
    """Root moves within the margin of the best (just ``(move,)`` without randomisation)."""

    @property
    def nps(self) -> float:
        return self.nodes / self.seconds if self.seconds > 0 else 0.0

    @property
    def mate_in(self) -> int | None:
        """Plies to a forced end (positive: the side to move wins), or None."""
        if abs(self.score) <= core.MATE_BOUND:
            return None
        plies = core.MATE - abs(self.score)
        return plies if self.score > 0 else -plies


class AlphaBeta:
    """A reusable alpha-beta searcher for one variant (holds the tables between moves)."""

    def __init__(self, rules: Rules, config: AlphaBetaConfig | None = None, seed: int | None = None) -> None:
        self.rules = rules
        self.config = config or AlphaBetaConfig()
        self.weights: EvalWeights = default_weights(rules).with_overrides(self.config.weights)
        self.tables = build_tables(rules, self.weights)
        self.keys = DEFAULT_KEYS
        size = 1 << self.config.tt_bits
        self.tt_key = np.zeros(size, dtype=np.int64)
        self.tt_val = np.zeros(size, dtype=np.int64)
        self.killers = np.full((core.MAX_PLY + 1, 2), -1, dtype=np.int64)
        self.history = np.zeros((2, 64, 64), dtype=np.int64)
        self.bufs, self.order, self.perm = core.allocate_buffers()
        self.root_scores = np.empty(len(self.bufs[0]), dtype=np.int64)
        self.men_reversible = int(set(rules.variant.man_moves) != {"forward"})
        self.rng = random.Random(seed)

    def new_game(self, seed: int | None = None) -> None:
        """Forget everything learnt in earlier searches; reseed the randomisation if given a seed."""
        self.tt_key[:] = 0
        self.tt_val[:] = 0
        self.killers[:] = -1
        self.history[:] = 0
        if seed is not None:
            self.rng = random.Random(seed)

    def evaluate(self, position: Position) -> int:
        """Static evaluation of ``position`` for the side to move."""
        t = self.tables
        return int(evaluate(*position.as_int64(), t.pst, t.reach, t.mobility))

    def search(
        self,
        position: Position,
        history: Sequence[Position] = (),
        depth: int | None = None,
        time_limit: float | None = None,
        nodes: int | None = None,
        should_stop: Callable[[], bool] | None = None,
        on_iteration: Callable[[AlphaBetaResult], None] | None = None,
    ) -> AlphaBetaResult:
        """Best move of ``position``; ``history``: earlier positions since the last irreversible move.

        ``depth``, ``time_limit`` and ``nodes`` override the config's limits for this call.
        ``should_stop`` (polled about every `POLL_SECONDS` once depth 1 is done) ends the
        search early with the deepest completed iteration (or the best root move the
        unfinished one resolved, as the deadline does); ``on_iteration`` receives the
        result of each completed depth (for progress reports such as Hub ``info`` lines).
        """
        start = time.perf_counter()
        cfg = self.config
        if depth is None and time_limit is None and nodes is None:
            depth, time_limit, nodes = cfg.depth, cfg.time, cfg.nodes
        moves = self.rules.legal_moves(position)
        if not moves:
            raise ValueError(f"no legal moves in {self.rules.fen(position)}: the game is over")
        if len(moves) == 1:
            return AlphaBetaResult(moves[0], self.evaluate(position), 0, 0, time.perf_counter() - start, (moves[0],))
        max_depth = MAX_DEPTH if depth is None else depth
        node_cap = nodes if nodes is not None else 1 << 62
        deadline = start + time_limit if time_limit is not None else None
        sliced = deadline is not None or should_stop is not None

        path = np.zeros(len(history) + core.MAX_PLY + 2, dtype=np.int64)
        for i, pos in enumerate(history):
            path[i] = hash_position(pos, self.keys)
        root = np.array(position.as_int64(), dtype=np.int64)
        self.history >>= 1  # age the history heuristic
        t = self.tables
        total = 0
        best: tuple[int, int, int, np.ndarray] | None = None
        partial: tuple[int, int, np.ndarray] | None = None  # the unfinished depth's best root move so far
        rate = GUESS_NPS
        d = 1
        while d <= max_depth:
            limit = node_cap - total
            polled = False
            if best is None:
                limit = max(limit, 1 << 62)  # always finish depth 1
            elif sliced:
                if limit <= 0 or (should_stop is not None and should_stop()):
                    break
                if deadline is not None:
                    left = deadline - time.perf_counter()
                    if left <= 0:
                        break
                    piece = int(min(POLL_SECONDS, left) * rate)
                else:
                    piece = int(POLL_SECONDS * rate)
                piece = max(piece, MIN_SLICE)
                if piece < limit:  # a slice: the deadline and stop requests are checked between slices
                    limit, polled = piece, True
            tic = time.perf_counter()
            score, idx, n, aborted = core.search_iteration(
                root,
                d,
                cfg.margin,
                limit,
                self.rules.rays,
                self.rules.params,
                t.pst,
                t.reach,
                t.mobility,
                self.keys,
                self.tt_key,
                self.tt_val,
                self.killers,
                self.history,
                path,
                len(history),
                self.men_reversible,
                int(cfg.forced_extension),
                self.bufs,
                self.order,
                self.perm,
                self.root_scores,
            )
            total += int(n)
            took = time.perf_counter() - tic
            if took > RATE_MIN_SECONDS:  # long enough to measure the speed (iterations the TT answers are not)
                rate = int(n) / took
            elapsed = time.perf_counter() - start
            if aborted:
                if idx >= 0 and best is not None:
                    partial = (int(score), int(idx), self.root_scores[: len(moves)].copy())
                if polled:  # only the slice ran out: search this depth on (the TT keeps the work done)
                    continue
                break
            partial = None
            best = (int(score), int(idx), d, self.root_scores[: len(moves)].copy())
            if on_iteration is not None:
                on_iteration(AlphaBetaResult(moves[idx], int(score), d, total, elapsed, (moves[idx],)))
            if abs(score) > core.MATE_BOUND:
                break
            d += 1
        assert best is not None
        if partial is not None:  # the clock ran out mid-depth: the deeper search's best resolved move
            best = (partial[0], partial[1], best[2], partial[2])
        assert best is not None
        score, idx, reached, root_scores = best
        chosen = idx
        candidates: tuple[Move, ...] = (moves[idx],)
        if cfg.margin > 0 and abs(score) <= core.MATE_BOUND:
            near = [i for i in range(len(moves)) if root_scores[i] >= score - cfg.margin]
            if idx not in near:  # cannot happen, but never lose the best move
                near.append(idx)
            near.sort()
            chosen = self.rng.choice(near)
            candidates = tuple(moves[i] for i in near)
            score = int(root_scores[chosen])
        return AlphaBetaResult(moves[chosen], score, reached, total, time.perf_counter() - start, candidates)

    def principal_variation(self, position: Position, first: Move, length: int = 24) -> tuple[Move, ...]:
        """``first`` then the best moves the transposition table holds below it (at most ``length``
        moves, stopping at a position seen before or one the table does not know)."""
        pv = [first]
        seen = {position.key()}
        pos = self.rules.play(position, first)
        while len(pv) < length and pos.key() not in seen:
            seen.add(pos.key())
            slot = core.tt_probe(self.tt_key, hash_position(pos, self.keys))
            if slot < 0:
                break
            index = ((int(self.tt_val[slot]) >> 42) & 0x7FF) - 1
            moves = self.rules.legal_moves(pos)
            if not 0 <= index < len(moves):
                break
            pv.append(moves[index])
            pos = self.rules.play(pos, moves[index])
        return tuple(pv)


def config_from_dict(options: Mapping[str, Any]) -> AlphaBetaConfig:
    """A `AlphaBetaConfig` from a plain dict (unknown keys are errors that name the key)."""
    known = set(AlphaBetaConfig.__dataclass_fields__)
    for key in options:
        if key not in known:
            raise ValueError(f"unknown alpha-beta option {key!r}; known options: {', '.join(sorted(known))}")
    return AlphaBetaConfig(**options)
