"""Variant specs: the rule axes of a draughts game, loaded and validated from TOML.

A variant is data. Every axis the engine understands is a key in ``envs/<name>.toml``;
`load_variant` checks each key and value and names the file, the key and the allowed
values when something is wrong. The key reference lives in ``envs/README.md``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, fields
from importlib import resources
from pathlib import Path
from typing import Any

from tammi_rl.rules.errors import VariantError, read_user_text

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, as the tomli package
    import tomli as tomllib


def _data_dir(package: str) -> Path:
    """The folder of a data-only package (pyproject.toml maps them onto root folders)."""
    try:
        return Path(str(resources.files(package)))
    except ModuleNotFoundError:
        raise ImportError(
            f"{package} is missing: an editable install made before it existed"
            " (run `pip install -e .` again) or a broken build"
        ) from None


ENVS_DIR = _data_dir("tammi_rl.envs")
"""Where the shipped variant files live: ``envs/`` at the repository root, installed as the
data package ``tammi_rl.envs`` (the checkout in an editable install, site-packages from a wheel)."""

# Allowed values of the enumerated axes, in one place so errors can list them.
GEOMETRIES = ("diagonal", "orthogonal")
DARK_CORNERS = ("left", "right")
COLORS = ("white", "black")
DIRECTIONS = ("forward", "backward", "sideways")
KING_RANGES = ("short", "flying")
CAPTURE_CHOICES = ("free", "maximum", "italian")
PROMOTION_IN_CHAIN = ("continue", "stop", "at_end")
CAPTURE_REMOVAL = ("end_of_chain", "immediate")
NOTATIONS = ("algebraic", "numeric")
ADJUDICATIONS = ("draw", "material")
KING_VS_LONE_MAN = ("play", "draw", "king_wins")


@dataclass(frozen=True)
class DrawRules:
    """When a game that is still going is declared drawn (or adjudicated).

    Counts are in moves of EACH side (move pairs), as rule books state them; 0 turns
    a rule off.
    """

    repetition: int = 3
    """Draw when the same position with the same side to move occurs this many times."""
    kings_only_moves: int = 0
    """Draw when both sides have only kings and no capture was made for this many moves."""
    no_progress_moves: int = 0
    """Draw when no capture and no man move was made for this many moves (English 40)."""
    three_kings_vs_one_moves: int = 0
    """With 3+ kings against a lone king, the stronger side must win within this many moves."""
    king_vs_lone_man: str = "play"
    """A lone king against a lone man: play on, a draw, or a win for the king's side."""
    adjudication: str = "draw"
    """Result when a game reaches the length cap: a draw, or by material (pieces, then kings)."""


@dataclass(frozen=True)
class Variant:
    """All rule axes of one variant. See ``envs/README.md`` for the meaning of each."""

    name: str
    board_size: int = 8
    geometry: str = "diagonal"
    dark_corner: str = "left"
    men_rows: tuple[int, ...] = (0, 1, 2)
    first_player: str = "white"
    man_moves: tuple[str, ...] = ("forward",)
    man_captures: tuple[str, ...] = ("forward", "backward")
    king_range: str = "flying"
    capture_choice: str = "free"
    promotion_in_chain: str = "continue"
    capture_removal: str = "end_of_chain"
    men_capture_kings: bool = True
    king_turn_180: bool = True
    notation: str = "algebraic"
    pdn_gametype: int = 25
    draw: DrawRules = field(default_factory=DrawRules)
    source: str = "<built-in>"

    @property
    def gym_id(self) -> str:
        """The Gymnasium id this variant is registered under, e.g. ``tammi/Russian-v0``."""
        return f"tammi/{self.name.capitalize()}-v0"


_TOP_KEYS = {f.name for f in fields(Variant)} - {"draw", "source", "name"}
_DRAW_KEYS = {f.name for f in fields(DrawRules)}


def _fail(source: str, key: str, message: str) -> VariantError:
    return VariantError(f"{source}: key '{key}': {message}")


