"""Variant spec files: the shipped ones load, and bad ones fail with a useful message.

A bad file must raise `VariantError` whose message names the file, the offending key
and the values that would have been accepted.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tammi_rl.rules.engine import Rules
from tammi_rl.rules.errors import TammiError, VariantError
from tammi_rl.rules.variant import ENVS_DIR, Variant, available_variants, load_variant, load_variant_file

SHIPPED = ["brazilian", "english", "international", "italian", "russian", "turkish"]
RUSSIAN_TOML = (ENVS_DIR / "russian.toml").read_text(encoding="utf-8")


def write(tmp_path: Path, text: str, name: str = "custom.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def replaced(key: str, value: str) -> str:
    """The Russian spec with one top-level ``key = ...`` line replaced."""
    text, n = re.subn(rf"(?m)^{key} = .*$", f"{key} = {value}", RUSSIAN_TOML)
    assert n == 1, key
    return text


def error_of(path: Path) -> str:
    with pytest.raises(VariantError) as info:
        load_variant_file(path)
    return str(info.value)


# --- shipped files ----------------------------------------------------------------------
def test_shipped_variants_are_listed():
    assert available_variants() == SHIPPED
    assert sorted(p.stem for p in ENVS_DIR.glob("*.toml")) == SHIPPED


@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_file_loads(name):
    variant = load_variant_file(ENVS_DIR / f"{name}.toml")
    assert isinstance(variant, Variant)
    assert variant.name == name
    assert variant.source.endswith(f"{name}.toml")
    assert load_variant(name) == variant
    assert load_variant(name.upper()) == variant
    assert Rules.for_variant(name).variant == variant


def test_shipped_axes_follow_rules_md():
    v = {name: load_variant(name) for name in SHIPPED}
    assert v["russian"].king_range == "flying" and v["russian"].capture_choice == "free"
    assert v["russian"].promotion_in_chain == "continue" and v["russian"].man_captures == ("forward", "backward")
    assert v["english"].first_player == "black" and v["english"].king_range == "short"
    assert v["english"].man_captures == ("forward",) and v["english"].promotion_in_chain == "stop"
    assert v["italian"].dark_corner == "right" and v["italian"].capture_choice == "italian"
    assert v["italian"].men_capture_kings is False and v["italian"].promotion_in_chain == "stop"
    assert v["turkish"].geometry == "orthogonal" and v["turkish"].men_rows == (1, 2)
    assert set(v["turkish"].man_moves) == {"forward", "sideways"} and v["turkish"].capture_removal == "immediate"
    assert v["turkish"].king_turn_180 is False and v["turkish"].promotion_in_chain == "at_end"
    for name in ("brazilian", "international"):
        assert v[name].capture_choice == "maximum" and v[name].promotion_in_chain == "at_end"
    assert v["international"].board_size == 10 and v["international"].men_rows == (0, 1, 2, 3)


def test_a_file_by_path_and_a_copy_with_another_name(tmp_path):
    path = write(tmp_path, RUSSIAN_TOML.replace('name = "russian"', 'name = "myvariant"'))
    variant = load_variant(str(path))
    assert variant.name == "myvariant" and variant.source == str(path)
    assert Rules.for_variant(str(path)).perft(Rules.for_variant(str(path)).start_position(), 3) == 302


# --- bad files ----------------------------------------------------------------------------
def test_unknown_key_names_file_key_and_known_keys(tmp_path):
    path = write(tmp_path, "flying_men = true\n" + RUSSIAN_TOML)
    msg = error_of(path)
    assert str(path) in msg and "flying_men" in msg
    for known in ("king_range", "capture_choice", "board_size", "man_moves"):
        assert known in msg


def test_unknown_draw_key(tmp_path):
    path = write(tmp_path, RUSSIAN_TOML + "fifty_moves = 50\n")  # lands in [draw]
    msg = error_of(path)
    assert str(path) in msg and "fifty_moves" in msg and "repetition" in msg


@pytest.mark.parametrize(
    "key, value, allowed",
    [
        ("king_range", '"long"', ["short", "flying"]),
        ("capture_choice", '"longest"', ["free", "maximum", "italian"]),
        ("promotion_in_chain", '"never"', ["continue", "stop", "at_end"]),
        ("capture_removal", '"later"', ["end_of_chain", "immediate"]),
        ("geometry", '"hexagonal"', ["diagonal", "orthogonal"]),
        ("dark_corner", '"top"', ["left", "right"]),
        ("first_player", '"red"', ["white", "black"]),
        ("notation", '"roman"', ["algebraic", "numeric"]),
        ("man_moves", '["forward", "up"]', ["forward", "backward", "sideways"]),
    ],
)
def test_bad_enum_value_names_file_key_and_allowed_values(tmp_path, key, value, allowed):
    path = write(tmp_path, replaced(key, value))
    msg = error_of(path)
    assert str(path) in msg and key in msg
    for word in allowed:
        assert word in msg


@pytest.mark.parametrize(
    "key, value, expect",
    [
        ("board_size", '"eight"', ["integer", "4", "10"]),
        ("board_size", "8.0", ["integer"]),
        ("king_turn_180", '"yes"', ["true", "false"]),
        ("men_capture_kings", "1", ["true", "false"]),
        ("king_range", "1", ["short", "flying"]),
        ("man_moves", '"forward"', ["forward", "backward", "sideways"]),
        ("men_rows", '"0,1,2"', ["list"]),
    ],
)
def test_wrong_type_names_file_key_and_what_is_expected(tmp_path, key, value, expect):
    path = write(tmp_path, replaced(key, value))
    msg = error_of(path)
    assert str(path) in msg and key in msg
    for word in expect:
        assert word in msg


@pytest.mark.parametrize("size", [2, 3, 12, 7, 0, -8])
def test_board_size_out_of_range(tmp_path, size):
    path = write(tmp_path, replaced("board_size", str(size)))
    msg = error_of(path)
    assert str(path) in msg and "board_size" in msg
    if size in (7,):
        assert "even" in msg
    else:
        assert "4..10" in msg


def test_orthogonal_board_at_most_8(tmp_path):
    text = (ENVS_DIR / "turkish.toml").read_text(encoding="utf-8").replace("board_size = 8", "board_size = 10")
    msg = error_of(write(tmp_path, text))
    assert "board_size" in msg and "4..8" in msg


def test_men_rows_out_of_range(tmp_path):
    msg = error_of(write(tmp_path, replaced("men_rows", "[0, 1, 4]")))
    assert "men_rows" in msg and "0..3" in msg


def test_sideways_on_a_diagonal_board_in_man_moves(tmp_path):
    msg = error_of(write(tmp_path, replaced("man_moves", '["forward", "sideways"]')))
    assert str(tmp_path) in msg and "man_moves" in msg and "sideways" in msg and "orthogonal" in msg


def test_sideways_on_a_diagonal_board_in_man_captures_names_man_captures(tmp_path):
    """The message must name the key that is wrong (man_captures), not man_moves."""
    msg = error_of(write(tmp_path, replaced("man_captures", '["forward", "sideways"]')))
    assert "sideways" in msg and "orthogonal" in msg
    assert "man_captures" in msg


def test_bad_draw_value(tmp_path):
    msg = error_of(write(tmp_path, RUSSIAN_TOML.replace('adjudication = "draw"', 'adjudication = "coin"')))
    assert "draw.adjudication" in msg and "material" in msg and "draw" in msg
    msg = error_of(write(tmp_path, RUSSIAN_TOML.replace("repetition = 3", "repetition = -1"), "b.toml"))
    assert "draw.repetition" in msg and "integer" in msg


def test_malformed_toml_names_the_file(tmp_path):
    path = write(tmp_path, 'name = "broken"\nking_range = flying\n')
    msg = error_of(path)
    assert str(path) in msg and "TOML" in msg


def test_missing_file_names_the_file(tmp_path):
    path = tmp_path / "nowhere.toml"
    msg = error_of(path)
    assert str(path) in msg


def test_unknown_variant_name_lists_shipped_variants():
    with pytest.raises(VariantError) as info:
        load_variant("checkers")
    msg = str(info.value)
    assert "checkers" in msg
    for name in SHIPPED:
        assert name in msg
    with pytest.raises(VariantError):
        Rules.for_variant("shashki")


def test_variant_error_is_a_value_error():
    assert issubclass(VariantError, TammiError) and issubclass(VariantError, ValueError)
