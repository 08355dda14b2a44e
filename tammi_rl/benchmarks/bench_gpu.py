"""GPU throughput: the network's forward, self-play through the inference server, the learner.

    python -m tammi_rl.benchmarks.bench_gpu                          # CUDA, configs/russian_gpu.yaml
    python -m tammi_rl.benchmarks.bench_gpu --seconds 10 --json gpu.json
    python -m tammi_rl.benchmarks.bench_gpu --device cpu --quick     # the whole script in seconds

Prints four tables (and writes them to ``--json``):

(a) forward throughput per batch size: torch eager fp32, torch under bf16 and fp16
    autocast, CUDA graphs captured at each size (the inference server's path, in its
    autocast dtype), and ONNX Runtime on the CPU for reference; positions/s and ms per
    call, host-to-device copies and back included (what the server pays);
(b) self-play positions/s per worker count: a `ProcessPool` with ``selfplay.inference:
    server``, timed from its first delivery for ``--seconds``, with the server's mean batch
    and the share of its time in the forward, and the workers' share of time waiting;
(c) learner samples/s: `Learner.step` on random batches of ``train.batch_size`` on the
    device (the precision train.precision gives it);
(d) GPU utilisation and memory sampled (nvidia-smi, else torch.cuda.utilization) during
    (b) and (c).

What the device cannot do (autocast and graphs on the CPU, utilisation without a GPU) is
skipped with a note.
"""

from __future__ import annotations

import argparse
import copy
import json
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from tammi_rl.config import Config, load_config
from tammi_rl.config.cores import split_cores, usable_cores
from tammi_rl.distributed.inference import BatchForward, inference_dtype
from tammi_rl.distributed.pool import Delivery, merge_stats
from tammi_rl.distributed.processes import ProcessPool
from tammi_rl.env.observation import N_PLANES
from tammi_rl.nn.model import build_model, resolve_device
from tammi_rl.nn.runtime import OnnxRuntime
from tammi_rl.rules.engine import Rules
from tammi_rl.selfplay.samples import MAX_LEGAL, SampleBatch
from tammi_rl.train.learner import Learner

ROOT = Path(__file__).resolve().parents[2]
GPU_CONFIG = "configs/russian_gpu.yaml"
QUICK_CONFIG = "configs/smoke.yaml"


def _config_path(name: str) -> Path:
    path = Path(name)
    return path if path.exists() or path.is_absolute() else ROOT / name


