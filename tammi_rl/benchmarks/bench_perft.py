"""Perft throughput per variant (a script, not a test).

    python -m tammi_rl.benchmarks.bench_perft [--variants russian turkish] [--repeats 3]

Counts leaves of whole moves from each variant's start position with the compiled
engine (bulk-counted at the last ply) and prints leaves per second, by wall clock and
by process CPU time (steadier on a shared machine). Best of three runs; compilation is
excluded.
"""

from __future__ import annotations

import argparse
import time

from tammi_rl.rules.engine import Rules

DEPTHS = {"russian": 9, "english": 9, "italian": 9, "brazilian": 9, "turkish": 7, "international": 7}


def measure(variant: str, depth: int, repeats: int = 3) -> tuple[int, float, float]:
    rules = Rules.for_variant(variant)
    pos = rules.start_position()
    rules.perft(pos, 2)  # compile / load the cache
    best_wall = best_cpu = float("inf")
    leaves = 0
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        leaves = rules.perft(pos, depth)
        best_wall = min(best_wall, time.perf_counter() - w)
        best_cpu = min(best_cpu, time.process_time() - c)
    return leaves, best_wall, best_cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", nargs="+", default=list(DEPTHS))
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"{'variant':<14} {'depth':>5} {'leaves':>12} {'wall s':>8} {'M leaves/s':>11} {'M leaves/CPU s':>15}")
    for variant in args.variants:
        depth = DEPTHS.get(variant, 7)
        leaves, wall, cpu = measure(variant, depth, args.repeats)
        print(
            f"{variant:<14} {depth:>5} {leaves:>12,} {wall:>8.2f} {leaves / wall / 1e6:>11.2f} "
            f"{leaves / cpu / 1e6:>15.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
