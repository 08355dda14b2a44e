"""Inference runtimes for search: the same network behind one evaluator, run by torch or ONNX Runtime.

    runtime = make_runtime(model, torch.device("cpu"), "auto", threads=1)
    logits, values = runtime.evaluate(obs)        # obs float32 [L, C, H, W]
    runtime.update(model)                         # new weights published

Measured on the 2-core reference machine, one thread, the 3x32 network of the shipped
configs: a forward at batch 32 takes 2.2 ms in torch eager mode and 1.13 ms in ONNX
Runtime (0.51x); at batch 1, 0.32 ms against 0.05 ms; at batch 256, 19 ms against 9.6 ms
(`python -m tammi_rl.benchmarks.bench_runtime`). So ``auto`` picks ONNX Runtime on the
CPU and torch on CUDA. Every runtime gives the same logits and values to a stated
tolerance (tests/test_runtime.py).
"""

from __future__ import annotations

import io
import warnings
from typing import Any, Protocol

import numpy as np
import onnx
import onnxruntime as ort
import torch

from tammi_rl.config.schema import RUNTIMES
from tammi_rl.nn.evaluator import model_evaluator
from tammi_rl.nn.model import PolicyValueNet, wdl_to_value

__all__ = [
    "RUNTIMES",
    "InferenceRuntime",
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
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads  # 0: ONNX Runtime picks
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session = ort.InferenceSession(
            onnx_bytes(model, self.obs_shape), options, providers=["CPUExecutionProvider"]
        )

    def evaluate(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        assert self._session is not None
        logits, values = self._session.run(None, {"planes": np.ascontiguousarray(obs, np.float32)})
        return logits, values


def resolve_runtime(name: str, device: torch.device) -> str:
    """The runtime ``name`` asks for on ``device``: ``auto`` is ONNX Runtime on the CPU and
    torch on CUDA (ONNX Runtime's CUDA build is not a dependency)."""
    if name not in RUNTIMES:
        raise ValueError(f"unknown inference runtime {name!r}; known: {', '.join(RUNTIMES)}")
    if name == "auto":
        return "onnx" if device.type == "cpu" else "torch"
    if name == "onnx" and device.type != "cpu":
        raise ValueError(f"the onnx runtime runs on the CPU only, not on {device}")
    return name


def make_runtime(
    model: PolicyValueNet | torch.nn.Module, device: torch.device, runtime: str = "auto", threads: int = 1
) -> InferenceRuntime:
    """``model`` (moved to ``device``, eval mode) behind the runtime ``runtime`` resolves to."""
    model = model.to(device).eval()
    if resolve_runtime(runtime, device) == "torch":
        return TorchRuntime(model, device)
    obs_shape = _obs_shape(model)
    return OnnxRuntime(model, obs_shape, threads)


def _obs_shape(model: Any) -> tuple[int, int, int]:
    stem = model.stem[0]
    return (int(stem.in_channels), int(model.board_size), int(model.board_size))
