"""Property-based fuzzing of every parser a user feeds text to.

FEN (`Rules.parse_fen`), move text (`notation.parse_move`), PDN (`pdn.read_pdn`), variant
files (`variant.load_variant_file`, `variant_from_dict`, `load_variant`), opening lines
(`eval.openings.parse_opening`, `read_openings`) and player specs (`PlayerSpec.parse`,
`parse_player_spec`).

The property throughout: ANY input gives a result or the project's own error (a
`TammiError` subclass whose message says what was wrong), never another exception
(IndexError, KeyError, TypeError, UnicodeError, OverflowError, numba errors, ...).
Each parser gets free text (unicode, control characters, huge numbers) and structured
near-valid inputs built from its grammar (a valid input with one part mutated), and
round trips are checked where they hold.

Each test keeps ``max_examples`` modest so the file runs in well under a minute once
numba's on-disk cache is warm.
"""

from __future__ import annotations

import functools
import json
import math
import os
import random
import sys
import tempfile
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from tammi_rl.env.draughts_env import DraughtsEnv
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.errors import EngineLimitError, FenError, MoveError, TammiError, VariantError
from tammi_rl.rules.fen import missing_side
from tammi_rl.rules.game import Game
from tammi_rl.rules.notation import format_move, parse_move, split_move_text
from tammi_rl.rules.pdn import game_to_pdn, read_pdn
from tammi_rl.rules.position import Position
from tammi_rl.rules.variant import (
    ENVS_DIR,
    Variant,
    available_variants,
    load_variant,
    load_variant_file,
    variant_from_dict,
)

VARIANTS = ["russian", "english", "italian", "turkish", "brazilian", "international"]
ALGEBRAIC = {"russian", "brazilian", "turkish"}

