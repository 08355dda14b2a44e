"""Run configuration: YAML files validated into typed dataclasses.

    cfg = load_config("configs/russian.yaml", overrides=["mcts.simulations=128"])

Every key is checked against the dataclass fields: an unknown key or a value of the
wrong type is a `ConfigError` naming the file and the dotted key. Overrides use the
same dotted keys and YAML value syntax (``train.lr=3e-4``, ``eval.alphabeta_depths=[1,2]``).
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tammi_rl.rules.errors import TammiError


class ConfigError(TammiError):
    """A run config has an unknown key or a bad value (the message names both)."""


@dataclass
class NetworkConfig:
    """Residual policy-value network (see `tammi_rl.nn.model`)."""

    blocks: int = 6
    channels: int = 64
    value_hidden: int = 64


@dataclass
class MCTSConfig:
    """Batched search. ``algorithm``: "gumbel" (sequential halving) or "puct" (Dirichlet noise)."""

    algorithm: str = "gumbel"
    simulations: int = 64
    c_puct: float = 1.5
    dirichlet_alpha: float = 0.3
    dirichlet_fraction: float = 0.25
    gumbel_max_actions: int = 16
    gumbel_c_visit: float = 50.0
    gumbel_c_scale: float = 1.0
    temperature: float = 1.0
    temperature_plies: int = 20
    """Plies (per game) played by sampling from the search policy; later plies are greedy."""
    playout_cap_fraction: float = 1.0
    """Share of positions searched fully (and stored as policy targets); 1.0 disables the cap."""
    cheap_simulations: int = 16


@dataclass
class SelfPlayConfig:
    games_per_iteration: int = 64
    parallel_games: int = 64
    max_plies: int = 300
    """Length cap in plies (whole moves); the variant's adjudication decides the result."""
    random_opening_plies: int = 0
    resign_threshold: float = -0.95
    """Resign when the searched value of the side to move stays below this (-1 disables)."""
    resign_min_plies: int = 20
    resign_playout_fraction: float = 0.1
    """Share of would-be-resigned games played out to measure false positives."""


@dataclass
class ReplayConfig:
    capacity: int = 200_000
    min_samples: int = 2_000
    """Learning starts once the buffer holds this many samples."""


@dataclass
class TrainConfig:
    iterations: int = 100
    batch_size: int = 256
    steps_per_iteration: int = 100
    optimizer: str = "adamw"
    lr: float = 1e-3
    lr_schedule: str = "cosine"
    weight_decay: float = 1e-4
    momentum: float = 0.9
    value_loss_weight: float = 1.0
    value_target_search_weight: float = 0.0
    """Share of the root search value in the value target: 0 trains on the game outcome
    alone (AlphaZero); 0.5 on the average of outcome and search value, which is less
    noisy early in training."""
    grad_clip: float = 5.0


@dataclass
class CheckpointConfig:
    every: int = 1
    """Write a checkpoint every this many iterations."""
    keep: int = 5
    buffer_snapshot: bool = True


@dataclass
class GatingConfig:
    """Optional SPRT gating (`tammi_rl.eval.sprt`): a new network replaces the self-play
    network only when it beats it (H1: ``elo1`` stronger vs H0: ``elo0``). Off by default."""

    enabled: bool = False
    elo0: float = 0.0
    elo1: float = 30.0
    alpha: float = 0.05
    beta: float = 0.05
    max_games: int = 200
    """Games at most per gating test; undecided keeps the current self-play network."""
    simulations: int = 32
    every: int = 1
    """Gate every this many learning iterations (between gates the candidate just keeps learning)."""


@dataclass
class EvalConfig:
    every: int = 5
    """Evaluate against alpha-beta every this many iterations (0 disables)."""
    games: int = 20
    alphabeta_depths: list[int] = field(default_factory=lambda: [1, 2])
    simulations: int = 64
    gating: GatingConfig = field(default_factory=GatingConfig)


