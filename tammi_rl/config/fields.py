"""Declaring config keys, and the one checker that reads those declarations.

A config section is a plain dataclass whose every field is declared with `setting`
(a value) or `section` (a nested section), so the documentation and the limits of a
key sit on the line that declares it::

    simulations: int = setting(64, "Simulations per searched hop.", min=1)

`build` turns a raw mapping (parsed YAML) into such a dataclass: it rejects unknown
keys and coerces each value to the field's type. `check` walks a dataclass and
enforces each field's type, limits and choices. `describe` lists every key with its
type, default and documentation. All three raise `ConfigError` with a message that
names the source (a file, ``<dict>``, ...) and the dotted key.

Supported field types: ``bool``, ``int``, ``float``, ``str``, ``list[T]`` of those,
``int | str`` (a number or one of a few words, such as ``auto``), and nested section
dataclasses.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tammi_rl.rules.errors import TammiError


class ConfigError(TammiError):
    """A run config has an unknown key or a bad value (the message names both)."""


_META_KEY = "tammi_rl.config"
_INT_BITS = 64
"""Integers must fit in a signed 64-bit integer: numpy, torch and the compiled search use them."""
_SCIENTIFIC = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+$")
"""YAML 1.1 reads ``3e-4`` (no dot) as a string; a float field accepts that spelling."""
_SHOW_CHARS = 80


@dataclass(frozen=True)
class Setting:
    """What `setting` records in a field's metadata: its documentation and limits."""

    doc: str
    min: float | None = None
    max: float | None = None
    min_exclusive: bool = False
    max_exclusive: bool = False
    choices: tuple[str, ...] | None = None

    def limits_text(self) -> str:
        """The limits in words, e.g. ``must be >= 1``, ``must be in (0, 0.5]``, ``one of: a, b``."""
        if self.choices is not None and self.min is not None:  # a word or a number (int | str)
            return f"{' or '.join(self.choices)}, or a number >= {_num(self.min)}"
        if self.choices is not None:
            return "one of: " + ", ".join(self.choices)
        if self.min is not None and self.max is not None:
            lo, hi = "(" if self.min_exclusive else "[", ")" if self.max_exclusive else "]"
            return f"must be in {lo}{_num(self.min)}, {_num(self.max)}{hi}"
        if self.min is not None:
            return f"must be {'>' if self.min_exclusive else '>='} {_num(self.min)}"
        if self.max is not None:
            return f"must be {'<' if self.max_exclusive else '<='} {_num(self.max)}"
        return ""

    def within(self, value: Any) -> bool:
        """Whether a (type-checked) value meets the limits; NaN never does. Choices limit
        strings, min/max numbers (an ``int | str`` key has both)."""
        if isinstance(value, str):
            return self.choices is None or value in self.choices
        if self.min is not None and not (value > self.min if self.min_exclusive else value >= self.min):
            return False
        return self.max is None or (value < self.max if self.max_exclusive else value <= self.max)


def setting(
    default: Any = dataclasses.MISSING,
    doc: str = "",
    *,
    min: float | None = None,
    max: float | None = None,
    min_exclusive: bool = False,
    max_exclusive: bool = False,
    choices: tuple[str, ...] | list[str] | None = None,
    factory: Callable[[], Any] | None = None,
) -> Any:
    """A dataclass field carrying its documentation and limits.

    ``min``/``max`` bound a number (inclusive unless ``min_exclusive``/``max_exclusive``);
    on a ``list`` field they bound every item. ``choices`` lists the allowed strings.
    ``factory`` makes a mutable default (a list) instead of ``default``.
    """
    if not doc.strip():
        raise TypeError("setting(): every config key needs a doc")
    if (default is dataclasses.MISSING) == (factory is None):
        raise TypeError("setting(): give exactly one of default and factory")
    meta = Setting(doc.strip(), min, max, min_exclusive, max_exclusive, tuple(choices) if choices is not None else None)
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata={_META_KEY: meta})
    return dataclasses.field(default=default, metadata={_META_KEY: meta})


def section(cls: type, doc: str) -> Any:
    """A field holding a nested section (a dataclass of settings), defaulting to ``cls()``."""
    return setting(doc=doc, factory=cls)


def setting_of(f: dataclasses.Field) -> Setting:
    """The `Setting` a field was declared with (a `TypeError` for a field declared without one)."""
    meta = f.metadata.get(_META_KEY)
    if meta is None:
        raise TypeError(f"config field {f.name!r} is not declared with setting() or section()")
    return meta


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def fields_of(cls: type) -> list[tuple[dataclasses.Field, Any, Setting]]:
    """``(field, resolved type, Setting)`` for each field of a section dataclass."""
    hints = _hints(cls)
    return [(f, hints[f.name], setting_of(f)) for f in dataclasses.fields(cls)]


