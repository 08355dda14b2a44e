"""Inference runtimes: ONNX Runtime and torch give the same policy and value, the 8-bit
runtime stays close to them on real positions; export works."""

from __future__ import annotations

import json
import logging
import subprocess
import sys

import gymnasium
import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from support.tiny_checkpoint import TINY_NETWORK, write_tiny_checkpoint

from tammi_rl.config import NetworkConfig, load_config
from tammi_rl.env.observation import N_PLANES
from tammi_rl.nn.model import build_model
from tammi_rl.nn.runtime import OnnxInt8Runtime, OnnxRuntime, TorchRuntime, make_runtime, resolve_runtime
from tammi_rl.nn.saved import load_network
from tammi_rl.players import PlayerSpecError, parse_player_spec
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game
from tammi_rl.store.shipped import shipped_model

TOLERANCE = 1e-4
"""Largest difference allowed between runtimes, in logits and in values (float32 math in
another order: measured differences are about 1e-6)."""


def random_planes(rules: Rules, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    size = rules.geometry.size
    return (rng.random((n, N_PLANES, size, size)) < 0.3).astype(np.float32)


def trained_looking_model(rules: Rules, cfg: NetworkConfig, seed: int) -> torch.nn.Module:
    """A network whose batch-norm statistics are not the identity (as after training)."""
    torch.manual_seed(seed)
    model = build_model(rules, cfg)
    model.train()
    with torch.no_grad():
        for _ in range(3):
            model(torch.from_numpy(random_planes(rules, 16, seed)))
    return model.eval()


@pytest.mark.parametrize("variant", ["russian", "international"])
@pytest.mark.parametrize("batch", [1, 7, 32])
def test_onnx_matches_torch(variant: str, batch: int) -> None:
    rules = Rules.for_variant(variant)
    model = trained_looking_model(rules, NetworkConfig(blocks=2, channels=16, value_hidden=32), seed=batch)
    obs = random_planes(rules, batch, seed=1)
    ref_logits, ref_values = TorchRuntime(model, torch.device("cpu")).evaluate(obs)
    logits, values = OnnxRuntime(model, (N_PLANES, rules.geometry.size, rules.geometry.size), threads=1).evaluate(obs)
    assert logits.shape == ref_logits.shape and values.shape == ref_values.shape == (batch,)
    assert np.abs(logits - ref_logits).max() < TOLERANCE
    assert np.abs(values - ref_values).max() < TOLERANCE
    assert np.abs(ref_values).max() <= 1.0


def test_a_network_with_auxiliary_outputs_exports_the_two_that_play() -> None:
    """``network.soft_policy``, ``ownership``, ``short_value`` and ``opponent_policy`` add
    training-only outputs: the runtimes see policy and value."""
    rules = Rules.for_variant("russian")
    cfg = NetworkConfig(
        blocks=1, channels=16, value_hidden=16, soft_policy=True, ownership=True, short_value=True, opponent_policy=True
    )
    model = trained_looking_model(rules, cfg, 3)
    obs = random_planes(rules, 5, seed=2)
    ref_logits, ref_values = TorchRuntime(model, torch.device("cpu")).evaluate(obs)
    logits, values = OnnxRuntime(model, (N_PLANES, 8, 8), threads=1).evaluate(obs)
    assert np.abs(logits - ref_logits).max() < TOLERANCE and np.abs(values - ref_values).max() < TOLERANCE


@pytest.mark.slow
def test_onnx_update_takes_new_weights() -> None:
    rules = Rules.for_variant("english")
    cfg = NetworkConfig(blocks=1, channels=8, value_hidden=8)
    first, second = trained_looking_model(rules, cfg, 1), trained_looking_model(rules, cfg, 2)
    runtime = make_runtime(first, torch.device("cpu"), "onnx", threads=1)
    obs = random_planes(rules, 4, seed=3)
    before, _ = runtime.evaluate(obs)
    runtime.update(second)
    after, _ = runtime.evaluate(obs)
    expected, _ = TorchRuntime(second, torch.device("cpu")).evaluate(obs)
    assert np.abs(after - expected).max() < TOLERANCE and np.abs(after - before).max() > 1e-3


def test_runtime_choice() -> None:
    cpu, cuda = torch.device("cpu"), torch.device("cuda")
    assert resolve_runtime("auto", cpu) == "onnx" and resolve_runtime("auto", cuda) == "torch"
    assert resolve_runtime("torch", cpu) == "torch"
    assert resolve_runtime("onnx-int8", cpu) == "onnx-int8"
    for name in ("onnx", "onnx-int8"):
        with pytest.raises(ValueError, match=f"the {name} runtime runs on the CPU only"):
            resolve_runtime(name, cuda)
    with pytest.raises(ValueError, match="unknown inference runtime"):
        resolve_runtime("tensorrt", cpu)
    assert load_config(None).runtime == "onnx-int8"  # the shipped CPU recipe: self-play in 8 bits


def write_checkpoint(tmp_path, variant: str = "russian"):
    rules = Rules.for_variant(variant)
    model = trained_looking_model(rules, TINY_NETWORK, 5)
    path = write_tiny_checkpoint(tmp_path / "net.pt", variant, model)
    return rules, model, path


def test_mcts_player_runtimes_agree(tmp_path) -> None:
    rules, _, path = write_checkpoint(tmp_path)
    players = [parse_player_spec(f"mcts:checkpoint={path},sims=16,runtime={r}", rules) for r in ("torch", "onnx")]
    game = Game(rules)
    results = [p.analyse(game) for p in players]  # type: ignore[attr-defined]
    assert results[0].action == results[1].action
    assert np.allclose(results[0].policy, results[1].policy, atol=1e-3)
    with pytest.raises(PlayerSpecError, match="runtime must be one of"):
        parse_player_spec(f"mcts:checkpoint={path},runtime=fast", rules)


@pytest.mark.slow
def test_export_writes_onnx_with_metadata(tmp_path) -> None:
    rules, model, path = write_checkpoint(tmp_path, "italian")
    out = tmp_path / "net.onnx"
    done = subprocess.run(
        [sys.executable, "-m", "tammi_rl.cli", "export", str(path), "--onnx", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    meta = {p.key: p.value for p in onnx.load(str(out)).metadata_props}
    assert meta["tammi_rl.variant"] == "italian" and int(meta["tammi_rl.n_actions"]) == 256
    assert json.loads(meta["tammi_rl.input_shape"]) == [N_PLANES, 8, 8]
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    obs = random_planes(rules, 5, seed=9)
    logits, values = session.run(None, {"planes": obs})
    ref_logits, ref_values = TorchRuntime(model, torch.device("cpu")).evaluate(obs)
    assert np.abs(logits - ref_logits).max() < TOLERANCE and np.abs(values - ref_values).max() < TOLERANCE
    bad = subprocess.run(
        [sys.executable, "-m", "tammi_rl.cli", "export", str(tmp_path / "missing.pt"), "--onnx", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert bad.returncode == 2 and "no checkpoint there" in bad.stderr


def played_positions(rules: Rules, games: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Observations [N, C, H, W] and legal-action masks [N, A] of every hop of ``games``
    games (at most 120 hops each) played with uniformly random legal hops in the env."""
    rng = np.random.default_rng(seed)
    env = gymnasium.make(rules.variant.gym_id)
    planes, masks = [], []
    for game in range(games):
        obs, info = env.reset(seed=seed + game)
        for _ in range(120):
            planes.append(obs)
            masks.append(info["action_mask"].astype(bool))
            obs, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(masks[-1]))))
            if terminated or truncated:
                break
    return np.stack(planes).astype(np.float32), np.stack(masks)


def masked_policy(logits: np.ndarray, masks: np.ndarray) -> np.ndarray:
    logits = np.where(masks, logits, -np.inf)
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


@pytest.mark.slow
def test_int8_stays_close_to_float_on_the_shipped_model() -> None:
    """The 8-bit runtime, calibrated on real positions, picks the float network's top move
    almost everywhere and moves policy and value by little."""
    saved = load_network(shipped_model("russian"))
    planes, masks = played_positions(saved.rules, games=12, seed=4)
    calibration, held_out = planes[:256], slice(256, None)
    assert len(planes) > 600
    float_runtime = make_runtime(saved.model, torch.device("cpu"), "onnx", threads=1)
    int8 = make_runtime(saved.model, torch.device("cpu"), "onnx-int8", threads=1)
    assert isinstance(int8, OnnxInt8Runtime)
    int8.evaluate(calibration)
    assert int8.quantized
    ref_logits, ref_values = float_runtime.evaluate(planes[held_out])
    logits, values = int8.evaluate(planes[held_out])
    ref_policy, policy = masked_policy(ref_logits, masks[held_out]), masked_policy(logits, masks[held_out])
    same_top = (ref_policy.argmax(axis=1) == policy.argmax(axis=1)).mean()
    total_variation = 0.5 * np.abs(ref_policy - policy).sum(axis=1)
    assert same_top > 0.9, same_top
    assert total_variation.mean() < 0.05, total_variation.mean()
    assert np.abs(values - ref_values).mean() < 0.05 and np.abs(values).max() <= 1.0
    assert np.abs(logits - ref_logits).max() > TOLERANCE  # it is quantized, not the float network


def test_int8_quantizes_a_fresh_network() -> None:
    """A fresh network's convolutions share one exported zero bias (the quantizer rewrites
    each bias in place); the runtime gives each its own and matches the float network."""
    rules = Rules.for_variant("english")
    torch.manual_seed(0)
    model = build_model(rules, NetworkConfig(blocks=2, channels=16, value_hidden=16)).eval()
    obs = random_planes(rules, 32, seed=2)
    ref_logits, ref_values = TorchRuntime(model, torch.device("cpu")).evaluate(obs)
    runtime = OnnxInt8Runtime(model, (N_PLANES, 8, 8), threads=1, calibration_size=32)
    logits, values = runtime.evaluate(obs)
    assert runtime.quantized
    assert logits.shape == ref_logits.shape and values.shape == (32,)
    assert np.abs(values - ref_values).max() < 0.05
    assert np.corrcoef(logits.ravel(), ref_logits.ravel())[0, 1] > 0.95


@pytest.mark.slow
def test_int8_runs_float_until_calibrated_then_requantizes_after_each_update() -> None:
    rules = Rules.for_variant("russian")
    cfg = NetworkConfig(blocks=1, channels=8, value_hidden=8)
    first, second = trained_looking_model(rules, cfg, 1), trained_looking_model(rules, cfg, 2)
    runtime = OnnxInt8Runtime(first, (N_PLANES, 8, 8), threads=1, calibration_size=10)
    obs = random_planes(rules, 4, seed=3)
    exact, _ = TorchRuntime(first, torch.device("cpu")).evaluate(obs)
    for _ in range(2):  # 4, then 8 of 10 positions seen: float32, exact
        logits, _ = runtime.evaluate(obs)
        assert not runtime.quantized and np.abs(logits - exact).max() < TOLERANCE
    before, _ = runtime.evaluate(obs)  # 12 seen: calibrated and quantized
    assert runtime.quantized and np.abs(before - exact).max() > TOLERANCE
    session = runtime._session
    runtime.evaluate(obs)
    assert runtime._session is session  # once per weights
    runtime.update(second)
    assert not runtime.quantized
    after, _ = runtime.evaluate(obs)  # the store is full: new weights quantize at once
    assert runtime.quantized and runtime._session is not session
    expected, _ = TorchRuntime(second, torch.device("cpu")).evaluate(obs)
    assert np.abs(after - before).max() > 1e-2 and np.abs(after - expected).max() < np.abs(before - expected).max()
    with pytest.raises(ValueError, match="calibration_size must be at least 1"):
        OnnxInt8Runtime(first, (N_PLANES, 8, 8), calibration_size=0)


def test_int8_quantizer_leaves_the_root_logger_alone() -> None:
    handlers = list(logging.root.handlers)
    rules = Rules.for_variant("russian")
    model = trained_looking_model(rules, NetworkConfig(blocks=1, channels=8, value_hidden=8), 3)
    runtime = OnnxInt8Runtime(model, (N_PLANES, 8, 8), threads=1, calibration_size=2)
    runtime.evaluate(random_planes(rules, 2, seed=1))
    assert runtime.quantized
    assert logging.root.handlers == handlers and logging.root.manager.disable == logging.NOTSET


def test_int8_calibration_store_keeps_the_newest_positions() -> None:
    rules = Rules.for_variant("russian")
    model = trained_looking_model(rules, NetworkConfig(blocks=1, channels=8, value_hidden=8), 4)
    runtime = OnnxInt8Runtime(model, (N_PLANES, 8, 8), threads=1, calibration_size=5)
    numbered = 0
    for size in (3, 4, 7, 1, 0):  # batches smaller, larger than the store, and empty
        batch = np.arange(numbered, numbered + size, dtype=np.float32)[:, None, None, None]
        runtime._remember(np.broadcast_to(batch, (size, N_PLANES, 8, 8)))
        numbered += size
    assert sorted(runtime._seen[:, 0, 0, 0].tolist()) == [10, 11, 12, 13, 14] and runtime._seen_count == 5
