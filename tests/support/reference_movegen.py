"""An independent, deliberately naive reference move generator, written from the rules text.

It shares nothing with ``tammi_rl.rules.movegen`` (no bitboards, no ray tables, no
parameter vector): the board is a dict ``(row, col) -> piece`` and captures are found
by plain recursion that copies the board at every step. It is slow and meant to be
obviously right, so the compiled engine can be checked against it.

Conventions (the same as the engine's public geometry, which the tests check
separately): row 0 is White's back row, col 0 is White's left; White moves towards
higher rows, Black towards lower rows. Pieces are ``'w'``/``'b'`` (men) and
``'W'``/``'B'`` (kings).

A rule set is read from a `Variant` (the rule axes of envs/README.md), so every variant is
covered by the same few lines of rules:

* men step in ``man_moves`` directions and jump in ``man_captures`` directions;
* kings are ``short`` (one step / adjacent jump) or ``flying`` (any distance);
* captured pieces either stay on the board until the chain ends (they block and may
  not be jumped again) or leave at once (``immediate``, Turkish);
* a man reaching the far row in a chain is crowned and goes on as a king
  (``continue``), is crowned and stops (``stop``), or stays a man and is crowned
  only if the move ends there (``at_end``);
* a flying king must land where it can capture again if any landing square allows it;
* capture choice is ``free``, ``maximum`` (most pieces) or ``italian`` (most pieces,
  then by a king, then most kings, then the first king captured earliest);
* men may not capture kings when ``men_capture_kings`` is false (Italian);
* a king may not reverse direction between two jumps when ``king_turn_180`` is false.

A move is identified by (start, end, frozenset(captured squares), promotes): several
routes with the same start, end and captured set are one move.
"""

from __future__ import annotations

from dataclasses import dataclass

WHITE, BLACK = 0, 1

Coord = tuple[int, int]
Board = dict[Coord, str]


@dataclass(frozen=True)
class RefRoute:
    """One way of playing a move: visited squares and captured squares in order."""

    path: tuple[Coord, ...]
    captures: tuple[Coord, ...]
    promotes: bool
    by_king: bool
    kings_taken: tuple[bool, ...]  # per capture, whether the captured piece was a king

    @property
    def key(self) -> tuple:
        return (self.path[0], self.path[-1], frozenset(self.captures), self.promotes)


