"""How a training run shares the machine's cores: self-play workers and the learner's threads.

``selfplay.workers: auto`` and ``threads: auto`` (the defaults) split the cores this process
may use by what each side costs. At replay ratio ``r`` the learner trains ``r`` samples for
every position the workers play, so it wants the share ``r·l / (r·l + s)`` of the cores,
``l`` and ``s`` being the core-seconds of one sample learned and of one position played.
Their ratio is estimated from the recipe's measurement (`POSITION_COST_IN_SAMPLES`), scaled
by the simulations a position is searched with (their mean over the run under progressive
simulations) and by the self-play runtime; the network's size cancels out, as both sides
run the same network.

    cores  2: 1 learner thread, 2 workers   (the recipe: replay ratio 4, 32 simulations, 8-bit)
    cores  8: 3 learner threads, 6 workers
    cores 16: 5 learner threads, 12 workers

The workers get the cores the learner does not, plus one: the learner waits whenever it is
ahead of the replay ratio, and on two cores two workers beside it measured 1.08x the
positions of one. On CUDA the learner runs on the device, so it keeps one thread and every
core plays. A number in either key is taken as it is; the workers' own torch and ONNX
Runtime always run on one thread each under ``auto``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from tammi_rl.config.schema import Config
from tammi_rl.config.simulations import SimulationSchedule

POSITION_COST_IN_SAMPLES = 8.0
"""Core-seconds of one self-play position over those of one sample learned, for the Russian
recipe on the AVX2 EPYC (8 ms against 1 ms; docs/benchmarks.md, "The learner's speed and the
replay ratio"), at `REFERENCE_SIMULATIONS` simulations a move with 8-bit self-play."""
REFERENCE_SIMULATIONS = 32
"""The simulations a move of that measurement."""
FLOAT_SELFPLAY_COST = 1.8
"""How much dearer float32 self-play is than 8-bit (docs/benchmarks.md, "8-bit inference")."""


@dataclass(frozen=True)
class CoreSplit:
    """The resolved split: worker processes and the learner's torch threads (0: torch's default)."""

    workers: int
    learner_threads: int
    cores: int

    def describe(self) -> str:
        threads = "torch's default" if self.learner_threads == 0 else str(self.learner_threads)
        return f"{self.cores} cores: {self.workers} self-play workers, learner threads {threads}"


def usable_cores() -> int:
    """The cores this process may run on (its affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def learner_share(cfg: Config) -> float:
    """The learner's share of the cores that keeps both sides busy (see the module docstring)."""
    simulations = SimulationSchedule.of(cfg.mcts).mean()
    position_cost = POSITION_COST_IN_SAMPLES * simulations / REFERENCE_SIMULATIONS
    if cfg.runtime != "onnx-int8":
        position_cost *= FLOAT_SELFPLAY_COST
    ratio = cfg.train.replay_ratio
    return ratio / (ratio + position_cost)


def split_cores(cfg: Config, cores: int | None = None, on_cuda: bool = False) -> CoreSplit:
    """Workers and learner threads for ``cfg`` on ``cores`` cores (default: this process's);
    ``on_cuda``: the learner runs on a CUDA device (the caller resolves ``device: auto``)."""
    cores = usable_cores() if cores is None else max(1, cores)
    threads = cfg.threads
    if threads == "auto":
        threads = 1 if on_cuda else max(1, min(cores, round(cores * learner_share(cfg))))
    assert isinstance(threads, int)
    workers = cfg.selfplay.workers
    if workers == "auto":
        workers = cores if on_cuda else max(1, cores - max(threads, 1) + 1)
    assert isinstance(workers, int)
    return CoreSplit(workers=workers, learner_threads=threads, cores=cores)


def worker_threads(cfg: Config) -> int:
    """The torch and ONNX Runtime threads of a self-play worker (0: the libraries' default)."""
    return 1 if cfg.threads == "auto" else int(cfg.threads)
