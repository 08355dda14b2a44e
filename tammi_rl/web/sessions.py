"""Game sessions of the web page: one game against one agent each, in a bounded store.

    store = SessionStore(max_sessions=16)
    session = store.create(GameSettings("russian", "alphabeta:depth=4", human=WHITE))
    session.play_hop(from_sq, to_sq)        # the human's hops, one by one
    session.agent_move(limits)              # the agent answers (with its analysis)

A session owns its `Game` and its player; a new game in the same session keeps the
player when the variant and the spec stay the same (so a shipped network is loaded
once). The store keeps the most recently used sessions only: past ``max_sessions`` the
least recently used one is dropped, so a page left open for many games, or many pages,
never grows the server's memory without bound.

Every bad request raises `RequestError` with a message that names what was wrong; the
routes turn it into an HTTP 400 (or 404 for an unknown session). A player spec may not
ask for more memory than `PAGE_OPTION_LIMITS` allows (MCTS simulations, alpha-beta
transposition table bits), so the bounded store bounds memory too.
"""

from __future__ import annotations

import datetime
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace

from tammi_rl.players import AlphaBetaPlayer, HumanPlayer, Player, parse_player_spec
from tammi_rl.players.analysis import Analysis, SearchLimits, analyse
from tammi_rl.players.spec import PlayerSpec
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.errors import TammiError
from tammi_rl.rules.game import Game
from tammi_rl.rules.pdn import game_to_pdn
from tammi_rl.rules.position import BLACK, COLOR_NAMES, WHITE

MAX_PLIES_LIMIT = 10_000
"""Largest ``max_plies`` a request may ask for."""

PAGE_OPTION_LIMITS: dict[str, dict[str, int]] = {
    "mcts": {"sims": 10_000, "threads": 64},
    "alphabeta": {"tt_bits": 22},
    "ab": {"tt_bits": 22},
}
"""The most a player spec sent by the page may ask for, per kind and option.

A player allocates for its budget when it is made: MCTS ``sims`` sizes the search tree
(about 2.8 KiB a simulation: 10 000 are ~28 MiB), alpha-beta ``tt_bits`` the
transposition table (16 bytes an entry: 22 bits are 64 MiB, the default 20 is 16 MiB).
The store keeps up to ``max_sessions`` players, so these caps bound the server's memory;
the command line (`tammi-rl play`, `eval`) keeps the players' own, larger limits."""

PROGRAM_KINDS = frozenset({"hub"})
"""Player kinds that start a program (``hub``: an outside engine). A request may name one
only as the server's own ``--player``: the page never starts a command it was sent."""


class RequestError(TammiError):
    """A request the page sent cannot be carried out; ``status`` is the HTTP status to answer."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class GameSettings:
    """What a new game is: variant, the agent's spec, the human's colour, start and length cap."""

    variant: str
    player: str
    human: int = WHITE
    fen: str | None = None
    max_plies: int | None = None


@dataclass(frozen=True)
class AgentSearch:
    """One search of the agent's: what it found, for which side, after how many plies."""

    analysis: Analysis
    side: int
    ply: int
    hint: bool
    """True for a search the human asked for on their own turn (nothing was played)."""


