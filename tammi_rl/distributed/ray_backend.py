"""Self-play on Ray actors, for more than one machine: `RayPool`, a `WorkerPool`.

    cfg = load_config("configs/russian.yaml", ["distributed.backend=ray", "distributed.address=auto"])
    train(cfg)   # the trainer builds RayPool(cfg, seed=cfg.seed, epoch=...) from cfg.distributed

Each of ``distributed.num_actors`` actors wraps one `SelfPlayWorker` (its own network
copy, compiled search and RNG; on CUDA when ``gpus_per_actor`` > 0 and the node has
one) and plays all the time, like a `ProcessPool` worker: the pool keeps exactly one
``play`` call outstanding per actor, each finishing a few games (`GAMES_PER_MESSAGE`),
and answers every reply at once with the next call. The learner stays on the driver:
`publish` puts the weights in Ray's object store once and every later call carries the
reference; an actor fetches it only when its version is behind. Each call also carries the
simulations a full search (progressive simulations move it). Back-pressure is the
same as with processes: a reply the trainer has not polled waits in the object store
and its actor waits with it. Actors are spread over the cluster's nodes (``SPREAD``).

Faults: an actor that dies (its node lost, out of memory, `ray.kill`) is replaced by a
new one seeded from (seed, slot, generation, epoch); the games it had not sent are played
again. Every call carries a sequence number and a reply is taken only for the call
outstanding on its slot and generation, so nothing is counted twice. After
``selfplay.max_restarts`` deaths of one slot `poll` raises `WorkerDiedError` naming it; a
Python error inside an actor raises it at once, with the actor's traceback (it would
recur). Ray itself is imported only when a pool starts.
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

import torch

from tammi_rl.config import Config
from tammi_rl.distributed import RAY_INSTALL_HINT
from tammi_rl.distributed.pool import Delivery, WorkerDiedError, portable_games, worker_seed
from tammi_rl.distributed.processes import GAMES_PER_MESSAGE
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.errors import TammiError
from tammi_rl.selfplay.worker import SelfPlayResult, SelfPlayWorker

START_TIMEOUT_S = 600.0
"""How long a new actor may take to start (waiting for free CPUs included)."""


class DistributedError(TammiError):
    """The Ray pool cannot go on (Ray missing or unreachable, actors that cannot start)."""


def import_ray() -> Any:
    """Import Ray, or raise `DistributedError` saying how to install it."""
    try:
        import ray  # lazy: Ray is an optional extra, imported only when a Ray pool starts
    except ImportError as exc:
        raise DistributedError(
            f"distributed.backend=ray needs Ray, which is not installed ({exc}); install it with: {RAY_INSTALL_HINT}"
        ) from None
    return ray


class SelfPlayActor:
    """The body of one Ray actor: a `SelfPlayWorker` and the weights version it holds."""

    def __init__(self, cfg: Config, seed: int, device: str, threads: int) -> None:
        torch.set_num_threads(max(1, threads))
        if device != "cpu" and not torch.cuda.is_available():
            device = "cpu"
        self.worker = SelfPlayWorker(Rules.for_variant(cfg.variant), cfg, torch.device(device), seed)
        self.version = -1

    def ready(self) -> str:
        """The id of the node this actor runs on (answered once it is constructed)."""
        import ray  # lazy: present in the actor's process (Ray started it)

        return str(ray.get_runtime_context().get_node_id())

    def play(
        self, weights_refs: list, version: int, n_games: int, sequence: int, simulations: int
    ) -> tuple[int, int, SelfPlayResult]:
        """Play until ``n_games`` games have finished, with weights ``version`` (``weights_refs``:
        [ObjectRef], fetched only when this actor holds an older version) and ``simulations``
        a full search."""
        if version != self.version and weights_refs:
            import ray  # lazy: present in the actor's process (Ray started it)

            self.worker.set_weights(ray.get(weights_refs[0]))
            self.version = version
        self.worker.set_simulations(simulations)
        res = self.worker.play(n_games)
        return sequence, self.version, SelfPlayResult(res.samples, portable_games(res.games), res.stats)


@dataclass
class _Slot:
    """One actor position: its current actor, its calls in flight and how often it died."""

    index: int
    actor: Any = None
    generation: int = 0
    """How many times this slot's actor was replaced."""
    deaths: int = 0
    sequence: int = 0
    """The sequence number of the ``play`` call outstanding on this actor."""
    play_ref: Any = None
    ready_ref: Any = None
    """The actor's ``ready`` reply, until it comes (then ``node`` is known)."""
    deadline: float = 0.0
    """When a starting actor must have answered ``ready``."""
    node: str = ""


