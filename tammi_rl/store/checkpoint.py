"""Checkpoints: everything a run needs to continue, in one file written atomically.

    save_checkpoint(path, make_checkpoint(...))
    ckpt = load_checkpoint(path, variant="russian", network=cfg.network)
    load_model_weights(model, ckpt, path)

A checkpoint is a dict (`torch.save` format) with ``format_version``, ``variant``,
``network`` (blocks/channels/...), ``model``, ``learner`` (optimizer state and step),
``counters`` (iteration, samples seen, ...), ``rng`` (python, numpy, torch and the
learner's sampling generator), ``worker`` (the self-play worker's own state),
``config`` (the resolved run config) and, under gating (``eval.gating``),
``selfplay_model`` (the weights self-play plays with: the last network that passed the
gate). It is written to a temporary file in the same directory and renamed over the
target, so a crash never leaves a half-written file.

Every way of not being usable (missing, corrupt, another format version, another
variant or network shape) is a `CheckpointError` naming the file and what mismatched.
Loading uses ``torch.load(weights_only=True)``: numpy arrays in the RNG and worker
states are stored as tagged lists so no arbitrary pickle is needed.
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from tammi_rl.atomic import atomic_write
from tammi_rl.config import NetworkConfig
from tammi_rl.legacy import upgrade_network, upgrade_saved_config
from tammi_rl.rules.errors import TammiError

FORMAT_VERSION = 1
REQUIRED_KEYS = ("format_version", "variant", "network", "model", "counters")


class CheckpointError(TammiError):
    """A checkpoint is missing, unreadable, or belongs to another variant or network shape."""


# --- plain-data encoding (so torch.load can stay weights_only) --------------------------
_ND = "__ndarray__"


def to_plain(obj: Any) -> Any:
    """numpy arrays/scalars -> tagged lists/python numbers, recursively (tuples kept)."""
    if isinstance(obj, np.ndarray):
        return {_ND: obj.tolist(), "dtype": str(obj.dtype), "shape": list(obj.shape)}
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, dict):
        return {k: to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        out = [to_plain(v) for v in obj]
        return tuple(out) if isinstance(obj, tuple) else out
    return obj


def from_plain(obj: Any) -> Any:
    """Inverse of `to_plain`."""
    if isinstance(obj, dict):
        if _ND in obj:
            return np.array(obj[_ND], dtype=obj["dtype"]).reshape(obj["shape"])
        return {k: from_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        out = [from_plain(v) for v in obj]
        return tuple(out) if isinstance(obj, tuple) else out
    return obj


# --- RNG state --------------------------------------------------------------------------
def capture_rng(generator: np.random.Generator | None = None) -> dict[str, Any]:
    """The global python/numpy/torch RNG states (and one numpy Generator's, if given)."""
    state: dict[str, Any] = {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["torch_cuda"] = torch.cuda.get_rng_state_all()
    if generator is not None:
        state["generator"] = generator.bit_generator.state
    return to_plain(state)


def restore_rng(state: dict[str, Any], generator: np.random.Generator | None = None) -> None:
    """Put back what `capture_rng` saved."""
    state = from_plain(state)
    py = state["python"]
    random.setstate((py[0], tuple(py[1]), py[2]))
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "torch_cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["torch_cuda"])
    if generator is not None and "generator" in state:
        generator.bit_generator.state = state["generator"]


# --- files ------------------------------------------------------------------------------
def save_checkpoint(path: str | Path, ckpt: dict[str, Any]) -> None:
    """Write ``ckpt`` atomically (temp file in the same directory, fsync, rename)."""
    atomic_write(path, lambda fh: torch.save(ckpt, fh))


def network_dict(network: NetworkConfig | dict[str, Any]) -> dict[str, Any]:
    return dataclasses.asdict(network) if dataclasses.is_dataclass(network) else dict(network)


def make_checkpoint(
    *,
    variant: str,
    network: NetworkConfig,
    model: nn.Module,
    learner: dict[str, Any] | None,
    counters: dict[str, int],
    rng: dict[str, Any],
    worker: dict[str, Any] | None,
    config: dict[str, Any],
) -> dict[str, Any]:
    """Assemble the checkpoint dict (weights copied to the CPU)."""
    return {
        "format_version": FORMAT_VERSION,
        "variant": variant,
        "network": network_dict(network),
        "model": {k: v.detach().cpu() for k, v in model.state_dict().items()},
        "learner": learner,
        "counters": dict(counters),
        "rng": rng,
        "worker": to_plain(worker) if worker is not None else None,
        "config": config,
    }


PLAYING_KEYS = ("format_version", "variant", "network", "model", "counters", "config")
"""What a player needs from a checkpoint; the rest (optimizer, RNG, worker state) only resumes."""


def playing_checkpoint(ckpt: dict[str, Any]) -> dict[str, Any]:
    """``ckpt`` cut to what playing needs: weights, shape, variant, counters and the run's
    config (the provenance a model card cites). About a third the size; it cannot resume."""
    slim = {key: ckpt[key] for key in PLAYING_KEYS if key in ckpt}
    slim.update(learner=None, rng={}, worker=None)
    return slim


def load_checkpoint(
    path: str | Path, variant: str | None = None, network: NetworkConfig | dict[str, Any] | None = None
) -> dict[str, Any]:
    """Read and check a checkpoint; ``variant``/``network`` (when given) must match it."""
    path = Path(path)
    try:
        found, is_file = path.exists(), path.is_file()
    except OSError as exc:  # e.g. a name longer than the file system allows
        raise CheckpointError(f"{path}: cannot read ({exc.strerror})") from None
    if not found:
        raise CheckpointError(f"{path}: no checkpoint there")
    if not is_file:
        raise CheckpointError(f"{path}: not a checkpoint file")
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # truncated zip, wrong format, foreign pickle...
        raise CheckpointError(
            f"{path}: not a readable checkpoint (corrupt or not written by tammi-rl): {type(exc).__name__}: {exc}"
        ) from None
    if not isinstance(ckpt, dict):
        raise CheckpointError(f"{path}: not a tammi-rl checkpoint (top level is a {type(ckpt).__name__})")
    missing = [k for k in REQUIRED_KEYS if k not in ckpt]
    if missing:
        raise CheckpointError(f"{path}: not a tammi-rl checkpoint (missing {', '.join(missing)})")
    if ckpt["format_version"] != FORMAT_VERSION:
        raise CheckpointError(
            f"{path}: checkpoint format version {ckpt['format_version']}, this tammi-rl reads {FORMAT_VERSION}"
        )
    if isinstance(ckpt["network"], dict):  # heads the network predates it does not have
        ckpt["network"] = upgrade_network(ckpt["network"])
    if variant is not None and ckpt["variant"] != variant:
        raise CheckpointError(f"{path}: checkpoint is for variant {ckpt['variant']!r}, this run is {variant!r}")
    if network is not None:
        want, have = network_dict(network), ckpt["network"]
        diffs = [f"network.{k}: checkpoint {have.get(k)!r}, config {want[k]!r}" for k in want if have.get(k) != want[k]]
        if diffs:
            raise CheckpointError(f"{path}: network shape does not match the config ({'; '.join(diffs)})")
    if ckpt.get("worker") is not None:
        ckpt["worker"] = from_plain(ckpt["worker"])
    if isinstance(ckpt.get("config"), dict):  # keys the run predates mean what they meant then
        ckpt["config"] = upgrade_saved_config(ckpt["config"])
    return ckpt


def load_model_weights(model: nn.Module, ckpt: dict[str, Any], path: str | Path) -> None:
    """Load the checkpoint's weights; a shape or key mismatch is a `CheckpointError`."""
    own = model.state_dict()
    theirs = ckpt["model"]
    problems = [f"missing {k}" for k in own if k not in theirs]
    problems += [f"unexpected {k}" for k in theirs if k not in own]
    problems += [
        f"{k}: checkpoint {tuple(theirs[k].shape)} vs model {tuple(v.shape)}"
        for k, v in own.items()
        if k in theirs and tuple(theirs[k].shape) != tuple(v.shape)
    ]
    if problems:
        shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
        raise CheckpointError(f"{path}: weights do not fit this network ({shown})")
    model.load_state_dict(theirs)
