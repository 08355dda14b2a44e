"""The training loop: self-play -> replay -> learn -> publish -> log -> checkpoint -> evaluate.

    summary = train(load_config("configs/russian.yaml"))
    summary = train(resume_config("runs/russian", ["train.iterations=200"]), resume_dir="runs/russian")

Two loops share everything but the schedule:

- **Asynchronous** (``selfplay.workers`` auto or N, or ``distributed.backend: ray``): a
  `WorkerPool` of processes (or Ray actors) plays all the time and sends games as they
  finish; the trainer puts them in the replay buffer and trains whenever the replay ratio
  (`tammi_rl.train.pacing`) says a step is owed, publishing the weights every
  ``train.publish_every`` steps. An iteration ends each time ``games_per_iteration``
  more games have arrived; it is still the unit of logging, evaluation and checkpoints.
- **Synchronous** (``selfplay.workers: 0``): the in-process worker plays an iteration's
  games, then the learner takes the steps owed, then the weights are published. Exactly
  reproducible (without a ``train.hours`` budget): a resumed run plays the same games as
  an uninterrupted one.

The run ends after ``train.iterations``, or earlier under a ``train.hours`` budget: after
the iteration that leaves too little time for one more at this session's pace and the
final evaluation (`tammi_rl.train.budget`). Every ``eval.every`` iterations, and after the
last, the network plays alpha-beta; everything is logged to TensorBoard
(`tammi_rl.train.telemetry` for throughput and time shares) and a status line is printed;
every ``checkpoint.every`` iterations (and after the last, and on Ctrl-C in the
asynchronous loop) the replay snapshot, the checkpoint and sample games are written.

Resuming (`tammi_rl.train.resume`) restores weights, optimizer, counters, every RNG, the
in-process worker's games (synchronous loop) and the replay buffer (lined up with the
checkpoint: samples added after it are dropped), so a killed run loses only what came
after its last checkpoint. An asynchronous run's workers start new games on resume (from
seeds that depend on the iteration, so they do not replay the first run's games).
"""

from __future__ import annotations

import random
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol, TextIO

import numpy as np
import torch

from tammi_rl.config import Config, load_config
from tammi_rl.config.cores import split_cores
from tammi_rl.config.fields import ConfigError
from tammi_rl.config.simulations import SimulationSchedule
from tammi_rl.distributed import ray_backend
from tammi_rl.distributed.pool import WorkerPool, merge_stats
from tammi_rl.distributed.processes import ProcessPool
from tammi_rl.env.observation import ObservationEncoder
from tammi_rl.nn.model import build_model, resolve_device
from tammi_rl.nn.symmetry import mirror_for
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.pdn import PdnGame, games_to_pdn
from tammi_rl.selfplay.worker import GameRecord, SelfPlayResult, SelfPlayWorker
from tammi_rl.store.checkpoint import capture_rng, make_checkpoint
from tammi_rl.store.rundir import RunDir, open_run
from tammi_rl.train.augment import MirroredSamples
from tammi_rl.train.budget import WallClockBudget
from tammi_rl.train.ladder import evaluate_vs_alphabeta, gate_vs_incumbent
from tammi_rl.train.learner import Learner, SampleSource, weight_norm
from tammi_rl.train.pacing import ReplayRatio
from tammi_rl.train.replay import ReplayBuffer
from tammi_rl.train.resume import resume
from tammi_rl.train.run_log import RunLogger
from tammi_rl.train.telemetry import IterationMeter, RunClock, format_duration, status_parts

PDN_GAMES_PER_CHECKPOINT = 16


class _StopRequested(Exception):
    """Ctrl-C was pressed during the asynchronous loop (see `Trainer._run_async`)."""


class SelfPlayBackend(Protocol):
    """What the loop needs from self-play (`tammi_rl.selfplay.worker.SelfPlayWorker`)."""

    def set_weights(self, state_dict: dict) -> None: ...

    def set_simulations(self, simulations: int) -> None: ...

    def play(self, n_games: int) -> SelfPlayResult: ...

    def state_dict(self) -> dict: ...

    def load_state_dict(self, state: dict) -> None: ...


WorkerFactory = Callable[[Rules, Config, torch.device, int], SelfPlayBackend]
PoolFactory = Callable[[Config, int], WorkerPool]
"""(config, epoch: the iteration the loop starts at) -> a started-on-publish `WorkerPool`."""


