"""Property-based fuzzing of config loading: any input gives a `Config` or a `ConfigError`, nothing else.

Inputs are arbitrary nested values (random keys and types, None, lists, huge integers,
NaN and infinities, odd strings), override items of arbitrary text, and arbitrary file
contents. A config that loads must also survive `save_config` and load back equal.
"""

import copy
import math
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tammi_rl.config import (
    Config,
    ConfigError,
    apply_overrides,
    config_from_dict,
    describe_fields,
    load_config,
    save_config,
    validate,
)
from tammi_rl.config.fields import fields_of, is_section
from tammi_rl.rules.errors import TammiError

pytestmark = pytest.mark.slow

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

KEYS = [row[0] for row in describe_fields()]
NAMES = sorted({part for key in KEYS for part in key.split(".")})
INTERESTING_STRINGS = [
    "",
    "3e-4",
    "1e999",
    "-1E+2",
    ".5e1",
    "nan",
    ".inf",
    "null",
    "~",
    "true",
    "yes",
    "0x1F",
    "1_000",
    "gumbel",
    "puct",
    "adamw",
    "sgd",
    "cosine",
    "constant",
    "local",
    "ray",
    "auto",
    "cpu",
    "cuda",
    "cuda:0",
    "cuda:x",
    "russian",
    "english",
    "italian.toml",
    "envs/turkish.toml",
    "/",
    "a\x00b",
    "\ud800",
    "é",
    "x" * 300,
    "2001-02-30",
    "[1, 2]",
    "{a: 1}",
]
HUGE_INTS = [2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 10**400, -(10**4000)]
# Over 4300 digits, whose str() raises ValueError (built lazily: hypothesis prints its strategies).
huge_ints = st.integers(4400, 4500).map(lambda digits: 7 * 10**digits)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from(HUGE_INTS),
    huge_ints,
    st.integers(-3, 3),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, 0.5, 1.0, -1.0, math.nan, math.inf]),
    st.text(max_size=20),
    st.sampled_from(INTERESTING_STRINGS),
)
keys = st.one_of(
    st.sampled_from(NAMES),
    st.text(max_size=10),
    st.integers(),
    st.none(),
    st.booleans(),
    st.sampled_from(HUGE_INTS),
    huge_ints,
)
anything = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4), max_leaves=10
)


def plausible(tp):
    """A value of roughly the right type for a key (so that fuzzing reaches the limit checks)."""
    if tp is bool:
        return st.booleans()
    if tp is int:
        return st.one_of(st.integers(-3, 300), st.integers(0, 300_000))
    if tp is float:
        return st.one_of(st.floats(-2, 2), st.sampled_from([0.0, 0.5, 1.0, -1.0, 30.0, "3e-4"]))
    if tp is str:
        return st.sampled_from(INTERESTING_STRINGS)
    return st.lists(st.integers(-1, 6), max_size=3)


def section_data(cls):
    """Mostly schema-shaped mappings: known keys with plausible or arbitrary values, sometimes extra keys."""
    optional = {}
    for f, tp, _ in fields_of(cls):
        optional[f.name] = section_data(tp) if is_section(tp) else st.one_of(plausible(tp), plausible(tp), anything)
    shaped = st.fixed_dictionaries({}, optional=optional)
    return st.one_of(
        shaped,
        shaped,
        shaped,
        st.tuples(shaped, st.dictionaries(keys, anything, max_size=2)).map(lambda pair: {**pair[1], **pair[0]}),
    )


config_like = st.one_of(section_data(Config), section_data(Config), anything)


def assert_total(call):
    """``call()`` returns a Config or raises ConfigError; a Config survives a YAML round trip
    (what `save_config` writes and `load_config` reads, without an fsync per example)."""
    try:
        cfg = call()
    except ConfigError as exc:
        assert isinstance(exc, TammiError) and str(exc)
        return None
    assert isinstance(cfg, Config)
    assert validate(copy.deepcopy(cfg)) == cfg
    text = yaml.safe_dump(cfg.to_dict(), sort_keys=False)
    assert config_from_dict(yaml.safe_load(text)) == cfg
    return cfg


def test_save_config_round_trip_of_odd_values(tmp_path):
    cfg = config_from_dict(
        {
            "name": "\ud800\x00\n #: ~",
            "seed": 2**63 - 1,
            "train": {"lr": 5e-324},
            "distributed": {"address": "null"},
            "eval": {"alphabeta_depths": []},
        }
    )
    save_config(cfg, tmp_path / "config.yaml")
    assert load_config(tmp_path / "config.yaml") == cfg


@FUZZ
@given(config_like)
@example({"train": {"lr": math.nan}})
@example({"distributed": {"cpus_per_actor": math.nan}})
@example({"mcts": {"c_puct": math.inf}})
@example({"train": {"lr": 10**400}})
@example({"seed": 10**5000})
@example({10**5000: 1})
@example({"eval": {"alphabeta_depths": [[10**5000]]}})
@example({"variant": "a\x00b/c.toml"})
@example({"variant": "x" * 5000})
@example({"name": "\ud800\x00\n"})
@example({"replay": {"capacity": 1, "min_samples": 1}})
def test_config_from_dict_is_total(data):
    assert_total(lambda: config_from_dict(copy.deepcopy(data)))


def dump(value, **options):
    """YAML text of a generated value; "" when PyYAML cannot write it (a 5000-digit integer)."""
    try:
        return yaml.safe_dump(value, allow_unicode=True, **options)
    except (yaml.YAMLError, ValueError, RecursionError):
        return ""


override_key = st.one_of(st.sampled_from(KEYS), st.sampled_from(NAMES), st.text(max_size=12))
override_value = st.one_of(
    st.text(max_size=20),
    st.sampled_from(INTERESTING_STRINGS),
    scalars.map(lambda v: v if isinstance(v, str) else dump(v, default_flow_style=True).strip()),
)
override_item = st.one_of(st.text(max_size=30), st.builds(lambda k, v: f"{k}={v}", override_key, override_value))


@FUZZ
@given(st.lists(override_item, max_size=5))
@example(["seed=2001-02-30"])
@example(["a=" + "[" * 3000])
@example(["train=1", "train.lr=2"])
@example(["=1", "..=2"])
@example(["seed=" + "9" * 5000])
@example(["x=\ud800"])
def test_overrides_are_total(items):
    try:
        data = apply_overrides({}, list(items))
    except ConfigError:
        data = None
    assert data is None or isinstance(data, dict)
    assert_total(lambda: load_config(None, list(items)))


file_text = st.one_of(
    st.text(max_size=200),
    config_like.map(dump),
    st.sampled_from(
        [
            "",
            "0",
            "[]",
            "false",
            "''",
            "# only a comment\n",
            "x: &a [*a]\n",
            "[" * 3000,
            "seed: " + "9" * 5000,
            "a: !!python/object:os.system x\n",
            "? [a]\n: 1\n",
            "seed: !!float x\n",
            "train:\n",
            "\x00",
        ]
    ),
)


@FUZZ
@given(st.one_of(file_text, st.binary(max_size=100)), st.lists(override_item, max_size=2))
@example(b"\xff\xfe seed: 1", [])
@example("mcts:\n  simulations: .nan\n", [])
@example("train:\n  lr: 1e999\n", [])
def test_load_config_is_total(content, overrides):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.yaml"
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", errors="surrogatepass")
        assert_total(lambda: load_config(path, list(overrides)))
