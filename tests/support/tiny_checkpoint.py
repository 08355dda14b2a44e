"""Small playing checkpoints (1x8 network, no optimizer state) for tests that load one."""

from __future__ import annotations

from pathlib import Path

import torch

from tammi_rl.config import Config, NetworkConfig
from tammi_rl.nn.model import build_model
from tammi_rl.rules.engine import Rules
from tammi_rl.store.checkpoint import make_checkpoint, save_checkpoint

TINY_NETWORK = NetworkConfig(blocks=1, channels=8, value_hidden=8)


def tiny_checkpoint(
    rules: Rules,
    iteration: int,
    games: int = 0,
    network: NetworkConfig = TINY_NETWORK,
    model: torch.nn.Module | None = None,
) -> dict:
    """``model`` (default: a fresh ``network`` seeded by the iteration, so two iterations hold
    different weights and one iteration the same weights every time) for ``rules`` as
    iteration ``iteration`` of a run that played ``games`` games, with the config that names
    its network."""
    if model is None:
        torch.manual_seed(iteration)
        model = build_model(rules, network)
    return make_checkpoint(
        variant=rules.variant.name,
        network=network,
        model=model,
        learner=None,
        counters={"iteration": iteration, "games": games, "positions": 0},
        rng=None,
        worker=None,
        config=Config(network=network).to_dict(),
    )


def write_tiny_checkpoint(
    path: Path, variant: str, model: torch.nn.Module, network: NetworkConfig = TINY_NETWORK
) -> Path:
    """Save ``model`` (built for ``variant`` with ``network``) at ``path`` as iteration 1 of a run."""
    save_checkpoint(path, tiny_checkpoint(Rules.for_variant(variant), 1, network=network, model=model))
    return path
