"""A game record on the compiled turn machine: moves, positions, counters, result.

    game = Game(Rules.for_variant("russian"), max_plies=300)
    while not game.is_over:
        game.play(game.legal_moves()[0])
    game.result.winner, game.result.reason, game.result.pdn

`Game` keeps what a reader wants (the move list, the positions, PDN via
`tammi_rl.rules.pdn`) and leaves every decision to `tammi_rl.rules.turn`: the legal
moves, the draw counters, the repetition table and the result come from the same
compiled code the env and the search trees run (the rules and their order are described
in `tammi_rl.rules.draw_rules`).

A turn can also be played hop by hop (`legal_hops`, `play_hop`), the way the env, the
search and self-play see it: the hops of a capture chain are consecutive decisions of
the same player, and the whole move enters the record when its last hop is played.
"""

from __future__ import annotations

import numpy as np

from tammi_rl.rules import draw_rules as dr
from tammi_rl.rules import movegen as mg
from tammi_rl.rules import turn as tm
from tammi_rl.rules.actions import ActionCodec, codec_for
from tammi_rl.rules.engine import Rules, engine_limits
from tammi_rl.rules.errors import MoveError
from tammi_rl.rules.position import BLACK, COLOR_NAMES, WHITE, Move, Position, from_int64
from tammi_rl.rules.results import REASONS, DrawCounters, GameResult

_R_RESIGNATION = REASONS.index("resignation")
_R_AGREEMENT = REASONS.index("agreement")
_R_ADJUDICATION = REASONS.index("adjudication")


def row_move(row: np.ndarray | list[int]) -> Move:
    """A whole-move row of the move generator as a `Move`."""
    r = row.tolist() if isinstance(row, np.ndarray) else row
    plen, ncap = r[mg.F_PATH_LEN], r[mg.F_NCAP]
    return Move(tuple(r[mg.F_PATH : mg.F_PATH + plen]), tuple(r[mg.F_CAPS : mg.F_CAPS + ncap]), r[mg.F_PROMOTES] == 1)


