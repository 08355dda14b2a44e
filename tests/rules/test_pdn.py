"""PDN: export/import round trips in every variant, hand-written files, and errors."""

from __future__ import annotations

import random

import pytest

from tammi_rl.rules.engine import Rules
from tammi_rl.rules.errors import PdnError
from tammi_rl.rules.notation import format_move
from tammi_rl.rules.pdn import game_to_pdn, movetext, read_pdn
from tammi_rl.rules.position import Move, Position

GAMETYPES = {"russian": 25, "english": 21, "italian": 22, "brazilian": 26, "turkish": 30, "international": 20}


def random_game(rules: Rules, rng: random.Random, start: Position | None = None, plies: int = 150) -> list[Move]:
    pos = rules.start_position() if start is None else start
    moves: list[Move] = []
    for _ in range(plies):
        legal = rules.legal_moves(pos)
        if not legal:
            break
        move = rng.choice(legal)
        moves.append(move)
        pos = rules.play(pos, move)
    return moves


def tag_lines(text: str) -> dict[str, str]:
    return {line[1:].split(" ", 1)[0]: line.split('"')[1] for line in text.splitlines() if line.startswith("[")}


@pytest.mark.parametrize("variant", sorted(GAMETYPES))
def test_round_trip_random_games(variant: str) -> None:
    rules = Rules.for_variant(variant)
    rng = random.Random(7)
    for k in range(5):
        moves = random_game(rules, rng)
        result = ("1-0", "0-1", "1/2-1/2", "*", "*")[k]
        text = game_to_pdn(rules, moves, result=result, tags={"Event": f"test {k}"})
        tags = tag_lines(text)
        assert tags["GameType"] == str(GAMETYPES[variant])
        assert tags["Result"] == result and tags["Event"] == f"test {k}"
        assert "FEN" not in tags
        assert text.rstrip().endswith(result)
        [game] = read_pdn(text)  # variant chosen from GameType
        assert game.rules is not None and game.rules.variant.name == variant
        assert game.moves == moves
        assert game.start == rules.start_position()
        assert game.result == result


@pytest.mark.parametrize("variant", sorted(GAMETYPES))
def test_round_trip_from_fen_with_either_side_to_move(variant: str) -> None:
    rules = Rules.for_variant(variant)
    rng = random.Random(99)
    for opening in (6, 7):  # after an odd opening length the second player moves first
        start = rules.start_position()
        for move in random_game(rules, rng, plies=opening):
            start = rules.play(start, move)
        moves = random_game(rules, rng, start=start, plies=60)
        text = game_to_pdn(rules, moves, start=start)
        assert tag_lines(text)["FEN"] == rules.fen(start)
        body = text.split("\n\n", 1)[1]
        assert body.startswith("1... " if start.side != rules.start_position().side else "1. ")
        [game] = read_pdn(text, rules=rules)
        assert game.start == start and game.moves == moves and game.result == "*"


def test_several_games_in_one_text() -> None:
    russian, english = Rules.for_variant("russian"), Rules.for_variant("english")
    rng = random.Random(3)
    a, b = random_game(russian, rng, plies=20), random_game(english, rng, plies=20)
    text = game_to_pdn(russian, a, result="1-0") + "\n" + game_to_pdn(english, b, result="0-1")
    games = read_pdn(text)
    assert [g.moves for g in games] == [a, b]
    assert [g.rules.variant.name for g in games] == ["russian", "english"]
    assert [g.result for g in games] == ["1-0", "0-1"]


def test_movetext_numbers_pairs_from_the_first_player() -> None:
    rules = Rules.for_variant("english")  # Black moves first
    pos = rules.start_position()
    moves = []
    for text in ("11-15", "23-19", "8-11"):
        move = next(m for m in rules.legal_moves(pos) if format_move(rules, m) == text)
        moves.append(move)
        pos = rules.play(pos, move)
    assert movetext(rules, moves) == "1. 11-15 23-19 2. 8-11"