class GameSession:
    """One game between the human at the page and an agent."""

    rules: Rules
    game: Game

    def __init__(self, sid: str, settings: GameSettings, player: Player | None = None) -> None:
        self.id = sid
        self.lock = threading.Lock()
        self.settings = settings
        self.player_spec = ""
        self.player: Player | None = None
        self.last_search: AgentSearch | None = None
        self.games_played = 0
        self._start(settings, player)

    # --- setting up -----------------------------------------------------------------
    def _start(self, settings: GameSettings, player: Player | None = None) -> None:
        try:
            rules = Rules.for_variant(settings.variant)
        except TammiError as exc:
            raise RequestError(f"unknown variant {settings.variant!r}: {exc}") from None
        if settings.max_plies is not None and not 1 <= settings.max_plies <= MAX_PLIES_LIMIT:
            raise RequestError(f"max_plies must be between 1 and {MAX_PLIES_LIMIT}, got {settings.max_plies}")
        start = None
        if settings.fen:
            try:
                start = rules.parse_fen(settings.fen)
            except TammiError as exc:
                raise RequestError(f"bad FEN {settings.fen!r}: {exc}") from None
        keep = (
            self.player is not None
            and self.player_spec == settings.player
            and self.settings.variant == settings.variant
            and self.rules.variant == rules.variant
        )
        if player is None:
            player = self.player if keep else _make_player(settings.player, rules)
        assert player is not None
        try:
            game = Game(rules, start=start, max_plies=settings.max_plies)
        except TammiError as exc:
            raise RequestError(f"cannot start a game from {settings.fen!r}: {exc}") from None
        self.rules = rules
        self.game = game
        self.settings = settings
        self.player_spec = settings.player
        self.player = player
        self.player.new_game()
        self.last_search = None
        self.games_played += 1

    def new_game(self, settings: GameSettings) -> None:
        """Start another game in this session (the player is kept when nothing about it changed)."""
        self._start(settings)

    def set_position(self, fen: str) -> None:
        """A new game from ``fen``, everything else as now."""
        self._start(replace(self.settings, fen=fen))

    # --- playing ------------------------------------------------------------------------
    @property
    def human(self) -> int:
        return self.settings.human

    @property
    def turn(self) -> str:
        """Whose turn it is: ``human``, ``agent`` or ``over``."""
        if self.game.is_over:
            return "over"
        return "human" if self.game.side == self.human else "agent"

    def play_hop(self, from_sq: int, to_sq: int) -> None:
        """The human moves the piece on ``from_sq`` to ``to_sq`` (one hop of their turn)."""
        self._require("human", "play a hop")
        g = self.rules.geometry
        for name, sq in (("from", from_sq), ("to", to_sq)):
            if not 0 <= sq < g.n_squares:
                raise RequestError(f"square {name}={sq} is not a square of the {self.rules.variant.name} board")
        codec, side = self.game.codec, self.game.side
        legal = self.game.legal_hops()
        for action in legal:
            if codec.action_from[side, action] == from_sq and codec.action_to[side, action] == to_sq:
                self.game.play_hop(action)
                return
        hops = ", ".join(f"{g.names[codec.action_from[side, a]]}-{g.names[codec.action_to[side, a]]}" for a in legal)
        raise RequestError(f"illegal hop {g.names[from_sq]}-{g.names[to_sq]}; legal hops now: {hops}")

    def agent_move(self, think_seconds: float | None) -> None:
        """The agent searches the position (at most ``think_seconds``) and plays its move."""
        self._require("agent", "let the agent move")
        assert self.player is not None
        game = self.game
        analysis = analyse(self.player, game, capped_limits(self.player, think_seconds))
        side, ply = game.side, len(game.moves)
        game.play(analysis.move)
        self.last_search = AgentSearch(analysis, side, ply, hint=False)

    def hint(self, think_seconds: float | None) -> None:
        """The agent searches the human's position (a hint); nothing is played."""
        self._require("human", "ask for a hint")
        if self.game.chain_path():
            raise RequestError("finish the capture in progress before asking for a hint")
        assert self.player is not None
        analysis = analyse(self.player, self.game, capped_limits(self.player, think_seconds))
        self.last_search = AgentSearch(analysis, self.game.side, len(self.game.moves), hint=True)

    def undo(self) -> None:
        """Take back the human's last move (and the agent's answer to it); mid-capture, take
        back the hops of this turn."""
        game = self.game
        moves = list(game.moves)
        if not game.chain_path():
            if not moves:
                raise RequestError("nothing to undo: no move has been played in this game")
            moves.pop()
            while moves and game.positions[len(moves)].side != self.human:
                moves.pop()
        replay = Game(self.rules, start=game.positions[0], max_plies=game.max_plies)
        for move in moves:
            replay.play(move)
        self.game = replay
        self.last_search = None

    def _require(self, turn: str, what: str) -> None:
        now = self.turn
        if now == turn:
            return
        if now == "over":
            raise RequestError(f"cannot {what}: the game is over ({self.game.result})")
        raise RequestError(f"cannot {what}: it is the {now}'s turn ({COLOR_NAMES[self.game.side]} to move)")

    # --- the record ---------------------------------------------------------------------
    def pdn(self) -> str:
        """The game so far as PDN (result ``*`` while it goes on)."""
        game = self.game
        agent = self.player.name if self.player is not None else self.player_spec
        names = {self.human: "human", 1 - self.human: agent}
        result = game.result.pdn if game.result is not None else "*"
        tags = {
            "Event": "tammi-rl serve",
            "Date": datetime.date.today().strftime("%Y.%m.%d"),
            "White": names[WHITE],
            "Black": names[BLACK],
        }
        return game_to_pdn(self.rules, game.moves, start=game.positions[0], tags=tags, result=result)