def board_position(board: np.ndarray, side: int) -> Position:
    """Four int64 bitboards and the side to move as a `Position`."""
    return Position(from_int64(board[0]), from_int64(board[1]), from_int64(board[2]), from_int64(board[3]), int(side))


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
        self.codec: ActionCodec = codec_for(rules)
        self.position: Position = rules.start_position() if start is None else start
        """The position at the start of the current turn."""
        self.moves: list[Move] = []
        self.positions: list[Position] = [self.position]
        self._tables = tm.build_tables(rules, max_plies)
        self._state, self._buf, self._history = tm.new_state()
        self._hops = np.empty(mg.MAX_MOVES, np.int64)  # scratch of `legal_hops`
        self._state[tm.S_BOARD : tm.S_SIDE + 1] = self.position.as_int64()
        with engine_limits(lambda: rules.fen(self.position)):
            tm.begin_game(self._state, self._buf, self._tables, self._history)
        self._legal: list[Move] | None = None
        self._ended: GameResult | None = None
        """A result the players gave (resignation, agreement, adjudication on request)."""

    # --- queries -----------------------------------------------------------------
    @property
    def result(self) -> GameResult | None:
        """How the game ended; None while it goes on."""
        if self._ended is not None:
            return self._ended
        s = self._state
        if s[tm.S_DONE] == 0:
            return None
        winner = int(s[tm.S_WINNER])
        self._ended = GameResult(None if winner == dr.DRAWN else winner, REASONS[int(s[tm.S_REASON])])
        return self._ended

    @property
    def is_over(self) -> bool:
        return self.result is not None

    @property
    def side(self) -> int:
        """The side to move in the current position."""
        return self.position.side

    def legal_moves(self) -> list[Move]:
        """Legal moves of the side to move (the whole turn); [] once the game is over.

        Computed once per position and shared: treat the list as read-only.
        """
        if self.is_over:
            return []
        return self._moves_here()

    def _moves_here(self) -> list[Move]:
        if self._legal is None:
            buf = self._buf
            self._legal = [row_move(buf[r]) for r in range(int(self._state[tm.S_NLEGAL]))]
        return self._legal

    def counters(self) -> DrawCounters:
        """The draw counters of the current position, for observations and display."""
        s = self._state
        c = s[tm.S_COUNTERS : tm.S_COUNTERS + 4].tolist()
        return DrawCounters(
            plies=int(s[tm.S_PLIES]),
            no_progress_plies=c[0],
            kings_only_plies=c[1],
            three_kings_plies=c[2],
            repetitions=c[3],
        )

    def reversible_history(self) -> list[Position]:
        """The positions before the current one back to the last irreversible move: the
        ones that could still repeat (what a searcher needs to see repetition draws)."""
        n = int(self._state[tm.S_HISTORY_N])
        rows = self._history[: max(0, n - 1)]
        return [board_position(r[:4], r[4]) for r in rows]

    # --- playing whole moves ----------------------------------------------------------
    def play(self, move: Move) -> GameResult | None:
        """Play a legal move, update the counters and decide the result (returned; None if going on)."""
        if self.is_over:
            raise MoveError(f"the game is over ({self.result}); no more moves can be played")
        if not isinstance(move, Move):
            raise MoveError(f"expected a Move, got {type(move).__name__}: {move!r}")
        if self._state[tm.S_HOPS] != 0:
            raise MoveError(
                f"a capture chain is in progress ({self._describe_path(self.chain_path())}); "
                "finish it hop by hop with play_hop"
            )
        legal = self._moves_here()
        try:
            row = legal.index(move)
        except ValueError:
            raise MoveError(
                f"illegal move {self._describe(move)} in {self.rules.fen(self.position)}; "
                f"legal moves: {', '.join(self._describe(m) for m in legal)}"
            ) from None
        self._grow_history()
        with engine_limits(lambda: f"{self.rules.fen(self.position)} after {self._describe(move)}"):
            tm.play_row(self._state, self._buf, self._tables, self._history, row)
        self._record(move)
        return self.result

    def _record(self, move: Move) -> None:
        s = self._state
        self.position = board_position(s[tm.S_BOARD : tm.S_BOARD + 4], s[tm.S_SIDE])
        self.moves.append(move)
        self.positions.append(self.position)
        self._legal = None

    def _grow_history(self) -> None:
        if self._state[tm.S_HISTORY_N] >= self._history.shape[0]:  # keep a free row for the next move
            self._history = dr.grow_history(self._history)

    # --- playing hop by hop -------------------------------------------------------------
    def legal_hops(self) -> list[int]:
        """Sorted hop actions legal now (`tammi_rl.rules.actions`); [] once the game is over."""
        if self.is_over:
            return []
        n = tm.state_legal_hops(self._state, self._buf, self._tables, self._hops)
        return sorted(self._hops[:n].tolist())

    def play_hop(self, action: int) -> Move | None:
        """Play one hop; return the whole move when this hop completes it (it is then in the
        record and the result decided), else None (the same player moves again)."""
        if self.is_over:
            raise MoveError(f"the game is over ({self.result}); no more hops can be played")
        a = int(action)
        code = tm.HOP_ILLEGAL
        if 0 <= a < self.codec.n_actions:
            self._grow_history()
            with engine_limits(lambda: self.rules.fen(self.position)):
                code = tm.play_hop(self._state, self._buf, self._tables, self._history, a)
        if code == tm.HOP_ILLEGAL:
            side = self.side
            what = self.codec.hop_text(side, a) if 0 <= a < self.codec.n_actions else "out of range"
            raise MoveError(f"hop action {a} ({what}) is not legal here; legal: {self.legal_hops()}")
        if code == tm.HOP_CONTINUES:
            return None
        move = row_move(self._state[tm.S_LAST :])
        self._record(move)
        return move

    def chain_path(self) -> tuple[int, ...]:
        """Internal squares visited so far in this turn: the start square, then each landing
        square (empty at the start of a turn)."""
        s = self._state
        k = int(s[tm.S_HOPS])
        if k == 0 or s[tm.S_ALIVE_N] == 0:
            return ()
        return tuple(self._buf[s[tm.S_ALIVE], mg.F_PATH : mg.F_PATH + k + 1].tolist())

    def chain_board(self) -> tuple[Position, tuple[int, ...]]:
        """The board as it stands mid-turn, and the squares of the pieces jumped so far
        this turn (in the order they were jumped); at the start of a turn
        ``(self.position, ())``.

        The moving piece stands on the square it has reached (a king if it started as one
        or, under ``promotion_in_chain = "continue"``, crossed the far row); jumped pieces
        stay on the board until the move completes unless the variant removes them at
        once. The same compiled view (`tammi_rl.rules.turn.chain_view`) the env's
        observations and the search trees use.
        """
        s = self._state
        k = int(s[tm.S_HOPS])
        if k == 0 or s[tm.S_ALIVE_N] == 0:
            return self.position, ()
        mw, kw, mb, kb, _, _ = tm.state_chain_view(s, self._buf, self._tables)
        board = Position(from_int64(mw), from_int64(kw), from_int64(mb), from_int64(kb), self.side)
        jumped = tuple(self._buf[s[tm.S_ALIVE], mg.F_CAPS : mg.F_CAPS + k].tolist())
        return board, jumped

    # --- ending by the players ---------------------------------------------------
    def _require_going(self, what: str) -> None:
        if self.is_over:
            raise MoveError(f"cannot {what}: the game is already over ({self.result})")

    def resign(self, color: int) -> GameResult:
        """``color`` resigns; the other side wins."""
        if color not in (WHITE, BLACK):
            raise ValueError(f"color must be 0 (white) or 1 (black), got {color!r}")
        self._require_going("resign")
        self._ended = GameResult(1 - color, REASONS[_R_RESIGNATION])
        return self._ended

    def agree_draw(self) -> GameResult:
        """Both players agree to a draw."""
        self._require_going("agree a draw")
        self._ended = GameResult(None, REASONS[_R_AGREEMENT])
        return self._ended

    def adjudicate(self) -> GameResult:
        """End the game now by the variant's adjudication (the caller stops it).

        A game already over keeps its result, which is returned unchanged.
        """
        if self.result is None:
            winner = dr.DRAWN
            if self.rules.variant.draw.adjudication == "material":
                winner = int(dr.material_winner(*self._state[tm.S_BOARD : tm.S_BOARD + 4]))
            self._ended = GameResult(None if winner == dr.DRAWN else winner, REASONS[_R_ADJUDICATION])
        assert self._ended is not None
        return self._ended

    # --- helpers ----------------------------------------------------------------------
    def _describe_path(self, path: tuple[int, ...], capture: bool = False) -> str:
        names = self.rules.geometry.names
        return ("x" if capture else "-").join(names[s] for s in path) or "<empty>"

    def _describe(self, move: Move) -> str:
        """A move in the variant's notation, for error messages (``c3-d4``, ``c3xe5``)."""
        try:
            return self._describe_path(move.path, bool(move.captures))
        except (IndexError, TypeError):
            return repr(move)

    def copy(self) -> Game:
        """An independent copy (positions and moves are immutable and shared)."""
        new = Game.__new__(Game)
        new.__dict__.update(self.__dict__)
        new.moves = list(self.moves)
        new.positions = list(self.positions)
        new._state = self._state.copy()
        new._buf = self._buf.copy()
        new._history = self._history.copy()
        return new

    def __repr__(self) -> str:
        state = str(self.result) if self.result else f"{COLOR_NAMES[self.side]} to move"
        return f"Game({self.rules.variant.name}, {len(self.moves)} plies, {state})"


__all__ = ["REASONS", "DrawCounters", "Game", "GameResult", "board_position", "row_move"]
