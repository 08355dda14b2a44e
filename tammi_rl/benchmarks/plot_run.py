"""Plot a run's learning curves from its TensorBoard events (a script, not a test).

    python -m tammi_rl.benchmarks.plot_run runs/russian notebooks/figures/russian_run.png \
        [--baseline runs/other --baseline-label "value target: outcome only"]

Four panels: policy and value loss, value accuracy and policy entropy, self-play game
length and W/D/L, and the score against alpha-beta per depth over iterations. With
``--baseline`` the last panel also shows another run's scores (dashed), for an A/B.
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--baseline", type=Path, help="another run whose eval scores are drawn dashed")
    parser.add_argument("--baseline-label", default="baseline")
    args = parser.parse_args()
    acc = EventAccumulator(str(args.run_dir / "tb"), size_guidance={"scalars": 0})
    acc.Reload()
    fig, axes = plt.subplots(2, 2, figsize=(11, 7), constrained_layout=True)
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
        ax.plot(*series(acc, tag), label=tag.split("/")[1])
    ax.set_ylabel("fraction of self-play games")
    twin = ax.twinx()
    twin.plot(*series(acc, "selfplay/game_length"), color="grey", alpha=0.5, label="game length (plies)")
    twin.set_ylabel("plies")
    ax.set_title("self-play results and game length")
    ax.legend(loc="upper left")
    ax = axes[1, 1]
    for tag in sorted(t for t in acc.Tags()["scalars"] if t.startswith("eval/score_vs_ab_d")):
        ax.plot(*series(acc, tag), marker="o", label=f"vs alpha-beta depth {tag.rsplit('d', 1)[1]}")
    if args.baseline is not None:
        base = EventAccumulator(str(args.baseline / "tb"), size_guidance={"scalars": 0})
        base.Reload()
        ax.set_prop_cycle(None)  # same colour per depth as above
        for tag in sorted(t for t in base.Tags()["scalars"] if t.startswith("eval/score_vs_ab_d")):
            ax.plot(
                *series(base, tag), marker="x", ls="--", label=f"{args.baseline_label}, depth {tag.rsplit('d', 1)[1]}"
            )
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_ylim(0, 1)
    ax.set_title("score against alpha-beta (during training)")
    ax.legend()
    for a in axes.flat:
        a.set_xlabel("iteration")
    fig.suptitle(f"tammi-rl run {args.run_dir.name}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=90)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
