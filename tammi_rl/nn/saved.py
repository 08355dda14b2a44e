"""A trained network read back from a checkpoint file or a run directory."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tammi_rl.config import SEARCH_ALGORITHMS, EvalConfig, MCTSConfig, NetworkConfig
from tammi_rl.legacy import upgrade_checkpoint_config
from tammi_rl.nn.model import PolicyValueNet, build_model
from tammi_rl.rules.engine import Rules
from tammi_rl.store.checkpoint import CheckpointError, load_checkpoint, load_model_weights


@dataclass(frozen=True)
class SavedNetwork:
    """The network of one checkpoint, with the settings it was trained under."""

    path: Path
    """The checkpoint file (a run directory resolves to its ``checkpoints/latest.pt``)."""
    rules: Rules
    model: PolicyValueNet
    network: NetworkConfig
    mcts: MCTSConfig
    """The search settings the agent plays with: the run's ``mcts`` section (as saved in its
    config) with its ``eval`` play settings (`EvalConfig.play_search`; self-play may search
    otherwise)."""
    checkpoint: dict[str, Any]


def checkpoint_path(checkpoint: str | Path) -> Path:
    """A checkpoint file, or the latest checkpoint of a run directory."""
    path = Path(checkpoint)
    return path / "checkpoints" / "latest.pt" if path.is_dir() else path


def load_network(checkpoint: str | Path, rules: Rules | None = None) -> SavedNetwork:
    """Read the network of ``checkpoint``; with ``rules`` its variant must match them.
    Every way of failing is a `CheckpointError` naming the file."""
    try:
        path = checkpoint_path(checkpoint)
    except OSError as exc:  # e.g. a name longer than the file system allows
        raise CheckpointError(f"{checkpoint}: cannot read ({exc.strerror})") from None
    ckpt = load_checkpoint(path, variant=None if rules is None else rules.variant.name)
    if rules is None:
        rules = Rules.for_variant(str(ckpt["variant"]))
    config = upgrade_checkpoint_config(ckpt.get("config"))
    play_algorithm = config["eval"]["algorithm"]
    if play_algorithm not in SEARCH_ALGORITHMS:
        raise CheckpointError(f"{path}: eval.algorithm {play_algorithm!r} is not one of {', '.join(SEARCH_ALGORITHMS)}")
    play = dataclasses.replace(
        EvalConfig(),
        algorithm=play_algorithm,
        play_forced_hops=_play_switch(config["eval"], "play_forced_hops", path),
        repetition_draws=_play_switch(config["eval"], "repetition_draws", path),
    )
    try:
        network = NetworkConfig(**ckpt["network"])
        mcts = play.play_search(MCTSConfig(**config["mcts"]))
    except TypeError as exc:  # a checkpoint written by another tammi-rl version
        raise CheckpointError(f"{path}: network or search settings this tammi-rl does not know ({exc})") from None
    model = build_model(rules, network)
    load_model_weights(model, ckpt, path)
    return SavedNetwork(path, rules, model.eval(), network, mcts, ckpt)


def _play_switch(eval_section: dict[str, Any], key: str, path: Path) -> bool:
    """The on/off play setting ``eval.<key>`` of a checkpoint's config; a checkpoint saved
    before the setting existed plays with today's default."""
    value = eval_section.get(key, getattr(EvalConfig(), key))
    if not isinstance(value, bool):
        raise CheckpointError(f"{path}: eval.{key} must be true or false, got {value!r}")
    return value
