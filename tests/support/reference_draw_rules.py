"""A pure-Python reading of the end and draw rules, kept as an independent reference.

The product decides game ends in one compiled place (`tammi_rl.rules.draw_rules`, run by
the turn machine). This module restates the same rules in plain Python over `Position`
values and Python integers, written from the rules text rather than from the compiled
code, so the tests can play many games through both and require the same counters and
results after every move (tests/env/test_env_draw_rules.py).
"""

from __future__ import annotations

from tammi_rl.rules.engine import Rules
from tammi_rl.rules.position import BLACK, WHITE, Move, Position
from tammi_rl.rules.results import GameResult


def kings_only(pos: Position) -> bool:
    """Both sides have pieces and none of them is a man."""
    return not (pos.white_men | pos.black_men) and bool(pos.white_kings) and bool(pos.black_kings)


def three_kings_vs_one(pos: Position) -> bool:
    """One side has 3+ kings, the other exactly one piece, a king."""
    wk, bk = pos.white_kings, pos.black_kings
    if not pos.black_men and bk and not bk & (bk - 1) and wk.bit_count() >= 3:
        return True
    return not pos.white_men and bool(wk) and not wk & (wk - 1) and bk.bit_count() >= 3


def king_vs_lone_man(pos: Position) -> int | None:
    """The colour holding the lone king when one side has only a king and the other only a man."""
    wm, wk, bm, bk = pos.white_men, pos.white_kings, pos.black_men, pos.black_kings
    if not wm and not bk and wk and bm and not wk & (wk - 1) and not bm & (bm - 1):
        return WHITE
    if not bm and not wk and bk and wm and not bk & (bk - 1) and not wm & (wm - 1):
        return BLACK
    return None


def material_result(pos: Position) -> GameResult:
    """Adjudication by material: more pieces wins; equal pieces, more kings wins; else draw."""
    white = (pos.white_men | pos.white_kings).bit_count()
    black = (pos.black_men | pos.black_kings).bit_count()
    if white == black:
        white, black = pos.white_kings.bit_count(), pos.black_kings.bit_count()
    if white == black:
        return GameResult(None, "adjudication")
    return GameResult(WHITE if white > black else BLACK, "adjudication")


class ReferenceGame:
    """Whole moves, the draw counters and the result, in plain Python."""

    def __init__(self, rules: Rules, start: Position, max_plies: int | None) -> None:
        self.rules = rules
        self.max_plies = max_plies
        self.position = start
        self.plies = 0
        draw = rules.variant.draw
        self.draw = draw
        self.man_move_irreversible = set(rules.variant.man_moves) == {"forward"}
        self.no_progress = self.kings_only = self.three_kings = 0
        self.seen: dict[tuple[int, ...], int] = {start.key(): 1}
        self.result: GameResult | None = None
        self._decide()

    def counters(self) -> tuple[int, int, int, int]:
        """(no progress, kings only, three kings, repetitions) of the current position."""
        return (self.no_progress, self.kings_only, self.three_kings, self.seen.get(self.position.key(), 1))

    def play(self, move: Move) -> None:
        before = self.position
        after = self.rules.play(before, move)
        capture = bool(move.captures)
        man_move = bool(before.men(before.side) >> move.start & 1)
        self.no_progress = 0 if capture or man_move else self.no_progress + 1
        held = not capture and kings_only(before) and kings_only(after)
        self.kings_only = self.kings_only + 1 if held else 0
        self.three_kings = self.three_kings + 1 if three_kings_vs_one(before) and three_kings_vs_one(after) else 0
        if capture or move.promotes or (man_move and self.man_move_irreversible):
            self.seen.clear()
        self.seen[after.key()] = self.seen.get(after.key(), 0) + 1
        self.position = after
        self.plies += 1
        self._decide()

    def _decide(self) -> None:
        pos, draw = self.position, self.draw
        if not self.rules.legal_moves(pos):
            self.result = GameResult(1 - pos.side, "no_moves")
            return
        if draw.king_vs_lone_man != "play":
            king_side = king_vs_lone_man(pos)
            if king_side is not None:
                self.result = GameResult(
                    king_side if draw.king_vs_lone_man == "king_wins" else None, "king_vs_lone_man"
                )
                return
        if draw.repetition and self.seen.get(pos.key(), 0) >= draw.repetition:
            self.result = GameResult(None, "repetition")
        elif draw.three_kings_vs_one_moves and self.three_kings >= 2 * draw.three_kings_vs_one_moves:
            self.result = GameResult(None, "three_kings_vs_one")
        elif draw.kings_only_moves and self.kings_only >= 2 * draw.kings_only_moves:
            self.result = GameResult(None, "kings_only")
        elif draw.no_progress_moves and self.no_progress >= 2 * draw.no_progress_moves:
            self.result = GameResult(None, "no_progress")
        elif self.max_plies is not None and self.plies >= self.max_plies:
            self.result = material_result(pos) if draw.adjudication == "material" else GameResult(None, "adjudication")
