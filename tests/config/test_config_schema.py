"""The config schema: every key documented, every declared limit enforced, the key reference complete."""

import ast
import dataclasses
import json
import math
import re
import sys
from pathlib import Path

import pytest
import yaml

from tammi_rl.config import (
    Config,
    ConfigError,
    GatingConfig,
    MCTSConfig,
    apply_overrides,
    config_from_dict,
    describe_fields,
    load_config,
    validate,
)
from tammi_rl.config.fields import Setting, fields_of, is_section, setting, setting_of
from tammi_rl.rules.errors import TammiError

CONFIG_DIR = Path(__file__).resolve().parents[2] / "tammi_rl" / "config"


def leaves(cls=Config, prefix=""):
    """``(dotted key, field, type, Setting)`` for every settable key."""
    out = []
    for f, tp, spec in fields_of(cls):
        if is_section(tp):
            out += leaves(tp, f"{prefix}{f.name}.")
        else:
            out.append((f"{prefix}{f.name}", f, tp, spec))
    return out


def sections(cls=Config, prefix=""):
    out = [(prefix[:-1] or "<top>", cls)]
    for f, tp, _ in fields_of(cls):
        if is_section(tp):
            out += sections(tp, f"{prefix}{f.name}.")
    return out


def nested(flat: dict) -> dict:
    data: dict = {}
    for key, value in flat.items():
        *head, last = key.split(".")
        node = data
        for part in head:
            node = node.setdefault(part, {})
        node[last] = value
    return data


LEAVES = leaves()
KEYS = [key for key, *_ in LEAVES]
LIMITED = [(key, tp, spec) for key, _, tp, spec in LEAVES if spec.min is not None or spec.max is not None]
CHOICES = [(key, spec) for key, _, _, spec in LEAVES if spec.choices is not None and spec.min is None]
WORDS_OR_NUMBERS = [(key, spec) for key, _, tp, spec in LEAVES if tp == int | str]
FLOATS = [key for key, _, tp, _ in LEAVES if tp is float]
# Keys another key's rule depends on: set alongside so that only the key under test decides.
COMPANIONS = {"replay.capacity": {"replay.min_samples": 0}}


def key_error(key: str) -> str:
    return rf"<dict>: key '{re.escape(key)}(\[0\])?'"


# --- documentation -----------------------------------------------------------------------------
def test_schema_is_not_empty():
    assert len(KEYS) > 60 and len(sections()) == 10


@pytest.mark.parametrize("name, cls", sections(), ids=lambda x: x if isinstance(x, str) else "")
def test_every_field_of_every_section_is_documented(name, cls):
    assert (cls.__doc__ or "").strip(), f"section {name} has no docstring"
    for f in dataclasses.fields(cls):
        spec = setting_of(f)  # a TypeError for a field declared without setting()/section()
        assert isinstance(spec, Setting)
        assert spec.doc.strip(), f"{name}.{f.name} has an empty doc"
        assert spec.doc.endswith("."), f"{name}.{f.name}: a doc is a sentence: {spec.doc!r}"


def test_docs_name_no_file_outside_the_repository():
    texts = [row[3] for row in describe_fields()] + [cls.__doc__ or "" for _, cls in sections()]
    texts += [path.read_text() for path in CONFIG_DIR.glob("*.py")]
    for text in texts:
        assert not re.search(r"\b[A-Z_]+\.md\b", text), text[:200]


def test_setting_requires_a_doc_and_one_default():
    with pytest.raises(TypeError):
        setting(1, "")
    with pytest.raises(TypeError):
        setting(1, "A doc.", factory=list)
    with pytest.raises(TypeError):
        setting(doc="A doc.")


# --- limits ------------------------------------------------------------------------------------
def outside_and_at(tp, spec: Setting):
    """Pairs (value just outside a limit, value at the limit) for each declared bound."""
    pairs = []
    item = tp if typing_origin(tp) is not list else tp.__args__[0]
    if item == int | str:  # a word or a number: the number's limits are an int's
        item = tp = int
    for bound, exclusive, direction in ((spec.min, spec.min_exclusive, -1), (spec.max, spec.max_exclusive, 1)):
        if bound is None:
            continue
        if item is int:
            outside = bound if exclusive else bound + direction
            at = bound - direction if exclusive else bound
        else:
            toward_out = math.inf * direction
            outside = float(bound) if exclusive else math.nextafter(float(bound), toward_out)
            at = math.nextafter(float(bound), -toward_out) if exclusive else float(bound)
        if item is not tp:
            outside, at = [outside], [at]
        pairs.append((outside, at))
    return pairs


