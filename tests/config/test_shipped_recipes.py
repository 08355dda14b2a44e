"""Each shipped config resolves to exactly its recorded recipe, and states only what differs.

``resolved/<name>.json`` holds ``dataclasses.asdict(load_config("configs/<name>.yaml"))`` as
written by the code from before the schema defaults became the Russian CPU recipe, when every
config still spelled out every key: moving defaults, or trimming a config, must not change what
a config trains. A deliberate recipe change rewrites the file with ``json.dumps(..., indent=2)``.
"""

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tammi_rl.config import Config, config_from_dict, load_config

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "configs"
RESOLVED = Path(__file__).parent / "resolved"
SHIPPED = sorted(p.stem for p in CONFIGS.glob("*.yaml"))
VARIANTS = ("english", "international", "italian", "russian", "turkish")
MAX_LINES = 25
"""Non-blank lines, comments included, of a variant's config."""


def flat(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Dotted key -> value; a value keeps its type (1 and 1.0 and True differ)."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out.update(flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = (type(value).__name__, value)
    return out


def recorded(name: str) -> dict[str, Any]:
    return json.loads((RESOLVED / f"{name}.json").read_text())


def assert_same(got: Config, want: dict[str, Any], what: str) -> None:
    have, expected = flat(dataclasses.asdict(got)), flat(want)
    assert list(have) == list(expected), f"{what}: the keys differ"
    diffs = {key: (have[key], expected[key]) for key in expected if have[key] != expected[key]}
    assert not diffs, f"{what}: key -> (resolved, recorded): {diffs}"


def test_every_shipped_config_has_a_recorded_recipe():
    assert sorted(p.stem for p in RESOLVED.glob("*.json")) == SHIPPED
    assert set(VARIANTS) <= set(SHIPPED)


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_config_resolves_to_its_recipe(name):
    assert_same(load_config(CONFIGS / f"{name}.yaml"), recorded(name), f"configs/{name}.yaml")


@pytest.mark.parametrize("name", SHIPPED)
def test_overrides_apply_on_top_of_the_recipe(name):
    overrides = ["mcts.simulations=7", "train.hours=0.25", "eval.alphabeta_depths=[3]", "selfplay.workers=2"]
    want = recorded(name)
    want["mcts"]["simulations"], want["train"]["hours"] = 7, 0.25
    want["eval"]["alphabeta_depths"], want["selfplay"]["workers"] = [3], 2
    assert_same(load_config(CONFIGS / f"{name}.yaml", overrides), want, f"configs/{name}.yaml with overrides")


def test_the_defaults_are_the_russian_cpu_recipe():
    for cfg in (Config(), load_config(None), config_from_dict({})):
        assert_same(cfg, recorded("russian"), "the defaults")


@pytest.mark.parametrize("name", SHIPPED)
def test_a_config_states_only_what_differs_from_the_defaults(name):
    raw = flat(yaml.safe_load((CONFIGS / f"{name}.yaml").read_text()) or {})
    defaults = flat(Config().to_dict())
    restated = [key for key in raw if key != "variant" and config_value(key, raw[key]) == defaults[key]]
    assert not restated, f"configs/{name}.yaml restates defaults: {restated}"


def config_value(key: str, raw: tuple[str, Any]) -> tuple[str, Any]:
    """A raw YAML value as the config holds it (``hours: 0`` is the float 0.0)."""
    data: dict[str, Any] = {}
    node = data
    *sections, last = key.split(".")
    for part in sections:
        node = node.setdefault(part, {})
    node[last] = raw[1]
    return flat(config_from_dict(data).to_dict())[key]


@pytest.mark.parametrize("name", VARIANTS)
def test_a_variant_config_is_short_and_names_its_variant(name):
    text = (CONFIGS / f"{name}.yaml").read_text()
    assert len([line for line in text.splitlines() if line.strip()]) <= MAX_LINES
    assert yaml.safe_load(text)["variant"] == name
