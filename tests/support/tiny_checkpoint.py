"""Write a small playing checkpoint (1x8 network, no optimizer state) for tests that load one."""

from __future__ import annotations

from pathlib import Path

import torch

from tammi_rl.config import NetworkConfig
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
