"""What the asynchronous trainer needs from self-play workers that run beside it.

    pool = ProcessPool(rules, cfg, seed=...)          # or RayPool(...): the same interface
    pool.publish(learner.weights(), version=3)        # workers take it when they next look
    for delivery in pool.poll(timeout=0.5):           # finished games, as they arrive
        replay.add(delivery.result.samples)
    pool.close()                                      # no process is left behind

A pool keeps its workers playing all the time; each worker sends its games as soon as a
few are finished (one `Delivery`: complete games only, never part of one). A worker that
dies is replaced by a new one with a fresh seed; the games it had not sent are lost and
played again by the replacement, so nothing is counted twice (a delivery is counted when
it is received, and only whole deliveries are received). After ``selfplay.max_restarts``
deaths of one worker slot, `poll` raises `WorkerDiedError` naming it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch

from tammi_rl.rules.errors import TammiError
from tammi_rl.rules.position import Move, Position
from tammi_rl.rules.results import GameResult
from tammi_rl.selfplay.worker import END_KEYS, GameRecord, SelfPlayResult


class WorkerDiedError(TammiError):
    """A self-play worker died more often than ``selfplay.max_restarts`` allows, or failed."""


@dataclass
class PlayedGame:
    """A finished game without its `Rules` (which would make every message ~0.5 MB):
    what the trainer needs for PDN (moves, positions, result)."""

    moves: list[Move]
    positions: list[Position]
    result: GameResult | None


def portable_games(games: list[GameRecord]) -> list[GameRecord]:
    """``games`` as `PlayedGame` copies, cheap to send to another process."""
    return [PlayedGame(list(g.moves), list(g.positions), g.result) for g in games]


@dataclass
class Delivery:
    """Finished games from one worker: who sent them, with which weights, and the games."""

    worker: int
    """Worker slot (0 .. pool size - 1)."""
    generation: int
    """How many times this slot's worker was replaced before this one."""
    sequence: int
    """Message number within this worker's life; (worker, generation, sequence) is unique."""
    weights_version: int
    """The published weights version the games were (last) played with."""
    result: SelfPlayResult


class WorkerPool(Protocol):
    """Self-play workers running beside the trainer (`ProcessPool`, `RayPool`)."""

    size: int
    """Worker slots."""
    restarts: int
    """Workers replaced so far (all slots)."""

    def publish(self, weights: dict[str, torch.Tensor], version: int) -> None:
        """Make ``weights`` the ones every worker plays with from its next decision on."""
        ...

    def set_simulations(self, simulations: int) -> None:
        """Make every worker's full searches take ``simulations`` from the next play call it
        starts (progressive simulations): the games in play finish their current delivery at
        the old count, and a new worker starts with the latest one."""
        ...

    def poll(self, timeout: float) -> list[Delivery]:
        """Deliveries received within ``timeout`` seconds (0: only what is already there).

        Replaces dead workers; raises `WorkerDiedError` when one died too often.
        """
        ...

    def close(self) -> None:
        """Stop every worker and free what the pool holds (idempotent)."""
        ...


def worker_seed(seed: int, worker: int, generation: int, epoch: int = 0) -> int:
    """An independent, reproducible seed for one incarnation of one worker; ``epoch`` (the
    iteration a run resumed at) keeps a resumed run from replaying its first games."""
    return int(np.random.SeedSequence([seed, worker, generation, epoch]).generate_state(1)[0])


_SUMMED = (
    "games",
    "positions",
    "plies",
    "decisions",
    "resigned",
    "seconds",
    "nn_seconds",
    "nn_calls",
    "nn_positions",
    "simulations",
    "send_seconds",
    "resign_playouts",
    "resign_false_positives",
    *END_KEYS.values(),
)
_GAME_WEIGHTED = ("white_win", "draw", "black_win")


def merge_stats(parts: list[dict[str, float]], seconds: float) -> dict[str, float]:
    """One stats dict for several deliveries; rates use the trainer's wall time ``seconds``.

    Per-worker times are summed: ``worker_seconds`` (playing plus sending), ``nn_seconds``,
    ``send_seconds``, so their ratios are the workers' time shares.
    """
    out = {key: float(sum(p.get(key, 0.0) for p in parts)) for key in _SUMMED}
    games = out["games"]
    for key in _GAME_WEIGHTED:
        out[key] = sum(p.get(key, 0.0) * p.get("games", 0.0) for p in parts) / games if games else 0.0
    playouts = out["resign_playouts"]
    out["resign_false_positive_rate"] = out["resign_false_positives"] / playouts if playouts else 0.0
    out["mean_nn_batch"] = out["nn_positions"] / out["nn_calls"] if out["nn_calls"] else 0.0
    out["simulations_per_decision"] = out["simulations"] / out["decisions"] if out["decisions"] else 0.0
    worker_seconds = out.pop("seconds") + out["send_seconds"]  # playing, then sending
    out["worker_seconds"] = worker_seconds
    out["nn_time_share"] = out["nn_seconds"] / worker_seconds if worker_seconds > 0 else 0.0
    out["send_time_share"] = out["send_seconds"] / worker_seconds if worker_seconds > 0 else 0.0
    out["seconds"] = seconds
    out["games_per_s"] = games / seconds if seconds > 0 else 0.0
    out["positions_per_s"] = out["positions"] / seconds if seconds > 0 else 0.0
    out["mean_game_length"] = out["plies"] / games if games else 0.0
    return out
