"""A/B benchmark: this checkout against another one, side by side in one run.

    git worktree add ../baseline <commit>
    python -m tammi_rl.benchmarks.compare ../baseline --rounds 2

Each round runs every benchmark script once in the baseline checkout and once in this
one, alternating, so both see the same machine load; figures are the median over the
rounds, and the ratio is this checkout's figure over the baseline's (above 1: faster).
Each side runs its own code (``PYTHONPATH`` is its checkout) and its own copy of the
script, so the comparison holds across refactors that move modules. A benchmark the
baseline does not have is skipped.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Bench:
    """One script, its arguments, and which column of its table lines is the figure."""

    script: str
    args: tuple[str, ...]
    column: int
    unit: str

    def figures(self, out: str) -> dict[str, float]:
        """{first word of a table line: its figure} for every line whose column parses as a number."""
        found: dict[str, float] = {}
        for line in out.splitlines():
            words = line.split()
            if len(words) > self.column:
                try:
                    found[words[0]] = float(words[self.column].replace(",", ""))
                except ValueError:
                    continue
        return found


BENCHES = {
    "perft": Bench("bench_perft", (), 5, "M leaves/CPU s"),
    "env": Bench("bench_env", ("--seconds", "3"), 2, "steps/CPU s"),
    "alphabeta": Bench("bench_alphabeta", ("--seconds", "1"), 2, "nodes/CPU s"),
    "mcts": Bench("bench_mcts", ("--games", "32"), 1, "uniform sims/s"),
    "selfplay": Bench("bench_mcts", ("--games", "32"), 4, "self-play positions/s"),
}


def script_path(tree: Path, script: str) -> Path | None:
    for folder in ("tammi_rl/benchmarks", "benchmarks"):
        path = tree / folder / f"{script}.py"
        if path.exists():
            return path
    return None


def run_script(tree: Path, script: str, args: tuple[str, ...], cpu: str | None) -> str:
    """The stdout of one benchmark script run in ``tree`` (empty if the tree lacks it)."""
    path = script_path(tree, script)
    if path is None:
        return ""
    env = dict(os.environ, PYTHONPATH=str(tree), OMP_NUM_THREADS="1")
    cmd = [sys.executable, str(path), *args]
    if cpu is not None:
        cmd = ["taskset", "-c", cpu, *cmd]
    done = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"{path} failed in {tree}:\n{done.stderr[-2000:]}")
    return done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("baseline", type=Path, help="the other checkout (e.g. a git worktree of an older commit)")
    parser.add_argument("--candidate", type=Path, default=HERE, help="the checkout to compare (default: this one)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--only", nargs="+", choices=sorted(BENCHES), default=sorted(BENCHES))
    parser.add_argument("--cpu", default=None, help="pin every run to this CPU (taskset -c), e.g. 1")
    args = parser.parse_args()
    trees = {"baseline": args.baseline.resolve(), "this": args.candidate.resolve()}
    scripts = {(b.script, b.args) for name, b in BENCHES.items() if name in args.only}
    results: dict[tuple[str, str], dict[tuple[str, tuple[str, ...]], list[str]]] = {}
    for r in range(args.rounds):
        for key in sorted(scripts):
            for side, tree in trees.items():
                print(f"round {r + 1}/{args.rounds}: {key[0]} {' '.join(key[1])} in {side} ({tree})", flush=True)
                results.setdefault((side, key[0]), {}).setdefault(key, []).append(
                    run_script(tree, key[0], key[1], args.cpu)
                )
    print(
        f"\n{'benchmark':<10} {'case':<14} {'baseline':>12} {'this':>12} {'ratio':>7}  unit (median of "
        f"{args.rounds} rounds)"
    )
    for name in args.only:
        bench = BENCHES[name]
        key = (bench.script, bench.args)
        per_side = {}
        for side in trees:
            runs = [bench.figures(out) for out in results[(side, bench.script)][key]]
            cases = set.intersection(*(set(f) for f in runs)) if runs and all(runs) else set()
            per_side[side] = {c: statistics.median(f[c] for f in runs) for c in cases}
        for case in sorted(set(per_side["baseline"]) & set(per_side["this"])):
            old, new = per_side["baseline"][case], per_side["this"][case]
            print(f"{name:<10} {case:<14} {old:>12,.2f} {new:>12,.2f} {new / old:>7.2f}  {bench.unit}")


if __name__ == "__main__":
    main()
