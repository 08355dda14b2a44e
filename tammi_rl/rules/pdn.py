"""PDN (Portable Draughts Notation): write games out and read them back.

    text = game_to_pdn(rules, moves, result="1-0", tags={"White": "Ann"})
    [game] = read_pdn(text)          # the variant comes from the GameType tag

Export writes the seven standard tags (Event, Site, Date, Round, White, Black,
Result), ``GameType`` from the variant, ``FEN`` when the game does not start from the
variant's start position, and numbered movetext. Import reads any number of games,
skips comments (``{...}``, ``; ...``), variations ``(...)``, NAGs (``$1``) and
``!``/``?`` marks, and replays every move through `parse_move`, so a game that reads
is a game that was legal.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from tammi_rl.rules.engine import Rules
from tammi_rl.rules.errors import MoveError, PdnError, TammiError
from tammi_rl.rules.notation import format_move, parse_move
from tammi_rl.rules.position import Move, Position
from tammi_rl.rules.variant import available_variants, load_variant

SEVEN_TAGS = ("Event", "Site", "Date", "Round", "White", "Black", "Result")
_TAG_DEFAULTS = {"Date": "????.??.??"}
RESULTS = ("1-0", "0-1", "1/2-1/2", "*")
# Other result spellings seen in PDN files (FMJD counts 2 points a game).
_RESULT_ALIASES = {"2-0": "1-0", "0-2": "0-1", "1-1": "1/2-1/2", "0-0": "*"}
_LINE_WIDTH = 79


@dataclass
class PdnGame:
    """One game read from PDN: its tags, start position, moves and result."""

    tags: dict[str, str]
    start: Position
    moves: list[Move]
    result: str = "*"
    rules: Rules | None = field(default=None, repr=False, compare=False)
    """The engine the game was replayed with (chosen from GameType when not given)."""


# --- export ---------------------------------------------------------------------------
def _quote(value: str) -> str:
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def movetext(rules: Rules, moves: list[Move], start: Position | None = None) -> str:
    """Numbered movetext (``1. c3-d4 f6-g5 2. ...``) without the result token.

    A pair is the first player's move then the second's; a game whose start position
    has the second player to move opens with ``1...``.
    """
    pos = rules.start_position() if start is None else start
    first = rules.start_position().side
    tokens: list[str] = []
    number = 1
    for i, move in enumerate(moves):
        if pos.side == first:
            tokens.append(f"{number}.")
        elif i == 0:
            tokens.append(f"{number}...")
        tokens.append(format_move(rules, move))
        if pos.side != first:
            number += 1
        pos = rules.play(pos, move)
    return " ".join(tokens)


def _wrap(tokens: list[str]) -> list[str]:
    lines, line = [], ""
    for token in tokens:
        if line and len(line) + 1 + len(token) > _LINE_WIDTH:
            lines.append(line)
            line = token
        else:
            line = f"{line} {token}" if line else token
    if line:
        lines.append(line)
    return lines


def game_to_pdn(
    rules: Rules,
    moves: list[Move],
    start: Position | None = None,
    tags: dict[str, str] | None = None,
    result: str | None = None,
) -> str:
    """One game as PDN text (tags, blank line, movetext ending in the result token).

    ``result`` wins over a ``Result`` tag; with neither the game is unfinished (``*``).
    Moves are assumed legal (they come from `Rules.legal_moves`).
    """
    tags = dict(tags or {})
    result = result or tags.get("Result") or "*"
    result = _RESULT_ALIASES.get(result, result)
    if result not in RESULTS:
        raise PdnError(f"result {result!r} is not one of {', '.join(RESULTS)}")
    header = {name: tags.pop(name, _TAG_DEFAULTS.get(name, "?")) for name in SEVEN_TAGS}
    header["Result"] = result
    header["GameType"] = tags.pop("GameType", str(rules.variant.pdn_gametype))
    tags.pop("FEN", None)
    if start is not None and start != rules.start_position():
        header["FEN"] = rules.fen(start)
    header.update(tags)
    lines = [f"[{name} {_quote(value)}]" for name, value in header.items()]
    body = [*movetext(rules, moves, start).split(), result]
    return "\n".join([*lines, "", *_wrap(body)]) + "\n"


def games_to_pdn(rules: Rules, games: list[PdnGame]) -> str:
    """Several games, separated by a blank line."""
    return "\n".join(game_to_pdn(rules, g.moves, g.start, g.tags, g.result) for g in games)


# --- import: tokens -------------------------------------------------------------------
@dataclass(frozen=True)
class _Token:
    kind: str  # "tag", "move", "result"
    text: str
    value: str = ""


_TAG = re.compile(r'\[\s*([A-Za-z0-9_]+)\s*"((?:[^"\\]|\\.)*)"\s*\]')
_NUMBER = re.compile(r"\d+\.+")
_NAG = re.compile(r"\$\d+")
_WORD = re.compile(r"[^\s{}()\[\];]+")
_RESULT_WORDS = set(RESULTS) | set(_RESULT_ALIASES)


def _tokens(text: str) -> Iterator[_Token]:
    """Tags, moves and results of a PDN text, with comments and variations dropped."""
    i, n, depth = 0, len(text), 0
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c == "{":
            end = text.find("}", i)
            if end < 0:
                raise PdnError(f"unclosed comment '{{' at offset {i}: {text[i : i + 30]!r}")
            i = end + 1
        elif c == ";" or (c == "%" and (i == 0 or text[i - 1] == "\n")):
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
        elif c == "(":
            depth += 1
            i += 1
        elif c == ")":
            if depth == 0:
                raise PdnError(f"unmatched ')' at offset {i}")
            depth -= 1
            i += 1
        elif depth:  # inside a variation: skip words until it closes
            m = _WORD.match(text, i)
            i = m.end() if m else i + 1
        elif c == "[":
            m = _TAG.match(text, i)
            if not m:
                line = text[i:].split("\n", 1)[0]
                raise PdnError(f'malformed tag {line!r}: expected [Name "value"]')
            value = re.sub(r"\\(.)", r"\1", m.group(2))
            yield _Token("tag", m.group(1), value)
            i = m.end()
        else:
            m = _WORD.match(text, i)
            if not m:
                raise PdnError(f"unexpected character {c!r} at offset {i}")
            i = m.end()
            yield from _word_tokens(m.group())
    if depth:
        raise PdnError("unclosed variation '(' at end of text")


def _word_tokens(word: str) -> Iterator[_Token]:
    """A movetext word: a move number (possibly glued to a move), a move, a NAG or a result."""
    if word in _RESULT_WORDS:
        yield _Token("result", _RESULT_ALIASES.get(word, word))
        return
    m = _NUMBER.match(word)
    if m:
        word = word[m.end() :]
    if not word or _NAG.fullmatch(word):
        return
    move = word.rstrip("!?")
    if move:
        yield _Token("move", move)


# --- import: games --------------------------------------------------------------------
def _rules_for(tags: dict[str, str], index: int) -> Rules:
    raw = tags.get("GameType")
    if raw is None:
        raise PdnError(
            f"game {index}: no GameType tag, so the variant is unknown; "
            'add one (e.g. [GameType "25"] for Russian) or pass rules='
        )
    number = raw.split(",", 1)[0].strip()
    by_number = {load_variant(name).pdn_gametype: name for name in available_variants()}
    # ASCII digits only (int() also reads '²'-like digits badly), and not more than int() reads
    key = int(number) if number.isascii() and number.isdigit() and len(number) < 100 else None
    if key not in by_number:
        known = ", ".join(f"{k} {v}" for k, v in sorted(by_number.items()))
        raise PdnError(f"game {index}: GameType {raw!r} is not a supported variant (known: {known})")
    return Rules.for_variant(by_number[key])


def _split_games(tokens: Iterator[_Token]) -> Iterator[list[_Token]]:
    """Group tokens into games: a tag after movetext, or anything after a result, starts a new one."""
    game: list[_Token] = []
    in_moves = finished = False
    for tok in tokens:
        starts_new = finished or (tok.kind == "tag" and in_moves)
        if starts_new and game:
            yield game
            game, in_moves, finished = [], False, False
        game.append(tok)
        in_moves = in_moves or tok.kind != "tag"
        finished = tok.kind == "result"
    if game:
        yield game


def move_label(rules: Rules, ply: int, start: Position | None = None) -> str:
    """The number of ply ``ply`` (0-based) of a game from ``start`` as draughts software writes
    it: ``12.`` before the first player's move of pair 12, ``12...`` before the second's."""
    start_side = (rules.start_position() if start is None else start).side
    return _move_label(ply, start_side, rules.start_position().side)


def move_number(ply: int, start_side: int, first: int) -> tuple[int, bool]:
    """The pair number of ply ``ply`` (0-based) of a game whose start position has
    ``start_side`` to move, in a variant whose first player is ``first``; and True when the
    ply is the second player's move of that pair (the one `move_label` writes ``12...``)."""
    offset = 0 if start_side == first else 1
    return (ply + offset) // 2 + 1, (ply + offset) % 2 == 1


