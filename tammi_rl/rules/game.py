"""A game record that applies a variant's end and draw rules (RULES.md, ``[draw]`` tables).

    game = Game(Rules.for_variant("russian"), max_plies=300)
    while not game.is_over:
        game.play(game.legal_moves()[0])
    game.result.winner, game.result.reason, game.result.pdn

`Game` keeps the move list, the position history and the draw counters, and decides
the result after every ply. The counters are exposed through `Game.counters` so an
observation encoder can show them (DESIGN decision 5: nothing the rules depend on is
hidden). Per-ply work is a handful of integer operations plus the move generation of
the new position, which is needed anyway to see whether the side to move can move.

Counter semantics (all in plies; a rule with N moves of each side fires at 2*N plies):

* ``no_progress_plies``: plies since the last capture or man move (a promotion is a
  man move). The English/Italian 40-move rule draws when it reaches
  ``2 * draw.no_progress_moves``.
* ``kings_only_plies``: plies played from a position in which both sides had only
  kings, with no capture since. It is 0 in the position where the kings-only balance
  arises (by a promotion or a capture) and in any position that is not kings-only; a
  capture resets it to 0. The Russian 15-move rule draws when it reaches
  ``2 * draw.kings_only_moves``.
* ``three_kings_plies``: plies played while one side has 3+ kings (men may stand
  beside them) and the other side has a single king and nothing else. It is 0 in the
  position where that balance arises and whenever it does not hold; a capture that
  keeps the balance (4 kings v 1 becoming 3 v 1) does NOT reset it, since the
  stronger side's deadline is counted from when the balance arose. The game is drawn
  when it reaches ``2 * draw.three_kings_vs_one_moves``, i.e. after the stronger
  side has had N moves without capturing the lone king.
* ``repetitions``: how often the current position (same pieces, same side to move)
  has occurred in the game so far, including now. Drawn at ``draw.repetition``.
  The table is cleared after an irreversible ply (a capture, a promotion, or a man
  move where men move only forward), because no earlier position can come back.

Order of decisions after a ply: the side to move has no legal move (it loses) comes
first, then a lone king v lone man (Turkish option), repetition, three kings v one,
kings only, no progress, and finally the length cap (``max_plies``: adjudication).
"""

from __future__ import annotations

from dataclasses import dataclass

from tammi_rl.rules.engine import Rules
from tammi_rl.rules.errors import MoveError
from tammi_rl.rules.position import BLACK, COLOR_NAMES, WHITE, Move, Position

REASONS = (
    "no_moves",
    "repetition",
    "kings_only",
    "three_kings_vs_one",
    "no_progress",
    "king_vs_lone_man",
    "adjudication",
    "resignation",
    "agreement",
)
"""Every value `GameResult.reason` may take."""


@dataclass(frozen=True, slots=True)
class GameResult:
    """How a game ended: the winner (0 white, 1 black, None for a draw) and why."""

    winner: int | None
    reason: str

    def __post_init__(self) -> None:
        if self.winner not in (WHITE, BLACK, None):
            raise ValueError(f"GameResult.winner must be 0 (white), 1 (black) or None, got {self.winner!r}")
        if self.reason not in REASONS:
            raise ValueError(f"GameResult.reason {self.reason!r} is not one of {', '.join(REASONS)}")

    @property
    def is_draw(self) -> bool:
        return self.winner is None

    def score(self, color: int) -> float:
        """Points for ``color``: 1 for a win, 0.5 for a draw, 0 for a loss."""
        if self.winner is None:
            return 0.5
        return 1.0 if self.winner == color else 0.0

    @property
    def pdn(self) -> str:
        """The PDN ``Result`` string: "1-0" white won, "0-1" black won, "1/2-1/2" a draw."""
        if self.winner is None:
            return "1/2-1/2"
        return "1-0" if self.winner == WHITE else "0-1"

    def __str__(self) -> str:
        who = "draw" if self.winner is None else f"{COLOR_NAMES[self.winner]} wins"
        return f"{self.pdn} ({who}: {self.reason})"


