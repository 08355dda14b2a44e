"""Inference runtimes: ONNX Runtime and torch give the same policy and value; export works."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch

from tammi_rl.config import NetworkConfig, load_config
from tammi_rl.env.observation import N_PLANES
from tammi_rl.nn.model import build_model
from tammi_rl.nn.runtime import OnnxRuntime, TorchRuntime, make_runtime, resolve_runtime
from tammi_rl.players import PlayerSpecError, parse_player_spec
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game
from tammi_rl.store.checkpoint import capture_rng, make_checkpoint, save_checkpoint

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
    with pytest.raises(ValueError, match="CPU only"):
        resolve_runtime("onnx", cuda)
    with pytest.raises(ValueError, match="unknown inference runtime"):
        resolve_runtime("tensorrt", cpu)
    assert load_config(None).runtime == "auto"


def write_checkpoint(tmp_path, variant: str = "russian"):
    rules = Rules.for_variant(variant)
    cfg = NetworkConfig(blocks=1, channels=8, value_hidden=8)
    model = trained_looking_model(rules, cfg, 5)
    path = tmp_path / "net.pt"
    save_checkpoint(
        path,
        make_checkpoint(
            variant=variant,
            network=cfg,
            model=model,
            learner=None,
            counters={"iteration": 1, "games": 0, "positions": 0},
            rng=capture_rng(),
            worker=None,
            config={},
        ),
    )
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