# --- GPU utilisation -------------------------------------------------------------------
class GpuSampler:
    """Samples GPU utilisation (%) and memory used (MiB) every ``period`` s on a thread."""

    def __init__(self, device: torch.device, period: float = 0.5) -> None:
        self.period = period
        self.util: list[float] = []
        self.memory: list[float] = []
        self.note = ""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._index = device.index if device.index is not None else 0
        self._smi = shutil.which("nvidia-smi")
        if device.type != "cuda":
            self.note = "no GPU: utilisation not sampled"
        elif self._smi is None and not self._torch_ok():
            self.note = "neither nvidia-smi nor pynvml: utilisation not sampled"

    def _torch_ok(self) -> bool:
        try:
            torch.cuda.utilization(self._index)
        except Exception:
            return False
        return True

    def _sample(self) -> tuple[float, float] | None:
        if self._smi is not None:
            out = subprocess.run(
                [
                    self._smi,
                    f"--id={self._index}",
                    "--query-gpu=utilization.gpu,memory.used",
                    "--format=csv,noheader,nounits",
                ],
                capture_output=True,
                text=True,
                timeout=5,
                check=False,
            ).stdout.strip()
            if not out:
                return None
            util, mem = (float(x) for x in out.splitlines()[0].split(","))
            return util, mem
        return float(torch.cuda.utilization(self._index)), float(torch.cuda.memory_reserved(self._index)) / 2**20

    def _loop(self) -> None:
        while not self._stop.wait(self.period):
            try:
                got = self._sample()
            except (OSError, ValueError, subprocess.SubprocessError):
                got = None
            if got is not None:
                self.util.append(got[0])
                self.memory.append(got[1])

    def __enter__(self) -> GpuSampler:
        if not self.note:
            self._thread = threading.Thread(target=self._loop, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def summary(self) -> dict[str, Any]:
        if self.note or not self.util:
            return {"note": self.note or "no samples"}
        return {
            "util_mean": float(np.mean(self.util)),
            "util_max": float(np.max(self.util)),
            "memory_mib_max": float(np.max(self.memory)),
            "samples": len(self.util),
        }


def _gpu_cell(summary: dict[str, Any]) -> str:
    if "note" in summary:
        return "-"
    return f"{summary['util_mean']:.0f}% (max {summary['util_max']:.0f}%), {summary['memory_mib_max']:.0f} MiB"


# --- (a) forward ---------------------------------------------------------------------------
def time_call(call: Callable[[], object], seconds: float, min_reps: int = 3) -> float:
    """Median seconds of ``call`` over about ``seconds`` of repeats (after 2 warm-up calls)."""
    for _ in range(2):
        call()
    times: list[float] = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end or len(times) < min_reps:
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def forward_table(
    model: torch.nn.Module, device: torch.device, batches: list[int], seconds: float, onnx_threads: int
) -> tuple[list[dict[str, Any]], list[str]]:
    """Rows ``{variant, batch, ms, positions_per_s}`` and notes on what was skipped."""
    notes: list[str] = []
    obs_shape = (N_PLANES, int(model.board_size), int(model.board_size))  # type: ignore[arg-type]
    cuda = device.type == "cuda"
    variants: dict[str, dict[str, Any]] = {"torch fp32": {"amp": None, "graphs": False}}
    if cuda:
        if torch.cuda.is_bf16_supported():
            variants["torch bf16"] = {"amp": torch.bfloat16, "graphs": False}
        else:
            notes.append("bf16: not supported by this GPU")
        variants["torch fp16"] = {"amp": torch.float16, "graphs": False}
        server_amp = inference_dtype(device)
        name = "bf16" if server_amp == torch.bfloat16 else "fp16"
        variants[f"cuda graph {name}"] = {"amp": server_amp, "graphs": True}
    else:
        notes.append(f"{device}: autocast (bf16, fp16) and CUDA graphs need CUDA; skipped")
    cpu_model = copy.deepcopy(model).cpu().eval()
    onnx = OnnxRuntime(cpu_model, obs_shape, threads=onnx_threads)
    rng = np.random.default_rng(0)
    rows: list[dict[str, Any]] = []
    for batch in batches:
        obs = (rng.random((batch, *obs_shape)) < 0.3).astype(np.float32)
        for variant, kw in variants.items():
            try:
                fwd = BatchForward(model, device, [batch], amp=kw["amp"], graphs=kw["graphs"], pad=True)
            except RuntimeError as exc:  # out of memory at a large batch, say
                notes.append(f"{variant} at batch {batch}: {type(exc).__name__}: {str(exc)[:120]}")
                continue
            if kw["graphs"] and not fwd.graphs:
                notes.append(f"{variant} at batch {batch}: {fwd.graph_note or 'not captured'}")
                continue

            def call(fwd: BatchForward = fwd, obs: np.ndarray = obs, n: int = batch) -> object:
                fwd.inputs[:n] = obs
                return fwd.run(n)

            rows.append(_forward_row(variant, batch, time_call(call, seconds)))
            del fwd

        def call_onnx(obs: np.ndarray = obs) -> object:
            return onnx.evaluate(obs)

        rows.append(_forward_row(f"onnx cpu ({onnx_threads or 'all'} thr)", batch, time_call(call_onnx, seconds)))
        if cuda:
            torch.cuda.empty_cache()
    return rows, notes


def _forward_row(variant: str, batch: int, seconds: float) -> dict[str, Any]:
    return {"variant": variant, "batch": batch, "ms": seconds * 1e3, "positions_per_s": batch / seconds}


def print_forward(rows: list[dict[str, Any]]) -> None:
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    batches = list(dict.fromkeys(r["batch"] for r in rows))
    cell = {(r["variant"], r["batch"]): r for r in rows}
    width = max(22, *(len(v) + 2 for v in variants))
    print("(a) forward: positions/s (ms per call)")
    print(f"{'batch':>6} " + "".join(f"{v:>{width}}" for v in variants))
    for b in batches:
        parts = []
        for v in variants:
            r = cell.get((v, b))
            parts.append(f"{r['positions_per_s']:>11,.0f} ({r['ms']:7.3f})" if r else "-")
        print(f"{b:>6} " + "".join(f"{p:>{width}}" for p in parts))


# --- (b) self-play --------------------------------------------------------------------------
def selfplay_run(
    cfg: Config, workers: int, seconds: float, device: torch.device, startup_s: float = 300.0
) -> dict[str, Any]:
    """Positions/s of ``workers`` processes through the inference server, from the first delivery."""
    rules = Rules.for_variant(cfg.variant)
    torch.manual_seed(0)
    weights = build_model(rules, cfg.network).state_dict()
    pool = ProcessPool(cfg, workers, seed=0, log=lambda text: print(f"  pool: {text}", file=sys.stderr))
    started = time.perf_counter()
    try:
        pool.publish(weights, 0)
        deadline = started + startup_s
        first: list[Delivery] = []
        while not first and time.perf_counter() < deadline:
            first = pool.poll(0.5)
        if not first:
            raise TimeoutError(f"no games from {workers} workers in {startup_s:.0f} s")
        startup = time.perf_counter() - started
        server0 = pool.inference_stats()
        parts: list[dict[str, float]] = []
        t0 = time.perf_counter()
        with GpuSampler(device) as gpu:
            while time.perf_counter() - t0 < seconds:
                parts += [d.result.stats for d in pool.poll(0.2)]
        elapsed = time.perf_counter() - t0
        server1 = pool.inference_stats()
    finally:
        pool.close()
    merged = merge_stats(parts, elapsed) if parts else {}
    d = {k: server1.get(k, 0.0) - server0.get(k, 0.0) for k in ("batches", "rows", "padded_rows", "forward_seconds")}
    return {
        "workers": workers,
        "seconds": elapsed,
        "startup_s": startup,
        "positions": merged.get("positions", 0.0),
        "games": merged.get("games", 0.0),
        "positions_per_s": merged.get("positions_per_s", 0.0),
        "games_per_s": merged.get("games_per_s", 0.0),
        "server_mean_batch": d["rows"] / d["batches"] if d["batches"] else 0.0,
        "server_mean_padded_batch": d["padded_rows"] / d["batches"] if d["batches"] else 0.0,
        "server_forward_share": d["forward_seconds"] / elapsed if elapsed > 0 else 0.0,
        "server_graphs": bool(server1.get("graphs", 0.0)),
        "worker_nn_wait_share": merged.get("nn_time_share", 0.0),
        "gpu": gpu.summary(),
    }


def print_selfplay(rows: list[dict[str, Any]]) -> None:
    print("(b) self-play through the inference server (timed from the first delivery)")
    print(
        f"{'workers':>7} {'pos/s':>9} {'games/s':>8} {'startup':>8} {'srv batch':>10} {'padded':>7} "
        f"{'srv fwd':>8} {'wkr wait':>9}  gpu (d)"
    )
    for r in rows:
        print(
            f"{r['workers']:>7} {r['positions_per_s']:>9,.0f} {r['games_per_s']:>8.2f} {r['startup_s']:>7.1f}s "
            f"{r['server_mean_batch']:>10.1f} {r['server_mean_padded_batch']:>7.1f} "
            f"{r['server_forward_share']:>7.0%} {r['worker_nn_wait_share']:>9.0%}  {_gpu_cell(r['gpu'])}"
        )


# --- (c) learner ----------------------------------------------------------------------------
def random_batch(
    n: int, obs_shape: tuple[int, int, int], n_actions: int, squares: int, rng: np.random.Generator
) -> SampleBatch:
    """``n`` samples shaped like self-play's on a board of ``squares`` squares: a few legal
    actions each, a normalised target."""
    obs = (rng.random((n, *obs_shape)) < 0.3).astype(np.float32)
    legal = np.full((n, MAX_LEGAL), -1, np.int32)
    policy = np.zeros((n, MAX_LEGAL), np.float32)
    for i in range(n):
        k = int(rng.integers(1, 12))
        legal[i, :k] = rng.choice(n_actions, size=k, replace=False)
        p = rng.random(k).astype(np.float32)
        policy[i, :k] = p / p.sum()
    outcome = rng.integers(0, 3, n).astype(np.int64)
    value = rng.uniform(-1, 1, n).astype(np.float32)
    surprise = rng.exponential(0.3, n).astype(np.float32)
    ownership = rng.integers(0, 3, (n, squares)).astype(np.int8)
    short_value = rng.uniform(-1, 1, n).astype(np.float32)
    return SampleBatch(obs, legal, policy, outcome, value, surprise, ownership, short_value, legal, policy)


def learner_run(cfg: Config, device: torch.device, seconds: float) -> dict[str, Any]:
    rules = Rules.for_variant(cfg.variant)
    torch.manual_seed(0)
    model = build_model(rules, cfg.network)
    learner = Learner(model, cfg.train, device)
    rng = np.random.default_rng(0)
    bs = cfg.train.batch_size
    obs_shape = (N_PLANES, rules.geometry.size, rules.geometry.size)
    batches = [random_batch(bs, obs_shape, model.n_actions, rules.geometry.n_squares, rng) for _ in range(4)]
    for b in batches[:2]:  # warm-up (cuDNN's kernel search)
        learner.step(b)
    steps = 0
    with GpuSampler(device) as gpu:
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds or steps < 3:
            learner.step(batches[steps % len(batches)])  # its metrics read the loss: one sync a step
            steps += 1
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        elapsed = time.perf_counter() - t0
    amp = learner.amp_dtype
    return {
        "batch_size": bs,
        "steps": steps,
        "seconds": elapsed,
        "steps_per_s": steps / elapsed,
        "samples_per_s": steps * bs / elapsed,
        "precision": "fp32" if amp is None else str(amp).removeprefix("torch."),
        "gpu": gpu.summary(),
    }


def print_learner(r: dict[str, Any]) -> None:
    print("(c) learner")
    print(f"{'batch':>6} {'precision':>9} {'steps/s':>8} {'samples/s':>10}  gpu (d)")
    print(
        f"{r['batch_size']:>6} {r['precision']:>9} {r['steps_per_s']:>8.1f} {r['samples_per_s']:>10,.0f}  "
        f"{_gpu_cell(r['gpu'])}"
    )


# --- main -----------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", help="cuda, cuda:N or cpu")
    parser.add_argument("--config", default=None, help=f"run config (default {GPU_CONFIG}; --quick: {QUICK_CONFIG})")
    parser.add_argument("--seconds", type=float, default=None, help="per self-play worker count and learner")
    parser.add_argument("--forward-seconds", type=float, default=None, help="per forward variant and batch")
    parser.add_argument("--batches", type=int, nargs="+", default=None)
    parser.add_argument("--workers", type=int, nargs="+", default=None, help="self-play worker counts")
    parser.add_argument("--onnx-threads", type=int, default=0, help="ONNX Runtime threads (0: all)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes and short timings (a test)")
    parser.add_argument("--json", default=None, help="also write the figures as JSON here")
    args = parser.parse_args(argv)

    quick = args.quick
    device = resolve_device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("CUDA is not available here; use --device cpu")
    config = _config_path(args.config or (QUICK_CONFIG if quick else GPU_CONFIG))
    seconds = args.seconds if args.seconds is not None else (2.0 if quick else 20.0)
    fwd_seconds = args.forward_seconds if args.forward_seconds is not None else (0.1 if quick else 0.5)
    batches = args.batches or ([1, 32, 256] if quick else [1, 32, 64, 128, 256, 512, 1024, 2048])
    workers = args.workers or ([1, 2] if quick else [1, 4, 8, 14])
    cores = usable_cores()
    overrides = [f"device={device}", "selfplay.inference=server"]
    cfg = load_config(config, overrides)
    net = f"{cfg.network.blocks}x{cfg.network.channels}"
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    print(
        f"bench_gpu: {name}, {cores} cores, torch {torch.__version__}, config {config.name} ({net} network, "
        f"{cfg.selfplay.parallel_games} games per worker, {cfg.mcts.simulations} simulations)",
        flush=True,
    )
    report: dict[str, Any] = {
        "device": str(device),
        "device_name": name,
        "cores": cores,
        "config": str(config),
        "network": net,
        "quick": quick,
        "notes": [],
    }

    threads = split_cores(cfg, cores, on_cuda=device.type == "cuda").learner_threads
    if threads > 0:
        torch.set_num_threads(threads)  # the trainer's threads
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)
    model = build_model(Rules.for_variant(cfg.variant), cfg.network).to(device).eval()
    rows, notes = forward_table(model, device, batches, fwd_seconds, args.onnx_threads)
    report["forward"] = rows
    report["notes"] += notes
    print_forward(rows)
    for note in notes:
        print(f"  note: {note}")
    print(flush=True)

    sp_rows = []
    for w in workers:
        if w > cores:
            report["notes"].append(f"self-play with {w} workers skipped: {cores} cores")
            print(f"  note: {w} workers skipped ({cores} cores)", flush=True)
            continue
        sp_rows.append(selfplay_run(load_config(config, [*overrides, f"selfplay.workers={w}"]), w, seconds, device))
    report["selfplay"] = sp_rows
    print_selfplay(sp_rows)
    print(flush=True)

    learn = learner_run(cfg, device, seconds / 2 if quick else seconds)
    report["learner"] = learn
    print_learner(learn)
    gpu_note = learn["gpu"].get("note")
    if gpu_note:
        report["notes"].append(f"(d) {gpu_note}")
        print(f"(d) {gpu_note}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
        print(f"figures written to {args.json}")


if __name__ == "__main__":
    main()