@dataclass(frozen=True, slots=True)
class DrawCounters:
    """The draw-rule state of the current position (see the module docstring)."""

    plies: int
    """Plies played so far in this game (the length cap counts these)."""
    no_progress_plies: int
    """Plies since the last capture or man move."""
    kings_only_plies: int
    """Plies played with only kings on the board and no capture."""
    three_kings_plies: int
    """Plies played while 3+ kings stand against a lone king."""
    repetitions: int
    """Occurrences of the current position (same side to move), this one included."""


def _kings_only(pos: Position) -> bool:
    """Both sides have pieces and none of them is a man."""
    return not (pos.white_men | pos.black_men) and bool(pos.white_kings) and bool(pos.black_kings)


def _three_kings_vs_one(pos: Position) -> bool:
    """One side has 3+ kings, the other exactly one piece, a king."""
    wk, bk = pos.white_kings, pos.black_kings
    if not pos.black_men and bk and not bk & (bk - 1) and wk.bit_count() >= 3:
        return True
    return not pos.white_men and bool(wk) and not wk & (wk - 1) and bk.bit_count() >= 3


def _king_vs_lone_man(pos: Position) -> int | None:
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


class Game:
    """One game: moves, positions, draw counters and the result once it is decided.

    ``start`` defaults to the variant's initial position; ``max_plies`` (None: no cap)
    ends the game by the variant's adjudication once that many plies were played.
    A start position in which the side to move cannot move is decided at once.
    """

    def __init__(self, rules: Rules, start: Position | None = None, max_plies: int | None = None) -> None:
        if max_plies is not None and max_plies < 0:
            raise ValueError(f"max_plies must be >= 0 or None, got {max_plies}")
        self.rules = rules
        self.max_plies = max_plies
        self.position: Position = rules.start_position() if start is None else start
        self.moves: list[Move] = []
        self.positions: list[Position] = [self.position]
        self.result: GameResult | None = None
        draw = rules.variant.draw
        self._draw = draw
        self._no_progress_limit = 2 * draw.no_progress_moves
        self._kings_only_limit = 2 * draw.kings_only_moves
        self._three_kings_limit = 2 * draw.three_kings_vs_one_moves
        # A man move is irreversible only where men never move back or sideways.
        self._man_move_irreversible = set(rules.variant.man_moves) == {"forward"}
        self._no_progress = 0
        self._kings_only = 0
        self._three_kings = 0
        self._seen: dict[tuple[int, int, int, int, int], int] = {self.position.key(): 1}
        self._legal: list[Move] | None = None
        self._decide()

    # --- queries -----------------------------------------------------------------
    @property
    def is_over(self) -> bool:
        return self.result is not None

    @property
    def side(self) -> int:
        """The side to move in the current position."""
        return self.position.side

    def legal_moves(self) -> list[Move]:
        """Legal moves of the side to move; [] once the game is over.

        Computed once per position and shared: treat the list as read-only.
        """
        if self.result is not None:
            return []
        return self._moves_here()

    def counters(self) -> DrawCounters:
        """The draw counters of the current position, for observations and display."""
        return DrawCounters(
            plies=len(self.moves),
            no_progress_plies=self._no_progress,
            kings_only_plies=self._kings_only,
            three_kings_plies=self._three_kings,
            repetitions=self._seen.get(self.position.key(), 1),
        )

    def _moves_here(self) -> list[Move]:
        if self._legal is None:
            self._legal = self.rules.legal_moves(self.position)
        return self._legal

    # --- playing -----------------------------------------------------------------
    def play(self, move: Move) -> GameResult | None:
        """Play a legal move, update the counters and decide the result (returned; None if going on)."""
        if self.result is not None:
            raise MoveError(f"the game is over ({self.result}); no more moves can be played")
        if not isinstance(move, Move):
            raise MoveError(f"expected a Move, got {type(move).__name__}: {move!r}")
        if move not in self._moves_here():
            raise MoveError(
                f"illegal move {self._describe(move)} in {self.rules.fen(self.position)}; "
                f"legal moves: {', '.join(self._describe(m) for m in self._moves_here())}"
            )
        before = self.position
        after = self.rules.play(before, move)
        capture = bool(move.captures)
        man_move = bool(before.men(before.side) >> move.start & 1)

        self._no_progress = 0 if capture or man_move else self._no_progress + 1
        # Counted from the position where the balance arose: only a ply played from a
        # qualifying position (and, for kings only, without a capture) adds one.
        kings_only_held = not capture and _kings_only(before) and _kings_only(after)
        self._kings_only = self._kings_only + 1 if kings_only_held else 0
        self._three_kings = (
            self._three_kings + 1 if _three_kings_vs_one(before) and _three_kings_vs_one(after) else 0
        )
        if capture or move.promotes or (man_move and self._man_move_irreversible):
            self._seen.clear()
        key = after.key()
        self._seen[key] = self._seen.get(key, 0) + 1

        self.position = after
        self.moves.append(move)
        self.positions.append(after)
        self._legal = None
        self._decide()
        return self.result

    def _describe(self, move: Move) -> str:
        """A move in the variant's notation, for error messages (``c3-d4``, ``c3xe5``)."""
        names = self.rules.geometry.names
        try:
            return ("x" if move.captures else "-").join(names[s] for s in move.path) or "<empty>"
        except (IndexError, TypeError):
            return repr(move)

    def _decide(self) -> None:
        """Set `result` if the current position ends the game (order: module docstring)."""
        pos = self.position
        draw = self._draw
        if not self._moves_here():
            self.result = GameResult(1 - pos.side, "no_moves")
            return
        if draw.king_vs_lone_man != "play":
            king_side = _king_vs_lone_man(pos)
            if king_side is not None:
                winner = king_side if draw.king_vs_lone_man == "king_wins" else None
                self.result = GameResult(winner, "king_vs_lone_man")
                return
        if draw.repetition and self._seen.get(pos.key(), 0) >= draw.repetition:
            self.result = GameResult(None, "repetition")
        elif self._three_kings_limit and self._three_kings >= self._three_kings_limit:
            self.result = GameResult(None, "three_kings_vs_one")
        elif self._kings_only_limit and self._kings_only >= self._kings_only_limit:
            self.result = GameResult(None, "kings_only")
        elif self._no_progress_limit and self._no_progress >= self._no_progress_limit:
            self.result = GameResult(None, "no_progress")
        elif self.max_plies is not None and len(self.moves) >= self.max_plies:
            self.result = self._adjudication()

    def _adjudication(self) -> GameResult:
        if self._draw.adjudication == "material":
            return material_result(self.position)
        return GameResult(None, "adjudication")

    # --- ending by the players ---------------------------------------------------
    def _require_going(self, what: str) -> None:
        if self.result is not None:
            raise MoveError(f"cannot {what}: the game is already over ({self.result})")

    def resign(self, color: int) -> GameResult:
        """``color`` resigns; the other side wins."""
        if color not in (WHITE, BLACK):
            raise ValueError(f"color must be 0 (white) or 1 (black), got {color!r}")
        self._require_going("resign")
        self.result = GameResult(1 - color, "resignation")
        return self.result

    def agree_draw(self) -> GameResult:
        """Both players agree to a draw."""
        self._require_going("agree a draw")
        self.result = GameResult(None, "agreement")
        return self.result

    def adjudicate(self) -> GameResult:
        """End the game now by the variant's adjudication (the caller stops it).

        A game already over keeps its result, which is returned unchanged.
        """
        if self.result is None:
            self.result = self._adjudication()
        return self.result

    def copy(self) -> "Game":
        """An independent copy (positions and moves are immutable and shared)."""
        new = Game.__new__(Game)
        new.__dict__.update(self.__dict__)
        new.moves = list(self.moves)
        new.positions = list(self.positions)
        new._seen = dict(self._seen)
        return new

    def __repr__(self) -> str:
        state = str(self.result) if self.result else f"{COLOR_NAMES[self.side]} to move"
        return f"Game({self.rules.variant.name}, {len(self.moves)} plies, {state})"


__all__ = ["DrawCounters", "Game", "GameResult", "REASONS", "material_result"]
