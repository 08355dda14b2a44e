"""Self-play on Ray actors: a `SelfPlayBackend` for the trainer.

    cfg = load_config("configs/russian.yaml", ["distributed.backend=ray", "distributed.address=auto"])
    train(cfg)   # the trainer picks this backend from cfg.distributed.backend

Each actor wraps one `SelfPlayWorker` (batched self-play, its own network copy and
RNG). The learner stays on the driver: `set_weights` puts the weights in Ray's object
store once per publish and the actors fetch them lazily (only when their version is
behind); `play(n)` splits the games among the actors and concatenates their sample
batches, in actor order, for the driver's replay buffer.

Fault tolerance: an actor that dies (node lost, OOM, `ray.kill`) is replaced by a new
one, seeded from (seed, actor, generation), and its whole share is sent again. Every
request carries a `BatchId` (actor, generation, request counter); each share is taken
from exactly one reply, whose id must match the request, so no batch is counted twice,
and a share is only dropped by raising. After ``distributed.max_restarts`` replacements
of one actor the run stops with `DistributedError`.

`state_dict()` holds every actor's RNG state (and, under ``rng``, actor 0's, so the
local backend can resume a Ray run and the other way round).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from tammi_rl.config import Config
from tammi_rl.distributed import RAY_INSTALL_HINT
from tammi_rl.env.observation import ObservationEncoder
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.errors import TammiError
from tammi_rl.rules.position import Move, Position
from tammi_rl.rules.results import GameResult
from tammi_rl.rules.variant import Variant
from tammi_rl.selfplay.samples import SampleBatch
from tammi_rl.selfplay.worker import GameRecord, SelfPlayResult, SelfPlayWorker

START_TIMEOUT_S = 600.0
"""How long a new actor may take to start (waiting for free CPUs included)."""


class DistributedError(TammiError):
    """The Ray backend cannot go on (Ray missing, actors cannot start or keep dying)."""


def import_ray() -> Any:
    """Import Ray, or raise `DistributedError` saying how to install it."""
    try:
        import ray  # lazy: Ray is an optional extra, imported only when a Ray backend starts
    except ImportError as exc:
        raise DistributedError(
            f"distributed.backend=ray needs Ray, which is not installed ({exc}); install it with: {RAY_INSTALL_HINT}"
        ) from None
    return ray


@dataclass(frozen=True)
class BatchId:
    """Names one self-play request: which actor (and which incarnation of it) and which call."""

    actor: int
    generation: int
    request: int


@dataclass
class PlayedGame:
    """A finished game without its `Rules` (which would make every reply ~0.5 MB):
    what the trainer needs for PDN (moves, positions, result)."""

    moves: list[Move]
    positions: list[Position]
    result: GameResult | None


def actor_seed(seed: int, actor: int, generation: int) -> int:
    """Independent, reproducible seed for one incarnation of one actor."""
    return int(np.random.SeedSequence([seed, actor, generation]).generate_state(1)[0])


class SelfPlayActor:
    """The body of one Ray actor: a `SelfPlayWorker` plus the weight version it holds."""

    def __init__(self, variant: Variant, cfg: Config, seed: int, device: str, threads: int) -> None:
        if threads > 0:
            torch.set_num_threads(threads)
        if device != "cpu" and not torch.cuda.is_available():
            device = "cpu"
        self.worker = SelfPlayWorker(Rules.for_variant(variant), cfg, torch.device(device), seed)
        self.version = -1

    def ready(self) -> bool:
        return True

    def play(self, weights: list, version: int, n_games: int, batch_id: BatchId) -> tuple[BatchId, SelfPlayResult]:
        """Play ``n_games`` with weights ``version`` (``weights``: [ObjectRef] or [], fetched only when new)."""
        if version != self.version and weights:
            import ray  # lazy: the optional extra, present in the actor's process (Ray started it)

            self.worker.set_weights(ray.get(weights[0]))
            self.version = version
        res = self.worker.play(n_games)
        games: list[GameRecord] = [PlayedGame(list(g.moves), list(g.positions), g.result) for g in res.games]
        return batch_id, SelfPlayResult(res.samples, games, res.stats)

    def state_dict(self) -> dict:
        return self.worker.state_dict()

    def load_state_dict(self, state: dict) -> None:
        self.worker.load_state_dict(state)


_SUMMED = ("games", "positions", "plies", "decisions", "resigned")
_GAME_WEIGHTED = ("white_win", "draw", "black_win", "resign_false_positive_rate")
_DECISION_WEIGHTED = ("mean_nn_batch", "nn_time_share")


def merge_stats(parts: list[dict[str, float]], seconds: float) -> dict[str, float]:
    """One stats dict for several actors' replies; rates use the driver's wall time ``seconds``."""
    out = {key: float(sum(p.get(key, 0.0) for p in parts)) for key in _SUMMED}
    games, decisions = out["games"], out["decisions"]
    for keys, total, weight in ((_GAME_WEIGHTED, games, "games"), (_DECISION_WEIGHTED, decisions, "decisions")):
        for key in keys:
            out[key] = sum(p.get(key, 0.0) * p.get(weight, 0.0) for p in parts) / total if total else 0.0
    out["seconds"] = seconds
    out["games_per_s"] = games / seconds if seconds > 0 else 0.0
    out["positions_per_s"] = out["positions"] / seconds if seconds > 0 else 0.0
    out["mean_game_length"] = out["plies"] / games if games else 0.0
    return out


@dataclass
class _Slot:
    """One actor position: its current handle and how often it was replaced."""

    index: int
    actor: Any = None
    generation: int = 0
    restarts: int = 0


def _obs_shape(rules: Rules) -> tuple[int, ...]:
    return ObservationEncoder.for_rules(rules).shape


def _stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class RayBackend:
    """Self-play on ``cfg.distributed.num_actors`` Ray actors (see the module docstring)."""

    def __init__(
        self,
        rules: Rules,
        cfg: Config,
        device: torch.device | None = None,
        seed: int = 0,
        log: Callable[[str], None] = _stderr,
        start_timeout_s: float = START_TIMEOUT_S,
    ) -> None:
        self.ray = import_ray()
        self.cfg = cfg
        self.dist = cfg.distributed
        self.variant = rules.variant
        self.obs_shape = _obs_shape(rules)
        self.seed = seed
        self.log = log
        self.start_timeout_s = start_timeout_s
        self.owns_ray = self._connect()
        self._remote_cls = self.ray.remote(SelfPlayActor)
        self._weights: list = []  # [ObjectRef] once weights are published
        self.version = 0
        self.requests = 0
        self.restarts = 0
        """Actor replacements so far (all actors)."""
        self.last_batch_ids: list[BatchId] = []
        self.slots = [_Slot(i) for i in range(self.dist.num_actors)]
        self._warn_resources()
        for slot in self.slots:
            slot.actor = self._spawn(slot)
        self._wait_ready(self.slots)

    # --- cluster and actors --------------------------------------------------------------
    def _connect(self) -> bool:
        """Join (or start) Ray; True when this backend started it and so shuts it down."""
        if self.ray.is_initialized():
            return False
        address = self.dist.address or None
        try:
            self.ray.init(address=address, include_dashboard=False, logging_level=logging.WARNING)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = f"distributed.address={self.dist.address!r}"
            if not self.dist.address and os.environ.get("RAY_ADDRESS"):
                where = f"RAY_ADDRESS={os.environ['RAY_ADDRESS']!r}"
            raise DistributedError(
                f"cannot connect to Ray at {where}: {exc}; start a cluster with "
                "`ray start --head`, or leave the address empty for a local instance"
            ) from None
        return True

    def _warn_resources(self) -> None:
        need = self.dist.num_actors * self.dist.cpus_per_actor
        have = self.ray.cluster_resources().get("CPU", 0.0)
        if need > have:
            self.log(
                f"warning: {self.dist.num_actors} actors x {self.dist.cpus_per_actor} CPUs = {need:g} CPUs, "
                f"but the Ray cluster has {have:g}; some actors wait until CPUs join"
            )

    def _spawn(self, slot: _Slot) -> Any:
        d = self.dist
        device = "cuda" if d.gpus_per_actor > 0 else "cpu"
        threads = max(1, int(d.cpus_per_actor))
        options = self._remote_cls.options(
            num_cpus=d.cpus_per_actor, num_gpus=d.gpus_per_actor, max_restarts=0, max_task_retries=0, name=None
        )
        return options.remote(
            self.variant, self.cfg, actor_seed(self.seed, slot.index, slot.generation), device, threads
        )

    def _wait_ready(self, slots: list[_Slot]) -> None:
        ray = self.ray
        refs = [s.actor.ready.remote() for s in slots]
        try:
            ray.get(refs, timeout=self.start_timeout_s)
        except ray.exceptions.GetTimeoutError:
            raise DistributedError(
                f"self-play actors did not start within {self.start_timeout_s:g}s; the cluster "
                f"needs {self.dist.cpus_per_actor:g} free CPUs (and "
                f"{self.dist.gpus_per_actor:g} GPUs) per actor"
            ) from None

    def _replace(self, slot: _Slot, error: BaseException) -> None:
        """Replace a dead actor by a fresh one (new seed) or raise after too many deaths."""
        if slot.restarts >= self.dist.max_restarts:
            raise DistributedError(
                f"self-play actor {slot.index} died {slot.restarts + 1} times "
                f"(distributed.max_restarts={self.dist.max_restarts}); last error: {error}"
            )
        with contextlib.suppress(Exception):  # already dead, or Ray cannot reach it: replaced either way
            self.ray.kill(slot.actor, no_restart=True)
        slot.restarts += 1
        slot.generation += 1
        self.restarts += 1
        self.log(
            f"warning: self-play actor {slot.index} died ({type(error).__name__}); "
            f"restarting it (restart {slot.restarts}/{self.dist.max_restarts}) and re-sending its games"
        )
        slot.actor = self._spawn(slot)
        self._wait_ready([slot])

    def _call_all(self, jobs: dict[int, tuple[str, tuple]]) -> dict[int, Any]:
        """One method call per actor slot; a call whose actor dies is re-sent to its replacement."""
        ray = self.ray
        dead = (ray.exceptions.RayActorError, ray.exceptions.ActorUnavailableError)
        pending = {self._submit(slot, *job): slot for slot, job in jobs.items()}
        results: dict[int, Any] = {}
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            slot = pending.pop(ready[0])
            try:
                results[slot] = ray.get(ready[0])
            except dead as exc:
                self._replace(self.slots[slot], exc)
                pending[self._submit(slot, *jobs[slot])] = slot
        return results

    def _submit(self, slot: int, method: str, args: tuple) -> Any:
        if method == "play":  # a fresh id per attempt: a reply is accepted only for its own request
            self.requests += 1
            s = self.slots[slot]
            args = (*args, BatchId(slot, s.generation, self.requests))
        return getattr(self.slots[slot].actor, method).remote(*args)

    # --- SelfPlayBackend -----------------------------------------------------------------
    def set_weights(self, state_dict: dict) -> None:
        """Publish weights: one `ray.put`; actors fetch them on their next request."""
        cpu = {k: v.detach().cpu() for k, v in state_dict.items()}
        self._weights = [self.ray.put(cpu)]
        self.version += 1

    def shares(self, n_games: int) -> list[int]:
        """Games per actor for one `play` call."""
        k = len(self.slots)
        if self.dist.games_per_actor > 0:
            return [self.dist.games_per_actor] * k
        return [n_games // k + (i < n_games % k) for i in range(k)]

    def play(self, n_games: int) -> SelfPlayResult:
        """Play ``n_games`` (or ``games_per_actor`` per actor) across the actors; merge their results."""
        start = time.perf_counter()
        restarts_before = self.restarts
        jobs = {i: ("play", (self._weights, self.version, n)) for i, n in enumerate(self.shares(n_games)) if n > 0}
        replies = self._call_all(jobs)
        ids: list[BatchId] = []
        batches, games, stats = [], [], []
        for slot in sorted(replies):
            batch_id, res = replies[slot]
            s = self.slots[slot]
            if batch_id.actor != slot or batch_id.generation != s.generation or batch_id in ids:
                raise DistributedError(f"self-play reply {batch_id} does not match its request to actor {slot}")
            ids.append(batch_id)
            batches.append(res.samples)
            games.extend(res.games)
            stats.append(res.stats)
        self.last_batch_ids = ids
        merged = merge_stats(stats, time.perf_counter() - start)
        merged["actors"] = float(len(self.slots))
        merged["actor_restarts"] = float(self.restarts - restarts_before)
        samples = SampleBatch.concat(batches) if batches else SampleBatch.empty(self.obs_shape)
        return SelfPlayResult(samples, games, merged)

    def state_dict(self) -> dict:
        """Every actor's RNG state and incarnation (``rng``: actor 0's, readable by the local worker)."""
        states = self._call_all({i: ("state_dict", ()) for i in range(len(self.slots))})
        actors = [{"worker": states[s.index], "generation": s.generation, "restarts": s.restarts} for s in self.slots]
        first = actors[0]["worker"]  # also readable by the local worker: RNG and games in progress
        return {
            "rng": first["rng"],
            "games": first.get("games", []),
            "ray": {"actors": actors, "requests": self.requests},
        }

    def load_state_dict(self, state: dict) -> None:
        """Restore every actor from a Ray state, or actor 0 from a local worker's state."""
        saved = state.get("ray", {}).get("actors") or [{"worker": state}]
        if len(saved) != len(self.slots):
            self.log(
                f"note: the checkpoint has {len(saved)} self-play actor state(s) and the run has "
                f"{len(self.slots)} actors; actors without a saved state start from fresh seeds"
            )
        jobs = {}
        for slot, entry in zip(self.slots, saved, strict=False):  # the counts may differ (noted above)
            slot.generation = int(entry.get("generation", 0))
            slot.restarts = int(entry.get("restarts", 0))
            jobs[slot.index] = ("load_state_dict", (entry["worker"],))
        self._call_all(jobs)
        self.requests = int(state.get("ray", {}).get("requests", self.requests))

    def close(self) -> None:
        """Stop the actors (and Ray itself when this backend started it)."""
        for slot in self.slots:
            if slot.actor is not None:
                with contextlib.suppress(Exception):  # closing: an actor that is already gone is fine
                    self.ray.kill(slot.actor, no_restart=True)
                slot.actor = None
        if self.owns_ray and self.ray.is_initialized():
            self.ray.shutdown()


def ray_worker(rules: Rules, cfg: Config, device: torch.device, seed: int) -> RayBackend:
    """`tammi_rl.train.trainer.WorkerFactory` for ``distributed.backend: ray``."""
    return RayBackend(rules, cfg, device, seed)