def local_worker(rules: Rules, cfg: Config, device: torch.device, seed: int) -> SelfPlayBackend:
    """The in-process self-play worker (the synchronous loop)."""
    return SelfPlayWorker(rules, cfg, device, seed)


def worker_count(cfg: Config) -> int:
    """Self-play workers beside the trainer: Ray actors, or ``selfplay.workers`` processes (0: none)."""
    if cfg.distributed.backend == "ray":
        return cfg.distributed.num_actors
    return split_cores(cfg, on_cuda=resolve_device(cfg.device).type == "cuda").workers


def default_pool(cfg: Config, epoch: int) -> WorkerPool:
    """The pool ``cfg`` asks for; Ray is imported only when a Ray pool starts."""
    if cfg.distributed.backend == "ray":
        return ray_backend.RayPool(cfg, seed=cfg.seed, epoch=epoch)
    return ProcessPool(cfg, worker_count(cfg), seed=cfg.seed, epoch=epoch)


@dataclass
class Counters:
    """Progress counters, saved in every checkpoint."""

    iteration: int = 0
    """Iterations completed."""
    games: int = 0
    positions: int = 0
    """Samples produced by self-play."""
    samples_trained: int = 0
    """Samples drawn by the learner (steps x batch size)."""
    worker_restarts: int = 0
    """Self-play workers (processes or actors) replaced after dying."""
    pace_ratio: float = 0.0
    """The replay ratio the learner is paced at (0: not yet set, a run from before pacing)."""
    pace_positions: int = 0
    pace_samples: int = 0
    """``positions`` and ``samples_trained`` when that ratio took effect: the pacing counts from there,
    so a resume with another ``train.replay_ratio`` starts even instead of owing a burst of steps."""
    replay_total_added: int = 0
    eval_scores: dict[int, float] = field(default_factory=dict)
    """The last evaluation's score per alpha-beta depth."""
    eval_seconds: float = field(default=0.0, compare=False)
    """How long the latest in-training evaluation took (what a ``train.hours`` budget keeps
    for the final one)."""
    budget_spent: bool = False
    """The last iteration so far was the one the ``train.hours`` budget ended the run after
    (a resume with a larger budget or none clears it)."""
    seconds: float = field(default=0.0, compare=False)
    """Wall-clock seconds the run has trained, summed over its sessions (a run from before
    this counter starts it at its first resume). Not part of equality: two runs in the same
    state took different times to get there."""

    def pace_from_here(self, ratio: float) -> str | None:
        """Count the replay ratio from now on if it is new to this run (a fresh run, or a resume
        with another ``train.replay_ratio``), so the learner owes no burst of steps; returns
        what changed when the run had played already."""
        if self.pace_ratio == ratio:
            return None
        was = f"{self.pace_ratio:g}" if self.pace_ratio else "not set (a run from before pacing)"
        played = self.positions > 0
        self.pace_ratio, self.pace_positions, self.pace_samples = ratio, self.positions, self.samples_trained
        return f"the replay ratio was {was} and is now {ratio:g}; pacing counts from here" if played else None


@dataclass
class TrainSummary:
    run_dir: Path
    counters: Counters
    learner_step: int
    metrics: dict[str, float]
    resumed_from: Path | None


def resume_config(run_dir: str | Path, overrides: list[str] | None = None) -> Config:
    """A run's own resolved config (its config.yaml) with ``overrides`` applied."""
    return load_config(open_run(run_dir).config_path, overrides, saved=True)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def _pdn_game(game: GameRecord, run: str, iteration: int, index: int) -> PdnGame:
    """A sample self-play game with the tags that say where it comes from."""
    tags = {
        "Event": f"tammi-rl self-play {run} iteration {iteration}",
        "Site": "tammi-rl",
        "Round": str(index + 1),
        "White": "tammi-rl",
        "Black": "tammi-rl",
    }
    if game.result is not None:
        tags["Termination"] = game.result.reason
    result = game.result.pdn if game.result is not None else "*"
    return PdnGame(tags, game.positions[0], game.moves, result)


