"""The GPU config validates, and the GPU benchmark runs end to end on the CPU (--quick)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tammi_rl.config import load_config
from tammi_rl.distributed.inference import batch_ladder, inference_mode

ROOT = Path(__file__).resolve().parents[2]


def test_gpu_config_loads_and_asks_for_the_server():
    cfg = load_config(ROOT / "configs" / "russian_gpu.yaml")
    assert cfg.device == "cuda" and cfg.selfplay.inference == "server" and inference_mode(cfg) == "server"
    assert cfg.selfplay.workers == 14 and cfg.train.batch_size == 1024
    assert (cfg.network.blocks, cfg.network.channels) == (10, 128)
    assert batch_ladder(cfg.selfplay.workers * cfg.selfplay.parallel_games)[-1] == 896


@pytest.mark.slow
def test_bench_gpu_quick_on_cpu(tmp_path):
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, "-m", "tammi_rl.benchmarks.bench_gpu", "--device", "cpu", "--quick", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,  # a hang guard, not a speed check (about 20 s on an idle 2-core machine)
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = proc.stdout
    for heading in ("(a) forward", "(b) self-play", "(c) learner", "(d) no GPU"):
        assert heading in text, text
    assert "torch fp32" in text and "onnx cpu" in text and "CUDA graphs need CUDA" in text
    report = json.loads(out.read_text())
    assert {r["variant"] for r in report["forward"]} >= {"torch fp32"}
    assert all(r["positions_per_s"] > 0 for r in report["forward"])
    assert [r["workers"] for r in report["selfplay"]] == [1, 2]
    assert all(r["positions_per_s"] > 0 and r["server_mean_batch"] >= 1 for r in report["selfplay"])
    import torch

    native_bf16 = torch.ops.mkldnn._is_mkldnn_bf16_supported()  # train.precision auto: bf16 where native
    assert report["learner"]["samples_per_s"] > 0
    assert report["learner"]["precision"] == ("bfloat16" if native_bf16 else "fp32")