def _move_label(ply: int, start_side: int, first: int) -> str:
    """Move number as PDN writes it: ``12.`` for the first player, ``12...`` for the second."""
    number, second = move_number(ply, start_side, first)
    return f"{number}..." if second else f"{number}."


def _replay(tokens: list[_Token], index: int, rules: Rules | None) -> PdnGame:
    tags = {t.text: t.value for t in tokens if t.kind == "tag"}
    rules = rules or _rules_for(tags, index)
    try:
        start = rules.parse_fen(tags["FEN"]) if "FEN" in tags else rules.start_position()
    except TammiError as exc:
        raise PdnError(f"game {index}: bad FEN tag: {exc}") from None
    first = rules.start_position().side
    pos, result = start, tags.get("Result", "*")
    moves: list[Move] = []
    for tok in tokens:
        if tok.kind == "result":
            result = tok.text
        elif tok.kind == "move":
            try:
                move = parse_move(rules, pos, tok.text)
            except MoveError as exc:
                label = _move_label(len(moves), start.side, first)
                reason = str(exc).removeprefix(f"move {tok.text!r}: ")
                raise PdnError(f"game {index}, move {label} {tok.text!r}: {reason}") from None
            moves.append(move)
            pos = rules.play(pos, move)
    return PdnGame(tags=tags, start=start, moves=moves, result=result, rules=rules)


def read_pdn(text: str, rules: Rules | None = None) -> list[PdnGame]:
    """Every game in a PDN text, replayed and checked move by move.

    With ``rules`` None each game's variant comes from its GameType tag. Errors name
    the game (1-based), the move number and text, and the reason.
    """
    return [_replay(game, i, rules) for i, game in enumerate(_split_games(_tokens(text)), 1)]