def _status(
    cfg: Config,
    c: Counters,
    telemetry: dict[str, float],
    mean_batch: float,
    metrics: dict[str, float],
    buffer: int,
    seconds: float,
    evaluated: bool,
    eta: float | None,
    simulations: int | None = None,
) -> str:
    parts = [
        f"[{cfg.run_name}] iter {c.iteration}/{cfg.train.iterations}",
        f"games {c.games}",
        *([f"sims {simulations}"] if simulations is not None else []),
        *status_parts(telemetry, mean_batch),
        f"buffer {buffer}",
    ]
    if metrics:
        aux = f" soft {metrics['loss/soft_policy']:.3f}" if "loss/soft_policy" in metrics else ""
        aux += f" own {metrics['loss/ownership']:.3f}" if "loss/ownership" in metrics else ""
        aux += f" short {metrics['loss/short_value']:.3f}" if "loss/short_value" in metrics else ""
        aux += f" opp {metrics['loss/opponent_policy']:.3f}" if "loss/opponent_policy" in metrics else ""
        parts.append(
            f"loss {metrics['loss/total']:.3f} (p {metrics['loss/policy']:.3f} v {metrics['loss/value']:.3f}{aux})"
        )
    else:
        parts.append(f"loss - (buffer < {cfg.replay.min_samples})")
    if c.eval_scores:
        mark = "" if evaluated else " (last)"
        parts.append("eval " + " ".join(f"d{d} {s:.2f}" for d, s in c.eval_scores.items()) + mark)
    parts.append(f"{seconds:.1f}s")
    parts.append(f"run {format_duration(c.seconds)}")
    if eta is not None and c.iteration < cfg.train.iterations and not c.budget_spent:
        parts.append(f"eta {format_duration(eta)}")
    return "  ".join(parts)


