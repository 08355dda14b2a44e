"""The training loop: self-play -> replay -> learn -> publish -> log -> checkpoint -> evaluate.

    summary = train(load_config("configs/russian.yaml"))
    summary = train(resume_config("runs/russian", ["train.iterations=200"]), resume_dir="runs/russian")

One iteration: the self-play worker plays ``selfplay.games_per_iteration`` games with the
current weights; their samples go into the replay buffer; once it holds
``replay.min_samples`` the learner takes ``train.steps_per_iteration`` steps and the new
weights are published to the worker; every ``eval.every`` iterations the network plays
alpha-beta; everything is logged to TensorBoard and a status line is printed; every
``checkpoint.every`` iterations (and after the last) the replay snapshot, the checkpoint
and sample games are written.

The worker and the learner sit behind small interfaces (`SelfPlayBackend`,
`tammi_rl.train.learner.SampleSource`) and the worker is made by a factory, so a
distributed backend (Ray actors) can replace the local loop's
parts without rewriting them.

Resuming restores weights, optimizer, lr schedule, counters, every RNG, the worker's
state and the replay buffer (lined up with the checkpoint: samples added after it are
dropped), so a killed run loses only the iterations after its last checkpoint.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol, TextIO

import numpy as np
import torch

from tammi_rl.config import Config, load_config
from tammi_rl.distributed.ray_backend import ray_worker
from tammi_rl.env.observation import ObservationEncoder
from tammi_rl.nn.model import build_model, resolve_device
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.pdn import game_to_pdn
from tammi_rl.selfplay.worker import GameRecord, SelfPlayResult, SelfPlayWorker
from tammi_rl.store.checkpoint import capture_rng, load_checkpoint, load_model_weights, make_checkpoint, restore_rng
from tammi_rl.store.rundir import RunDir, open_run
from tammi_rl.train.evaluate import evaluate_vs_alphabeta, gate_vs_incumbent
from tammi_rl.train.learner import Learner
from tammi_rl.train.logging import RunLogger
from tammi_rl.train.replay import ReplayBuffer, ReplayError

PDN_GAMES_PER_CHECKPOINT = 16


class SelfPlayBackend(Protocol):
    """What the loop needs from self-play (`tammi_rl.selfplay.worker.SelfPlayWorker`)."""

    def set_weights(self, state_dict: dict) -> None: ...

    def play(self, n_games: int) -> SelfPlayResult: ...

    def state_dict(self) -> dict: ...

    def load_state_dict(self, state: dict) -> None: ...


WorkerFactory = Callable[[Rules, Config, torch.device, int], SelfPlayBackend]


def local_worker(rules: Rules, cfg: Config, device: torch.device, seed: int) -> SelfPlayBackend:
    """The in-process self-play worker."""
    return SelfPlayWorker(rules, cfg, device, seed)


def backend_factory(cfg: Config) -> WorkerFactory:
    """The factory ``cfg.distributed.backend`` names; Ray is imported only when a "ray" backend starts."""
    if cfg.distributed.backend == "ray":
        return ray_worker
    return local_worker


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
    replay_total_added: int = 0
    eval_scores: dict[int, float] = field(default_factory=dict)
    """The last evaluation's score per alpha-beta depth."""


@dataclass
class TrainSummary:
    run_dir: Path
    counters: Counters
    learner_step: int
    metrics: dict[str, float]
    resumed_from: Path | None


def resume_config(run_dir: str | Path, overrides: list[str] | None = None) -> Config:
    """A run's own resolved config (its config.yaml) with ``overrides`` applied."""
    return load_config(open_run(run_dir).config_path, overrides)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def _game_pdn(rules: Rules, game: GameRecord, run: str, iteration: int, index: int) -> str:
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
    return game_to_pdn(rules, game.moves, start=game.positions[0], tags=tags, result=result)


def _status(
    cfg: Config,
    c: Counters,
    stats: dict[str, float],
    metrics: dict[str, float],
    buffer: int,
    seconds: float,
    evaluated: bool,
) -> str:
    parts = [
        f"[{cfg.run_name}] iter {c.iteration}/{cfg.train.iterations}",
        f"games {c.games}",
        f"{stats.get('positions_per_s', 0.0):.1f} pos/s",
        f"buffer {buffer}",
    ]
    if metrics:
        parts.append(f"loss {metrics['loss/total']:.3f} (p {metrics['loss/policy']:.3f} v {metrics['loss/value']:.3f})")
    else:
        parts.append(f"loss - (buffer < {cfg.replay.min_samples})")
    if c.eval_scores:
        mark = "" if evaluated else " (last)"
        parts.append("eval " + " ".join(f"d{d} {s:.2f}" for d, s in c.eval_scores.items()) + mark)
    parts.append(f"{seconds:.1f}s")
    return "  ".join(parts)


