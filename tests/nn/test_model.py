"""The policy-value network's options: global pooling lets one block see the whole board."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tammi_rl.config import NetworkConfig
from tammi_rl.env.observation import N_PLANES
from tammi_rl.nn.model import GlobalPoolingBlock, ResidualBlock, build_model
from tammi_rl.nn.runtime import OnnxInt8Runtime, OnnxRuntime, TorchRuntime
from tammi_rl.rules.engine import Rules


def planes(n: int, seed: int) -> torch.Tensor:
    rng = np.random.default_rng(seed)
    return torch.from_numpy((rng.random((n, N_PLANES, 8, 8)) < 0.3).astype(np.float32))


@pytest.mark.parametrize(("blocks", "pooling_at"), [(1, [0]), (2, [1]), (4, [1, 3]), (3, [0, 2])])
def test_every_second_block_from_the_last_pools(blocks: int, pooling_at: list[int]) -> None:
    rules = Rules.for_variant("russian")
    model = build_model(rules, NetworkConfig(blocks=blocks, channels=12, value_hidden=8, global_pooling=True))
    kinds = [isinstance(block, GlobalPoolingBlock) for block in model.tower]
    assert [i for i, pooled in enumerate(kinds) if pooled] == pooling_at
    assert all(isinstance(block, ResidualBlock) for block in build_model(rules, NetworkConfig(blocks=blocks)).tower)


@pytest.mark.parametrize("pooling", [False, True])
def test_only_global_pooling_lets_a_far_square_reach_a_corner(pooling: bool) -> None:
    """With one block, a cell's features depend on the input within 3 cells (stem and two 3x3
    convolutions): a1 cannot reach h8 without pooling, and must with it."""
    torch.manual_seed(0)
    model = build_model(Rules.for_variant("russian"), NetworkConfig(blocks=1, channels=12, global_pooling=pooling))
    model.eval()
    x = planes(1, seed=1)
    changed = x.clone()
    changed[0, :, 7, 0] = 1.0 - changed[0, :, 7, 0]  # every plane at a1 (row 7, column 0)
    with torch.no_grad():
        corner = model.tower(model.stem(x))[0, :, 0, 7]
        moved = model.tower(model.stem(changed))[0, :, 0, 7]
    assert torch.equal(corner, moved) != pooling


def test_a_pooling_network_runs_the_same_in_every_runtime() -> None:
    rules = Rules.for_variant("russian")
    torch.manual_seed(2)
    model = build_model(rules, NetworkConfig(blocks=2, channels=12, value_hidden=8, global_pooling=True))
    model.train()
    with torch.no_grad():
        for seed in range(3):  # batch-norm statistics that are not the identity
            model(planes(16, seed))
    model.eval()
    obs = planes(6, seed=7).numpy()
    ref_logits, ref_values = TorchRuntime(model, torch.device("cpu")).evaluate(obs)
    logits, values = OnnxRuntime(model, (N_PLANES, 8, 8), threads=1).evaluate(obs)
    assert np.abs(logits - ref_logits).max() < 1e-4 and np.abs(values - ref_values).max() < 1e-4
    int8 = OnnxInt8Runtime(model, (N_PLANES, 8, 8), threads=1, calibration_size=6)
    logits8, values8 = int8.evaluate(obs)
    assert logits8.shape == ref_logits.shape and np.all(np.isfinite(logits8)) and np.all(np.abs(values8) <= 1.0)