def _choice(source: str, key: str, value: Any, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        return_msg = f"got {value!r}, allowed values: {', '.join(allowed)}"
        raise _fail(source, key, return_msg)
    return value


def _int(source: str, key: str, value: Any, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise _fail(source, key, f"got {value!r}, expected an integer in {lo}..{hi}")
    return value


def _bool(source: str, key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise _fail(source, key, f"got {value!r}, allowed values: true, false")
    return value


def _directions(source: str, key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise _fail(source, key, f"got {value!r}, expected a non-empty list of {DIRECTIONS}")
    for item in value:
        _choice(source, key, item, DIRECTIONS)
    return tuple(dict.fromkeys(value))


def variant_from_dict(data: dict[str, Any], name: str, source: str = "<dict>") -> Variant:
    """Validate a parsed variant table into a `Variant`, naming ``source`` in errors."""
    unknown = set(data) - _TOP_KEYS - {"draw", "name"}
    if unknown:
        key = sorted(unknown)[0]
        raise _fail(source, key, f"unknown key; known keys: {', '.join(sorted(_TOP_KEYS | {'draw', 'name'}))}")
    name = data.get("name", name)
    if not isinstance(name, str) or not name.isidentifier():
        raise _fail(source, "name", f"got {name!r}, expected a plain identifier like 'russian'")
    geometry = _choice(source, "geometry", data.get("geometry", "diagonal"), GEOMETRIES)
    size = _int(source, "board_size", data.get("board_size", 8), 4, 10 if geometry == "diagonal" else 8)
    if geometry == "diagonal" and size % 2:
        raise _fail(source, "board_size", f"got {size}, a diagonal board needs an even size")
    men_rows = data.get("men_rows", [0, 1, 2])
    if not isinstance(men_rows, list) or not men_rows:
        raise _fail(source, "men_rows", f"got {men_rows!r}, expected a non-empty list of row indices")
    rows = tuple(sorted({_int(source, "men_rows", r, 0, size // 2 - 1) for r in men_rows}))
    man_moves = _directions(source, "man_moves", data.get("man_moves", ["forward"]))
    man_captures = _directions(source, "man_captures", data.get("man_captures", ["forward", "backward"]))
    for key, dirs in (("man_moves", man_moves), ("man_captures", man_captures)):
        if geometry == "diagonal" and "sideways" in dirs:
            raise _fail(source, key, "'sideways' exists only on an orthogonal board")
    draw_data = data.get("draw", {})
    if not isinstance(draw_data, dict):
        raise _fail(source, "draw", f"got {draw_data!r}, expected a table")
    unknown = set(draw_data) - _DRAW_KEYS
    if unknown:
        key = sorted(unknown)[0]
        raise _fail(source, f"draw.{key}", f"unknown key; known keys: {', '.join(sorted(_DRAW_KEYS))}")
    d = DrawRules()
    draw = DrawRules(
        repetition=_int(source, "draw.repetition", draw_data.get("repetition", d.repetition), 0, 100),
        kings_only_moves=_int(source, "draw.kings_only_moves", draw_data.get("kings_only_moves", 0), 0, 1000),
        no_progress_moves=_int(source, "draw.no_progress_moves", draw_data.get("no_progress_moves", 0), 0, 1000),
        three_kings_vs_one_moves=_int(
            source, "draw.three_kings_vs_one_moves", draw_data.get("three_kings_vs_one_moves", 0), 0, 1000
        ),
        king_vs_lone_man=_choice(
            source, "draw.king_vs_lone_man", draw_data.get("king_vs_lone_man", "play"), KING_VS_LONE_MAN
        ),
        adjudication=_choice(source, "draw.adjudication", draw_data.get("adjudication", "draw"), ADJUDICATIONS),
    )
    return Variant(
        name=name,
        board_size=size,
        geometry=geometry,
        dark_corner=_choice(source, "dark_corner", data.get("dark_corner", "left"), DARK_CORNERS),
        men_rows=rows,
        first_player=_choice(source, "first_player", data.get("first_player", "white"), COLORS),
        man_moves=man_moves,
        man_captures=man_captures,
        king_range=_choice(source, "king_range", data.get("king_range", "flying"), KING_RANGES),
        capture_choice=_choice(source, "capture_choice", data.get("capture_choice", "free"), CAPTURE_CHOICES),
        promotion_in_chain=_choice(
            source, "promotion_in_chain", data.get("promotion_in_chain", "continue"), PROMOTION_IN_CHAIN
        ),
        capture_removal=_choice(
            source, "capture_removal", data.get("capture_removal", "end_of_chain"), CAPTURE_REMOVAL
        ),
        men_capture_kings=_bool(source, "men_capture_kings", data.get("men_capture_kings", True)),
        king_turn_180=_bool(source, "king_turn_180", data.get("king_turn_180", True)),
        notation=_choice(source, "notation", data.get("notation", "algebraic"), NOTATIONS),
        pdn_gametype=_int(source, "pdn_gametype", data.get("pdn_gametype", 25), 0, 99),
        draw=draw,
        source=source,
    )


def load_variant_file(path: str | Path) -> Variant:
    """Load and validate one variant TOML file."""
    path = Path(path)
    text = read_user_text(path, "variant file", VariantError)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise VariantError(f"{path}: not valid TOML: {exc}") from exc
    except RecursionError:
        raise VariantError(f"{path}: not valid TOML: arrays or tables nested too deeply") from None
    return variant_from_dict(data, name=path.stem, source=str(path))


def available_variants() -> list[str]:
    """Names of the variants shipped in ``envs/``."""
    return sorted(p.stem for p in ENVS_DIR.glob("*.toml"))


_CACHE: dict[str, Variant] = {}


def load_variant(name_or_path: str | Path | Variant) -> Variant:
    """A shipped variant by name (``"russian"``), or a variant file by path."""
    if isinstance(name_or_path, Variant):
        return name_or_path
    text = str(name_or_path)
    if text.endswith(".toml") or "/" in text:
        return load_variant_file(text)
    key = text.lower()
    if key not in _CACHE:
        path = ENVS_DIR / f"{key}.toml"
        try:
            found = path.exists()
        except OSError:  # a name too long for a file name
            found = False
        if not found:
            raise VariantError(
                f"unknown variant {text!r}; shipped variants: {', '.join(available_variants())}"
                " (or give a path to a .toml file)"
            )
        _CACHE[key] = load_variant_file(path)
    return _CACHE[key]
