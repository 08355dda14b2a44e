"""Plot a run's learning curves from its TensorBoard events (a script, not a test).

    python -m tammi_rl.benchmarks.plot_run runs/russian notebooks/figures/russian_run.png \
        [--baseline runs/other --baseline-label "value target: outcome only"]

Six panels: policy and value loss, value accuracy and policy entropy, self-play game
length and W/D/L, the score against alpha-beta per depth, the fitted Elo with its error
bar (anchored on alpha-beta at the first evaluated depth) and self-play throughput, over
iterations. With ``--baseline`` the score and Elo panels also show another run (dashed),
for an A/B.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator


def series(acc: EventAccumulator, tag: str) -> tuple[list[int], list[float]]:
    if tag not in acc.Tags()["scalars"]:
        return [], []
    events = acc.Scalars(tag)
    return [e.step for e in events], [e.value for e in events]


def smoothed(steps: list[int], values: list[float]) -> tuple[list[int], list[float]]:
    """A trailing moving average over about 2% of the run, so per-iteration noise does not
    hide the trend (self-play fractions, game length, throughput)."""
    window = max(1, len(values) // 50)
    if window == 1:
        return steps, values
    sums = [0.0]
    for v in values:
        sums.append(sums[-1] + v)
    means = [(sums[i + 1] - sums[max(0, i + 1 - window)]) / min(window, i + 1) for i in range(len(values))]
    return steps, means


def elo_panel(ax: plt.Axes, acc: EventAccumulator, label: str, ls: str, marker: str) -> None:
    """The run's in-training Elo with its one-standard-error bars."""
    steps, elo = series(acc, "eval/elo")
    err_steps, err = series(acc, "eval/elo_error")
    if not steps:
        return
    errors = dict(zip(err_steps, err, strict=True))
    ax.errorbar(steps, elo, yerr=[errors.get(s, 0.0) for s in steps], ls=ls, marker=marker, capsize=3, label=label)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--baseline", type=Path, help="another run whose eval scores are drawn dashed")
    parser.add_argument("--baseline-label", default="baseline")
    args = parser.parse_args()
    acc = EventAccumulator(str(args.run_dir / "tb"), size_guidance={"scalars": 0})
    acc.Reload()
    base = None
    if args.baseline is not None:
        base = EventAccumulator(str(args.baseline / "tb"), size_guidance={"scalars": 0})
        base.Reload()
    fig, axes = plt.subplots(2, 3, figsize=(15, 7), constrained_layout=True)
    ax = axes[0, 0]
    for tag in ("loss/policy", "loss/value"):
        ax.plot(*series(acc, tag), label=tag)
    ax.set_title("losses")
    ax.legend()
    ax = axes[0, 1]
    for tag in ("value/accuracy", "policy/entropy"):
        ax.plot(*series(acc, tag), label=tag)
    ax.set_title("value accuracy, policy entropy")
    ax.legend()
    ax = axes[1, 0]
    for tag in ("selfplay/white_win", "selfplay/draw", "selfplay/black_win"):
        ax.plot(*smoothed(*series(acc, tag)), label=tag.split("/")[1])
    ax.set_ylabel("fraction of self-play games")
    twin = ax.twinx()
    twin.plot(*smoothed(*series(acc, "selfplay/game_length")), color="grey", alpha=0.6, label="game length (plies)")
    twin.set_ylabel("plies")
    ax.set_title("self-play results and game length (moving averages)")
    ax.legend(loc="upper left")
    ax = axes[1, 1]
    for tag in sorted(t for t in acc.Tags()["scalars"] if t.startswith("eval/score_vs_ab_d")):
        ax.plot(*series(acc, tag), marker="o", label=f"vs alpha-beta depth {tag.rsplit('d', 1)[1]}")
    if base is not None:
        ax.set_prop_cycle(None)  # same colour per depth as above
        for tag in sorted(t for t in base.Tags()["scalars"] if t.startswith("eval/score_vs_ab_d")):
            ax.plot(
                *series(base, tag), marker="x", ls="--", label=f"{args.baseline_label}, depth {tag.rsplit('d', 1)[1]}"
            )
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_ylim(0, 1)
    ax.set_title("score against alpha-beta (during training)")
    ax.legend()
    ax = axes[0, 2]
    elo_panel(ax, acc, "this run", "-", "o")
    if base is not None:
        elo_panel(ax, base, args.baseline_label, "--", "x")
    ax.set_title("Elo (anchor: alpha-beta at the first depth = 0)")
    ax.legend()
    ax = axes[1, 2]
    ax.plot(*smoothed(*series(acc, "throughput/positions_per_s")), label="self-play positions/s")
    ax.plot(*smoothed(*series(acc, "throughput/learner_samples_per_s")), label="learner samples/s")
    ax.set_title("throughput (moving average)")
    ax.legend()
    for a in axes.flat:
        a.set_xlabel("iteration")
    fig.suptitle(f"tammi-rl run {args.run_dir.name}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=90)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