# TAMMI_FUZZ_EXAMPLES=5000 runs a deeper search than the default (kept short for the suite).
_EXAMPLES = int(os.environ.get("TAMMI_FUZZ_EXAMPLES", "150"))
FUZZ = settings(
    max_examples=_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
LIGHT = settings(FUZZ, max_examples=max(1, _EXAMPLES * 2 // 3))

# Known limits of the compiled move generator (`rules/movegen.py`, not a parser): a position
# with more capture routes than its move buffer holds, or a capture chain longer than it
# tracks, is an `EngineLimitError` (a TammiError naming the position). Both are reachable
# from a FEN, so the parsers that generate legal moves (move text, PDN, openings) can give it.
EngineLimit = EngineLimitError


def outcome(fn, *args, **kwargs):
    """``fn(*args)``, or the `TammiError` it raised; any other exception fails the test.

    Call only inside a Hypothesis test: the kind of result is logged as an event, so
    ``pytest --hypothesis-show-statistics`` shows how often inputs parse.
    """
    try:
        res = fn(*args, **kwargs)
    except TammiError as exc:
        assert str(exc).strip(), f"{type(exc).__name__} without a message"
        res = exc
    event(f"{fn.__qualname__} -> {type(res).__name__}")
    return res


@functools.cache
def rules_of(name: str) -> Rules:
    return Rules.for_variant(name)


def test_variant_list_is_complete():
    assert set(VARIANTS) == set(available_variants())


# --- shared strategies ------------------------------------------------------------------
JUNK_WORDS = [
    "",
    " ",
    "\x00",
    "\n",
    "\t",
    "\r",
    "\x7f",
    "\u200b",
    "\ufeff",
    "\u212a",
    "é",
    "²",
    "\u0661",
    "Ⅻ",
    "\U0001d7d9",
    "K",
    "k",
    "KK",
    "-",
    "--",
    "x",
    "X",
    ":",
    "::",
    ",",
    ",,",
    ".",
    "..",
    "*",
    "=",
    ";",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    '"',
    "$",
    "%",
    "!",
    "?",
    "#",
    "99999999999999999999",
    "-1",
    "+1",
    "0",
    "00",
    "01",
    "1e5",
    "1_0",
    "0x1",
    "nan",
    "inf",
    "-inf",
    "z9",
    "a0",
    "a9",
    "i9",
    "j10",
    "j11",
    "k3",
    "c3c3",
    "h8",
    "a1",
    "c3",
    "e5",
    "51",
    "33",
    "65",
    "64",
    "9" * 5000,
]
junk_word = st.sampled_from(JUNK_WORDS)
free_text = st.one_of(
    st.text(max_size=80),
    st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=80),
    st.lists(st.one_of(junk_word, st.text(max_size=4)), max_size=16).map("".join),
)


def random_line(rules: Rules, seed: int, plies: int) -> tuple[list[Position], list]:
    """Positions and moves of a random legal game of at most ``plies`` moves from the start."""
    rng = random.Random(seed)
    pos = rules.start_position()
    positions, moves = [pos], []
    for _ in range(plies):
        legal = rules.legal_moves(pos)
        if not legal:
            break
        move = rng.choice(legal)
        moves.append(move)
        pos = rules.play(pos, move)
        positions.append(pos)
    return positions, moves


seeds = st.integers(0, 2**32 - 1)
plies = st.integers(0, 60)


@st.composite
def played_position(draw, rules: Rules) -> Position:
    positions, _ = random_line(rules, draw(seeds), draw(plies))
    return positions[-1]


def square_names(rules: Rules) -> st.SearchStrategy[str]:
    """Valid square names of the variant, other notations' names, and out-of-range junk."""
    return st.one_of(
        st.sampled_from(rules.geometry.names),
        st.sampled_from(rules.geometry.names).map(str.upper),
        st.sampled_from(rules_of("russian").geometry.names + rules_of("international").geometry.names),
        junk_word,
        st.integers(-(10**22), 10**22).map(str),
    )


def mutate(draw, text: str, alphabet: str) -> str:
    """``text`` with one character deleted, inserted or replaced, or cut short."""
    if not text:
        return draw(st.text(alphabet=alphabet, max_size=3))
    i = draw(st.integers(0, len(text)))
    op = draw(st.sampled_from(["delete", "insert", "replace", "truncate", "double"]))
    char = draw(st.one_of(st.sampled_from(alphabet), st.characters()))
    if op == "delete":
        return text[:i] + text[i + 1 :]
    if op == "insert":
        return text[:i] + char + text[i:]
    if op == "replace":
        return text[:i] + char + text[i + 1 :]
    if op == "truncate":
        return text[:i]
    return text[:i] + text[i:] * 2


# --- FEN ------------------------------------------------------------------------------------
def check_fen(rules: Rules, text: str):
    """Parse ``text``; a position must be consistent, re-format to itself and have legal moves."""
    res = outcome(rules.parse_fen, text)
    if isinstance(res, TammiError):
        assert isinstance(res, FenError), res
        assert str(res).startswith("FEN "), f"FEN error does not quote the FEN: {res}"
        assert not str(res).count("FEN ") > 1 + text.count("FEN "), f"FEN quoted twice: {res}"
        return res
    pos = res
    assert isinstance(pos, Position)
    full = (1 << rules.geometry.n_squares) - 1
    boards = (pos.white_men, pos.white_kings, pos.black_men, pos.black_kings)
    for i, a in enumerate(boards):
        assert a >= 0 and a & ~full == 0, "piece off the board"
        for b in boards[i + 1 :]:
            assert a & b == 0, "two pieces on one square"
    assert rules.parse_fen(rules.fen(pos)) == pos
    check_move_round_trip(rules, pos)
    return pos


def check_move_round_trip(rules: Rules, pos: Position) -> None:
    """Every legal move reads back from its own text (or is reported ambiguous)."""
    legal = outcome(rules.legal_moves, pos)
    if isinstance(legal, EngineLimit):
        return
    for move in legal[:40]:
        text = format_move(rules, move)
        same_path = [m for m in legal if m.path == move.path]
        if len(same_path) == 1:
            assert parse_move(rules, pos, text) == move, text
            # any separator, any case, spaces around separators
            loose = text.replace("-", " x ").replace(":", "-").upper()
            got = outcome(parse_move, rules, pos, loose)
            assert got == move or (isinstance(got, MoveError) and "ambiguous" in str(got)), (loose, got)
        else:
            with pytest.raises(MoveError, match="ambiguous"):
                parse_move(rules, pos, text)
        if len(move.path) > 2:  # start and end only: one of the fitting moves, or ambiguous
            short = f"{rules.square_name(move.start)}-{rules.square_name(move.end)}"
            got = outcome(parse_move, rules, pos, short)
            if isinstance(got, TammiError):
                assert isinstance(got, MoveError) and "ambiguous" in str(got), (short, got)
            else:
                assert got in legal and got.start == move.start and got.end == move.end


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
@FUZZ
@given(text=free_text)
@example(text="W:W21,22,K23:B1,2,3")
@example(text="W:Wc3,Kd4:Bf6")
@example(text="W:W1-99999999999999999999:B2")
@example(text="W:W1-3-5:B9")
@example(text="W:WK:B1")
@example(text="W:W²-3:B9")
@example(text="W:W1-\u0661\u0662:B9")
@example(text="W:W21,21:B1")  # a square twice
@example(text="W:W1:BK1")  # a piece on both colours
@example(text="W:W1-5,3:B9")  # a range overlapping a square
@example(text="W:W51,0,-1,z9,99999999999999999999:B1")
@example(text="W:Wa1,j10,k3:Bc3")
@example(text="WW21:B1")  # missing colon
@example(text="W:W1:W2")
@example(text="W:B1:W2.")
def test_fen_free_text(variant, text):
    check_fen(rules_of(variant), text)


@st.composite
def near_valid_fen(draw, rules: Rules) -> str:
    """A FEN built from the grammar: valid squares (maybe given twice or on both colours)
    with junk squares, ranges, odd fields and separators mixed in."""
    valid = st.sampled_from(rules.geometry.names)
    name = st.one_of(valid, valid, valid, square_names(rules))
    ranged = st.tuples(name, name).map(lambda t: f"{t[0]}-{t[1]}")
    token = st.tuples(st.sampled_from(["", "", "", "K", "k", "KK"]), st.one_of(name, name, name, ranged)).map("".join)
    if draw(st.booleans()):  # the right shape: side, a W and a B field, distinct squares; maybe one junk token
        squares = draw(st.lists(valid, unique=True, max_size=12))
        tokens = [draw(st.sampled_from(["", "", "K", "k"])) + sq for sq in squares]
        if draw(st.booleans()):
            tokens.insert(draw(st.integers(0, len(tokens))), draw(token))
        cut = draw(st.integers(0, len(tokens)))
        side = draw(st.sampled_from(["W", "B", "w", "b"]))
        fields = [
            letter + ",".join(part)
            for letter, part in zip(draw(st.permutations("WB")), (tokens[:cut], tokens[cut:]), strict=True)
        ]
        return ":".join([side, *fields]) + draw(st.sampled_from(["", ".", " "]))
    field_letter = st.sampled_from(["W", "B", "w", "b", "", "K", "X", "WB"])
    field = st.tuples(field_letter, st.lists(token, max_size=8).map(",".join)).map("".join)
    side = draw(st.sampled_from(["W", "B", "w", "b", "", "X", "WB", " W "]))
    fields = draw(st.lists(field, min_size=0, max_size=4))
    sep = draw(st.sampled_from([":", ":", ":", "", "::", ";", " : "]))
    tail = draw(st.sampled_from(["", "", ".", "..", " ", "\n"]))
    return sep.join([side, *fields]) + tail


@st.composite
def mutated_fen(draw, rules: Rules) -> str:
    """The FEN of a position from random play with one part changed."""
    pos = draw(played_position(rules))
    fen = rules.fen(pos)
    side, white, black = fen.split(":")
    w_tokens, b_tokens = white[1:].split(","), black[1:].split(",")
    op = draw(st.sampled_from(["char", "both_colours", "bad_square", "king", "colon", "swap", "dup", "case"]))
    if op == "char":
        return mutate(draw, fen, "WBK:,-.x0123456789abcdefghijz ")
    if op == "both_colours" and w_tokens[0]:  # a piece on both colours
        return f"{side}:{white}:B{','.join([*b_tokens, w_tokens[0].lstrip('K')])}"
    if op == "bad_square":
        bad = draw(st.sampled_from(["z9", "0", "51", "65", "-1", "99999999999999999999", "a0", "k3", "i9", ""]))
        return f"{side}:{white}:B{','.join([*b_tokens, bad])}"
    if op == "king":
        return f"{side}:W{','.join('K' + t for t in w_tokens if t)}:{black}"
    if op == "colon":
        return fen.replace(":", "", 1)
    if op == "swap":
        return f"{side}:{black}:{white}"
    if op == "dup":
        return f"{side}:{white}:{black}:{black}"
    return fen.lower()


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
@FUZZ
@given(data=st.data())
def test_fen_near_valid(variant, data):
    rules = rules_of(variant)
    text = data.draw(st.one_of(near_valid_fen(rules), mutated_fen(rules)))
    check_fen(rules, text)


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
@LIGHT
@given(data=st.data())
def test_fen_round_trip_after_random_play(variant, data):
    """fen(position) re-parses to the same position, also lower-cased, spaced, and with ranges."""
    rules = rules_of(variant)
    pos = data.draw(played_position(rules))
    fen = rules.fen(pos)
    if missing_side(pos):  # a finished game (a side lost every piece) is not a position to set up
        with pytest.raises(FenError, match="has no piece"):
            rules.parse_fen(fen)
        return
    assert rules.parse_fen(fen) == pos
    assert rules.parse_fen(fen.lower()) == pos
    assert rules.parse_fen(" " + fen.replace(",", " , ") + ". ") == pos
    if variant not in ALGEBRAIC:  # numeric squares: runs written as ranges read the same
        side, *fields = fen.split(":")
        out = [side]
        for f in fields:
            men = sorted(int(t) for t in f[1:].split(",") if t and not t.startswith("K"))
            kings = [t for t in f[1:].split(",") if t.startswith("K")]
            runs, i = [], 0
            while i < len(men):
                j = i
                while j + 1 < len(men) and men[j + 1] == men[j] + 1:
                    j += 1
                runs.append(f"{men[j]}-{men[i]}" if j > i else str(men[i]))  # high-low works too
                i = j + 1
            out.append(f[0] + ",".join(runs + kings))
        assert rules.parse_fen(":".join(out)) == pos
    check_move_round_trip(rules, pos)


# --- move text ------------------------------------------------------------------------------
def check_move_text(rules: Rules, pos: Position, text: str):
    res = outcome(parse_move, rules, pos, text)
    if isinstance(res, (TammiError, EngineLimit)):
        assert not isinstance(res, TammiError) or isinstance(res, MoveError), res
        return res
    legal = rules.legal_moves(pos)
    assert res in legal
    squares = split_move_text(rules, text)
    assert squares[0] == res.start and squares[-1] == res.end
    return res


@st.composite
def position_for_moves(draw, rules: Rules) -> Position:
    """A position from random play, or random pieces on random squares (any mix, e.g. men on
    their promotion row), as a FEN could give."""
    if draw(st.booleans()):
        return draw(played_position(rules))
    n = rules.geometry.n_squares
    squares = draw(st.lists(st.integers(0, n - 1), unique=True, max_size=min(n, 24)))
    kinds = draw(st.lists(st.integers(0, 3), min_size=len(squares), max_size=len(squares)))
    boards = [0, 0, 0, 0]
    for sq, k in zip(squares, kinds, strict=True):
        boards[k] |= 1 << sq
    return Position(*boards, side=draw(st.sampled_from([0, 1])))


@st.composite
def near_valid_move(draw, rules: Rules, pos: Position) -> str:
    name = square_names(rules)
    legal = outcome(rules.legal_moves, pos)
    if isinstance(legal, list) and legal and draw(st.booleans()):
        move = draw(st.sampled_from(legal))
        names = [rules.square_name(s) for s in move.path]
        op = draw(st.sampled_from(["none", "abbrev", "replace", "drop", "add", "reverse", "char"]))
        if op == "none":  # the move itself, in any separator and case
            return draw(st.sampled_from(["-", "x", ":", " - ", "X"])).join(
                n.upper() if draw(st.booleans()) else n for n in names
            )
        if op == "abbrev":  # start, end and some of the landing squares between
            keep = draw(st.lists(st.booleans(), min_size=len(names) - 2, max_size=len(names) - 2))
            names = [names[0], *(n for n, k in zip(names[1:-1], keep, strict=True) if k), names[-1]]
        elif op == "replace":
            names[draw(st.integers(0, len(names) - 1))] = draw(name)
        elif op == "drop" and len(names) > 1:
            del names[draw(st.integers(0, len(names) - 1))]
        elif op == "add":
            names.insert(draw(st.integers(0, len(names))), draw(name))
        elif op == "reverse":
            names.reverse()
        text = draw(st.sampled_from(["-", "x", ":", " - ", "X"])).join(names)
        return mutate(draw, text, "-x: 0123456789abcdefgh") if op == "char" else text
    squares = draw(st.lists(name, min_size=0, max_size=5))
    seps = draw(
        st.lists(
            st.sampled_from(["-", "x", ":", "X", " ", "", "--", "x:", " : ", "\t"]),
            min_size=len(squares),
            max_size=len(squares),
        )
    )
    return "".join(
        s + (sep if i < len(squares) - 1 else "") for i, (s, sep) in enumerate(zip(squares, seps, strict=True))
    )


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
@FUZZ
@given(data=st.data(), free=free_text)
@example(data=None, free="c3-d4")
def test_move_text_free(variant, data, free):
    rules = rules_of(variant)
    pos = rules.start_position() if data is None else data.draw(position_for_moves(rules))
    check_move_text(rules, pos, free)


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
@FUZZ
@given(data=st.data())
def test_move_text_near_valid(variant, data):
    rules = rules_of(variant)
    pos = data.draw(position_for_moves(rules))
    check_move_text(rules, pos, data.draw(near_valid_move(rules, pos)))


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
@LIGHT
@given(data=st.data())
def test_move_onto_occupied_square_is_illegal(variant, data):
    """A move from any piece onto another occupied square is never legal (a `MoveError`)."""
    rules = rules_of(variant)
    pos = data.draw(played_position(rules))
    squares = range(rules.geometry.n_squares)
    own = [s for s in squares if pos.pieces(pos.side) >> s & 1]
    # Own pieces stay put during a move; captured pieces stay until the chain ends except
    # under immediate removal (Turkish), where a later hop may land on a captured square.
    blocked = pos.occupied if rules.variant.capture_removal == "end_of_chain" else pos.pieces(pos.side)
    start = data.draw(st.sampled_from(own)) if own else None
    ends = [s for s in squares if blocked >> s & 1 and s != start]
    if start is None or not ends:
        return
    end = data.draw(st.sampled_from(ends))
    via = data.draw(st.lists(st.sampled_from([s for s in squares if pos.occupied >> s & 1]), max_size=2))
    sep = ":" if data.draw(st.booleans()) else "-"
    text = sep.join(rules.square_name(s) for s in [start, *via, end])
    with pytest.raises(MoveError):
        parse_move(rules, pos, text)


# --- PDN ------------------------------------------------------------------------------------
def check_pdn(text: str, rules: Rules | None = None):
    res = outcome(read_pdn, text, rules)
    if isinstance(res, (TammiError, EngineLimit)):
        return res
    assert isinstance(res, list)
    for game in res:
        pos = game.start
        for move in game.moves:
            assert move in game.rules.legal_moves(pos)
            pos = game.rules.play(pos, move)
    return res


PDN_WORDS = [
    '[GameType "25"]',
    '[GameType "21"]',
    '[GameType "20,W,10,10,N2,0"]',
    '[GameType "30"]',
    '[GameType "²"]',
    '[GameType "\u0661\u0662"]',
    '[GameType "-1"]',
    '[GameType ""]',
    '[GameType "9999999999999999999999"]',
    '[GameType "' + "9" * 5000 + '"]',
    '[FEN "W:W21,22,K23:B1,2,3"]',
    '[FEN "W:Wc3:Bd4"]',
    '[FEN ""]',
    '[FEN "B:W:B"]',
    '[FEN "W:W1:B1"]',
    '[Event "a \\"b\\" c"]',
    '[Result "1-0"]',
    '[Result "junk"]',
    "[",
    "]",
    "[Event",
    '"',
    "{",
    "}",
    "{ comment }",
    "(",
    ")",
    "( 1. c3-d4 )",
    ";",
    "; x\n",
    "\n%",
    "%",
    "1.",
    "1...",
    "12.",
    "c3-d4",
    "d6-e5",
    "c3:e5",
    "22-18",
    "11-15",
    "22x15",
    "x",
    "$1",
    "$",
    "!",
    "?!",
    "*",
    "1-0",
    "0-1",
    "1/2-1/2",
    "2-0",
    "0-0",
    "1-1",
    "\n",
    "\n\n",
    " ",
]
pdn_text = st.one_of(
    free_text,
    st.lists(st.one_of(st.sampled_from(PDN_WORDS), junk_word), max_size=25).map(" ".join),
)


@pytest.mark.slow
@FUZZ
@given(text=pdn_text, variant=st.sampled_from([None, *VARIANTS]))
@example(text='[GameType "²"]\n1. c3-d4 *', variant=None)
@example(text='[GameType "' + "9" * 5000 + '"]\n*', variant=None)
@example(text='[GameType "25"]\n[FEN "W:WKh8:Ba2,b4,b8,c5,d6,d8,e1,e3,e6,e7,f2,g2,g4,g7,h2,h6"]\n*', variant=None)
def test_pdn_free_text(text, variant):
    check_pdn(text, None if variant is None else rules_of(variant))


@st.composite
def pdn_game(draw, rules: Rules):
    """PDN text of a random legal game (maybe from a mid-game FEN), with its moves and start."""
    positions, moves = random_line(rules, draw(seeds), draw(st.integers(0, 50)))
    # a FEN needs a piece for each side (a game's last position may have none for the loser)
    starts = [i for i, p in enumerate(positions) if (p.white_men | p.white_kings) and (p.black_men | p.black_kings)]
    cut = draw(st.sampled_from(starts))
    start, moves = positions[cut], moves[cut:]
    result = draw(st.sampled_from(["*", "1-0", "0-1", "1/2-1/2", "2-0"]))
    tags = draw(st.fixed_dictionaries({}, optional={"White": st.text(max_size=8), "Event": st.text(max_size=8)}))
    text = game_to_pdn(rules, moves, start=start, tags=tags, result=result)
    return text, start, moves, result


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
@LIGHT
@given(data=st.data())
def test_pdn_round_trip(variant, data):
    rules = rules_of(variant)
    text, start, moves, result = data.draw(pdn_game(rules))
    games = read_pdn(text)
    assert len(games) == 1
    [game] = games
    assert game.rules.variant.name == variant
    assert (game.start, game.moves) == (start, moves)
    assert game.result == {"2-0": "1-0"}.get(result, result)
    assert read_pdn(text + "\n" + text, rules)[1].moves == moves  # two games in a row


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
@FUZZ
@given(data=st.data())
def test_pdn_near_valid(variant, data):
    rules = rules_of(variant)
    text, _, moves, _ = data.draw(pdn_game(rules))
    op = data.draw(st.sampled_from(["char", "gametype", "fen", "move", "insert_word", "unclosed"]))
    if op == "char":
        text = mutate(data.draw, text, '[]{}()";%$!?.-x:0123456789abcdefghWBK \n')
    elif op == "gametype":
        junk = data.draw(st.one_of(junk_word, st.sampled_from(["25", "21,W,8,8,A0,0", "99", "20 ", " 26"])))
        text = text.replace(f'[GameType "{rules.variant.pdn_gametype}"]', f'[GameType "{junk}"]')
    elif op == "fen":
        fen = data.draw(st.one_of(near_valid_fen(rules), mutated_fen(rules)))
        text = f'[FEN "{fen}"]\n' + text
    elif op == "move" and moves:
        word = format_move(rules, data.draw(st.sampled_from(moves)))
        text = text.replace(word, data.draw(near_valid_move(rules, rules.start_position())), 1)
    else:
        words = text.split(" ")
        i = data.draw(st.integers(0, len(words)))
        words.insert(i, data.draw(st.one_of(st.sampled_from(PDN_WORDS), junk_word)))
        text = " ".join(words)
    check_pdn(text, data.draw(st.sampled_from([None, rules])))


# --- variant files --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def scratch() -> Path:
    with tempfile.TemporaryDirectory(prefix="tammi-fuzz-") as d:
        yield Path(d)


def toml_value(value) -> str:
    """A TOML literal for a Python value (inline tables for dicts; TOML 1.0 mixed arrays)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    return value.isoformat()  # dates and times


def toml_text(data: dict) -> str:
    return "\n".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in data.items()) + "\n"


def check_variant_file(path: Path):
    res = outcome(load_variant_file, path)
    if isinstance(res, TammiError):
        assert isinstance(res, VariantError), res
        assert str(res).startswith(str(path)), f"variant error does not name the file: {res}"
        return res
    check_variant_works(res)
    return res


def check_variant_works(variant: Variant) -> None:
    """A variant that loads gives an engine that plays: start position, moves, FEN, perft."""
    assert isinstance(variant, Variant)
    rules = Rules(variant)
    pos = rules.start_position()
    assert rules.parse_fen(rules.fen(pos)) == pos
    check_move_round_trip(rules, pos)
    positions, moves = random_line(rules, 0, 6)
    for p in positions:
        if missing_side(p):  # a side lost every piece: a finished game, refused as a set-up
            with pytest.raises(FenError, match="has no piece"):
                rules.parse_fen(rules.fen(p))
        else:
            assert rules.parse_fen(rules.fen(p)) == p
    assert rules.perft(pos, 2) == sum(len(rules.legal_moves(rules.play(pos, m))) for m in rules.legal_moves(pos))
    if moves:
        assert read_pdn(game_to_pdn(rules, moves), rules)[0].moves == moves


_SHIPPED = {name: tomllib.loads((ENVS_DIR / f"{name}.toml").read_text(encoding="utf-8")) for name in VARIANTS}
_TOP_KEYS = sorted({k for d in _SHIPPED.values() for k in d if k != "draw"})
_DRAW_KEYS = [
    "repetition",
    "kings_only_moves",
    "no_progress_moves",
    "three_kings_vs_one_moves",
    "king_vs_lone_man",
    "adjudication",
]
_ALL_CHOICES = [
    "diagonal",
    "orthogonal",
    "left",
    "right",
    "white",
    "black",
    "forward",
    "backward",
    "sideways",
    "short",
    "flying",
    "free",
    "maximum",
    "italian",
    "continue",
    "stop",
    "at_end",
    "end_of_chain",
    "immediate",
    "algebraic",
    "numeric",
    "draw",
    "material",
    "play",
    "king_wins",
]
scalar = st.one_of(
    st.integers(-3, 12),
    st.integers(-(2**63), 2**63 - 1),
    st.sampled_from([2**64, -(2**64), 10**30]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.sampled_from(_ALL_CHOICES),
    st.text(max_size=10),
    st.dates(),
)
toml_any = st.recursive(
    st.one_of(
        scalar,
        st.lists(st.sampled_from(_ALL_CHOICES), max_size=3),
        st.lists(st.integers(-1, 6), max_size=5),
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=8,
)


@st.composite
def valid_variant_dict(draw) -> dict:
    """Random but valid combinations of the rule axes (the engine must handle them all)."""
    geometry = draw(st.sampled_from(["diagonal", "orthogonal"]))
    size = draw(st.sampled_from([4, 6, 8, 10] if geometry == "diagonal" else [4, 5, 6, 7, 8]))
    dirs = ["forward", "backward"] + (["sideways"] if geometry == "orthogonal" else [])
    return {
        "geometry": geometry,
        "board_size": size,
        "dark_corner": draw(st.sampled_from(["left", "right"])),
        "men_rows": draw(st.lists(st.integers(0, size // 2 - 1), min_size=1, max_size=3)),
        "first_player": draw(st.sampled_from(["white", "black"])),
        "man_moves": draw(st.lists(st.sampled_from(dirs), min_size=1, max_size=3)),
        "man_captures": draw(st.lists(st.sampled_from(dirs), min_size=1, max_size=3)),
        "king_range": draw(st.sampled_from(["short", "flying"])),
        "capture_choice": draw(st.sampled_from(["free", "maximum", "italian"])),
        "promotion_in_chain": draw(st.sampled_from(["continue", "stop", "at_end"])),
        "capture_removal": draw(st.sampled_from(["end_of_chain", "immediate"])),
        "men_capture_kings": draw(st.booleans()),
        "king_turn_180": draw(st.booleans()),
        "notation": draw(st.sampled_from(["algebraic", "numeric"])),
    }


@st.composite
def mutated_variant(draw) -> dict:
    """A shipped variant's table with one to three keys set to a wrong (or other) value,
    deleted, or unknown keys added."""
    data = json.loads(json.dumps(_SHIPPED[draw(st.sampled_from(VARIANTS))]))  # deep copy
    for _ in range(draw(st.integers(1, 3))):
        draw_table = data["draw"] if isinstance(data.get("draw"), dict) else {}
        op = draw(st.sampled_from(["valid", "valid", "set", "set", "set_draw", "delete", "unknown", "draw_not_table"]))
        if op == "valid":  # another allowed value (which may still clash with the other keys)
            key, value = draw(st.sampled_from(sorted(draw(valid_variant_dict()).items())))
            data[key] = value
        elif op == "set":
            data[draw(st.sampled_from(_TOP_KEYS))] = draw(toml_any)
        elif op == "set_draw":
            draw_table[draw(st.sampled_from(_DRAW_KEYS))] = draw(toml_any)
            data["draw"] = draw_table
        elif op == "delete" and data:
            data.pop(draw(st.sampled_from(sorted(data))))
        elif op == "unknown":
            key = draw(st.sampled_from(["king_rnage", "Board_size", "", " ", "draw.x", "size", "é"]))
            if draw(st.booleans()):
                data[key] = draw(scalar)
            else:
                draw_table[key] = draw(scalar)
                data["draw"] = draw_table
        elif op == "draw_not_table":
            data["draw"] = draw(toml_any)
    return data


@pytest.mark.slow
@FUZZ
@given(data=mutated_variant())
def test_variant_near_valid(scratch, data):
    path = scratch / "mutated.toml"
    path.write_text(toml_text(data), encoding="utf-8")
    check_variant_file(path)


@pytest.mark.slow
@FUZZ
@given(data=st.dictionaries(st.sampled_from([*_TOP_KEYS, "draw", "name", "x"]), toml_any, max_size=8))
def test_variant_from_any_dict(data):
    res = outcome(variant_from_dict, data, "fuzz", "<fuzz>")
    if isinstance(res, TammiError):
        assert isinstance(res, VariantError) and str(res).startswith("<fuzz>: key '"), res
    else:
        check_variant_works(res)


@pytest.mark.slow
@LIGHT
@given(data=valid_variant_dict())
def test_variant_valid_combinations_play(data):
    check_variant_works(variant_from_dict(data, "fuzz"))


@FUZZ
@given(
    raw=st.one_of(
        st.binary(max_size=200),
        free_text.map(lambda t: t.encode("utf-8", "surrogatepass")),
        mutated_variant().map(lambda d: toml_text(d).encode("utf-8")),
    )
)
@pytest.mark.slow
@example(raw=b"name = '\xff'\n")
@example(raw=b"x = " + b"[" * 5000 + b"]" * 5000)
def test_variant_file_any_bytes(scratch, raw):
    path = scratch / "any.toml"
    path.write_bytes(raw)
    check_variant_file(path)


@FUZZ
@given(
    name=st.one_of(
        free_text.filter(lambda t: "/" not in t and not t.endswith(".toml")),
        st.sampled_from(VARIANTS).map(str.upper),
        st.sampled_from(["a\x00.toml", "missing.toml", "./", "\x00/x", ".", ""]),
    )
)
@pytest.mark.slow
def test_load_variant_by_any_name(name):
    res = outcome(load_variant, name)
    assert isinstance(res, (Variant, VariantError)), res
    res = outcome(Rules.for_variant, name)
    assert isinstance(res, (Rules, VariantError)), res


# --- opening lines --------------------------------------------------------------------------
def check_opening(rules: Rules, text: str):
    from tammi_rl.eval.openings import parse_opening

    res = outcome(parse_opening, rules, text)
    if isinstance(res, (TammiError, EngineLimit)):
        return res
    assert rules.parse_fen(rules.fen(res.position(rules))) == res.position(rules)
    again = outcome(parse_opening, rules, res.text)
    assert again == res or (isinstance(again, TammiError) and "ambiguous" in str(again))
    return res


@st.composite
def opening_text(draw, rules: Rules) -> str:
    _, moves = random_line(rules, draw(seeds), draw(st.integers(0, 8)))
    words = [format_move(rules, m) for m in moves]
    op = draw(st.sampled_from(["none", "replace", "drop", "swap", "insert", "char"]))
    if op == "replace" and words:
        words[draw(st.integers(0, len(words) - 1))] = draw(near_valid_move(rules, rules.start_position()))
    elif op == "drop" and words:
        del words[draw(st.integers(0, len(words) - 1))]
    elif op == "swap" and len(words) > 1:
        words[0], words[1] = words[1], words[0]
    elif op == "insert":
        words.insert(draw(st.integers(0, len(words))), draw(st.one_of(junk_word, st.sampled_from(["-", "#", "1."]))))
    text = draw(st.sampled_from([" ", "  ", "\t", " \u3000 "])).join(words)
    return mutate(draw, text, "-x: 0123456789abcdefgh#") if op == "char" else text


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
@FUZZ
@given(data=st.data())
def test_opening_lines(variant, data):
    rules = rules_of(variant)
    check_opening(rules, data.draw(st.one_of(free_text, opening_text(rules))))


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
@LIGHT
@given(seed=seeds, n=st.integers(0, 8))
def test_opening_round_trip(variant, seed, n):
    from tammi_rl.eval.openings import parse_opening

    rules = rules_of(variant)
    positions, moves = random_line(rules, seed, n)
    text = " ".join(format_move(rules, m) for m in moves)
    ambiguous = any(
        len([m for m in rules.legal_moves(p) if m.path == mv.path]) > 1 for p, mv in zip(positions, moves, strict=False)
    )
    res = outcome(parse_opening, rules, text)
    if ambiguous:
        assert isinstance(res, TammiError) and "ambiguous" in str(res)
    else:
        assert res.moves == tuple(moves) and res.position(rules) == positions[-1]
        assert (res.text or "-") == (text or "-")


@pytest.mark.slow
@FUZZ
@given(data=st.data(), variant=st.sampled_from(VARIANTS))
@example(data=None, variant="russian")
def test_openings_file_any_bytes(scratch, data, variant):
    from tammi_rl.eval.openings import Opening, read_openings

    rules = rules_of(variant)
    if data is None:
        raw = b"c3-d4 \xff\n"
    else:
        lines = data.draw(
            st.lists(st.one_of(opening_text(rules), free_text, st.sampled_from(["-", "# c", ""])), max_size=5)
        )
        raw = "\n".join(lines).encode("utf-8", "surrogatepass")
        if data.draw(st.booleans()):
            raw = data.draw(st.binary(max_size=60)) + raw
    path = scratch / "openings.txt"
    path.write_bytes(raw)
    res = outcome(read_openings, rules, path)
    if isinstance(res, TammiError):
        assert str(res).startswith(str(path)), f"openings error does not name the file: {res}"
    elif not isinstance(res, EngineLimit):
        assert res and all(isinstance(o, Opening) for o in res)


@pytest.mark.parametrize("path", ["a\x00b.txt", "/nonexistent/openings.txt", "."])
def test_openings_file_bad_path(path):
    from tammi_rl.eval.openings import read_openings

    with pytest.raises(TammiError):
        read_openings(rules_of("russian"), path)


@pytest.mark.parametrize("path", ["a\x00b.toml", "/nonexistent/x.toml", "./"])
def test_variant_file_bad_path(path):
    with pytest.raises(VariantError):
        load_variant(path)


# --- player specs ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def players():
    """`tammi_rl.players`, imported when a player-spec test first needs it."""
    import tammi_rl.players

    return tammi_rl.players


spec_value = st.one_of(
    junk_word,
    st.integers(-(2**70), 2**70).map(str),
    st.sampled_from(
        [
            "1",
            "2",
            "0",
            "-0",
            " 3 ",
            "\u0661",
            "\uff11",
            "1.5",
            "1e400",
            "1e308",
            "1e-320",
            "inf",
            "nan",
            "-inf",
            "0.001",
            str(2**63 - 1),
            str(2**63),
            str(-(2**63) - 1),
            "true",
        ]
    ),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=6),
)
WEIGHT_KEYS = {"king", "man", "advancement"}
KIND_KEYS = {
    "random": ["seed"],
    "human": ["name"],
    "alphabeta": ["depth", "time", "nodes", "margin", "seed", "tt_bits", "name", "king", "man", "advancement"],
    "ab": ["depth", "time", "nodes", "margin", "seed", "tt_bits", "name", "king", "man", "advancement"],
    "mcts": ["checkpoint", "sims", "algorithm", "device", "runtime", "threads", "name"],
}
SPEC_KEYS = [
    "runtime",
    "threads",
    "seed",
    "depth",
    "time",
    "nodes",
    "margin",
    "tt_bits",
    "name",
    "king",
    "man",
    "advancement",
    "checkpoint",
    "sims",
    "algorithm",
    "device",
    "DEPTH",
    "x",
    "",
    " ",
]


@st.composite
def near_valid_spec(draw, scratch: Path) -> str:
    kind = draw(st.sampled_from(["random", "human", "alphabeta", "ab", "mcts", "AB", " random ", "x", "", "mcts:"]))
    own_keys = KIND_KEYS.get(kind.strip().lower(), SPEC_KEYS)
    items = []
    for key in draw(st.lists(st.one_of(st.sampled_from(own_keys), st.sampled_from(SPEC_KEYS)), max_size=3)):
        if key == "tt_bits":  # keep the transposition table small (2**28 entries would be 4 GiB)
            value = draw(st.sampled_from(["4", "12", "3", "29", "-1", "x", "99999999999999999999"]))
        elif key in WEIGHT_KEYS:  # see test_known_limit_huge_eval_weight
            value = draw(
                st.one_of(
                    spec_value.filter(lambda v: not v.strip().lstrip("+-").isdigit()),
                    st.integers(-(2**58), 2**58).map(str),
                    st.sampled_from([str(2**63), "\u0661\u0662"]),
                )
            )
        elif key == "device":  # see test_known_limit_mcts_bad_device
            value = draw(st.sampled_from(["auto", "cpu", "cuda", "cuda:1", "meta", "CPU"]))
        elif key == "checkpoint":  # never a real checkpoint: a missing file or a directory without one
            value = draw(st.sampled_from([str(scratch / "missing.pt"), str(scratch), "", "\x00"]))
        else:
            value = draw(st.one_of(st.integers(-2, 5).map(str), st.integers(-2, 5).map(str), spec_value))
        forms = [f"{key}={value}"] * 6 + [key, f"{key}=", "="]
        if key != "device":  # 'device==cpu' names the device '=cpu'
            forms.append(f"{key}=={value}")
        items.append(draw(st.sampled_from(forms)))
    if kind.startswith("mcts") and not any(i.startswith("checkpoint") for i in items) and draw(st.booleans()):
        items.append(f"checkpoint={scratch / 'missing.pt'}")
    return kind + (":" + ",".join(items) if items or draw(st.booleans()) else "")


def _spec_is_safe(text: str) -> bool:
    """Free text must not name a real checkpoint or a huge transposition table (nor a bad
    device: see test_known_limit_mcts_bad_device)."""
    lowered = text.lower()
    return not any(word in lowered for word in ("tt_bits", "checkpoint", "device"))


def check_player_spec(players, text: str, rules: Rules):
    spec = outcome(players.PlayerSpec.parse, text)
    if isinstance(spec, TammiError):
        assert isinstance(spec, players.PlayerSpecError), spec
    else:  # round trip of the parsed spec
        rebuilt = spec.kind + ":" + ",".join(f"{k}={v}" for k, v in spec.options.items())
        if ":" not in spec.kind and spec.kind.strip() == spec.kind and spec.kind:
            assert players.PlayerSpec.parse(rebuilt) == spec
    player = outcome(players.parse_player_spec, text, rules)
    if isinstance(player, TammiError):
        return player
    assert isinstance(player, players.Player) and isinstance(player.name, str)
    config = getattr(player, "config", None)
    cheap = (
        config is None
        or (config.depth is not None and config.depth <= 2)
        or (config.depth is None and config.time is None and config.nodes is not None and config.nodes <= 2000)
    )
    if cheap and not isinstance(player, players.HumanPlayer):  # it must also be able to play
        from tammi_rl.rules.game import Game

        game = Game(rules, max_plies=10)
        move = player.choose(game)
        assert move in game.legal_moves()
    return player


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["russian", "international"])
@LIGHT
@given(data=st.data())
@example(data=None)
def test_player_spec_near_valid(players, scratch, variant, data):
    rules = rules_of(variant)
    texts = (
        [
            "ab:king=" + "9" * 30,
            "ab:nodes=" + "9" * 30,
            "ab:depth=1,time=inf",
            "ab:depth=1,time=1e308",
            "ab:depth=2,margin=" + str(2**64),
            "random:seed=" + "9" * 40,
            "ab:seed=-1,depth=1",
            f"mcts:checkpoint={scratch / 'missing.pt'}",
            "mcts:checkpoint=\x00",
            "mcts:sims=0",
        ]
        if data is None
        else [data.draw(near_valid_spec(scratch))]
    )
    for text in texts:
        check_player_spec(players, text, rules)


@pytest.mark.slow
@LIGHT
@given(text=free_text.filter(_spec_is_safe))
def test_player_spec_free_text(players, text):
    check_player_spec(players, text, rules_of("russian"))


# --- known limits outside the parsers ---------------------------------------------------------
def test_known_limit_huge_eval_weight(players):
    """A weight that fits in 64 bits but would overflow the evaluation tables is refused."""
    with pytest.raises(players.PlayerSpecError, match="advancement must be within"):
        players.parse_player_spec(f"alphabeta:depth=1,advancement={2**61}", rules_of("russian"))


def test_known_limit_mcts_bad_device(players, scratch):
    """An invalid device name is a PlayerSpecError (it is checked before the checkpoint)."""
    with pytest.raises(players.PlayerSpecError, match="device must be"):
        players.parse_player_spec(f"mcts:device=0,checkpoint={scratch / 'missing.pt'}", rules_of("russian"))


def test_known_limit_mcts_long_checkpoint_path(players):
    """A checkpoint path longer than the file system allows fails as a CheckpointError."""
    with pytest.raises(TammiError, match="cannot read"):
        players.parse_player_spec("mcts:checkpoint=" + "a" * 300, rules_of("russian"))


@pytest.mark.parametrize("checkpoint", ["/nonexistent/x.pt", "", "\x00", "/", "missing.pt", "a/b/c"])
def test_mcts_spec_with_missing_checkpoint_fails_cleanly(players, scratch, checkpoint):
    """``mcts:`` with a checkpoint that is not there is a TammiError (nothing is built)."""
    for spec in (f"mcts:checkpoint={checkpoint}", f"mcts:checkpoint={checkpoint},sims=8,algorithm=puct", "mcts:sims=8"):
        with pytest.raises(TammiError):
            players.parse_player_spec(spec, rules_of("russian"))


def test_engine_limit_move_buffer():
    """One king against 16 men (a reachable material count) in Turkish overflows the move
    buffer: a clear EngineLimitError naming the position, from the rules, Game and the env."""
    rules = rules_of("turkish")
    fen = "W:WKh8:Ba2,b4,b8,c5,d6,d8,e1,e3,e6,e7,f2,g2,g4,g7,h2,h6"
    pos = rules.parse_fen(fen)
    with pytest.raises(EngineLimitError, match="move buffer full"):
        rules.legal_moves(pos)
    with pytest.raises(EngineLimitError, match="Kh8"):
        Game(rules, start=pos)
    with pytest.raises(EngineLimitError):
        DraughtsEnv("turkish").reset(options={"fen": fen})


def test_engine_limit_chain_length():
    """A FEN with more men than a side ever has lets a Turkish king chain more than 24 captures."""
    rules = rules_of("turkish")
    pos = rules.parse_fen(
        "W:WKa2:Ba1,a5,b1,b2,b4,b7,b8,c3,c5,d1,d2,d7,d8,e3,e4,e5,e6,e7,f3,f6,f8,g1,g4,g5,g6,g7,g8,h1,h4,h6"
    )
    with pytest.raises(EngineLimitError, match="capture chain longer"):
        rules.legal_moves(pos)