class Reference:
    """Legal moves of one variant, straight from the rule book."""

    def __init__(self, variant) -> None:
        self.v = variant
        self.n = variant.board_size
        self.orthogonal = variant.geometry == "orthogonal"
        if self.orthogonal:
            self.squares = [(r, c) for r in range(self.n) for c in range(self.n)]
        else:
            # Dark corner on each player's LEFT: White's left corner (0, 0) is dark,
            # i.e. (row + col) even. Italian mirrors it: (0, n-1) dark, (row + col) odd.
            parity = 0 if variant.dark_corner == "left" else 1
            self.squares = [(r, c) for r in range(self.n) for c in range(self.n) if (r + c) % 2 == parity]
        self.square_set = set(self.squares)

    # --- directions ---------------------------------------------------------------
    def all_dirs(self) -> list[Coord]:
        if self.orthogonal:
            return [(1, 0), (-1, 0), (0, 1), (0, -1)]
        return [(1, 1), (1, -1), (-1, 1), (-1, -1)]

    def man_dirs(self, color: int, kinds) -> list[Coord]:
        fwd = 1 if color == WHITE else -1
        out = []
        for dr, dc in self.all_dirs():
            if dr == 0:
                kind = "sideways"
            elif dr == fwd:
                kind = "forward"
            else:
                kind = "backward"
            if kind in kinds:
                out.append((dr, dc))
        return out

    def far_row(self, color: int) -> int:
        return self.n - 1 if color == WHITE else 0

    def on_board(self, sq: Coord) -> bool:
        return sq in self.square_set

    # --- positions ------------------------------------------------------------------
    def start_board(self) -> tuple[Board, int]:
        board: Board = {}
        for r, c in self.squares:
            if r in self.v.men_rows:
                board[(r, c)] = "w"
            if self.n - 1 - r in self.v.men_rows:
                board[(r, c)] = "b"
        return board, (WHITE if self.v.first_player == "white" else BLACK)

    @staticmethod
    def color_of(piece: str) -> int:
        return WHITE if piece.lower() == "w" else BLACK

    # --- captures -------------------------------------------------------------------
    def _jumps(self, board: Board, at: Coord, color: int, king: bool, taken: tuple, last_dir):
        """Single jumps from ``at``: (direction, captured square, [landing squares])."""
        out = []
        dirs = self.all_dirs() if king else self.man_dirs(color, self.v.man_captures)
        for d in dirs:
            if king and last_dir is not None and not self.v.king_turn_180 and d == (-last_dir[0], -last_dir[1]):
                continue
            dr, dc = d
            r, c = at[0] + dr, at[1] + dc
            if king and self.v.king_range == "flying":
                while self.on_board((r, c)) and (r, c) not in board:
                    r, c = r + dr, c + dc
            victim = (r, c)
            if not self.on_board(victim) or victim not in board:
                continue
            piece = board[victim]
            if self.color_of(piece) == color or victim in taken:
                continue  # own piece, or a jumped piece still on the board: it blocks
            if not king and not self.v.men_capture_kings and piece.isupper():
                continue
            landings = []
            r, c = victim[0] + dr, victim[1] + dc
            while self.on_board((r, c)) and (r, c) not in board:
                landings.append((r, c))
                if not (king and self.v.king_range == "flying"):
                    break
                r, c = r + dr, c + dc
            if landings:
                out.append((d, victim, landings))
        return out

    def _chains(self, board, at, color, king, promoted, taken, kinds, path, last_dir, start_king, out):
        jumps = self._jumps(board, at, color, king, taken, last_dir)
        if not jumps:
            if taken:
                promotes = promoted or (not start_king and at[0] == self.far_row(color))
                out.append(RefRoute(tuple(path), tuple(taken), promotes, start_king, tuple(kinds)))
            return
        for d, victim, landings in jumps:
            nb = dict(board)
            if self.v.capture_removal == "immediate":
                del nb[victim]
            options = []
            for land in landings:
                now_king, now_promoted, stop = king, promoted, False
                if not king and land[0] == self.far_row(color):
                    mode = self.v.promotion_in_chain
                    if mode == "continue":
                        now_king, now_promoted = True, True
                    elif mode == "stop":
                        now_promoted, stop = True, True
                    # "at_end": stays a man; crowned only if the move ends here
                can_go_on = (not stop) and bool(self._jumps(nb, land, color, now_king, (*taken, victim), d))
                options.append((land, now_king, now_promoted, stop, can_go_on))
            if king and any(o[4] for o in options):
                # A flying king must land on a square from which it can capture again.
                options = [o for o in options if o[4]]
            for land, now_king, now_promoted, stop, _ in options:
                new_kinds = [*kinds, board[victim].isupper()]
                if stop:
                    out.append(RefRoute(tuple([*path, land]), (*taken, victim), True, start_king, tuple(new_kinds)))
                    continue
                self._chains(
                    nb,
                    land,
                    color,
                    now_king,
                    now_promoted,
                    (*taken, victim),
                    new_kinds,
                    [*path, land],
                    d,
                    start_king,
                    out,
                )

    def capture_routes(self, board: Board, color: int) -> list[RefRoute]:
        routes: list[RefRoute] = []
        for sq, piece in board.items():
            if self.color_of(piece) != color:
                continue
            king = piece.isupper()
            nb = dict(board)
            del nb[sq]  # the moving piece has left its square
            self._chains(nb, sq, color, king, False, (), [], [sq], None, king, routes)
        return self._choose(routes)

    def _choose(self, routes: list[RefRoute]) -> list[RefRoute]:
        choice = self.v.capture_choice
        if not routes or choice == "free":
            return routes
        most = max(len(r.captures) for r in routes)
        routes = [r for r in routes if len(r.captures) == most]
        if choice == "maximum":
            return routes
        # Italian precedence, each step only among the survivors of the previous one.
        if any(r.by_king for r in routes):
            routes = [r for r in routes if r.by_king]
        most_kings = max(sum(r.kings_taken) for r in routes)
        routes = [r for r in routes if sum(r.kings_taken) == most_kings]
        if most_kings:
            earliest = min(r.kings_taken.index(True) for r in routes)
            routes = [r for r in routes if r.kings_taken.index(True) == earliest]
        return routes

    # --- quiet moves ----------------------------------------------------------------
    def quiet_routes(self, board: Board, color: int) -> list[RefRoute]:
        out = []
        for sq, piece in board.items():
            if self.color_of(piece) != color:
                continue
            king = piece.isupper()
            dirs = self.all_dirs() if king else self.man_dirs(color, self.v.man_moves)
            for dr, dc in dirs:
                r, c = sq[0] + dr, sq[1] + dc
                while self.on_board((r, c)) and (r, c) not in board:
                    promotes = (not king) and r == self.far_row(color)
                    out.append(RefRoute((sq, (r, c)), (), promotes, king, ()))
                    if not (king and self.v.king_range == "flying"):
                        break
                    r, c = r + dr, c + dc
        return out

    # --- public ---------------------------------------------------------------------
    def routes(self, board: Board, color: int) -> list[RefRoute]:
        caps = self.capture_routes(board, color)
        return caps if caps else self.quiet_routes(board, color)

    def moves(self, board: Board, color: int) -> dict[tuple, list[RefRoute]]:
        """Legal moves keyed by (start, end, frozenset(captures), promotes) -> routes."""
        out: dict[tuple, list[RefRoute]] = {}
        for route in self.routes(board, color):
            out.setdefault(route.key, []).append(route)
        return out

    def play(self, board: Board, color: int, key: tuple) -> Board:
        start, end, captured, promotes = key
        nb = dict(board)
        piece = nb.pop(start)
        for sq in captured:
            del nb[sq]
        nb[end] = piece.upper() if promotes else piece
        return nb

    def perft(self, board: Board, color: int, depth: int) -> int:
        if depth == 0:
            return 1
        moves = self.moves(board, color)
        if depth == 1:
            return len(moves)
        return sum(self.perft(self.play(board, color, k), 1 - color, depth - 1) for k in moves)


# --- bridge to the engine's public API (used by the tests only) ----------------------
def board_of(rules, pos) -> Board:
    """The engine position ``pos`` as a reference board, via the public square coords."""
    board: Board = {}
    for sq, rc in enumerate(rules.geometry.coords):
        piece = pos.piece_at(sq)
        if piece:
            board[rc] = piece
    return board


def engine_key(rules, move) -> tuple:
    """An engine `Move` as a reference move key."""
    coords = rules.geometry.coords
    return (coords[move.start], coords[move.end], frozenset(coords[s] for s in move.captures), move.promotes)


def describe(rules, key) -> str:
    """A reference move key in the variant's notation, for failure messages."""
    name = lambda rc: rules.square_name(rules.geometry.index_of_coord[rc])  # noqa: E731
    start, end, captured, promotes = key
    caps = ",".join(sorted(name(c) for c in captured))
    sep = "x" if captured else "-"
    return f"{name(start)}{sep}{name(end)}" + (f" [{caps}]" if caps else "") + (" =K" if promotes else "")
