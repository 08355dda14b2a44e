"""Where an iteration's time goes: throughput, the replay ratio held, and time shares.

    meter = IterationMeter()
    with meter.timing("learner"):
        learner.step(batch)
    meter.add_selfplay(stats)                  # one delivery's (or one local call's) stats
    values = meter.summary(positions=..., samples_trained=..., ratio_held=...)

Tags written (TensorBoard, one point per iteration):

- ``throughput/positions_per_s``: self-play samples received per second of wall time;
- ``throughput/learner_samples_per_s``: samples the learner trained on per second of wall time;
- ``replay/ratio_held`` (whole run) and ``replay/ratio_iteration`` (this iteration);
- (with the other ``selfplay/*`` stats) ``selfplay/mean_nn_batch``: positions per network call;
- ``time/search``, ``time/inference``, ``time/transport``: shares of the self-play
  workers' time (tree search and game logic; network calls; sending samples);
- ``time/learner``, ``time/receive``, ``time/wait``, ``time/eval``, ``time/checkpoint``:
  shares of the trainer's wall time (learning; reading workers' messages; waiting for
  games; evaluation; checkpoints).

`RunClock` keeps the run's own wall time across its sessions (a resumed run carries the
seconds of the sessions before it in its checkpoint) and estimates what is left.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

TRAINER_PHASES = ("learner", "receive", "wait", "eval", "checkpoint")


@dataclass
class IterationMeter:
    """Accumulates one iteration's timings and self-play stats (see the module docstring)."""

    start: float = field(default_factory=time.perf_counter)
    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(TRAINER_PHASES, 0.0))
    worker_seconds: float = 0.0
    nn_seconds: float = 0.0
    send_seconds: float = 0.0
    nn_calls: float = 0.0
    nn_positions: float = 0.0

    @contextmanager
    def timing(self, phase: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[phase] += time.perf_counter() - start

    def add_selfplay(self, stats: dict[str, float]) -> None:
        """Fold in a self-play result's stats (a local call's or a merged set of deliveries)."""
        self.worker_seconds += stats.get("worker_seconds", stats.get("seconds", 0.0))
        self.nn_seconds += stats.get("nn_seconds", 0.0)
        self.send_seconds += stats.get("send_seconds", 0.0)
        self.nn_calls += stats.get("nn_calls", 0.0)
        self.nn_positions += stats.get("nn_positions", 0.0)

    def wall(self) -> float:
        return time.perf_counter() - self.start

    def summary(self, positions: int, samples_trained: int, ratio_held: float) -> dict[str, float]:
        """The iteration's telemetry under its TensorBoard tags (``positions`` and
        ``samples_trained``: this iteration's counts)."""
        wall = max(self.wall(), 1e-9)
        work = self.worker_seconds
        out = {
            "throughput/positions_per_s": positions / wall,
            "throughput/learner_samples_per_s": samples_trained / wall,
            "replay/ratio_held": ratio_held,
            "replay/ratio_iteration": samples_trained / positions if positions else 0.0,
        }
        if work > 0:
            out["time/inference"] = self.nn_seconds / work
            out["time/transport"] = self.send_seconds / work
            out["time/search"] = max(0.0, 1.0 - out["time/inference"] - out["time/transport"])
        for phase in TRAINER_PHASES:
            out[f"time/{phase}"] = self.seconds[phase] / wall
        return out

    def mean_batch(self) -> float:
        return self.nn_positions / self.nn_calls if self.nn_calls else 0.0


@dataclass
class RunClock:
    """A run's wall time over all its sessions, and the time its remaining iterations need.

    The gaps between a stop and a resume are not counted. The estimate uses this session's
    pace only, since a resumed run may be on another machine.
    """

    before: float = 0.0
    """Seconds the run trained in earlier sessions (from its checkpoint's counters)."""
    first_iteration: int = 0
    """Iterations already completed when this session started."""
    start: float = field(default_factory=time.perf_counter)

    def session(self, now: float | None = None) -> float:
        return (time.perf_counter() if now is None else now) - self.start

    def total(self, now: float | None = None) -> float:
        """Seconds trained so far, earlier sessions included."""
        return self.before + self.session(now)

    def remaining(self, done: int, target: int, now: float | None = None) -> float | None:
        """Seconds to reach iteration ``target`` from ``done`` at this session's mean pace
        (None before this session has completed an iteration)."""
        played = done - self.first_iteration
        if played <= 0:
            return None
        return self.session(now) / played * max(0, target - done)


def format_duration(seconds: float) -> str:
    """A duration as a person reads it: ``42s``, ``7m05s``, ``1h09m``."""
    total = max(0, round(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


def status_parts(values: dict[str, float], mean_batch: float) -> list[str]:
    """The telemetry part of the status line: speeds, ratio, inference batch and time shares."""
    parts = [
        f"{values['throughput/positions_per_s']:.0f} pos/s",
        f"learn {values['throughput/learner_samples_per_s']:.0f} samples/s",
        f"ratio {values['replay/ratio_held']:.2f}",
        f"batch {mean_batch:.1f}",
    ]
    for who, phases in (("workers", ("search", "inference", "transport")), ("trainer", TRAINER_PHASES)):
        shares = [(p, values.get(f"time/{p}", 0.0)) for p in phases]
        shown = [f"{p} {v:.0%}" for p, v in shares if v >= 0.01]
        if shown:
            parts.append(f"{who}: " + " ".join(shown))
    return parts
