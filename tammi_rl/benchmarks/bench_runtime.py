"""Forward time of the network per inference runtime and batch size (one thread, CPU).

    python -m tammi_rl.benchmarks.bench_runtime --net 3x32 --batches 1 8 32 64 256
    python -m tammi_rl.benchmarks.bench_runtime --model russian --batches 1 32

Prints milliseconds per forward pass for torch eager mode, a frozen TorchScript graph,
ONNX Runtime and 8-bit ONNX Runtime (calibrated on the batch it times), the ratio of each
to torch eager, and the largest difference of their outputs from torch's (the parity the
tests require of the float runtimes; the 8-bit one is only close). The runtimes
alternate within each batch size, so a load change on the machine hits them alike.

``--player-sims N`` (default 800, 0 to skip) then times the MCTS player's whole move
(``N`` simulations per searched hop, one tree: the network at batch 1) with each of the
runtimes the player offers, over the same positions, alternating, and prints the
median seconds per move and its ratio to torch.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from tammi_rl.config import NetworkConfig
from tammi_rl.env.observation import N_PLANES
from tammi_rl.nn.model import build_model, wdl_to_value
from tammi_rl.nn.runtime import OnnxInt8Runtime, OnnxRuntime, TorchRuntime
from tammi_rl.nn.saved import load_network
from tammi_rl.players.mcts import MCTSPlayer
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game
from tammi_rl.store.shipped import shipped_model

Forward = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


def torchscript_forward(model: torch.nn.Module, example: torch.Tensor) -> Forward:
    """A traced and frozen TorchScript graph of the network."""
    frozen = torch.jit.freeze(torch.jit.trace(model.eval(), example))

    def forward(obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        with torch.inference_mode():
            logits, wdl = frozen(torch.from_numpy(obs))
            return logits.numpy(), wdl_to_value(wdl).numpy()

    return forward


def time_forward(forward: Forward, obs: np.ndarray, seconds: float) -> float:
    """Median milliseconds of one forward over about ``seconds`` of repeats."""
    for _ in range(3):
        forward(obs)
    times: list[float] = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end or len(times) < 5:
        start = time.perf_counter()
        forward(obs)
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="russian")
    parser.add_argument("--net", default="3x32", help="BLOCKSxCHANNELS")
    parser.add_argument("--model", help="time this checkpoint or shipped model (e.g. russian) instead of a fresh --net")
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 8, 32, 64, 256])
    parser.add_argument("--seconds", type=float, default=1.0, help="timing per runtime and batch")
    parser.add_argument("--player-sims", type=int, default=800, help="MCTS player simulations (0: skip)")
    parser.add_argument("--player-moves", type=int, default=8, help="moves timed per runtime")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.model:
        saved = load_network(args.model if Path(args.model).exists() else shipped_model(args.model))
        rules, model = saved.rules, saved.model.eval()
        args.variant, args.net = rules.variant.name, f"{saved.network.blocks}x{saved.network.channels}"
    else:
        rules = Rules.for_variant(args.variant)
        blocks, channels = (int(x) for x in args.net.split("x"))
        torch.manual_seed(0)
        model = build_model(rules, NetworkConfig(blocks=blocks, channels=channels)).eval()
    size = rules.geometry.size
    rng = np.random.default_rng(0)
    example = torch.zeros((1, N_PLANES, size, size))
    runtimes: dict[str, Forward] = {
        "torch": TorchRuntime(model, torch.device("cpu")).evaluate,
        "torchscript": torchscript_forward(model, example),
        "onnx": OnnxRuntime(model, (N_PLANES, size, size), threads=1).evaluate,
    }
    print(f"{args.variant} {args.net}, one thread: ms per forward (ratio to torch eager; max |diff| of outputs)")
    print(f"{'batch':>6} " + " ".join(f"{name:>24}" for name in [*runtimes, "onnx-int8"]))
    for batch in args.batches:
        obs = (rng.random((batch, N_PLANES, size, size)) < 0.3).astype(np.float32)
        ref_logits, ref_values = runtimes["torch"](obs)
        int8 = OnnxInt8Runtime(model, (N_PLANES, size, size), threads=1, calibration_size=batch)
        runtimes["onnx-int8"] = int8.evaluate
        cells = []
        base = 0.0
        for forward in runtimes.values():
            ms = time_forward(forward, obs, args.seconds)
            base = base or ms
            logits, values = forward(obs)
            diff = max(np.abs(logits - ref_logits).max(), np.abs(values - ref_values).max())
            cells.append(f"{ms:8.3f} ({ms / base:4.2f}x; {diff:.0e})")
        print(f"{batch:>6} " + " ".join(f"{c:>24}" for c in cells), flush=True)
    if args.player_sims:
        time_player(rules, model, args.player_sims, args.player_moves)


def time_player(rules: Rules, model: torch.nn.Module, simulations: int, moves: int) -> None:
    """Median seconds per move of the MCTS player per runtime, over the first ``moves`` positions
    of one game (played by the torch player; every runtime searches the same positions)."""
    players = {
        name: MCTSPlayer(rules, model, simulations, runtime=name, seed=0) for name in ("torch", "onnx", "onnx-int8")
    }
    game = Game(rules)
    times: dict[str, list[float]] = {name: [] for name in players}
    for _ in range(moves):
        if game.is_over:
            break
        chosen = None
        for name, player in players.items():
            start = time.perf_counter()
            move = player.choose(game)
            times[name].append(time.perf_counter() - start)
            chosen = chosen or move
        assert chosen is not None
        game.play(chosen)
    base = float(np.median(times["torch"]))
    print(f"\nMCTS player, {simulations} simulations per searched hop, {len(times['torch'])} moves: s per move")
    for name, values in times.items():
        med = float(np.median(values))
        print(f"{name:>12} {med:8.3f} s  ({med / base:4.2f}x torch)")


if __name__ == "__main__":
    main()