HAND_WRITTEN = """
; a line comment before the first game
[Event "Club match"]
[White "Aino"]
[Black "Bertta"]
[Result "1-0"]
[GameType "25"]

1.c3-d4 {a central opening} f6-e5 $1 2. d4:f6!? (2. b2-c3 e5xc3 {side line}
(2. a3-b4 e5:c3) ) g7:e5?! 3. g3-f4 $14 e5:g3 4. h2:f4 1-0

[Event "Second"]
[GameType "21"]
[Result "1/2-1/2"]

1. 11-15 23-19 2. 8-11 22-17 3... 9-13 {not checked: numbers are labels} 1/2-1/2
"""


def test_hand_written_pdn_with_comments_variations_and_nags() -> None:
    first, second = read_pdn(HAND_WRITTEN)
    rules = first.rules
    assert first.tags["Event"] == "Club match" and first.tags["White"] == "Aino"
    assert [format_move(rules, m) for m in first.moves] == [
        "c3-d4",
        "f6-e5",
        "d4:f6",
        "g7:e5",
        "g3-f4",
        "e5:g3",
        "h2:f4",
    ]
    assert first.result == "1-0"
    assert second.rules.variant.name == "english"
    assert [format_move(second.rules, m) for m in second.moves] == ["11-15", "23-19", "8-11", "22-17", "9-13"]
    assert second.result == "1/2-1/2"


def test_short_capture_text_and_fmjd_results() -> None:
    text = '[GameType "25"]\n[FEN "W:Wc3:Bd4,d6,h8"]\n1. c3:c7 h8-g7 2-0'
    [game] = read_pdn(text)
    assert game.start == game.rules.parse_fen("W:Wc3:Bd4,d6,h8")
    assert [format_move(game.rules, m) for m in game.moves] == ["c3:e5:c7", "h8-g7"]
    assert game.result == "1-0"


def test_games_without_tags_need_rules() -> None:
    rules = Rules.for_variant("russian")
    [game] = read_pdn("1. c3-d4 f6-e5 2. d4xf6 *", rules=rules)
    assert [format_move(rules, m) for m in game.moves] == ["c3-d4", "f6-e5", "d4:f6"]
    with pytest.raises(PdnError, match="game 1: no GameType tag"):
        read_pdn("1. c3-d4 f6-e5 *")


def test_illegal_move_names_game_move_and_reason() -> None:
    text = HAND_WRITTEN.replace("22-17", "22-26")
    with pytest.raises(PdnError) as err:
        read_pdn(text)
    message = str(err.value)
    assert message.startswith("game 2, move 2... '22-26': illegal move '22-26' for white")
    assert "legal moves:" in message and "22-17" in message


def test_unreadable_move_and_unknown_gametype() -> None:
    with pytest.raises(PdnError, match=r"game 1, move 2\. 'c3-q9': unknown square 'q9'"):
        read_pdn('[GameType "25"]\n1. c3-d4 f6-g5 2. c3-q9 *')
    with pytest.raises(PdnError, match=r"game 1, move 1\.\.\. 'f6-g5#': 'g5#' is not a square name"):
        read_pdn('[GameType "25"]\n1. c3-d4 f6-g5# *')
    with pytest.raises(PdnError, match="GameType '99' is not a supported variant"):
        read_pdn('[GameType "99"]\n1. c3-d4 *')
    with pytest.raises(PdnError, match="game 1: bad FEN tag"):
        read_pdn('[GameType "25"]\n[FEN "W:Wz9:Ba1"]\n*')


def test_structural_errors() -> None:
    with pytest.raises(PdnError, match="unclosed comment"):
        read_pdn('[GameType "25"]\n1. c3-d4 {never closed')
    with pytest.raises(PdnError, match="unclosed variation"):
        read_pdn('[GameType "25"]\n1. c3-d4 (1. a3-b4 *')
    with pytest.raises(PdnError, match="malformed tag"):
        read_pdn("[GameType 25]\n1. c3-d4 *")
    assert read_pdn("") == []


def test_tag_values_with_quotes_survive() -> None:
    rules = Rules.for_variant("russian")
    text = game_to_pdn(rules, [], tags={"White": 'Aino "the wall"', "Annotator": "c:\\x"})
    [game] = read_pdn(text)
    assert game.tags["White"] == 'Aino "the wall"' and game.tags["Annotator"] == "c:\\x"
    assert game.moves == [] and game.result == "*"
    with pytest.raises(PdnError, match="result '3-0'"):
        game_to_pdn(rules, [], result="3-0")
