"""FEN set-up checks: no empty FEN, each side has a piece, errors show the variant's notation.

A side without pieces is a finished game: it is reached by play (and still works there),
but it is never a position to set up from FEN text.
"""

from __future__ import annotations

import re

import pytest

from tammi_rl.rules.engine import Rules
from tammi_rl.rules.errors import FenError
from tammi_rl.rules.fen import fen_example, missing_side
from tammi_rl.rules.game import Game, GameResult
from tammi_rl.rules.position import WHITE

ALL_VARIANTS = ["russian", "english", "italian", "turkish", "brazilian", "international"]


def _one_square(rules: Rules, row: int) -> str:
    mask = rules.geometry.row_mask(row)
    return rules.square_name((mask & -mask).bit_length() - 1)


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_a_side_without_pieces_is_refused(variant: str) -> None:
    rules = Rules.for_variant(variant)
    white, black = _one_square(rules, 2), _one_square(rules, rules.geometry.size - 3)
    with pytest.raises(FenError, match="no pieces at all"):
        rules.parse_fen("W:W:B")
    with pytest.raises(FenError, match="white has no piece"):
        rules.parse_fen(f"B:W:B{black}")
    with pytest.raises(FenError, match="black has no piece"):
        rules.parse_fen(f"W:WK{white}:B")
    assert rules.parse_fen(f"W:W{white}:B{black}").side == WHITE


@pytest.mark.parametrize("text", ["", "  ", "."])
def test_an_empty_fen_is_refused(russian: Rules, text: str) -> None:
    with pytest.raises(FenError, match="is empty; give a position such as 'W:Wa3,c3,Ke3:Bb8,d8,f8'"):
        russian.parse_fen(text)


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_the_fen_error_example_is_in_the_variants_notation(variant: str) -> None:
    rules = Rules.for_variant(variant)
    with pytest.raises(FenError) as info:
        rules.parse_fen("not a fen")
    example = re.search(r"e\.g\. '([^']+)'", str(info.value))
    assert example is not None, str(info.value)
    assert example.group(1) == fen_example(rules.geometry)
    pos = rules.parse_fen(example.group(1))  # the example is a position this variant reads
    assert missing_side(pos) is None and rules.legal_moves(pos)
    square = r"[a-h]\d" if rules.variant.notation == "algebraic" else r"\d+"
    assert re.fullmatch(rf"W:W{square},{square},K{square}:B{square},{square},{square}", example.group(1))
    if variant in ("english", "italian"):
        assert example.group(1) == "W:W21,22,K23:B1,2,3"


def test_the_russian_example_has_no_numbers(russian: Rules) -> None:
    with pytest.raises(FenError, match=r"e\.g\. 'W:Wa3,c3,Ke3:Bb8,d8,f8'"):
        russian.parse_fen("W:W21,22,K23")


def test_a_game_that_takes_the_last_piece_still_works(russian: Rules) -> None:
    """Play reaches a side without pieces: the game is over, its FEN is written (not re-read)."""
    game = Game(russian, russian.parse_fen("W:Wc3:Bd4"))
    (capture,) = game.legal_moves()
    game.play(capture)
    assert game.result == GameResult(WHITE, "no_moves")
    assert missing_side(game.position) == "black has no piece"
    assert russian.fen(game.position) == "B:We5:B"
    assert russian.legal_moves(game.position) == []
