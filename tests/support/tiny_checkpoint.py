"""Small playing checkpoints (1x8 network, no optimizer state) for tests that load one."""

from __future__ import annotations

from pathlib import Path

import torch

from tammi_rl.config import Config, NetworkConfig
from tammi_rl.nn.model import build_model
from tammi_rl.rules.engine import Rules
from tammi_rl.store.checkpoint import capture_rng, make_checkpoint, save_checkpoint

TINY_NETWORK = NetworkConfig(blocks=1, channels=8, value_hidden=8)


def write_tiny_checkpoint(
    path: Path, variant: str, model: torch.nn.Module, network: NetworkConfig = TINY_NETWORK
) -> Path:
    """Save ``model`` (built for ``variant`` with ``network``) at ``path`` as iteration 1 of a run."""
    save_checkpoint(
        path,
        make_checkpoint(
            variant=variant,
            network=network,
            model=model,
            learner=None,
            counters={"iteration": 1, "games": 0, "positions": 0},
            rng=capture_rng(),
            worker=None,
            config={},
        ),
    )
    return path


def tiny_checkpoint(rules: Rules, iteration: int, games: int = 0, network: NetworkConfig = TINY_NETWORK) -> dict:
    """A fresh ``network`` for ``rules`` as iteration ``iteration`` of a run that played ``games``
    games, with the config that names its network; seeded by the iteration, so two iterations
    hold different weights and one iteration the same weights every time."""
    torch.manual_seed(iteration)
    return make_checkpoint(
        variant=rules.variant.name,
        network=network,
        model=build_model(rules, network),
        learner=None,
        counters={"iteration": iteration, "games": games},
        rng=None,
        worker=None,
        config=Config(network=network).to_dict(),
    )
