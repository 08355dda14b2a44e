"""Fingerprint of the self-play games a config plays from a fixed seed: a refactor's check.

    python -m tammi_rl.benchmarks.fingerprint                       # the four shipped configs
    python -m tammi_rl.benchmarks.fingerprint --set mcts.algorithm=puct runtime=onnx

Prints one line per config: a hash of the games (every move and result) and of the samples
they stored, and a hash of the resolved config. A change that should not alter behaviour
(moving code, renaming, restating configs) must leave every hash as it was: run it in the
old and the new checkout (``PYTHONPATH=<checkout>``) and compare the lines. One process,
one thread, ``selfplay.workers`` unused: the worker plays ``--games`` games at once.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
from pathlib import Path

import numpy as np
import torch

from tammi_rl.config import Config, load_config
from tammi_rl.rules.engine import Rules
from tammi_rl.selfplay.worker import SelfPlayResult, SelfPlayWorker


def config_hash(cfg: Config) -> str:
    """A short hash of every resolved key."""
    text = json.dumps(dataclasses.asdict(cfg), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def games_hash(result: SelfPlayResult) -> str:
    """A short hash of the games' moves and results and of every sample array they stored."""
    digest = hashlib.sha256()
    for game in result.games:
        digest.update(repr([(tuple(m.path), tuple(m.captures)) for m in game.moves]).encode())
        digest.update(repr(game.result).encode())
    for name, value in sorted(vars(result.samples).items()):
        if isinstance(value, np.ndarray):
            digest.update(name.encode())
            digest.update(np.ascontiguousarray(value).tobytes())
    return digest.hexdigest()[:16]


def fingerprint(config: str | Path, games: int, overrides: list[str], seed: int = 0) -> tuple[str, str, int]:
    """(games hash, config hash, games played) of ``games`` self-play games of ``config``."""
    batch = [f"selfplay.parallel_games={games}", f"selfplay.games_per_iteration={games}"]
    cfg = load_config(config, [*batch, *overrides])
    torch.manual_seed(seed)  # the same initial network in every checkout
    worker = SelfPlayWorker(Rules.for_variant(cfg.variant), cfg, torch.device("cpu"), seed=seed)
    result = worker.play(games)
    return games_hash(result), config_hash(cfg), len(result.games)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "configs",
        nargs="*",
        default=[f"configs/{v}.yaml" for v in ("russian", "english", "italian", "turkish")],
        help="config files (default: the four shipped variant configs)",
    )
    parser.add_argument("--games", type=int, default=8, help="games per config, played at once")
    parser.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="config overrides")
    args = parser.parse_args()
    torch.set_num_threads(1)
    for config in args.configs:
        games, cfg, played = fingerprint(config, args.games, args.set)
        print(f"{Path(config).stem:<10} {played} games  hash {games}  config {cfg}", flush=True)


if __name__ == "__main__":
    main()