class Trainer:
    """The local loop; `train` is the entry point."""

    def __init__(
        self,
        cfg: Config,
        resume_dir: str | Path | None = None,
        worker_factory: WorkerFactory | None = None,
        out: TextIO | None = None,
        pool_factory: PoolFactory | None = None,
    ) -> None:
        self.clock = RunClock()
        """The run's wall time; a resume carries the seconds of its earlier sessions."""
        self.budget = WallClockBudget(cfg.train.hours, cfg.eval.every, self.clock)
        """The ``train.hours`` budget, on that clock."""
        self.cfg = cfg
        self.out = out or sys.stdout
        self.run = open_run(resume_dir) if resume_dir is not None else RunDir.for_config(cfg)
        if resume_dir is None:
            self.run.prepare(cfg, resume=False)  # fails fast on a run that already has checkpoints
        self.device = resolve_device(cfg.device)
        self.cores = split_cores(cfg, on_cuda=self.device.type == "cuda")
        """How self-play and the learner share the cores (``selfplay.workers``, ``threads``)."""
        if self.cores.learner_threads > 0:
            torch.set_num_threads(self.cores.learner_threads)
        seed_everything(cfg.seed)
        self.rules = Rules.for_variant(cfg.variant)
        self.obs_shape = ObservationEncoder.for_rules(self.rules, cfg.network.attack_planes).shape
        self.learner = Learner(build_model(self.rules, cfg.network), cfg.train, self.device)
        self.replay = ReplayBuffer(cfg.replay.capacity, self.obs_shape, self.rules.geometry.n_squares)
        self.sample_rng = np.random.default_rng(cfg.seed + 1)
        self.mirror = mirror_for(self.rules) if cfg.train.mirror_samples else None
        if cfg.train.mirror_samples and self.mirror is None:
            raise ConfigError(f"train.mirror_samples: the {cfg.variant} board has no left-right symmetry; set it false")
        self.pace = ReplayRatio(cfg.train.replay_ratio, cfg.train.batch_size, cfg.replay.min_samples)
        self.simulation_schedule = SimulationSchedule.of(cfg.mcts)
        """Self-play's simulations a full search as the run goes on (``mcts.progressive_from``)."""
        self.simulations_sent: int | None = None
        """The count self-play was last told (None: not yet, it plays mcts.simulations)."""
        self.asynchronous = worker_count(cfg) > 0
        self.pool_factory = pool_factory or default_pool
        self.pool: WorkerPool | None = None
        self.worker: SelfPlayBackend | None = None
        """The in-process worker of the synchronous loop (None in the asynchronous one)."""
        if not self.asynchronous:
            self.worker = (worker_factory or local_worker)(self.rules, cfg, self.device, cfg.seed)
        self.weights_version = 0
        self.counters = Counters()
        self.resumed_from: Path | None = None
        self.eval_elo: float | None = None
        """The last evaluation's Elo (anchor: alpha-beta at the first eval depth), logged as eval/elo."""
        self.eval_elo_error: float | None = None
        """Its standard error (from the fit's inverse Hessian), logged as eval/elo_error."""
        self.selfplay_weights: dict | None = None
        """Under gating (eval.gating.enabled): the weights self-play uses, replaced only by a
        network that passed the gate. None: self-play follows the learner."""
        self.stop_requested = False
        """Set by Ctrl-C in the asynchronous loop; read between two steps."""
        self.final = False
        """The iteration in progress is the run's last (its games all in): train what is owed,
        evaluate, checkpoint, stop."""
        if resume_dir is not None:
            self._resume()
            self.run.prepare(cfg, resume=True)
        if self.asynchronous and cfg.distributed.backend != "ray" and "auto" in (cfg.threads, cfg.selfplay.workers):
            self._say(f"note: {self.cores.describe()} (auto)")
        paced = self.counters.pace_from_here(cfg.train.replay_ratio)
        if paced:
            self._say(f"note: {paced}")
        if cfg.eval.gating.enabled and self.selfplay_weights is None:
            self.selfplay_weights = self.learner.weights()
        if self.worker is not None:
            self.worker.set_weights(self.selfplay_weights or self.learner.weights())

    # --- resume ---------------------------------------------------------------------
    def _say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def _resume(self) -> None:
        """Take the state of the run directory's newest checkpoint (`tammi_rl.train.resume`)."""
        resumed = resume(
            self.run,
            self.cfg,
            self.rules.variant.name,
            self.learner,
            self.worker,
            self.sample_rng,
            self.obs_shape,
            self.rules.geometry.n_squares,
            self._say,
        )
        if resumed is None:
            return
        c = self.counters = Counters(**resumed.counters)
        self.budget.resume(c.seconds, c.iteration, c.eval_seconds, resumed.saved_hours)
        if resumed.selfplay_weights is not None:
            self.selfplay_weights = resumed.selfplay_weights
        if resumed.replay is not None:
            self.replay = resumed.replay
        self.resumed_from = resumed.path

    # --- loop -----------------------------------------------------------------------
    def run_loop(self) -> TrainSummary:
        cfg = self.cfg
        fresh = self.resumed_from is None
        has_events = any(self.run.tb_dir.glob("events.*"))
        purge = self.counters.iteration + 1 if not fresh else (1 if has_events else None)
        logger = RunLogger(self.run.tb_dir, purge_step=purge)
        metrics: dict[str, float] = {}
        c = self.counters
        if self.budget.spent_at_start(c.budget_spent):
            self._say(
                f"{self.run.root}: iteration {c.iteration}, {format_duration(c.seconds)} trained, leaves no room in "
                f"the train.hours budget of {cfg.train.hours:g} h; raise it, or set 0, to continue"
            )
            logger.close()
            return TrainSummary(self.run.root, self.counters, self.learner.step_count, metrics, self.resumed_from)
        self.counters.budget_spent = False
        try:
            if fresh:
                logger.config(cfg.to_dict(), cfg.eval.alphabeta_depths)
            if self.asynchronous:
                metrics = self._run_async(logger)
            else:
                for it in range(self.counters.iteration + 1, cfg.train.iterations + 1):
                    metrics = self.iteration(it, logger)
                    if self.counters.budget_spent:
                        break
        finally:
            logger.close()
        if c.budget_spent:
            self._say(
                f"train.hours: the {cfg.train.hours:g} h budget ends the run after iteration "
                f"{c.iteration} of at most {cfg.train.iterations} ({format_duration(c.seconds)} trained)"
            )
        return TrainSummary(self.run.root, self.counters, self.learner.step_count, metrics, self.resumed_from)

    def progress(self, it: int, received: int) -> float:
        """How far the run is (0 to 1) during iteration ``it`` once ``received`` of its games
        arrived: what the lr schedule follows (by time when the budget is further along)."""
        share = min(1.0, received / self.cfg.selfplay.games_per_iteration)
        return self.budget.schedule_fraction((it - 1 + share) / self.cfg.train.iterations)

    def _decide_final(self, it: int) -> None:
        """Settle whether ``it`` is the run's last iteration (`final`), by count or by budget."""
        last = it == self.cfg.train.iterations
        self.counters.budget_spent = it < self.cfg.train.iterations and not self.budget.room_for_another(it)
        self.final = last or self.counters.budget_spent

    def _schedule_simulations(self, progress: float) -> None:
        """Under progressive simulations, tell self-play the count due at ``progress`` when it changed."""
        if not self.simulation_schedule.progressive:
            return
        n = self.simulation_schedule.at(progress)
        if n == self.simulations_sent:
            return
        if self.worker is not None:
            self.worker.set_simulations(n)
        elif self.pool is not None:
            self.pool.set_simulations(n)
        self.simulations_sent = n

    def _paced(self) -> tuple[int, int, int]:
        """(positions, samples trained, buffered) as the pacing counts them (from its base)."""
        c = self.counters
        return c.positions - c.pace_positions, c.samples_trained - c.pace_samples, len(self.replay)

    # --- the synchronous loop ---------------------------------------------------------
    def iteration(self, it: int, logger: Any) -> dict[str, float]:
        """One synchronous iteration (see the module docstring); returns the learner's metrics
        (empty before learning)."""
        cfg, c = self.cfg, self.counters
        assert self.worker is not None
        meter = IterationMeter()
        positions0, trained0 = c.positions, c.samples_trained
        self._schedule_simulations(self.progress(it, cfg.selfplay.games_per_iteration // 2))  # mid-iteration
        result = self.worker.play(cfg.selfplay.games_per_iteration)
        meter.add_selfplay(result.stats)
        self.replay.add(result.samples)
        c.games += int(result.stats.get("games", len(result.games)))
        c.positions += len(result.samples)
        c.replay_total_added = self.replay.total_added
        self._decide_final(it)
        metrics: dict[str, float] = {}
        steps = self.pace.steps_owed(*self._paced())
        if steps:
            self.learner.set_progress(1.0 if self.final else self.progress(it, cfg.selfplay.games_per_iteration))
            with meter.timing("learner"):
                metrics = self.learner.train(self.samples(), steps, self.sample_rng)
            c.samples_trained += steps * cfg.train.batch_size
            self.publish(it, logger, gate=True)
        return self._end_iteration(it, logger, meter, result.stats, result.games, metrics, positions0, trained0)

    # --- the asynchronous loop --------------------------------------------------------
    def _run_async(self, logger: Any) -> dict[str, float]:
        """Iterations with self-play in a `WorkerPool` (see the module docstring).

        Ctrl-C sets a flag that the loop reads between two steps (so the state it saves is
        whole): the workers stop and a checkpoint of everything so far is written as the
        last finished iteration's (``ckpt_<N>.pt`` then also holds the unfinished iteration's
        games and learner steps), then `KeyboardInterrupt` propagates.
        """
        cfg, c = self.cfg, self.counters
        self.pool = self.pool_factory(cfg, c.iteration)
        restarts0 = c.worker_restarts
        metrics: dict[str, float] = {}
        previous = self._catch_ctrl_c()
        try:
            self._schedule_simulations(self.progress(c.iteration + 1, 0))  # before the workers start
            self.pool.publish(self.selfplay_weights or self.learner.weights(), self.weights_version)
            for it in range(c.iteration + 1, cfg.train.iterations + 1):
                metrics = self._async_iteration(it, logger, restarts0)
                if c.budget_spent:
                    break
        except _StopRequested:
            self._say(f"interrupted: stopping the self-play workers and writing a checkpoint (iteration {c.iteration})")
            self.pool.close()
            c.worker_restarts = restarts0 + self.pool.restarts
            c.replay_total_added = self.replay.total_added
            c.seconds = self.clock.total()  # the unfinished iteration's time goes with its games
            path = self.checkpoint(c.iteration, [], logger)
            self._say(f"saved {path}; continue with: tammi-rl train --resume {self.run.root}")
            raise KeyboardInterrupt from None
        finally:
            self.pool.close()
            if previous is not None:
                signal.signal(signal.SIGINT, previous)
        return metrics

    def _catch_ctrl_c(self) -> Any:
        """Turn SIGINT into `stop_requested` (main thread only); returns the handler it replaced."""
        self.stop_requested = False

        def request_stop(signum: int, frame: Any) -> None:
            if not self.stop_requested:
                self._say("Ctrl-C: stopping after the current step (an evaluation in progress finishes first)")
            self.stop_requested = True

        if threading.current_thread() is not threading.main_thread():
            return None  # signals reach the main thread only; Ctrl-C there interrupts as usual
        return signal.signal(signal.SIGINT, request_stop)

    def _async_iteration(self, it: int, logger: Any, restarts0: int) -> dict[str, float]:
        """Receive games and train as the replay ratio says until ``games_per_iteration`` more games arrived."""
        cfg, c, pool = self.cfg, self.counters, self.pool
        assert pool is not None
        meter = IterationMeter()
        positions0, trained0 = c.positions, c.samples_trained
        parts: list[dict[str, float]] = []
        games: list[GameRecord] = []
        sums: dict[str, float] = {}
        steps = 0
        received = 0
        while received < cfg.selfplay.games_per_iteration:
            if self.stop_requested:
                raise _StopRequested
            self._schedule_simulations(self.progress(it, received))
            timeout = 0.25  # nothing owed: wait for games
            if self.pace.steps_owed(*self._paced()):
                self._learn_step(meter, sums, self.progress(it, received))
                steps += 1
                if self.learner.step_count % cfg.train.publish_every == 0:
                    self.publish(it, logger, gate=False)
                if self.pace.learner_behind(*self._paced()):
                    continue  # hold self-play back: its messages wait in the pipes
                timeout = 0.0
            with meter.timing("wait" if timeout else "receive"):
                deliveries = pool.poll(timeout)
            for delivery in deliveries:
                result = delivery.result
                self.replay.add(result.samples)
                n = int(result.stats.get("games", len(result.games)))
                c.games += n
                c.positions += len(result.samples)
                received += n
                parts.append(result.stats)
                games.extend(result.games[: max(0, PDN_GAMES_PER_CHECKPOINT - len(games))])
        self._decide_final(it)
        if self.final:  # the last iteration: train what is still owed
            for _ in range(self.pace.steps_owed(*self._paced())):
                self._learn_step(meter, sums, 1.0)
                steps += 1
        c.replay_total_added = self.replay.total_added
        c.worker_restarts = restarts0 + pool.restarts
        if cfg.eval.gating.enabled and self.learner.step_count > 0:
            with meter.timing("eval"):
                self.publish(it, logger, gate=True)
        stats = merge_stats(parts, meter.wall())
        stats["workers"] = float(pool.size)
        stats["worker_restarts"] = float(c.worker_restarts)
        meter.add_selfplay(stats)
        metrics = {key: value / steps for key, value in sums.items()} if steps else {}
        return self._end_iteration(it, logger, meter, stats, games, metrics, positions0, trained0)

    def samples(self) -> SampleSource:
        """What the learner draws from: the replay buffer, mirrored at random with
        ``train.mirror_samples``."""
        return MirroredSamples(self.replay, self.mirror) if self.mirror is not None else self.replay

    def _learn_step(self, meter: IterationMeter, sums: dict[str, float], progress: float) -> None:
        """One learner step on a replay batch at ``progress``; its metrics are added to ``sums``."""
        batch = self.cfg.train.batch_size
        self.learner.set_progress(progress)
        with meter.timing("learner"):
            metrics = self.learner.step(self.samples().sample(batch, self.sample_rng))
        for key, value in metrics.items():
            sums[key] = sums.get(key, 0.0) + value
        self.counters.samples_trained += batch

    # --- both loops -------------------------------------------------------------------
    def _end_iteration(
        self,
        it: int,
        logger: Any,
        meter: IterationMeter,
        stats: dict[str, float],
        games: list[GameRecord],
        metrics: dict[str, float],
        positions0: int,
        trained0: int,
    ) -> dict[str, float]:
        """Evaluate, log, checkpoint and print the status line for the iteration just played."""
        cfg, c = self.cfg, self.counters
        evaluated = bool(cfg.eval.every) and (it % cfg.eval.every == 0 or self.final)
        if evaluated:
            with self.budget.evaluation(), meter.timing("eval"):
                c.eval_scores = self.evaluate(it)
            c.eval_seconds = self.budget.eval_seconds
            logger.evaluation(c.eval_scores, it)
            if self.eval_elo is not None:
                logger.scalars({"eval/elo": self.eval_elo, "eval/elo_error": self.eval_elo_error}, it)
        c.iteration = it
        c.seconds = self.budget.iteration_ended()
        if it % cfg.checkpoint.every == 0 or self.final:
            with meter.timing("checkpoint"):
                self.checkpoint(it, games, logger)
        telemetry = meter.summary(
            c.positions - positions0, c.samples_trained - trained0, self.pace.held(*self._paced()[:2])
        )
        logger.selfplay(stats, it)
        if metrics:  # the learner stepped this iteration
            metrics = metrics | {"train/weight_norm": weight_norm(self.learner.model)}
        logger.learner(metrics, it)
        logger.scalars(telemetry, it)
        logger.scalars(
            {
                "train/learner_step": self.learner.step_count,
                "replay/size": len(self.replay),
                "selfplay/total_games": c.games,
                "selfplay/worker_restarts": c.worker_restarts,
                "train/wall_hours": c.seconds / 3600,
            },
            it,
        )
        logger.flush()
        batch = meter.mean_batch()
        eta = self.budget.eta(c.iteration, cfg.train.iterations)
        sims = self.simulations_sent  # the count last sent; shown under progressive simulations only
        self._say(_status(cfg, c, telemetry, batch, metrics, len(self.replay), meter.wall(), evaluated, eta, sims))
        return metrics

    def _send_weights(self, weights: dict) -> None:
        self.weights_version += 1
        if self.worker is not None:
            self.worker.set_weights(weights)
        elif self.pool is not None:
            self.pool.publish(weights, self.weights_version)

    def publish(self, it: int, logger: Any, gate: bool) -> None:
        """Send the learner's weights to self-play; under gating only when they pass the SPRT
        gate, which runs (``gate``) once per ``eval.gating.every`` iterations."""
        gating = self.cfg.eval.gating
        if not gating.enabled:
            self._send_weights(self.learner.weights())
            return
        if not gate or it % gating.every != 0:
            return
        assert self.selfplay_weights is not None  # set in __init__ whenever gating is enabled
        incumbent = build_model(self.rules, self.cfg.network)
        incumbent.load_state_dict(self.selfplay_weights)
        result = gate_vs_incumbent(
            self.rules,
            self.learner.playing_model,
            incumbent,
            gating,
            self.device,
            self.cfg.selfplay.max_plies,
            seed=self.cfg.seed + 104729 * it,
            mcts=self.cfg.play_search,
        )
        accepted = bool(result.accepted)
        logger.scalars({"gate/accepted": float(accepted), "gate/games": float(result.games)}, it)
        if accepted:
            self.selfplay_weights = self.learner.weights()
            self._send_weights(self.selfplay_weights)

    def evaluate(self, it: int) -> dict[int, float]:
        result = evaluate_vs_alphabeta(
            self.rules,
            self.learner.playing_model,
            self.cfg.eval,
            self.device,
            self.cfg.selfplay.max_plies,
            seed=self.cfg.seed + 7919 * it,
            mcts=self.cfg.play_search,
        )
        self.eval_elo, self.eval_elo_error = result.elo, result.elo_error
        return result.scores

    def checkpoint(self, it: int, games: list[GameRecord], logger: Any) -> Path:
        """Replay snapshot first, then the checkpoint (so the snapshot is never behind it), then games."""
        cfg = self.cfg
        if cfg.checkpoint.buffer_snapshot:
            self.replay.save_chunks(self.run.replay_dir)
        ckpt = make_checkpoint(
            variant=self.rules.variant.name,
            network=cfg.network,
            model=self.learner.playing_model,
            learner=self.learner.state_dict(),
            counters=asdict(self.counters),
            rng=capture_rng(self.sample_rng),
            worker=self.worker.state_dict() if self.worker is not None else {"pool": {"workers": worker_count(cfg)}},
            config=cfg.to_dict(),
        )
        if self.selfplay_weights is not None:
            ckpt["selfplay_model"] = {k: v.detach().cpu() for k, v in self.selfplay_weights.items()}
        export = Path(cfg.checkpoints_dir) / f"{cfg.run_name}-latest.pt"
        path = self.run.save_checkpoint(ckpt, it, cfg.checkpoint.keep, export)
        sample = [_pdn_game(g, cfg.run_name, it, i) for i, g in enumerate(games[:PDN_GAMES_PER_CHECKPOINT])]
        if sample:
            self.run.write_games(it, games_to_pdn(self.rules, sample))
            logger.game(games_to_pdn(self.rules, sample[:1]), it)
        return path


def train(
    cfg: Config,
    resume_dir: str | Path | None = None,
    *,
    worker_factory: WorkerFactory | None = None,
    out: TextIO | None = None,
    pool_factory: PoolFactory | None = None,
) -> TrainSummary:
    """Train from ``cfg`` (or continue the run in ``resume_dir``); see the module docstring."""
    return Trainer(cfg, resume_dir, worker_factory, out, pool_factory).run_loop()
