"""The Hub engine: its state between commands and the command loop (`HubEngine.run`).

A search runs on its own (daemon) thread, so ``ping`` is answered and ``stop`` and
``ponder-hit`` are read while it runs. The level's time (``move-time``, or a share of
``time``/``inc``/``moves``) is the search's deadline for every kind of player;
``stop`` is honoured at the next poll (about every 20 ms inside an alpha-beta search;
between network calls for MCTS) and answered with ``done``. ``level infinite`` searches
until ``stop``: a search that ends sooner (alpha-beta at its deepest depth, a depth or
node level) holds its ``done`` until then. ``go ponder`` searches without a clock until
``ponder-hit`` (then the level's time runs from that moment) or ``stop``, and holds its
``done`` likewise until one of them comes. ``quit`` asks the search to stop and returns
at once, without waiting for it (`tammi_rl.cli.hub` then exits the process); the end of
the input stops the search and waits for its ``done``. ``init`` also runs one tiny
search, so loading the compiled code is not charged to the first move's clock.
Every bad line is answered with ``error message="..."`` and the engine reads on; a
refused ``go`` (no position, a finished game) is also answered ``done move=""`` (no move),
so a GUI waiting for ``done`` never blocks. ``pos`` without ``pos=`` (or ``pos start``) is
the start position, as in Scan. Squares: `tammi_rl.hub.notation` (pydraughts' numbering).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TextIO

from tammi_rl import __version__
from tammi_rl.hub.level import INFINITE_S, HubLevelError, Level
from tammi_rl.hub.notation import HubNotation, HubNotationError
from tammi_rl.hub.protocol import HubCommand, HubProtocolError, format_line, parse_line
from tammi_rl.players import HumanPlayer, Player, PlayerSpecError, parse_player_spec
from tammi_rl.players.alphabeta import AlphaBetaPlayer
from tammi_rl.players.analysis import Analysis, SearchLimits, analyse, value_to_men
from tammi_rl.players.defaults import default_player_spec
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.errors import TammiError
from tammi_rl.rules.fen import missing_side
from tammi_rl.rules.game import Game

HUB_VARIANTS = {
    "normal": "international",
    "international": "international",
    "russian": "russian",
    "brazilian": "brazilian",
}
"""Hub variant names (the ``variant`` parameter) and the tammi-rl variant each plays.
Scan's other names (killer, bt, frisian, losing) and pydraughts' (frysk, antidraughts,
breakthrough, english, italian, turkish) are refused with an error naming these."""
DEFAULT_PLAYER = "default"
"""The ``player`` parameter's value meaning: ``--player``, else the variant's default player."""
COMMANDS = ("hub", "set-param", "init", "pos", "level", "go", "stop", "ponder-hit", "new-game", "ping", "quit")
SEARCH_COMMANDS = ("ping", "stop", "ponder-hit", "quit")
"""What is read while a search runs; any other known command first stops the search."""
HOLD_POLL_S = 0.005
"""How often a finished search holding its ``done`` (infinite, ponder) looks for ``ponder-hit``."""


@dataclass(frozen=True)
class _Hold:
    """What a search's ``done`` waits for once the search has ended (see `HubEngine._held`)."""

    infinite: bool
    ponder: bool


