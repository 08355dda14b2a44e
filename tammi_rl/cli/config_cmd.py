"""``tammi-rl config CONFIG [key=value ...]``: a run config fully resolved, every key with its doc.

    tammi-rl config configs/english.yaml
    tammi-rl config configs/russian.yaml mcts.simulations=64 train.hours=0.5

A config file states only what differs from the defaults (the shipped Russian CPU recipe);
this prints what a run of it would use: every key as YAML (loadable as a config itself),
each followed by the first sentence of its documentation, marked ``*`` when the file sets
it and ``+`` when an override does (an override wins over the file). A retired key is
reported on stderr, as training would warn about it.
"""

from __future__ import annotations

import argparse
import re
import sys
import warnings
from typing import Any, TextIO

import yaml

from tammi_rl.config import Config, ConfigWarning, apply_overrides, load_config
from tammi_rl.config.fields import ConfigError, fields_of, is_section
from tammi_rl.config.loading import migrate_retired
from tammi_rl.rules.errors import read_user_text

FROM_FILE, FROM_OVERRIDE = "*", "+"
_SENTENCE_END = re.compile(r"(?<=\.)\s+(?=[A-Z\"'(`])")


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("config", metavar="CONFIG", help="run config YAML (configs/russian.yaml, ...)")
    parser.add_argument(
        "overrides",
        metavar="key=value",
        nargs="*",
        default=[],
        help="config overrides in dotted form, as for train, e.g. train.lr=3e-4 mcts.simulations=32",
    )


def run_config_command(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Print the resolved config; a bad file or key raises `ConfigError` (main prints it)."""
    overrides = list(args.overrides)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConfigWarning)
        cfg = load_config(args.config, overrides)
    for warning in caught:
        if issubclass(warning.category, ConfigWarning):
            print(f"tammi-rl config: warning: {warning.message}", file=sys.stderr)
    set_by = keys_set(args.config, overrides)
    print(render(cfg, set_by, args.config, len(overrides)), end="", file=out or sys.stdout)
    return 0


def keys_set(path: str, overrides: list[str]) -> dict[str, str]:
    """Dotted key -> `FROM_FILE` or `FROM_OVERRIDE` for every key the file or an override sets
    (retired keys counted under the key that replaced them). Call after `load_config` accepted both."""
    text = read_user_text(path, "config", ConfigError)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConfigWarning)  # load_config already reported them
        from_file = migrate_retired(yaml.safe_load(text) or {}, path)
        from_overrides = migrate_retired(apply_overrides({}, overrides), "command line")
    marks = dict.fromkeys(_leaf_keys(from_file), FROM_FILE)
    marks.update(dict.fromkeys(_leaf_keys(from_overrides), FROM_OVERRIDE))
    return marks


def _leaf_keys(data: dict[str, Any], prefix: str = "") -> list[str]:
    keys = []
    for key, value in data.items():
        if isinstance(value, dict):
            keys += _leaf_keys(value, f"{prefix}{key}.")
        else:
            keys.append(f"{prefix}{key}")
    return keys


def one_line(doc: str) -> str:
    """The first sentence of a key's documentation."""
    return _SENTENCE_END.split(doc, maxsplit=1)[0]


def yaml_value(value: Any) -> str:
    """``value`` in YAML flow syntax: ``english``, ``''``, ``0.002``, ``[2, 4, 6]``, ``true``."""
    text = yaml.safe_dump(value, default_flow_style=True, width=10_000)
    return text.removesuffix("\n...\n").strip()


def render(cfg: Config, set_by: dict[str, str], source: str, n_overrides: int = 0) -> str:
    """The resolved config as YAML, one key a line with its mark and one-line doc as a comment."""
    n_file = sum(mark == FROM_FILE for mark in set_by.values())
    n_over = sum(mark == FROM_OVERRIDE for mark in set_by.values())
    with_overrides = f" with {n_overrides} override{'s' * (n_overrides != 1)}" if n_overrides else ""
    rows: list[tuple[str, str]] = []
    _rows(cfg, "", 0, set_by, rows)
    width = max(len(text) for text, _ in rows) + 1
    return "".join(
        [
            f"# {source}{with_overrides}, resolved: every key, and after it its doc.\n",
            f"# {FROM_FILE} set by the file ({n_file}), {FROM_OVERRIDE} set by an override ({n_over}); "
            "unmarked keys hold their defaults.\n",
            *(f"{text.ljust(width)}# {comment}\n" for text, comment in rows),
        ]
    )


def _rows(obj: Any, prefix: str, depth: int, set_by: dict[str, str], rows: list[tuple[str, str]]) -> None:
    """``(key: value, mark and doc)`` for every field of a section, sections recursively."""
    indent = "  " * depth
    for f, tp, spec in fields_of(type(obj)):
        value = getattr(obj, f.name)
        if is_section(tp):
            rows.append((f"{indent}{f.name}:", f"  {one_line(spec.doc)}"))
            _rows(value, f"{prefix}{f.name}.", depth + 1, set_by, rows)
            continue
        mark = set_by.get(f"{prefix}{f.name}", " ")
        rows.append((f"{indent}{f.name}: {yaml_value(value)}", f"{mark} {one_line(spec.doc)}"))