class Trainer:
    """The local loop; `train` is the entry point."""

    def __init__(
        self,
        cfg: Config,
        resume_dir: str | Path | None = None,
        worker_factory: WorkerFactory | None = None,
        out: TextIO | None = None,
    ) -> None:
        self.cfg = cfg
        self.out = out or sys.stdout
        self.run = open_run(resume_dir) if resume_dir is not None else RunDir.for_config(cfg)
        if resume_dir is None:
            self.run.prepare(cfg, resume=False)  # fails fast on a run that already has checkpoints
        if cfg.threads > 0:
            torch.set_num_threads(cfg.threads)
        seed_everything(cfg.seed)
        self.rules = Rules.for_variant(cfg.variant)
        self.device = resolve_device(cfg.device)
        self.obs_shape = ObservationEncoder.for_rules(self.rules).shape
        total_steps = cfg.train.iterations * cfg.train.steps_per_iteration
        self.learner = Learner(build_model(self.rules, cfg.network), cfg.train, total_steps, self.device)
        self.replay = ReplayBuffer(cfg.replay.capacity, self.obs_shape)
        self.sample_rng = np.random.default_rng(cfg.seed + 1)
        self.worker = (worker_factory or backend_factory(cfg))(self.rules, cfg, self.device, cfg.seed)
        self.counters = Counters()
        self.resumed_from: Path | None = None
        self.eval_elo: float | None = None
        """The last evaluation's Elo (anchor: alpha-beta at the first eval depth), logged as eval/elo."""
        self.selfplay_weights: dict | None = None
        """Under gating (eval.gating.enabled): the weights self-play uses, replaced only by a
        network that passed the gate. None: self-play follows the learner."""
        if resume_dir is not None:
            self._resume()
            self.run.prepare(cfg, resume=True)
        if cfg.eval.gating.enabled and self.selfplay_weights is None:
            self.selfplay_weights = self.learner.weights()
        self.worker.set_weights(self.selfplay_weights or self.learner.weights())

    # --- resume ---------------------------------------------------------------------
    def _say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def _resume(self) -> None:
        path = self.run.resume_checkpoint()
        if path is None:
            self._say(f"{self.run.root}: no checkpoint yet; starting the run from the beginning")
            return
        ckpt = load_checkpoint(path, variant=self.rules.variant.name, network=self.cfg.network)
        load_model_weights(self.learner.model, ckpt, path)
        if ckpt.get("learner") is not None:
            self.learner.load_state_dict(ckpt["learner"])
        counters = dict(ckpt["counters"])
        counters["eval_scores"] = {int(k): float(v) for k, v in counters.get("eval_scores", {}).items()}
        self.counters = Counters(**counters)
        if ckpt.get("worker") is not None:
            self.worker.load_state_dict(ckpt["worker"])
        if ckpt.get("selfplay_model") is not None:
            self.selfplay_weights = ckpt["selfplay_model"]
        if ckpt.get("rng") is not None:
            restore_rng(ckpt["rng"], self.sample_rng)
        self._load_replay()
        self.resumed_from = path
        self._say(
            f"resuming {self.run.root} from {path.name}: iteration {self.counters.iteration}, "
            f"learner step {self.learner.step_count}, replay {len(self.replay)} samples"
        )

    def _load_replay(self) -> None:
        """The replay buffer as it was at the checkpoint (samples saved after it are dropped)."""
        directory, legacy = self.run.replay_dir, self.run.replay_path
        cap, known = self.cfg.replay.capacity, self.counters.replay_total_added
        try:
            if any(directory.glob("chunk_*.npz")):
                buf, path = ReplayBuffer.load_chunks(directory, cap, self.obs_shape, until=known), directory
            elif legacy.is_file():  # a run written before chunked saves
                buf, path = ReplayBuffer.load(legacy, cap, self.obs_shape), legacy
            else:
                if known:
                    self._say(f"warning: {directory} holds no replay chunks; the replay buffer starts empty")
                return
        except ReplayError as exc:
            self._say(f"warning: {exc}; the replay buffer starts empty")
            return
        extra = buf.total_added - known
        if extra > 0:  # a one-file snapshot written just before a checkpoint that never landed
            buf.drop_newest(extra)
        elif extra < 0:
            self._say(f"warning: {path} is older than the checkpoint ({-extra} samples short)")
        self.replay = buf

    # --- loop -----------------------------------------------------------------------
    def run_loop(self) -> TrainSummary:
        cfg = self.cfg
        fresh = self.resumed_from is None
        has_events = any(self.run.tb_dir.glob("events.*"))
        purge = self.counters.iteration + 1 if not fresh else (1 if has_events else None)
        logger = RunLogger(self.run.tb_dir, purge_step=purge)
        metrics: dict[str, float] = {}
        try:
            if fresh:
                logger.config(cfg.to_dict(), cfg.eval.alphabeta_depths)
            for it in range(self.counters.iteration + 1, cfg.train.iterations + 1):
                metrics = self.iteration(it, logger)
        finally:
            logger.close()
            close = getattr(self.worker, "close", None)  # remote backends stop their actors
            if close is not None:
                close()
        return TrainSummary(self.run.root, self.counters, self.learner.step_count, metrics, self.resumed_from)

    def iteration(self, it: int, logger: Any) -> dict[str, float]:
        """One iteration (see the module docstring); returns the learner's metrics (empty before learning)."""
        cfg, c = self.cfg, self.counters
        t0 = time.perf_counter()
        result = self.worker.play(cfg.selfplay.games_per_iteration)
        self.replay.add(result.samples)
        c.games += int(result.stats.get("games", len(result.games)))
        c.positions += len(result.samples)
        c.replay_total_added = self.replay.total_added
        metrics: dict[str, float] = {}
        if len(self.replay) >= cfg.replay.min_samples:
            metrics = self.learner.train(self.replay, cfg.train.steps_per_iteration, self.sample_rng)
            c.samples_trained += cfg.train.steps_per_iteration * cfg.train.batch_size
            self.publish(it, logger)
        evaluated = bool(cfg.eval.every) and it % cfg.eval.every == 0
        if evaluated:
            c.eval_scores = self.evaluate(it)
            logger.evaluation(c.eval_scores, it)
            if self.eval_elo is not None:
                logger.scalars({"eval/elo": self.eval_elo}, it)
        c.iteration = it
        logger.selfplay(result.stats, it)
        logger.learner(metrics, it)
        logger.scalars(
            {
                "train/learner_step": self.learner.step_count,
                "replay/size": len(self.replay),
                "selfplay/total_games": c.games,
            },
            it,
        )
        if it % cfg.checkpoint.every == 0 or it == cfg.train.iterations:
            self.checkpoint(it, result.games, logger)
        logger.flush()
        self._say(_status(cfg, c, result.stats, metrics, len(self.replay), time.perf_counter() - t0, evaluated))
        return metrics

    def publish(self, it: int, logger: Any) -> None:
        """Send the learner's weights to self-play; under gating only when they pass the SPRT gate."""
        gating = self.cfg.eval.gating
        if not gating.enabled:
            self.worker.set_weights(self.learner.weights())
            return
        if it % gating.every != 0:
            return
        assert self.selfplay_weights is not None  # set in __init__ whenever gating is enabled
        incumbent = build_model(self.rules, self.cfg.network)
        incumbent.load_state_dict(self.selfplay_weights)
        result = gate_vs_incumbent(
            self.rules,
            self.learner.model,
            incumbent,
            gating,
            self.device,
            self.cfg.selfplay.max_plies,
            seed=self.cfg.seed + 104729 * it,
            mcts=self.cfg.mcts,
        )
        accepted = bool(result.accepted)
        logger.scalars({"gate/accepted": float(accepted), "gate/games": float(result.games)}, it)
        if accepted:
            self.selfplay_weights = self.learner.weights()
            self.worker.set_weights(self.selfplay_weights)

    def evaluate(self, it: int) -> dict[int, float]:
        result = evaluate_vs_alphabeta(
            self.rules,
            self.learner.model,
            self.cfg.eval,
            self.device,
            self.cfg.selfplay.max_plies,
            seed=self.cfg.seed + 7919 * it,
            mcts=self.cfg.mcts,
        )
        self.eval_elo = result.elo
        return result.scores

    def checkpoint(self, it: int, games: list[GameRecord], logger: Any) -> Path:
        """Replay snapshot first, then the checkpoint (so the snapshot is never behind it), then games."""
        cfg = self.cfg
        if cfg.checkpoint.buffer_snapshot:
            self.replay.save_chunks(self.run.replay_dir)
        ckpt = make_checkpoint(
            variant=self.rules.variant.name,
            network=cfg.network,
            model=self.learner.model,
            learner=self.learner.state_dict(),
            counters=asdict(self.counters),
            rng=capture_rng(self.sample_rng),
            worker=self.worker.state_dict(),
            config=cfg.to_dict(),
        )
        if self.selfplay_weights is not None:
            ckpt["selfplay_model"] = {k: v.detach().cpu() for k, v in self.selfplay_weights.items()}
        export = Path(cfg.checkpoints_dir) / f"{cfg.run_name}-latest.pt"
        path = self.run.save_checkpoint(ckpt, it, cfg.checkpoint.keep, export)
        sample = games[:PDN_GAMES_PER_CHECKPOINT]
        if sample:
            pdns = [_game_pdn(self.rules, g, cfg.run_name, it, i) for i, g in enumerate(sample)]
            self.run.write_games(it, "\n".join(pdns))
            logger.game(pdns[0], it)
        return path


def train(
    cfg: Config,
    resume_dir: str | Path | None = None,
    *,
    worker_factory: WorkerFactory | None = None,
    out: TextIO | None = None,
) -> TrainSummary:
    """Train from ``cfg`` (or continue the run in ``resume_dir``); see the module docstring."""
    return Trainer(cfg, resume_dir, worker_factory, out).run_loop()
