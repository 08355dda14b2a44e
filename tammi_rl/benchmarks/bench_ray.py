"""Self-play throughput: the local backend against the Ray backend with 1 and 2 actors.

    python -m tammi_rl.benchmarks.bench_ray [--games 8] [--actors 1 2] [--config configs/russian.yaml] [key=value ...]

Same config for every row (configs/russian.yaml if present, else the defaults with a
small network); the same number of games per measurement, split evenly among the
actors. Each backend plays one warm-up round (compilation, actor start-up, first weight
fetch) before it is timed. Ray runs on a local instance with one CPU and one torch
thread per actor; the local backend uses ``--threads`` torch threads (default 1: on a
busy machine several intra-op threads per process oversubscribe the cores and slow
self-play down many times). Prints a table of positions/s and games/s.
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from pathlib import Path

import torch

from tammi_rl.config import Config, load_config
from tammi_rl.nn.model import build_model
from tammi_rl.rules.engine import Rules

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def bench_config(path: str | None, games: int, overrides: list[str]) -> Config:
    if path is None and (CONFIGS / "russian.yaml").is_file():
        path = str(CONFIGS / "russian.yaml")
    small = [] if path else ["network.blocks=2", "network.channels=32"]
    return load_config(
        path,
        [*small, f"selfplay.games_per_iteration={games}", "selfplay.parallel_games=1000", "device=cpu", *overrides],
    )


def measure(backend, weights: dict, games: int, warmup: int) -> dict[str, float]:
    backend.set_weights(weights)
    backend.play(warmup)
    start = time.perf_counter()
    result = backend.play(games)
    seconds = time.perf_counter() - start
    return {
        "positions": len(result.samples),
        "games": len(result.games),
        "seconds": seconds,
        "positions_per_s": len(result.samples) / seconds,
        "games_per_s": len(result.games) / seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", help="run config (default: configs/russian.yaml)")
    parser.add_argument("--games", type=int, default=8, help="games per timed measurement")
    parser.add_argument("--actors", type=int, nargs="+", default=[1, 2])
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads of the local backend (default 1, as each actor; 0: torch default)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("overrides", nargs="*", help="config overrides, e.g. mcts.simulations=32")
    args = parser.parse_args()

    cfg = bench_config(args.config, args.games, args.overrides)
    rules = Rules.for_variant(cfg.variant)
    torch.manual_seed(args.seed)
    weights = build_model(rules, cfg.network).state_dict()
    warmup = max(1, max(args.actors))
    rows: list[tuple[str, dict[str, float]]] = []

    from tammi_rl.selfplay.worker import SelfPlayWorker

    if args.threads > 0:
        torch.set_num_threads(args.threads)
    rows.append(
        (
            f"local ({torch.get_num_threads()} threads)",
            measure(SelfPlayWorker(rules, cfg, torch.device("cpu"), args.seed), weights, args.games, warmup),
        )
    )

    import ray

    from tammi_rl.distributed.ray_backend import RayBackend

    ray.init(address="local", num_cpus=max(args.actors), include_dashboard=False, logging_level=logging.ERROR)
    try:
        for n in args.actors:
            cfg.distributed.num_actors = n
            cfg.distributed.cpus_per_actor = 1.0
            backend = RayBackend(rules, cfg, torch.device("cpu"), args.seed)
            try:
                rows.append((f"ray, {n} actor{'s' if n > 1 else ''}", measure(backend, weights, args.games, warmup)))
            finally:
                backend.close()
    finally:
        ray.shutdown()

    net = cfg.network
    print(
        f"\n{cfg.variant}: {args.games} games, {cfg.mcts.simulations} simulations, network {net.blocks}x"
        f"{net.channels}, max {cfg.selfplay.max_plies} plies, {os.cpu_count()} CPUs"
    )
    base = rows[0][1]["positions_per_s"]
    print(
        f"| {'backend':<22} | {'positions':>9} | {'seconds':>7} | {'positions/s':>11} | {'games/s':>7} | "
        f"{'vs local':>8} |"
    )
    print(f"|{'-' * 24}|{'-' * 11}|{'-' * 9}|{'-' * 13}|{'-' * 9}|{'-' * 10}|")
    for name, r in rows:
        print(
            f"| {name:<22} | {r['positions']:>9.0f} | {r['seconds']:>7.1f} | {r['positions_per_s']:>11.1f} | "
            f"{r['games_per_s']:>7.2f} | {r['positions_per_s'] / base:>7.2f}x |"
        )


if __name__ == "__main__":
    main()
