"""Resuming a run directory: its newest checkpoint put back into a new trainer.

    resumed = resume(run, cfg, "russian", learner, worker, sample_rng, obs_shape, squares, say)  # None: no checkpoint

`resume` restores the weights, the optimizer, the in-process worker's RNG and games in
progress (synchronous loop), the sampling RNG and the global ones, and returns the
counters, the budget the checkpoint ran under, the gated self-play weights and the replay
buffer, lined up with the checkpoint (samples saved after it are dropped), for the trainer
to take. Whatever an older version wrote is read through `tammi_rl.legacy` first.

A checkpoint of the asynchronous loop holds no worker games; resumed synchronously, the
in-process worker starts new games from a seed that depends on the iteration, so it does
not replay the first run's games.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from tammi_rl.config import Config
from tammi_rl.distributed.pool import worker_seed
from tammi_rl.legacy import (
    one_file_replay_snapshot,
    upgrade_checkpoint_config,
    upgrade_counters,
    upgrade_learner_state,
    upgrade_selfplay_state,
)
from tammi_rl.store.checkpoint import load_checkpoint, load_model_weights, restore_rng
from tammi_rl.store.rundir import RunDir
from tammi_rl.train.learner import Learner
from tammi_rl.train.replay import ReplayBuffer, ReplayError


class ResumableWorker(Protocol):
    """What a resume needs from the in-process self-play worker."""

    def load_state_dict(self, state: dict) -> None: ...


@dataclass
class Resumed:
    """What the trainer takes from the checkpoint it resumed from."""

    path: Path
    counters: dict[str, Any]
    """The checkpoint's counters in today's format (the trainer's `Counters` fields)."""
    saved_hours: float
    """The ``train.hours`` budget the checkpoint ran under (0: none)."""
    selfplay_weights: dict | None
    """The weights self-play used under gating (None without gating)."""
    replay: ReplayBuffer | None
    """The replay buffer as it was at the checkpoint (None: nothing saved to load)."""


def resume(
    run: RunDir,
    cfg: Config,
    variant: str,
    learner: Learner,
    worker: ResumableWorker | None,
    sample_rng: np.random.Generator,
    obs_shape: tuple[int, ...],
    squares: int,
    say: Callable[[str], None],
) -> Resumed | None:
    """Put ``run``'s newest checkpoint (it must be of ``variant``, the rules' name, and of
    ``cfg.network``'s shape) back into ``learner``, ``worker`` (the synchronous loop's; None in
    the asynchronous one) and the RNGs; returns the rest, or None when the run has no
    checkpoint yet. ``say`` tells the person what happens."""
    path = run.resume_checkpoint()
    if path is None:
        say(f"{run.root}: no checkpoint yet; starting the run from the beginning")
        return None
    ckpt = load_checkpoint(path, variant=variant, network=cfg.network)
    load_model_weights(learner.model, ckpt, path)
    if ckpt.get("learner") is not None:
        learner.load_state_dict(upgrade_learner_state(ckpt["learner"]))
    else:  # a playing checkpoint: its weights are the trained ones and the average starts there
        learner.restart_average()
    counters = upgrade_counters(ckpt["counters"])
    counters["eval_scores"] = {int(k): float(v) for k, v in counters.get("eval_scores", {}).items()}
    saved_hours = float(upgrade_checkpoint_config(ckpt.get("config"))["train"]["hours"])
    saved_worker = ckpt.get("worker") or {}
    if worker is not None:
        if "rng" not in saved_worker:  # an asynchronous run's checkpoint: new games, from a new seed
            seed = worker_seed(cfg.seed, 0, 0, counters["iteration"])
            saved_worker = {"rng": np.random.default_rng(seed).bit_generator.state, "games": []}
        worker.load_state_dict(upgrade_selfplay_state(saved_worker))
    elif saved_worker.get("games"):
        say(
            f"note: the {len(saved_worker['games'])} self-play games in progress at the checkpoint "
            "are not continued (the workers start new ones)"
        )
    selfplay_weights = ckpt.get("selfplay_model")
    if ckpt.get("rng") is not None:
        restore_rng(ckpt["rng"], sample_rng)
    replay = load_replay(run, cfg.replay.capacity, obs_shape, squares, counters["replay_total_added"], say)
    say(
        f"resuming {run.root} from {path.name}: iteration {counters['iteration']}, "
        f"learner step {learner.step_count}, replay {len(replay) if replay is not None else 0} samples"
    )
    return Resumed(path, counters, saved_hours, selfplay_weights, replay)


def load_replay(
    run: RunDir, capacity: int, obs_shape: tuple[int, ...], squares: int, known: int, say: Callable[[str], None]
) -> ReplayBuffer | None:
    """``run``'s replay buffer as it was at the checkpoint that counted ``known`` samples added
    (samples saved after it are dropped); None when nothing can be loaded (``say`` tells why)."""
    directory, one_file = run.replay_dir, one_file_replay_snapshot(run.root)
    try:
        if any(directory.glob("chunk_*.npz")):
            buf, path = (
                ReplayBuffer.load_chunks(directory, capacity, obs_shape, until=known, squares=squares),
                directory,
            )
        elif one_file.is_file():
            buf, path = ReplayBuffer.load(one_file, capacity, obs_shape, squares), one_file
        else:
            if known:
                say(f"warning: {directory} holds no replay chunks; the replay buffer starts empty")
            return None
    except ReplayError as exc:
        say(f"warning: {exc}; the replay buffer starts empty")
        return None
    extra = buf.total_added - known
    if extra > 0:  # a one-file snapshot written just before a checkpoint that never landed
        buf.drop_newest(extra)
    elif extra < 0:
        say(f"warning: {path} is older than the checkpoint ({-extra} samples short)")
    return buf