class HubEngine:
    """One engine session on a text stream (see the module docstring)."""

    def __init__(self, player_spec: str | None = None, out: TextIO | None = None, variant: str = "normal") -> None:
        self.out = out or sys.stdout
        self.player_spec = player_spec
        self.params = {"variant": variant, "player": DEFAULT_PLAYER}
        self._check_variant(variant)
        self.rules: Rules | None = None
        self.notation: HubNotation | None = None
        self.player: Player | None = None
        self.game: Game | None = None
        self.level = Level()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._ponder_hit: float | None = None
        self._ponder_budget: float | None = None
        self._last_info = ""
        self.quitting = False
        """Set by ``quit``: the search (if any) was asked to stop and is not waited for."""

    # --- output ------------------------------------------------------------------------
    def send(self, command: str, *flags: str, **args: object) -> None:
        """Write one protocol line (thread-safe, flushed)."""
        self._write(format_line(command, *flags, **args))

    def _write(self, line: str) -> None:
        with self._lock:
            self.out.write(line + "\n")
            self.out.flush()

    def error(self, message: str) -> None:
        self.send("error", message=message)

    # --- the loop ----------------------------------------------------------------------
    def run(self, lines: Iterable[str]) -> int:
        """Read commands until ``quit`` or the end of input; returns the exit status (0).
        After ``quit`` a running search is left to stop by itself (see `searching`)."""
        for line in lines:
            if not self.handle(line):
                break
        if not self.quitting:
            self._finish_search(stop=True)
        return 0

    def searching(self) -> bool:
        """Whether a search thread is still running (after ``quit``: one that was not waited for)."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    def flush_and_lock(self) -> None:
        """Flush the output and hold its lock for good: no line is half-written when the
        process exits under a search thread that is still running."""
        self._lock.acquire()
        self.out.flush()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the running search (if any) has answered ``done``, at most ``timeout``
        seconds; False if it is still running then."""
        thread = self._thread
        if thread is None:
            return True
        thread.join(timeout)
        if thread.is_alive():
            return False
        self._thread = None
        return True

    def handle(self, line: str) -> bool:
        """Answer one line; False after ``quit``."""
        try:
            command = parse_line(line)
        except HubProtocolError as exc:
            self.error(str(exc))
            return True
        if command is None:
            return True
        known = command.name in COMMANDS
        handler = getattr(self, "_cmd_" + command.name.replace("-", "_")) if known else None
        if handler is None:
            self.error(f"unknown command {command.name!r}; commands: {' '.join(COMMANDS)}")
            return True
        if command.name not in SEARCH_COMMANDS:
            self._finish_search(stop=True)
        try:
            return handler(command) is not False
        except TammiError as exc:
            self.error(str(exc))
            return True

    # --- commands ----------------------------------------------------------------------
    def _cmd_hub(self, command: HubCommand) -> None:
        self.send("id", name="tammi-rl", version=__version__, author="tammi-rl authors", country="-")
        variants = " ".join(HUB_VARIANTS)
        self.send("param", name="variant", value=self.params["variant"], type="enum", values=variants)
        self.send("param", name="player", value=self.params["player"], type="string")
        self.send("wait")

    def _cmd_set_param(self, command: HubCommand) -> None:
        name, value = command.get("name"), command.get("value")
        if name is None or value is None:
            raise HubProtocolError("set-param needs name=... and value=...")
        if name == "variant":
            self._check_variant(value)
        elif name == "player":
            value = value.strip() or DEFAULT_PLAYER
        else:
            raise HubProtocolError(f"unknown parameter {name!r}; parameters: variant, player")
        if self.params[name] != value:
            self.params[name] = value
            self.rules = self.notation = self.player = self.game = None  # rebuilt by the next init or pos

    def _cmd_init(self, command: HubCommand) -> None:
        try:
            self._warm_up(self._ensure_player())
        except TammiError as exc:  # say why, and stay ready for a set-param that fixes it
            self.error(str(exc))
        self.send("ready")

    def _cmd_pos(self, command: HubCommand) -> None:
        self.game = None
        text = command.get("pos")
        if text is not None and not text:
            raise HubProtocolError("pos needs pos=<side to move and squares>, e.g. pos pos=Wbbbb...eeee...wwww")
        self._ensure_player()
        assert self.rules is not None and self.notation is not None
        start = self.rules.start_position() if text is None else self.notation.parse_position(text)
        reason = missing_side(start)  # a side without pieces is a finished game, not a set-up
        if reason is not None:
            raise HubNotationError(f"position {text!r}: {reason} (each side needs at least one piece)")
        game = Game(self.rules, start=start)  # no pos= (or "pos start"): the start position
        for i, move_text in enumerate((command.get("moves") or "").split()):
            if game.is_over:
                raise HubNotationError(f"pos: move {i + 1} ({move_text}) comes after the end of the game")
            try:
                game.play(self.notation.parse_move(game.position, move_text))
            except HubNotationError as exc:
                raise HubNotationError(f"pos: move {i + 1} of moves: {exc}") from None
        self.game = game

    def _cmd_level(self, command: HubCommand) -> None:
        try:
            self.level = Level.parse(command)
        except HubLevelError:
            self.level = Level()
            raise

    def _cmd_go(self, command: HubCommand) -> None:
        game = self.game
        if game is None or game.is_over:  # the GUI waits for done: answer it, without a move
            if game is None:
                self.error("go: no position (send pos first; the last one was refused or reset)")
            else:
                self.error(f"go: the game in this position is over ({game.result}); nothing to search")
            self.send("done", move="")
            return
        player = self._ensure_player()
        ponder = "ponder" in command.args
        if not ponder and self.level.on_the_clock() and len(moves := game.legal_moves()) == 1:
            # A forced move on the clock: answer at once and keep the time for real choices
            # (no info: nothing was searched; `level depth=`, `infinite` or ponder do search it).
            assert self.notation is not None  # set with the player
            self.send("done", move=self.notation.format_move(moves[0]))
            return
        limits = self.level.limits()
        self._stop.clear()
        self._ponder_hit, self._ponder_budget = None, None
        self._last_info = ""
        if ponder:  # no clock until ponder-hit: search on, then the level's time from the hit
            self._ponder_budget = limits.time_s
            limits = SearchLimits(time_s=INFINITE_S, depth=limits.depth, nodes=limits.nodes)
        hold = _Hold(infinite=self.level.infinite, ponder=ponder)
        game = game.copy()
        self._thread = threading.Thread(target=self._search, args=(player, game, limits, hold), daemon=True)
        self._thread.start()

    def _cmd_stop(self, command: HubCommand) -> None:
        self._finish_search(stop=True)

    def _cmd_ponder_hit(self, command: HubCommand) -> None:
        if self._thread is not None and self._thread.is_alive():
            self._ponder_hit = time.perf_counter()

    def _cmd_new_game(self, command: HubCommand) -> None:
        self.game = None
        if self.player is not None:
            self.player.new_game()

    def _cmd_ping(self, command: HubCommand) -> None:
        self.send("pong")

    def _cmd_quit(self, command: HubCommand) -> bool:
        self._stop.set()  # the search ends at its next poll; nobody waits for it
        self.quitting = True
        return False

    # --- state -------------------------------------------------------------------------
    @staticmethod
    def _check_variant(name: str) -> None:
        if name not in HUB_VARIANTS:
            raise HubProtocolError(
                f"variant {name!r} is not played by tammi-rl over Hub; variants: {', '.join(HUB_VARIANTS)}"
            )

    def _ensure_player(self) -> Player:
        """The rules, notation and player of the current parameters (built on first need)."""
        if self.player is not None:
            return self.player
        variant = HUB_VARIANTS[self.params["variant"]]
        rules = Rules.for_variant(variant)
        spec = self.params["player"]
        if spec == DEFAULT_PLAYER:
            spec = self.player_spec or default_player_spec(variant)
        try:
            player = parse_player_spec(spec, rules)
        except PlayerSpecError as exc:
            raise HubProtocolError(f"player: {exc}") from None
        if isinstance(player, HumanPlayer):
            raise HubProtocolError("player: a human player cannot play through Hub (the GUI has the human)")
        self.rules, self.notation, self.player = rules, HubNotation(rules), player
        return player

    def _warm_up(self, player: Player) -> None:
        """One tiny search, so the compiled code (alpha-beta) or the network (MCTS) is loaded
        before the first move's clock runs; then the player forgets it."""
        mcts = sys.modules.get("tammi_rl.players.mcts")
        if not (isinstance(player, AlphaBetaPlayer) or (mcts is not None and isinstance(player, mcts.MCTSPlayer))):
            return
        assert self.rules is not None
        analyse(player, Game(self.rules), SearchLimits(depth=1, nodes=1))
        player.new_game()

    # --- searching ---------------------------------------------------------------------
    def _should_stop(self) -> bool:
        if self._stop.is_set():
            return True
        if self._ponder_hit is not None and self._ponder_budget is not None:
            return time.perf_counter() - self._ponder_hit >= self._ponder_budget
        return False

    def _finish_search(self, stop: bool) -> None:
        """Wait for the running search to send ``done`` (asking it to stop first when ``stop``)."""
        thread = self._thread
        if thread is None:
            return
        if stop:
            self._stop.set()
        thread.join()
        self._thread = None

    def _held(self, hold: _Hold) -> bool:
        """Whether ``done`` must still wait: under ``level infinite`` until ``stop``, while
        pondering until ``ponder-hit`` or ``stop``."""
        if self._stop.is_set():
            return False
        return hold.infinite or (hold.ponder and self._ponder_hit is None)

    def _search(self, player: Player, game: Game, limits: SearchLimits, hold: _Hold) -> None:
        """Thread body: analyse, report ``info``, answer ``done`` (always, even after an error)."""
        assert self.notation is not None
        notation = self.notation
        try:
            analysis = analyse(player, game, limits, should_stop=self._should_stop, on_progress=self._info)
        except Exception as exc:  # the GUI must still get its move
            self.error(f"search failed ({type(exc).__name__}: {exc}); playing the first legal move")
            self.send("done", move=notation.format_move(game.legal_moves()[0]))
            return
        self._info(analysis)
        while self._held(hold):
            self._stop.wait(HOLD_POLL_S)
        ponder = notation.format_move(analysis.pv[1]) if len(analysis.pv) > 1 else None
        self.send("done", move=notation.format_move(analysis.move), ponder=ponder)

    def _info(self, analysis: Analysis) -> None:
        assert self.notation is not None
        if analysis.mate_in is not None:
            score = (100.0 - abs(analysis.mate_in) / 100.0) * (1 if analysis.mate_in > 0 else -1)
        elif analysis.score is not None:
            score = analysis.score
        else:
            score = value_to_men(analysis.value)
        seconds = max(analysis.elapsed_s, 1e-6)
        wdl = "/".join(f"{p:.3f}" for p in analysis.wdl) if analysis.wdl is not None else None
        line = format_line(
            "info",
            depth=analysis.depth,
            score=f"{score:.2f}",
            nodes=analysis.nodes,
            time=f"{analysis.elapsed_s:.3f}",
            nps=f"{analysis.nodes / seconds / 1e6:.3f}",
            wdl=wdl,
            pv=" ".join(self.notation.format_move(m) for m in analysis.pv),
        )
        if line.split(" time=")[0] != self._last_info.split(" time=")[0]:  # the final result repeats the last depth
            self._write(line)
        self._last_info = line