def capped_limits(player: Player, think_seconds: float | None) -> SearchLimits | None:
    """The player's own limits (depth, nodes, simulations) with the time capped at
    ``think_seconds``; None (the player's own limits alone) when there is no cap.

    `analyse` takes limits given to it instead of the player's, so the spec's depth or
    simulations are carried over here: ``alphabeta:depth=2`` still searches depth 2.
    """
    if think_seconds is None:
        return None
    if isinstance(player, AlphaBetaPlayer):
        cfg = player.config
        time_s = min(cfg.time, think_seconds) if cfg.time else think_seconds
        return SearchLimits(time_s=time_s, depth=cfg.depth, nodes=cfg.nodes)
    simulations = getattr(player, "simulations", None)  # an MCTS player's budget per searched hop
    return SearchLimits(time_s=think_seconds, nodes=simulations if isinstance(simulations, int) else None)


def check_page_limits(spec: str) -> None:
    """`RequestError` when ``spec`` asks for more than `PAGE_OPTION_LIMITS` allows.

    Only numbers are compared here; a malformed spec or value is left to the player's own
    parser, whose message names it.
    """
    try:
        parsed = PlayerSpec.parse(spec)
    except TammiError:
        return
    for key, cap in PAGE_OPTION_LIMITS.get(parsed.kind, {}).items():
        if key not in parsed.options:
            continue
        try:
            value = int(parsed.options[key])
        except ValueError:
            continue
        if value > cap:
            raise RequestError(
                f"player spec {spec!r}: {key} must be <= {cap} on this page, got {value} "
                f"(the server keeps several games in memory; the command line allows more)"
            )


def starts_a_program(spec: str) -> bool:
    """Whether ``spec`` is of a kind that starts a program (`PROGRAM_KINDS`)."""
    try:
        return PlayerSpec.parse(spec).kind in PROGRAM_KINDS
    except TammiError:
        return False


def _make_player(spec: str, rules: Rules) -> Player:
    check_page_limits(spec)
    try:
        player = parse_player_spec(spec, rules)
    except TammiError as exc:
        message = str(exc)
        raise RequestError(message if repr(spec) in message else f"player spec {spec!r}: {message}") from None
    if isinstance(player, HumanPlayer):
        raise RequestError(
            f"player spec {spec!r}: the page's opponent must be an engine (random, alphabeta:..., mcts:...); "
            "you are the human"
        )
    return player


class SessionStore:
    """The live sessions, least recently used first; at most ``max_sessions`` are kept."""

    def __init__(self, max_sessions: int = 16, make_id: Callable[[], str] | None = None) -> None:
        if max_sessions < 1:
            raise ValueError(f"max_sessions must be >= 1, got {max_sessions}")
        self.max_sessions = max_sessions
        self._make_id = make_id or (lambda: secrets.token_urlsafe(9))
        self._sessions: OrderedDict[str, GameSession] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._sessions)

    def create(self, settings: GameSettings) -> GameSession:
        """A new session with a new game (`RequestError` if the settings are bad)."""
        session = GameSession(self._make_id(), settings)
        with self._lock:
            self._sessions[session.id] = session
            while len(self._sessions) > self.max_sessions:
                self._sessions.popitem(last=False)
        return session

    def get(self, sid: str) -> GameSession:
        """The session ``sid`` (now the most recently used); `RequestError` 404 if unknown or dropped."""
        with self._lock:
            session = self._sessions.get(sid)
            if session is None:
                raise RequestError(
                    f"unknown game {sid!r}: it ended or was dropped (the server keeps the "
                    f"{self.max_sessions} most recent games); start a new game",
                    status=404,
                )
            self._sessions.move_to_end(sid)
            return session


__all__ = [
    "PAGE_OPTION_LIMITS",
    "AgentSearch",
    "GameSession",
    "GameSettings",
    "RequestError",
    "SessionStore",
    "check_page_limits",
    "starts_a_program",
]