def is_section(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


# --- messages ----------------------------------------------------------------------------------
def _num(x: float) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def show(value: Any) -> str:
    """``repr(value)`` made safe for an error message: shortened, and never raising."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"<an integer of {value.bit_length()} bits>"
    try:
        text = repr(value)
    except Exception:
        return f"<a {type(value).__name__}>"
    return text if len(text) <= _SHOW_CHARS else text[: _SHOW_CHARS - 3] + "..."


def _key_text(key: Any) -> str:
    return key if isinstance(key, str) and len(key) <= _SHOW_CHARS else show(key)


def _where(source: str, dotted: str) -> str:
    return f"{source}: key '{dotted}'" if dotted else source


def _is_int_or_word(tp: Any) -> bool:
    return isinstance(tp, types.UnionType) and set(typing.get_args(tp)) == {int, str}


def type_name(tp: Any) -> str:
    """``int``, ``float``, ``list[int]``, ``int | str``, ... as written in the dataclass."""
    if _is_int_or_word(tp):
        return "int | str"
    if typing.get_origin(tp) is list:
        return f"list[{type_name(typing.get_args(tp)[0])}]"
    return getattr(tp, "__name__", str(tp))


# --- coercion ----------------------------------------------------------------------------------
def coerce(value: Any, tp: Any, source: str, dotted: str) -> Any:
    """``value`` as type ``tp`` (ints accepted for floats, ``3e-4`` strings too), else `ConfigError`
    naming ``source`` and the dotted key (``eval.alphabeta_depths[1]`` for a list item)."""
    where = _where(source, dotted)
    if _is_int_or_word(tp):
        if isinstance(value, str):
            return value
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: expected an integer or a word such as 'auto', got {show(value)}")
        return coerce(value, int, source, dotted)
    if typing.get_origin(tp) is list:
        (item_tp,) = typing.get_args(tp)
        if not isinstance(value, list):
            raise ConfigError(f"{where}: expected a list of {type_name(item_tp)}, got {show(value)}")
        return [coerce(v, item_tp, source, f"{dotted}[{i}]") for i, v in enumerate(value)]
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected true or false, got {show(value)}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: expected an integer, got {show(value)}")
        if not -(2 ** (_INT_BITS - 1)) <= value < 2 ** (_INT_BITS - 1):
            raise ConfigError(f"{where}: integer {show(value)} does not fit in {_INT_BITS} bits")
        return int(value)
    if tp is float:
        if isinstance(value, str) and _SCIENTIFIC.match(value.strip()):
            number = float(value)
        elif isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{where}: expected a number, got {show(value)}")
        else:
            try:
                number = float(value)
            except OverflowError:  # an int beyond the float range
                number = math.inf
        if not math.isfinite(number):
            raise ConfigError(f"{where}: expected a finite number, got {show(value)}")
        return number
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: expected a string, got {show(value)}")
        return value
    raise TypeError(f"{where}: unsupported config field type {tp!r}")  # a bug in a section, not in input


def _check_limits(value: Any, tp: Any, spec: Setting, source: str, dotted: str) -> None:
    if typing.get_origin(tp) is list:
        for i, item in enumerate(value):
            _check_limits(item, typing.get_args(tp)[0], spec, source, f"{dotted}[{i}]")
        return
    if spec.within(value):
        return
    where = _where(source, dotted)
    if spec.choices is not None and spec.min is not None:
        raise ConfigError(f"{where}: must be {spec.limits_text()}, got {show(value)}")
    if spec.choices is not None:
        raise ConfigError(f"{where}: got {show(value)}, allowed values: {', '.join(spec.choices)}")
    raise ConfigError(f"{where}: {spec.limits_text()}, got {show(value)}")


# --- the three walks ---------------------------------------------------------------------------
def build(cls: type, data: Any, source: str, prefix: str = "") -> Any:
    """A ``cls`` instance from a raw mapping: unknown keys rejected, values coerced to type.

    Missing keys keep their defaults. Limits are not checked here (see `check`).
    """
    if not isinstance(data, dict):
        raise ConfigError(f"{_where(source, prefix[:-1])}: expected a mapping, got {show(data)}")
    entries = fields_of(cls)
    known = {f.name for f, _, _ in entries}
    for key in data:
        if key not in known:
            raise ConfigError(
                f"{source}: unknown key '{prefix}{_key_text(key)}'; known keys here: {', '.join(sorted(known))}"
            )
    kwargs = {}
    for f, tp, _ in entries:
        if f.name not in data:
            continue
        dotted = f"{prefix}{f.name}"
        if is_section(tp):
            kwargs[f.name] = build(tp, data[f.name], source, f"{dotted}.")
        else:
            kwargs[f.name] = coerce(data[f.name], tp, source, dotted)
    return cls(**kwargs)


def check(obj: Any, source: str, prefix: str = "") -> None:
    """Enforce every field's type, limits and choices on a section dataclass, recursively.

    Values are normalised in place the way `build` would (an int in a float field
    becomes a float), so a hand-made config that passes equals a loaded one.
    """
    for f, tp, spec in fields_of(type(obj)):
        dotted = f"{prefix}{f.name}"
        value = getattr(obj, f.name)
        if is_section(tp):
            if not isinstance(value, tp):
                raise ConfigError(f"{_where(source, dotted)}: expected a {tp.__name__} section, got {show(value)}")
            check(value, source, f"{dotted}.")
            continue
        value = coerce(value, tp, source, dotted)
        _check_limits(value, tp, spec, source, dotted)
        setattr(obj, f.name, value)


def _default_text(f: dataclasses.Field) -> str:
    if f.default is not dataclasses.MISSING:
        value = f.default
    elif f.default_factory is not dataclasses.MISSING:
        value = f.default_factory()
    else:  # setting() always gives one of the two
        raise TypeError(f"config field {f.name!r} has no default")
    return json.dumps(value)  # YAML syntax for the scalars and lists used here


def describe(cls: type, prefix: str = "") -> list[tuple[str, str, str, str]]:
    """``(dotted key, type, default, doc with limits)`` for every settable key, in declaration order."""
    rows = []
    for f, tp, spec in fields_of(cls):
        dotted = f"{prefix}{f.name}"
        if is_section(tp):
            rows += describe(tp, f"{dotted}.")
            continue
        limits = spec.limits_text()
        if limits and typing.get_origin(tp) is list:
            limits = "each item " + limits
        doc = f"{spec.doc} {limits[0].upper()}{limits[1:]}." if limits else spec.doc
        rows.append((dotted, type_name(tp), _default_text(f), doc))
    return rows