def _stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__


class RayPool:
    """Self-play on ``cfg.distributed.num_actors`` Ray actors (a `tammi_rl.distributed.pool.WorkerPool`)."""

    def __init__(
        self,
        cfg: Config,
        seed: int,
        *,
        epoch: int = 0,
        games_per_message: int = GAMES_PER_MESSAGE,
        log: Callable[[str], None] = _stderr,
        start_timeout_s: float = START_TIMEOUT_S,
    ) -> None:
        self.ray = import_ray()
        self.cfg = cfg
        self.dist = cfg.distributed
        self.size = self.dist.num_actors
        self.seed = seed
        self.epoch = epoch
        self.games_per_message = games_per_message
        self.max_restarts = cfg.selfplay.max_restarts
        self.restarts = 0
        """Actors replaced so far (all slots)."""
        self.log = log
        self.start_timeout_s = start_timeout_s
        self.owns_ray = self._connect()
        self._remote_cls = self.ray.remote(SelfPlayActor)
        self._slots = [_Slot(i) for i in range(self.size)]
        self._refs: dict[Any, tuple[_Slot, int, str]] = {}
        """Every call in flight: ObjectRef -> (slot, generation, "play" | "ready")."""
        self._weights: Any = None
        """The ObjectRef of the newest published weights (None before the first publish)."""
        self._version = -1
        self._simulations = cfg.mcts.simulations
        """The simulations of a full search that every ``play`` call carries (`set_simulations`)."""
        self._started = False
        self._closed = False
        self._warn_resources()

    # --- cluster and actors --------------------------------------------------------------
    def _connect(self) -> bool:
        """Join (or start) Ray; True when this pool started it and so shuts it down."""
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
        have = self.ray.cluster_resources()
        for kind, per_actor in (("CPU", self.dist.cpus_per_actor), ("GPU", self.dist.gpus_per_actor)):
            need = self.size * per_actor
            if need > have.get(kind, 0.0):
                self.log(
                    f"warning: {self.size} actors x {per_actor:g} {kind}s = {need:g} {kind}s, but the Ray "
                    f"cluster has {have.get(kind, 0.0):g}; some actors wait until {kind}s join"
                )

    def _start(self, slot: _Slot) -> None:
        """A new actor for ``slot`` (asynchronously: Ray queues its calls until it is up)."""
        d = self.dist
        device = "cuda" if d.gpus_per_actor > 0 else "cpu"
        options = self._remote_cls.options(
            num_cpus=d.cpus_per_actor,
            num_gpus=d.gpus_per_actor,
            max_restarts=0,
            max_task_retries=0,
            scheduling_strategy="SPREAD",
        )
        seed = worker_seed(self.seed, slot.index, slot.generation, self.epoch)
        slot.actor = options.remote(self.cfg, seed, device, int(d.cpus_per_actor))
        slot.sequence, slot.node = 0, ""
        slot.ready_ref = slot.actor.ready.remote()
        slot.deadline = time.monotonic() + self.start_timeout_s
        self._refs[slot.ready_ref] = (slot, slot.generation, "ready")
        self._submit(slot)

    def _submit(self, slot: _Slot) -> None:
        """The next ``play`` call on ``slot``'s actor, with the newest weights."""
        ref = slot.actor.play.remote(
            [self._weights], self._version, self.games_per_message, slot.sequence, self._simulations
        )
        slot.play_ref = ref
        self._refs[ref] = (slot, slot.generation, "play")

    def _discard(self, slot: _Slot) -> None:
        for ref in (slot.play_ref, slot.ready_ref):
            if ref is not None:
                self._refs.pop(ref, None)
        if slot.actor is not None:
            with contextlib.suppress(Exception):  # already dead, or Ray cannot reach it: gone either way
                self.ray.kill(slot.actor, no_restart=True)
        slot.actor, slot.play_ref, slot.ready_ref = None, None, None

    def _replace(self, slot: _Slot, error: BaseException) -> None:
        """A fresh actor (new seed) for a dead one, or `WorkerDiedError` after too many deaths."""
        slot.deaths += 1
        where = f" on node {slot.node[:12]}" if slot.node else ""
        self._discard(slot)
        if slot.deaths > self.max_restarts:
            raise WorkerDiedError(
                f"self-play actor {slot.index}{where} died {slot.deaths} times, more than "
                f"selfplay.max_restarts={self.max_restarts} allows; last error: {error}"
            )
        slot.generation += 1
        self.restarts += 1
        self.log(
            f"warning: self-play actor {slot.index}{where} died ({_first_line(error)}); starting a new one "
            f"(restart {slot.deaths}/{self.max_restarts}); its unsent games are played again"
        )
        self._start(slot)

    @property
    def actors(self) -> list[Any]:
        """The actor handles now in use, by slot (None once closed)."""
        return [s.actor for s in self._slots]

    @property
    def nodes(self) -> list[str]:
        """The node id each slot's actor runs on ("" until it has started)."""
        return [s.node for s in self._slots]

    # --- WorkerPool ----------------------------------------------------------------------
    def publish(self, weights: dict[str, torch.Tensor], version: int) -> None:
        if self._closed:
            raise RuntimeError("the pool is closed")
        self._weights = self.ray.put({k: v.detach().cpu() for k, v in weights.items()})
        self._version = version
        if not self._started:  # the first publish starts the actors
            self._started = True
            for slot in self._slots:
                self._start(slot)

    def set_simulations(self, simulations: int) -> None:
        if simulations < 1:
            raise ValueError(f"simulations must be at least 1, got {simulations}")
        self._simulations = int(simulations)  # the next play call of each actor carries it

    def poll(self, timeout: float) -> list[Delivery]:
        if self._closed:
            raise RuntimeError("the pool is closed")
        if self._weights is None:
            raise RuntimeError("publish weights before polling the pool (the actors start then)")
        ray = self.ray
        self._check_starts()
        refs = list(self._refs)
        if not refs:  # only after a `WorkerDiedError`: nothing left to wait for
            return []
        ready, _ = ray.wait(refs, num_returns=1, timeout=max(0.0, timeout))
        if ready:  # then everything else that is already there
            ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0)
        out: list[Delivery] = []
        for ref in ready:
            entry = self._refs.pop(ref, None)
            if entry is None:  # a call to an actor replaced earlier in this loop
                continue
            slot, generation, kind = entry
            value = self._get(slot, ref)
            if value is None:
                continue
            if kind == "ready":
                slot.node, slot.ready_ref = value, None
                continue
            sequence, version, result = value
            if generation != slot.generation or ref != slot.play_ref or sequence != slot.sequence:
                raise DistributedError(
                    f"self-play actor {slot.index} answered call {sequence} (generation {generation}) "
                    f"while call {slot.sequence} (generation {slot.generation}) was outstanding"
                )
            out.append(Delivery(slot.index, generation, sequence, version, result))
            slot.sequence += 1
            self._submit(slot)
        return out

    def _get(self, slot: _Slot, ref: Any) -> Any:
        """The reply behind ``ref``; None when its actor died (and was replaced)."""
        ray = self.ray
        lost = (ray.exceptions.RayActorError, ray.exceptions.ObjectLostError)  # ActorUnavailableError included
        try:
            return ray.get(ref)
        except lost as exc:
            if getattr(exc, "actor_init_failed", False):  # an error in the constructor: it would recur
                raise WorkerDiedError(f"self-play actor {slot.index} failed to start:\n{exc}") from None
            self._replace(slot, exc)
            return None
        except ray.exceptions.RayError as exc:  # a Python error in self-play (RayTaskError): it would recur
            raise WorkerDiedError(f"self-play actor {slot.index} failed:\n{exc}") from None

    def _check_starts(self) -> None:
        now = time.monotonic()
        late = [s.index for s in self._slots if s.ready_ref is not None and now > s.deadline]
        if late:
            raise DistributedError(
                f"self-play actors {late} did not start within {self.start_timeout_s:g}s; the cluster "
                f"needs {self.dist.cpus_per_actor:g} free CPUs (and {self.dist.gpus_per_actor:g} GPUs) per actor"
            )

    def close(self) -> None:
        """Kill the actors (and shut Ray down when this pool started it); idempotent."""
        if self._closed:
            return
        self._closed = True
        for slot in self._slots:
            self._discard(slot)
        self._refs.clear()
        self._weights = None
        if self.owns_ray and self.ray.is_initialized():
            self.ray.shutdown()
