"""Inference runtimes for search: the same network behind one evaluator, run by torch or ONNX Runtime.

    runtime = make_runtime(model, torch.device("cpu"), "auto", threads=1)
    logits, values = runtime.evaluate(obs)        # obs float32 [L, C, H, W]
    runtime.update(model)                         # new weights published

Measured on the 2-core reference machine, one thread, the 3x32 network of the English,
Italian and Turkish configs (the Russian one is 4x48): a forward at batch 32 takes 2.2 ms
in torch eager mode and 1.13 ms in ONNX Runtime (0.51x); at batch 1, 0.32 ms against
0.05 ms; at batch 256, 19 ms against 9.6 ms (`python -m tammi_rl.benchmarks.bench_runtime`).
So ``auto`` picks ONNX Runtime on the CPU and torch on CUDA. Every runtime gives the same
logits and values to a stated tolerance (tests/nn/test_runtime.py).

``onnx-int8`` trades exactness for speed: 8-bit weights and activations, calibrated on the
positions the runtime has just evaluated. It is for self-play on CPUs without fast float
units: see `OnnxInt8Runtime`.
"""

from __future__ import annotations

import contextlib
import io
import logging
import tempfile
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import onnx
import onnxruntime as ort
import torch

from tammi_rl.config.schema import RUNTIMES
from tammi_rl.nn.leaf_evaluator import model_evaluator
from tammi_rl.nn.model import PolicyValueNet, input_planes, wdl_to_value

__all__ = [
    "RUNTIMES",
    "InferenceRuntime",
    "OnnxInt8Runtime",
    "OnnxRuntime",
    "TorchRuntime",
    "make_runtime",
    "onnx_bytes",
    "resolve_runtime",
]
ONNX_OPSET = 17
ENCODING_VERSION = "1"
"""Version of the observation planes and action encoding an exported network reads."""