def typing_origin(tp):
    return getattr(tp, "__origin__", None)


@pytest.mark.parametrize("key, tp, spec", LIMITED, ids=[k for k, _, _ in LIMITED])
def test_every_numeric_limit_is_enforced(key, tp, spec):
    pairs = outside_and_at(tp, spec)
    assert pairs
    for outside, at in pairs:
        base = dict(COMPANIONS.get(key, {}))
        with pytest.raises(ConfigError, match=key_error(key)):
            config_from_dict(nested({**base, key: outside}))
        cfg = config_from_dict(nested({**base, key: at}))
        value = cfg.to_dict()
        for part in key.split("."):
            value = value[part]
        assert value == at


@pytest.mark.parametrize("key, spec", WORDS_OR_NUMBERS, ids=[k for k, _ in WORDS_OR_NUMBERS])
def test_word_or_number_keys_take_their_words_and_whole_numbers_only(key, spec):
    assert WORDS_OR_NUMBERS and spec.choices
    for word in spec.choices:
        config_from_dict(nested({key: word}))
    config_from_dict(nested({key: 3}))
    with pytest.raises(ConfigError, match=key_error(key) + ": must be auto, or a number >= 0, got 'nope'"):
        config_from_dict(nested({key: "nope"}))
    for bad in (2.5, True, [1]):
        with pytest.raises(ConfigError, match=key_error(key) + ": expected an integer or a word"):
            config_from_dict(nested({key: bad}))


@pytest.mark.parametrize("key, spec", CHOICES, ids=[k for k, _ in CHOICES])
def test_every_choice_is_accepted_and_others_are_not(key, spec):
    for choice in spec.choices:
        config_from_dict(nested({key: choice}))
    with pytest.raises(ConfigError, match=key_error(key) + ": got 'nope', allowed values: " + ", ".join(spec.choices)):
        config_from_dict(nested({key: "nope"}))


@pytest.mark.parametrize("key", FLOATS)
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, "1e999", 10**400])
def test_non_finite_floats_are_rejected(key, bad):
    with pytest.raises(ConfigError, match=key_error(key) + ": expected a finite number"):
        config_from_dict(nested({key: bad}))


@pytest.mark.parametrize("key", [k for k, _, tp, _ in LEAVES if tp is int])
def test_ints_must_fit_in_64_bits(key):
    data = nested({**COMPANIONS.get(key, {}), key: 2**63})
    with pytest.raises(ConfigError, match=key_error(key) + ": integer 9223372036854775808 does not fit"):
        config_from_dict(data)


@pytest.mark.parametrize("key", [k for k, _, tp, _ in LEAVES if tp in (int, float)])
def test_numeric_keys_reject_other_types(key):
    for bad in ("x", [1], {"a": 1}, True, None):
        with pytest.raises(ConfigError, match=key_error(key) + ": expected "):
            config_from_dict(nested({key: bad}))


# --- rules across keys -------------------------------------------------------------------------
def test_min_samples_may_equal_capacity_but_not_exceed_it():
    config_from_dict({"replay": {"capacity": 100, "min_samples": 100}})
    with pytest.raises(ConfigError, match=r"key 'replay.min_samples': 101 is more than replay.capacity \(100\)"):
        config_from_dict({"replay": {"capacity": 100, "min_samples": 101}})


def test_gating_elo1_must_be_above_elo0():
    config_from_dict({"eval": {"gating": {"elo0": 10.0, "elo1": 10.5}}})
    for elo1 in (10.0, 5):
        with pytest.raises(ConfigError, match=r"key 'eval.gating.elo1': must be > eval.gating.elo0"):
            config_from_dict({"eval": {"gating": {"elo0": 10.0, "elo1": elo1}}})


