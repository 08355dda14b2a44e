"""Search and self-play throughput (a script, not a test).

    python -m tammi_rl.benchmarks.bench_mcts [--variants russian english] [--games 16] [--threads 1]
        [--set mcts.play_forced_hops=false ...]

Prints, per variant:
- MCTS simulations/s with a uniform evaluator (search and rules overhead alone),
  batched over 64 roots from early-middlegame positions;
- self-play positions/s with the variant's default network (configs/<variant>.yaml
  if present, else the built-in defaults) and the share of self-play time spent in
  the network forward pass (the rest is search, rules and bookkeeping).
Compilation is excluded: each measurement runs once before it is timed. ``--set`` applies
config overrides (``key.sub=value``) to both measurements, for A/B runs of a setting.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from tammi_rl.config import Config, load_config
from tammi_rl.env.observation import plane_count
from tammi_rl.mcts.search import BatchedSearch, RootState, uniform_evaluator
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game
from tammi_rl.selfplay.worker import SelfPlayWorker

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def middlegame_roots(rules: Rules, n: int, plies: int, seed: int) -> list[RootState]:
    rng = np.random.default_rng(seed)
    roots: list[RootState] = []
    while len(roots) < n:
        game = Game(rules)
        for _ in range(plies):
            moves = game.legal_moves()
            if not moves:
                break
            game.play(moves[int(rng.integers(len(moves)))])
        if not game.is_over:
            roots.append(RootState(board=game.position.as_int64()))
    return roots


def variant_config(variant: str, overrides: list[str]) -> Config:
    """configs/<variant>.yaml (else the built-in defaults) with ``overrides`` applied."""
    path = CONFIGS / f"{variant}.yaml"
    return load_config(path if path.exists() else None, [f"variant={variant}", *overrides])


def bench_search(variant: str, sims: int, trees: int, overrides: list[str]) -> float:
    rules = Rules.for_variant(variant)
    cfg = variant_config(variant, overrides)
    planes = plane_count(cfg.network.attack_planes)
    search = BatchedSearch(rules, cfg.mcts, max_trees=trees, max_simulations=sims, planes=planes)
    evaluator = uniform_evaluator(search.codec.n_actions)
    roots = middlegame_roots(rules, trees, 12, seed=1)
    rng = np.random.default_rng(0)
    search.run(roots[:2], evaluator, 4, True, rng)  # compile
    start = time.perf_counter()
    search.run(roots, evaluator, sims, True, rng)
    return trees * sims / (time.perf_counter() - start)


def bench_selfplay(variant: str, games: int, overrides: list[str]) -> dict[str, float | str]:
    batch = [f"selfplay.games_per_iteration={games}", f"selfplay.parallel_games={games}"]
    cfg = variant_config(variant, [*batch, *overrides])
    torch.manual_seed(0)  # the same network, so the same games: runs (and checkouts) compare like for like
    worker = SelfPlayWorker(Rules.for_variant(variant), cfg, torch.device("cpu"), seed=0)
    worker.play(2)  # compile and warm up
    stats: dict[str, float | str] = dict(worker.play(games).stats)
    stats["network"] = f"{cfg.network.blocks}x{cfg.network.channels}"
    stats["configured_simulations"] = cfg.mcts.simulations
    return stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", nargs="+", default=["russian", "english", "italian", "turkish"])
    parser.add_argument("--games", type=int, default=16, help="self-play games per variant")
    parser.add_argument("--sims", type=int, default=64, help="simulations per search (uniform benchmark)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="config overrides")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(
        f"{'variant':<10} {'uniform sims/s':>15} {'net':>6} {'sims':>5} {'self-play pos/s':>16} "
        f"{'games/s':>8} {'NN share':>9} {'mean NN batch':>14}"
    )
    for variant in args.variants:
        sims_per_s = bench_search(variant, args.sims, 64, args.set)
        s = bench_selfplay(variant, args.games, args.set)
        print(
            f"{variant:<10} {sims_per_s:>15,.0f} {s['network']:>6} {s['configured_simulations']:>5} "
            f"{s['positions_per_s']:>16,.1f} {s['games_per_s']:>8.2f} {s['nn_time_share']:>9.0%} "
            f"{s['mean_nn_batch']:>14.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