class InferenceRuntime(Protocol):
    """A network ready for search: `evaluate` is a `tammi_rl.mcts.search.Evaluator`."""

    name: str

    def evaluate(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """obs float32 [L, C, H, W] -> (logits float32 [L, A], values float32 [L], side to move's view)."""
        ...

    def update(self, model: torch.nn.Module) -> None:
        """Take the weights of ``model`` (the same architecture)."""
        ...


class _ValueHead(torch.nn.Module):
    """The network with its WDL head reduced to the scalar value the search reads."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        logits, wdl = self.model(x)
        return logits, wdl_to_value(wdl)


def onnx_bytes(
    model: torch.nn.Module, obs_shape: tuple[int, int, int], metadata: dict[str, str] | None = None
) -> bytes:
    """The network (eval mode, any batch size) as a serialized ONNX model: input ``planes``
    [B, C, H, W], outputs ``logits`` [B, A] and ``value`` [B]; ``metadata`` becomes the
    model's metadata properties."""
    head = _ValueHead(model).eval()
    example = torch.zeros((1, *obs_shape), dtype=torch.float32)
    buf = io.BytesIO()
    was_training = model.training
    model.eval()
    try:
        with warnings.catch_warnings():
            # The TorchScript-based exporter announces its end; the dynamo one needs onnxscript.
            warnings.simplefilter("ignore", DeprecationWarning)
            torch.onnx.export(
                head,
                (example,),
                buf,  # type: ignore[arg-type]  # torch documents file-like objects here too
                input_names=["planes"],
                output_names=["logits", "value"],
                dynamic_axes={"planes": {0: "batch"}, "logits": {0: "batch"}, "value": {0: "batch"}},
                opset_version=ONNX_OPSET,
                dynamo=False,
            )
    finally:
        model.train(was_training)
    proto = onnx.load_from_string(buf.getvalue())
    for key, value in (metadata or {}).items():
        entry = proto.metadata_props.add()
        entry.key, entry.value = key, value
    return proto.SerializeToString()


class TorchRuntime:
    """torch eager mode, under inference mode (the reference; the default on CUDA)."""

    name = "torch"

    def __init__(self, model: torch.nn.Module, device: torch.device) -> None:
        self.model = model
        self._evaluate = model_evaluator(model, device)

    def evaluate(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self._evaluate(obs)

    def update(self, model: torch.nn.Module) -> None:
        if model is not self.model:
            self.model.load_state_dict(model.state_dict())
        self.model.eval()


class OnnxRuntime:
    """ONNX Runtime on the CPU with a fixed number of threads (the default on the CPU).

    `update` exports the new weights and opens a new session (about 0.1 s for the 3x32
    network), so publish weights once per iteration or per K learner steps, not per move.
    """

    name = "onnx"

    def __init__(self, model: torch.nn.Module, obs_shape: tuple[int, int, int], threads: int = 0) -> None:
        self.obs_shape = obs_shape
        self.threads = threads
        self._session: ort.InferenceSession | None = None
        self.update(model)

    def update(self, model: torch.nn.Module) -> None:
        self._session = _cpu_session(onnx_bytes(model, self.obs_shape), self.threads)

    def evaluate(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        assert self._session is not None
        logits, values = self._session.run(None, {"planes": np.ascontiguousarray(obs, np.float32)})
        return logits, values


class OnnxInt8Runtime:
    """ONNX Runtime with 8-bit weights (per output channel) and 8-bit activations in the
    residual tower; the stem and the heads stay in float32 (`_outside_the_tower`).

    Static quantization needs each activation's range; they are measured (min-max) on the
    last ``calibration_size`` positions this runtime evaluated, so the ranges are those of
    the positions the search actually visits. Until it has seen that many positions the
    runtime evaluates in float32; then it quantizes, and again after each `update` (new
    weights: new ranges), on the newest positions. Quantizing the 4x48 network takes about
    0.25 s, so a self-play worker that takes new weights twice an iteration spends ~2% of
    its time on it.

    Measured on an AVX2-only CPU (Zen 3), one thread, the shipped 4x48 Russian network: a
    forward at batch 32 takes 6.3-7.4 ms against 11.9-12.5 ms in float32 ONNX Runtime
    (about 1.8x; `python -m tammi_rl.benchmarks.bench_runtime --model russian`); on a Xeon
    with AVX-512 VNNI, 1.78 ms against 4.68 ms (2.6x). On 3,228
    positions of 40 games the network played against itself, calibrated on 256 of them, the
    top move agreed with float32 on 97% of the others, the policy moved 0.017 in total
    variation and the value 0.018 on average (tests/nn/test_runtime.py holds it to 90%, 0.05
    and 0.05 on random games). Meant for self-play: matches and evaluations default to float32.
    """

    name = "onnx-int8"

    def __init__(
        self, model: torch.nn.Module, obs_shape: tuple[int, int, int], threads: int = 0, calibration_size: int = 256
    ) -> None:
        if calibration_size < 1:
            raise ValueError(f"calibration_size must be at least 1, got {calibration_size}")
        self.obs_shape = obs_shape
        self.threads = threads
        self._seen = np.zeros((calibration_size, *obs_shape), dtype=np.float32)
        self._seen_count = 0  # positions stored so far, at most calibration_size
        self._next_slot = 0
        self._session: ort.InferenceSession | None = None  # the quantized network, once calibrated
        self._float_session: ort.InferenceSession | None = None  # until then
        self.update(model)

    @property
    def quantized(self) -> bool:
        """Whether the current weights run in 8 bits (False until enough positions were seen)."""
        return self._session is not None

    def update(self, model: torch.nn.Module) -> None:
        self._float_model = _unshare_initializers(onnx_bytes(model, self.obs_shape))
        self._session = self._float_session = None

    def evaluate(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        obs = np.ascontiguousarray(obs, np.float32)
        self._remember(obs)
        if self._session is None:
            if self._seen_count < len(self._seen):
                if self._float_session is None:
                    self._float_session = _cpu_session(self._float_model, self.threads)
                logits, values = self._float_session.run(None, {"planes": obs})
                return logits, values
            self._session = _cpu_session(self._quantized(self._seen), self.threads)
            self._float_session = None
        logits, values = self._session.run(None, {"planes": obs})
        return logits, values

    def _remember(self, obs: np.ndarray) -> None:
        """Keep the newest positions in a ring of ``calibration_size`` (one copy per batch)."""
        capacity = len(self._seen)
        newest = obs[-capacity:]
        slots = (self._next_slot + np.arange(len(newest))) % capacity
        self._seen[slots] = newest
        self._next_slot = (self._next_slot + len(newest)) % capacity
        self._seen_count = min(self._seen_count + len(obs), capacity)

    def _quantized(self, calibration: np.ndarray) -> bytes:
        """The float model with int8 weights and activation ranges measured on ``calibration``."""
        from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

        class Positions(CalibrationDataReader):
            def __init__(self) -> None:
                self._batches = iter(np.array_split(calibration, max(1, len(calibration) // 32)))

            def get_next(self) -> dict[str, np.ndarray] | None:
                batch = next(self._batches, None)
                return None if batch is None else {"planes": batch}

        with tempfile.TemporaryDirectory(prefix="tammi-int8-") as tmp, _quiet_root_logger():
            source, target = Path(tmp) / "float.onnx", Path(tmp) / "int8.onnx"
            source.write_bytes(self._float_model)
            quantize_static(
                source,
                target,
                Positions(),
                quant_format=QuantFormat.QOperator,
                per_channel=True,
                activation_type=QuantType.QUInt8,
                weight_type=QuantType.QInt8,
                nodes_to_exclude=_outside_the_tower(self._float_model),
            )
            return target.read_bytes()


def _outside_the_tower(model: bytes) -> list[str]:
    """The layers left in float32 by `OnnxInt8Runtime`: every convolution and dense layer but
    the residual tower's (the stem and both heads). They hold a few percent of the work, and
    in 8 bits they made most of the error: on 544 positions of an 800-simulation search, the
    whole network in 8 bits moved the value by 0.013 on average (0.050 at most) and kept the
    top move on 88.6%; the tower alone in 8 bits, 0.0055 (0.025) and 90.8%, as fast."""
    graph = onnx.load_from_string(model).graph
    return [n.name for n in graph.node if n.op_type in ("Conv", "Gemm", "MatMul") and "/tower/" not in n.name]


def _unshare_initializers(model: bytes) -> bytes:
    """``model`` with one constant per use: each constant read by more than one node, or
    through an ``Identity`` alias, is copied under a name of its own.

    The exporter stores equal constants once (a fresh network's convolutions share one
    all-zero bias, aliased by ``Identity`` nodes) and the quantizer, which rewrites each
    convolution's bias in place, fails on a shared one."""
    proto = onnx.load_from_string(model)
    graph = proto.graph
    initializers = {init.name: init.SerializeToString() for init in graph.initializer}
    copies: list[onnx.TensorProto] = []

    def copy_of(name: str, new_name: str) -> None:
        copy = onnx.TensorProto.FromString(initializers[name])
        copy.name = new_name
        copies.append(copy)
        initializers[new_name] = initializers[name]  # an alias read twice is split in turn

    kept = []
    for node in graph.node:
        if node.op_type == "Identity" and node.input[0] in initializers:
            copy_of(node.input[0], node.output[0])  # the alias becomes a constant of its own
        else:
            kept.append(node)
    uses: dict[str, int] = {}
    for node in kept:
        for i, name in enumerate(node.input):
            if name in initializers:
                uses[name] = uses.get(name, 0) + 1
                if uses[name] > 1:
                    node.input[i] = f"{name}__use{uses[name]}"
                    copy_of(name, node.input[i])
    del graph.node[:]
    graph.node.extend(kept)
    graph.initializer.extend(copies)
    return proto.SerializeToString()


_QUIET_LOCK = threading.Lock()


@contextlib.contextmanager
def _quiet_root_logger() -> Iterator[None]:
    """Mute the quantizer's advice, logged through the root logger for every shape tensor it
    leaves in float, without letting `logging.warning` install a root handler for the whole
    process (it does when the root logger has none)."""
    with _QUIET_LOCK:  # one quantization at a time (the web server searches in threads)
        placeholder = logging.NullHandler()
        logging.root.addHandler(placeholder)
        previous = logging.root.manager.disable
        logging.disable(logging.WARNING)
        try:
            yield
        finally:
            logging.disable(previous)
            logging.root.removeHandler(placeholder)


def _cpu_session(model: bytes, threads: int) -> ort.InferenceSession:
    """An ONNX Runtime session on the CPU: ``threads`` intra-op threads (0: ONNX Runtime
    picks), sequential execution, every graph optimisation."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def resolve_runtime(name: str, device: torch.device) -> str:
    """The runtime ``name`` asks for on ``device``: ``auto`` is ONNX Runtime on the CPU and
    torch on CUDA (ONNX Runtime's CUDA build is not a dependency)."""
    if name not in RUNTIMES:
        raise ValueError(f"unknown inference runtime {name!r}; known: {', '.join(RUNTIMES)}")
    if name == "auto":
        return "onnx" if device.type == "cpu" else "torch"
    if name.startswith("onnx") and device.type != "cpu":
        raise ValueError(
            f"the {name} runtime runs on the CPU only, not on {device}: set runtime: auto on a GPU "
            "(configs/russian_gpu.yaml does)"
        )
    return name


def make_runtime(
    model: PolicyValueNet | torch.nn.Module, device: torch.device, runtime: str = "auto", threads: int = 1
) -> InferenceRuntime:
    """``model`` (moved to ``device``, eval mode) behind the runtime ``runtime`` resolves to."""
    model = model.to(device).eval()
    resolved = resolve_runtime(runtime, device)
    if resolved == "torch":
        return TorchRuntime(model, device)
    if resolved == "onnx-int8":
        return OnnxInt8Runtime(model, _obs_shape(model), threads)
    return OnnxRuntime(model, _obs_shape(model), threads)


def _obs_shape(model: Any) -> tuple[int, int, int]:
    return (input_planes(model), int(model.board_size), int(model.board_size))
