"""How a network's self-play games end, under each of a few self-play settings.

A recipe change to self-play (a search that sees repetition, a resignation threshold, a length
cap) changes the games the learner sees before it changes any strength. This plays the same
number of self-play games with one network per arm, from the same seed, exactly as a run's
worker would, and prints how they ended: the share of each `GameResult.reason` (what a run
logs as ``selfplay/end/REASON``), the results, the game length and the speed.

    python -m tammi_rl.benchmarks.selfplay_ends configs/turkish.yaml --model checkpoints/turkish.pt \\
        --games 64 --arm blind --arm "sees mcts.repetition_draws=true"

An arm is a name and the config overrides that make it, as in `recipe_ab`; with no ``--arm``
the config alone is played.
"""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass

import torch

from tammi_rl.benchmarks.recipe_ab import ArmSpec
from tammi_rl.config import load_config
from tammi_rl.nn.saved import load_network
from tammi_rl.selfplay.worker import END_KEYS, SelfPlayWorker


@dataclass(frozen=True)
class ArmEnds:
    """What one arm's self-play games came to."""

    name: str
    games: int
    mean_plies: float
    white_win: float
    draw: float
    black_win: float
    ends: dict[str, float]
    """`GameResult.reason` -> the share of the games that ended so (reasons no game hit left out)."""
    positions_per_s: float


def play_arm(config: str, model: str, arm: ArmSpec, games: int, seed: int) -> ArmEnds:
    """Play ``games`` self-play games with ``model`` under ``config`` and the arm's overrides."""
    cfg = load_config(config, list(arm.overrides))
    net = load_network(model)
    if net.rules.variant.name != cfg.variant:
        raise ValueError(f"{model} plays {net.rules.variant.name}, but {config} is {cfg.variant}")
    cfg = dataclasses.replace(cfg, network=net.network)  # the checkpoint's network, whatever the config says
    worker = SelfPlayWorker(net.rules, cfg, torch.device("cpu"), seed)
    worker.set_weights(net.model.state_dict())
    result = worker.play(games)
    stats = result.stats
    n = int(stats["games"])
    ends = {reason: stats[key] / n for reason, key in END_KEYS.items() if stats.get(key)}
    return ArmEnds(
        name=arm.name,
        games=n,
        mean_plies=stats["mean_game_length"],
        white_win=stats["white_win"],
        draw=stats["draw"],
        black_win=stats["black_win"],
        ends=ends,
        positions_per_s=stats["positions_per_s"],
    )


def table(arms: list[ArmEnds]) -> str:
    """A markdown table: one row per arm, one column per reason any arm's games ended by."""
    reasons = sorted({reason for arm in arms for reason in arm.ends})
    head = ["arm", "games", "plies a game", "white / draw / black", *reasons, "positions/s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for arm in arms:
        cells = [
            arm.name,
            str(arm.games),
            f"{arm.mean_plies:.0f}",
            f"{arm.white_win:.2f} / {arm.draw:.2f} / {arm.black_win:.2f}",
            *(f"{arm.ends.get(reason, 0.0):.2f}" for reason in reasons),
            f"{arm.positions_per_s:.0f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("config", help="the run's config file")
    parser.add_argument("--model", required=True, help="checkpoint file or run directory whose network plays")
    parser.add_argument("--games", type=int, default=64, help="games per arm (default 64)")
    parser.add_argument("--seed", type=int, default=1, help="every arm's seed (default 1)")
    parser.add_argument("--arm", action="append", default=[], help='"NAME key=value ...", repeatable')
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error(f"--games must be at least 1, got {args.games}")
    try:
        arms = [ArmSpec.parse(text) for text in args.arm] or [ArmSpec("config")]
    except ValueError as exc:
        parser.error(str(exc))
    results = []
    for arm in arms:
        results.append(play_arm(args.config, args.model, arm, args.games, args.seed))
        print(f"{arm.name}: {results[-1].games} games", flush=True)
    print(table(results))


if __name__ == "__main__":
    main()