@dataclass
class DistributedConfig:
    """Where self-play runs (DESIGN.md decision 8). ``backend``: "local" (in-process) or
    "ray" (Ray actors; needs ``pip install 'tammi-rl[ray]'``); the learner stays on the driver."""

    backend: str = "local"
    address: str = ""
    """Ray cluster to join: "" (Ray's default: RAY_ADDRESS, else the cluster last started on
    this machine, else a new local instance), "auto" (an existing cluster only, e.g. the one
    `ray start --head` started), "local" (always a new local instance), "host:port" or
    "ray://host:10001" (Ray Client)."""
    num_actors: int = 2
    cpus_per_actor: float = 1.0
    gpus_per_actor: float = 0.0
    games_per_actor: int = 0
    """Games each actor plays per iteration; 0 splits selfplay.games_per_iteration among the actors."""
    max_restarts: int = 3
    """Times one actor may be replaced after dying before the run stops with an error."""


@dataclass
class Config:
    """A whole training run."""

    variant: str = "russian"
    name: str = ""
    """Run name; the run directory is ``<runs_dir>/<name>`` (defaults to the variant)."""
    runs_dir: str = "runs"
    checkpoints_dir: str = "checkpoints"
    seed: int = 0
    device: str = "auto"
    threads: int = 0
    """torch intra-op threads (0: torch's default)."""
    network: NetworkConfig = field(default_factory=NetworkConfig)
    mcts: MCTSConfig = field(default_factory=MCTSConfig)
    selfplay: SelfPlayConfig = field(default_factory=SelfPlayConfig)
    replay: ReplayConfig = field(default_factory=ReplayConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    checkpoint: CheckpointConfig = field(default_factory=CheckpointConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    distributed: DistributedConfig = field(default_factory=DistributedConfig)

    @property
    def run_name(self) -> str:
        return self.name or self.variant

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


_CHOICES = {
    "mcts.algorithm": ("gumbel", "puct"),
    "train.optimizer": ("adamw", "sgd"),
    "train.lr_schedule": ("cosine", "constant"),
    "distributed.backend": ("local", "ray"),
}
_POSITIVE = {
    "mcts.simulations", "mcts.cheap_simulations", "mcts.gumbel_max_actions", "network.blocks",
    "network.channels", "network.value_hidden", "selfplay.games_per_iteration", "selfplay.parallel_games",
    "selfplay.max_plies", "replay.capacity", "train.iterations", "train.batch_size",
    "train.steps_per_iteration", "train.lr", "checkpoint.every", "checkpoint.keep", "eval.simulations",
    "distributed.num_actors",
}
_FRACTIONS = {"mcts.dirichlet_fraction", "mcts.playout_cap_fraction", "selfplay.resign_playout_fraction",
              "train.value_target_search_weight"}


_SCIENTIFIC = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+$")


def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", str(tp))


def _coerce(value: Any, tp: Any, where: str) -> Any:
    origin = typing.get_origin(tp)
    if origin in (list,):
        (item_tp,) = typing.get_args(tp)
        if not isinstance(value, list):
            raise ConfigError(f"{where}: expected a list of {_type_name(item_tp)}, got {value!r}")
        return [_coerce(v, item_tp, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin in (typing.Union, types.UnionType):
        raise ConfigError(f"{where}: unsupported union type")  # not used by the config
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected true or false, got {value!r}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: expected an integer, got {value!r}")
        return value
    if tp is float:
        if isinstance(value, str) and _SCIENTIFIC.match(value.strip()):
            return float(value)  # YAML 1.1 reads 3e-4 (no dot) as a string
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{where}: expected a number, got {value!r}")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: expected a string, got {value!r}")
        return value
    raise ConfigError(f"{where}: unsupported type {tp}")


def _build(cls: type, data: Any, prefix: str, source: str) -> Any:
    where = f"{source}: key '{prefix[:-1]}'" if prefix else source
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping, got {data!r}")
    hints = typing.get_type_hints(cls)
    known = {f.name for f in dataclasses.fields(cls)}
    for key in data:
        if key not in known:
            raise ConfigError(
                f"{source}: unknown key '{prefix}{key}'; known keys here: {', '.join(sorted(known))}"
            )
    kwargs = {}
    for f in dataclasses.fields(cls):
        if f.name not in data:
            continue
        tp = hints[f.name]
        dotted = f"{prefix}{f.name}"
        if dataclasses.is_dataclass(tp):
            kwargs[f.name] = _build(tp, data[f.name], f"{dotted}.", source)
        else:
            kwargs[f.name] = _coerce(data[f.name], tp, f"{source}: key '{dotted}'")
    return cls(**kwargs)


def validate(cfg: Config, source: str = "<config>") -> Config:
    """Range and choice checks that types alone cannot express."""
    from tammi_rl.rules.variant import load_variant

    try:
        load_variant(cfg.variant)
    except TammiError as exc:
        raise ConfigError(f"{source}: key 'variant': {exc}") from None
    flat = _flatten(cfg.to_dict())
    for key, allowed in _CHOICES.items():
        if flat[key] not in allowed:
            raise ConfigError(f"{source}: key '{key}': got {flat[key]!r}, allowed values: {', '.join(allowed)}")
    for key in _POSITIVE:
        if not flat[key] > 0:
            raise ConfigError(f"{source}: key '{key}': must be > 0, got {flat[key]!r}")
    for key in _FRACTIONS:
        if not 0.0 <= flat[key] <= 1.0:
            raise ConfigError(f"{source}: key '{key}': must be in [0, 1], got {flat[key]!r}")
    if cfg.device not in ("auto", "cpu", "cuda") and not cfg.device.startswith("cuda:"):
        raise ConfigError(f"{source}: key 'device': got {cfg.device!r}, allowed: auto, cpu, cuda, cuda:N")
    if cfg.replay.min_samples > cfg.replay.capacity:
        raise ConfigError(f"{source}: key 'replay.min_samples': {cfg.replay.min_samples} is more than "
                          f"replay.capacity ({cfg.replay.capacity}), so learning would never start")
    for key in ("distributed.cpus_per_actor", "distributed.gpus_per_actor", "distributed.games_per_actor",
                "distributed.max_restarts"):
        if flat[key] < 0:
            raise ConfigError(f"{source}: key '{key}': must be >= 0, got {flat[key]!r}")
    gating = cfg.eval.gating
    if not gating.elo1 > gating.elo0:
        raise ConfigError(f"{source}: key 'eval.gating.elo1': must be > eval.gating.elo0, got {gating.elo1!r}")
    for key in ("alpha", "beta"):
        if not 0.0 < getattr(gating, key) <= 0.5:
            raise ConfigError(f"{source}: key 'eval.gating.{key}': must be in (0, 0.5], got {getattr(gating, key)!r}")
    if gating.max_games < 2:
        raise ConfigError(f"{source}: key 'eval.gating.max_games': must be >= 2, got {gating.max_games!r}")
    if gating.simulations < 1 or gating.every < 1:
        key = "simulations" if gating.simulations < 1 else "every"
        raise ConfigError(f"{source}: key 'eval.gating.{key}': must be >= 1, got {getattr(gating, key)!r}")
    if any(d < 0 for d in cfg.eval.alphabeta_depths):
        raise ConfigError(f"{source}: key 'eval.alphabeta_depths': depths must be >= 0")
    return cfg


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out.update(_flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def apply_overrides(data: dict[str, Any], overrides: list[str], source: str = "command line") -> dict[str, Any]:
    """Set dotted ``key=value`` pairs (values in YAML syntax) in a raw config mapping."""
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"{source}: override {item!r} must look like key.sub=value")
        key, raw = item.split("=", 1)
        parts = key.strip().split(".")
        try:
            value = yaml.safe_load(raw)
        except yaml.YAMLError as exc:
            raise ConfigError(f"{source}: override {item!r}: bad value ({exc})") from None
        node = data
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"{source}: override {item!r}: '{part}' is not a section")
        node[parts[-1]] = value
    return data


def config_from_dict(data: dict[str, Any], source: str = "<dict>") -> Config:
    return validate(_build(Config, data, "", source), source)


def load_config(path: str | Path | None, overrides: list[str] | None = None) -> Config:
    """Load a YAML run config (or defaults when ``path`` is None) and apply overrides."""
    data: dict[str, Any] = {}
    source = "<defaults>"
    if path is not None:
        source = str(path)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"{source}: cannot read config ({exc.strerror})") from None
        try:
            data = yaml.safe_load(text) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"{source}: not valid YAML: {exc}") from None
        if not isinstance(data, dict):
            raise ConfigError(f"{source}: the top level must be a mapping of keys")
    if overrides:
        data = apply_overrides(data, overrides)
        source = f"{source} (with overrides)"
    return config_from_dict(data, source)


def save_config(cfg: Config, path: str | Path) -> None:
    """Write the resolved config as YAML (saved beside every run), atomically."""
    from tammi_rl.train.atomic import atomic_write_text

    atomic_write_text(path, yaml.safe_dump(cfg.to_dict(), sort_keys=False))
