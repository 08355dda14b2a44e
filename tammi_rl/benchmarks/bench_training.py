"""Training throughput: the asynchronous loop against the synchronous one, side by side.

    python -m tammi_rl.benchmarks.bench_training                       # shipped Russian config
    python -m tammi_rl.benchmarks.bench_training --iterations 8 --rounds 2 \\
        --arm workers=0 --arm workers=auto --arm "workers=0 runtime=torch"

Each arm is a real training run of the config (learner active, checkpoints and logging on,
everything as shipped except the arm's overrides) in a throw-away run directory; arms
alternate round by round so they see the same machine load. Per arm it prints self-play
positions per second of wall time and learner samples per second, both measured after
the first ``--warmup`` iterations (numba and worker start-up, the replay warm-up below
``replay.min_samples``), the replay ratio held, and the peak resident memory of the
trainer and its workers together; then each arm's positions/s over the first arm's.

``--fill-replay`` first fills the replay buffer to its capacity with copies of the first
iterations' samples, so the memory figure is that of a run whose window is full.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tammi_rl.config import load_config
from tammi_rl.train.trainer import Trainer, worker_count


def rss_bytes(pid: int) -> int:
    """Resident memory of ``pid`` (Linux /proc; 0 when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


def tree_rss(pid: int) -> int:
    """Resident memory of ``pid`` and all its descendants."""
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        total += rss_bytes(p)
        for task in Path(f"/proc/{p}/task").glob("*") if Path(f"/proc/{p}/task").exists() else []:
            try:
                stack += [int(c) for c in (task / "children").read_text().split()]
            except FileNotFoundError:
                continue
    return total


@dataclass
class ArmResult:
    positions_per_s: float
    learner_samples_per_s: float
    ratio_held: float
    peak_rss: int
    workers: int
    marks: list[tuple[float, int, int, int]] = field(default_factory=list)


class _MeteredTrainer(Trainer):
    """A trainer that records (time, positions, samples trained, memory) after each iteration."""

    marks: list[tuple[float, int, int, int]]
    fill: bool = False

    def _end_iteration(self, it, logger, meter, stats, games, metrics, positions0, trained0):
        out = super()._end_iteration(it, logger, meter, stats, games, metrics, positions0, trained0)
        if self.fill and len(self.replay) < self.replay.capacity:
            self._fill_replay()
        c = self.counters
        self.marks.append((time.perf_counter(), c.positions, c.samples_trained, tree_rss(os.getpid())))
        return out

    def _fill_replay(self) -> None:
        """Copies of what the buffer holds until it is full (counted as added, not as played)."""
        contents = self.replay.contents()
        while len(self.replay) < self.replay.capacity and len(contents):
            self.replay.add(contents.select(slice(0, self.replay.capacity - len(self.replay))))
        self.counters.replay_total_added = self.replay.total_added


def run_arm(config: str, overrides: list[str], iterations: int, warmup: int, fill: bool) -> ArmResult:
    with tempfile.TemporaryDirectory(prefix="tammi-bench-") as tmp:
        cfg = load_config(
            config,
            [
                *overrides,
                f"runs_dir={tmp}/runs",
                f"checkpoints_dir={tmp}/ck",
                f"train.iterations={iterations}",
                "name=bench",
            ],
        )
        trainer = _MeteredTrainer(cfg, out=io.StringIO())
        trainer.marks = []
        trainer.fill = fill
        start = time.perf_counter()
        trainer.run_loop()
        marks = trainer.marks
        t0, p0, s0, _ = marks[warmup - 1] if warmup > 0 else (start, 0, 0, 0)
        t1, p1, s1, _ = marks[-1]
        c = trainer.counters
        return ArmResult(
            positions_per_s=(p1 - p0) / (t1 - t0),
            learner_samples_per_s=(s1 - s0) / (t1 - t0),
            ratio_held=c.samples_trained / c.positions if c.positions else 0.0,
            peak_rss=max(m[3] for m in marks),
            workers=worker_count(cfg),
            marks=marks,
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="configs/russian.yaml")
    parser.add_argument("--iterations", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=2, help="iterations left out of the rates")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument(
        "--arm",
        action="append",
        default=None,
        help='space-separated overrides of one arm, keys relative to selfplay for "workers=..." '
        'and "runtime=..." shorthands (default: --arm workers=0 --arm workers=auto)',
    )
    parser.add_argument("--fill-replay", action="store_true", help="fill the replay window before measuring memory")
    args = parser.parse_args(argv)
    if not 0 <= args.warmup < args.iterations:
        parser.error("--warmup must be below --iterations")
    arms = args.arm or ["workers=0", "workers=auto"]
    results: dict[str, list[ArmResult]] = {arm: [] for arm in arms}
    for rnd in range(args.rounds):
        for arm in arms:
            overrides = [_expand(word) for word in arm.split()]
            res = run_arm(args.config, overrides, args.iterations, args.warmup, args.fill_replay)
            results[arm].append(res)
            print(
                f"round {rnd + 1} {arm:28s} {res.positions_per_s:8.1f} pos/s  "
                f"{res.learner_samples_per_s:8.1f} learner samples/s  ratio {res.ratio_held:.2f}  "
                f"peak RSS {res.peak_rss / 2**20:,.0f} MiB ({res.workers} workers)",
                flush=True,
            )
    print(f"\n{args.config}, iterations {args.warmup + 1}-{args.iterations} of each run, median of {args.rounds}")
    header = ("arm", "pos/s", "learner samples/s", "ratio held", "peak RSS MiB", "x first")
    print(f"{header[0]:30s} {header[1]:>9s} {header[2]:>18s} {header[3]:>11s} {header[4]:>13s} {header[5]:>8s}")
    base = statistics.median(r.positions_per_s for r in results[arms[0]])
    for arm in arms:
        rs = results[arm]
        pos = statistics.median(r.positions_per_s for r in rs)
        learn = statistics.median(r.learner_samples_per_s for r in rs)
        ratio = statistics.median(r.ratio_held for r in rs)
        rss = max(r.peak_rss for r in rs) / 2**20
        print(f"{arm:30s} {pos:9.1f} {learn:18.1f} {ratio:11.2f} {rss:13,.0f} {pos / base:8.2f}")


def _expand(word: str) -> str:
    """``workers=2`` -> ``selfplay.workers=2``; other overrides pass through."""
    key = word.split("=", 1)[0]
    if key in ("workers", "parallel_games", "inference"):
        return f"selfplay.{word}"
    return word


if __name__ == "__main__":
    main()