@pytest.mark.parametrize("device", ["auto", "cpu", "cuda", "cuda:0", "cuda:12"])
def test_devices_accepted(device):
    assert config_from_dict({"device": device}).device == device


@pytest.mark.parametrize("device", ["tpu", "cuda:", "cuda:x", "CPU", "cuda:0 ", "", "cuda:-1"])
def test_devices_rejected(device):
    with pytest.raises(ConfigError, match=r"key 'device': got .*allowed: auto, cpu, cuda, cuda:N"):
        config_from_dict({"device": device})


def test_variant_by_name_or_path():
    root = Path(__file__).resolve().parents[2]
    assert config_from_dict({"variant": "English"}).variant == "English"
    path = str(root / "envs" / "italian.toml")
    assert config_from_dict({"variant": path}).variant == path
    for bad in ("checkers-9000", "nope.toml", "a\x00b/c.toml", "/"):
        with pytest.raises(ConfigError, match=r"key 'variant': "):
            config_from_dict({"variant": bad})


# --- defaults, validate, describe_fields -------------------------------------------------------
def test_defaults_validate():
    cfg = Config()
    assert validate(cfg) is cfg and cfg == Config() == load_config(None) == config_from_dict({})
    for _, cls in sections():
        assert cls() == cls()  # every section is constructible from its defaults alone


def test_validate_checks_a_hand_made_config():
    cfg = Config(mcts=MCTSConfig(simulations=0))
    with pytest.raises(ConfigError, match=r"<config>: key 'mcts.simulations': must be >= 1, got 0"):
        validate(cfg)
    cfg = Config(seed="1")
    with pytest.raises(ConfigError, match=r"key 'seed': expected an integer"):
        validate(cfg)
    cfg = Config()
    cfg.eval.gating = "off"
    with pytest.raises(ConfigError, match=r"key 'eval.gating': expected a GatingConfig section"):
        validate(cfg)
    cfg = Config()
    cfg.eval.gating = GatingConfig(elo1=1)  # an int where a float belongs is normalised
    assert validate(cfg).eval.gating.elo1 == 1.0 and isinstance(cfg.eval.gating.elo1, float)


def test_describe_fields_covers_every_key():
    rows = describe_fields()
    flat = {}

    def walk(data, prefix=""):
        for key, value in data.items():
            if isinstance(value, dict):
                walk(value, f"{prefix}{key}.")
            else:
                flat[f"{prefix}{key}"] = value

    walk(Config().to_dict())
    assert [row[0] for row in rows] == KEYS
    assert set(KEYS) == set(flat) and len(rows) == len(flat)
    specs = {key: spec for key, _, _, spec in LEAVES}
    for key, type_text, default, doc in rows:
        assert type_text in ("int", "float", "bool", "str", "list[int]", "int | str"), (key, type_text)
        assert yaml.safe_load(default) == flat[key] == json.loads(default), key
        assert doc.startswith(specs[key].doc), key
        limits = specs[key].limits_text()
        if limits:
            assert limits[1:] in doc, (key, doc)


def test_describe_fields_defaults_are_override_syntax():
    overrides = [f"{key}={default}" for key, _, default, _ in describe_fields()]
    assert load_config(None, overrides) == Config()
    data = apply_overrides({}, overrides)
    assert config_from_dict(data) == Config()


def test_config_error_is_the_projects_error():
    assert issubclass(ConfigError, TammiError) and issubclass(ConfigError, ValueError)


# --- package hygiene ---------------------------------------------------------------------------
ALLOWED_PREFIXES = ("tammi_rl.rules", "tammi_rl.atomic", "tammi_rl.legacy", "tammi_rl.config", "yaml", "__future__")


@pytest.mark.parametrize("path", sorted(CONFIG_DIR.glob("*.py")), ids=lambda p: p.name)
def test_config_package_imports(path):
    tree = ast.parse(path.read_text())
    top_level = set(map(id, tree.body))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            assert id(node) in top_level, f"{path.name}:{node.lineno}: import inside a function or block"
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for name in names:
                ok = name.split(".")[0] in sys.stdlib_module_names or name.startswith(ALLOWED_PREFIXES)
                assert ok, f"{path.name}:{node.lineno}: the config package may not import {name}"
