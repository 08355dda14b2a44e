"""Run configuration: YAML files validated into typed dataclasses.

    cfg = load_config("configs/russian.yaml", overrides=["mcts.simulations=128"])

Every key is checked against the dataclass fields: an unknown key or a value of the
wrong type is a `ConfigError` naming the file and the dotted key. Overrides use the
same dotted keys and YAML value syntax (``train.lr=3e-4``, ``eval.alphabeta_depths=[1,2]``).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import yaml

from tammi_rl.atomic import atomic_write_text
from tammi_rl.config.fields import ConfigError, build, show
from tammi_rl.config.schema import Config, validate
from tammi_rl.legacy import upgrade_retired_keys, upgrade_saved_config
from tammi_rl.rules.errors import read_user_text


def _parse_yaml(text: str) -> Any:
    """``yaml.safe_load``; any failure (PyYAML can also raise ValueError, e.g. for an impossible
    date or a too-long integer, or RecursionError for deep nesting) becomes a ValueError."""
    try:
        return yaml.safe_load(text)
    except Exception as exc:
        raise ValueError(str(exc) or type(exc).__name__) from None


def apply_overrides(data: dict[str, Any], overrides: list[str], source: str = "command line") -> dict[str, Any]:
    """Set dotted ``key=value`` pairs (values in YAML syntax) in a raw config mapping."""
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"{source}: override {show(item)} must look like key.sub=value")
        key, raw = item.split("=", 1)
        parts = key.strip().split(".")
        try:
            value = _parse_yaml(raw)
        except ValueError as exc:
            raise ConfigError(f"{source}: override {show(item)}: bad value ({exc})") from None
        node = data
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"{source}: override {show(item)}: '{part}' is not a section")
        node[parts[-1]] = value
    return data


class ConfigWarning(UserWarning):
    """A config uses a retired key; it still loads (the warning says what replaced the key)."""


def migrate_retired(data: dict[str, Any], source: str) -> dict[str, Any]:
    """A copy of a raw mapping with the retired keys moved or dropped (`tammi_rl.legacy.upgrade_retired_keys`),
    warning once per key found."""
    data, notes = upgrade_retired_keys(data)
    for note in notes:
        warnings.warn(f"{source}: {note}", ConfigWarning, stacklevel=3)
    return data


def config_from_dict(data: dict[str, Any], source: str = "<dict>") -> Config:
    """A validated `Config` from a raw mapping (missing keys keep their defaults; retired keys
    are migrated with a `ConfigWarning`)."""
    return validate(build(Config, migrate_retired(data, source), source), source)


def load_config(path: str | Path | None, overrides: list[str] | None = None, *, saved: bool = False) -> Config:
    """Load a YAML run config (or defaults when ``path`` is None) and apply overrides.

    ``saved``: the file is a config a run saved (its ``config.yaml``), not one a user wrote;
    a key it predates takes the default it had then (`tammi_rl.legacy.upgrade_saved_config`),
    where a user's file means today's defaults.
    """
    data: dict[str, Any] = {}
    source = "<defaults>"
    if path is not None:
        source = str(path)
        text = read_user_text(path, "config", ConfigError)
        try:
            data = _parse_yaml(text)
        except ValueError as exc:
            raise ConfigError(f"{source}: not valid YAML: {exc}") from None
        if data is None:  # an empty file, or only comments
            data = {}
        if not isinstance(data, dict):
            raise ConfigError(f"{source}: the top level must be a mapping of keys")
        if saved:
            data = upgrade_saved_config(data)
    if overrides:
        data = apply_overrides(data, overrides)
        source = f"{source} (with overrides)"
    return config_from_dict(data, source)


def save_config(cfg: Config, path: str | Path) -> None:
    """Write the resolved config as YAML (saved beside every run), atomically."""
    atomic_write_text(path, yaml.safe_dump(cfg.to_dict(), sort_keys=False))
