"""Outside engines as players: any Hub-protocol engine (Scan, ``tammi-rl hub``, ...) run as
a subprocess, so a match, an evaluation or the web page can pit an agent against it.

    player = parse_player_spec('hub:cmd="scan hub",time=0.1,cwd=/opt/scan', rules)
    move = player.choose(game)      # pos, level, go think ... done move=...
    player.close()                  # quit, then terminate or kill (also when collected, and at exit)

Spec: ``hub:cmd=COMMAND[,time=T,depth=D,nodes=N,name=NAME,variant=HUBNAME,cwd=DIR,
startup=S,timeout=S,param:NAME=VALUE...]``. ``cmd`` is split as a shell would split it
(`shlex`; no shell runs it); quote it in the spec when it holds commas or spaces. Each
move is asked for with ``level move-time=T`` (default 1 s; ``depth``/``nodes`` add or,
without ``time``, replace it). ``startup`` bounds the handshake (default 60 s),
``timeout`` one move (default 10 s + 4 x the move time, or 300 s without one).

Handshake: ``hub`` (read to ``wait``), ``set-param name=variant value=...`` when the
engine lists a ``variant`` parameter or the variant is not Hub's default (``normal``),
``set-param`` for every ``param:NAME=VALUE``, then ``init`` (read to ``ready``); an
``error`` line before ``ready`` refuses the engine. A move: ``pos pos=... moves="..."``
(the position after the last irreversible move, then the moves since, so the engine sees
repetitions), the ``level`` line, ``go think``, and lines read until ``done move=...``.
The move is read against the game's legal moves (`tammi_rl.hub.notation`: positions in
the standard order, moves as pydraughts numbers them: from a1 = 1 on Russian and
Brazilian boards, Scan's 1-50 on International). ``error`` lines are logged as warnings
and named in any failure. An engine that exits, never answers or answers an illegal
move raises `HubEngineError` naming the command, the position and its last lines.

Variants: International (Hub name ``normal``), Russian and Brazilian; English, Italian
and Turkish have no Hub numbering to rely on and are refused.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import shlex
import subprocess
import threading
import time
import weakref
from collections import deque
from typing import IO

from tammi_rl.hub.notation import HubNotation, HubNotationError
from tammi_rl.hub.protocol import HubCommand, HubProtocolError, format_line, parse_line
from tammi_rl.players.spec import PlayerSpecError, float_option, int_option, reject_unknown
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.errors import TammiError
from tammi_rl.rules.game import Game
from tammi_rl.rules.position import Move, Position

logger = logging.getLogger(__name__)

HUB_VARIANT_NAMES = {"international": "normal", "russian": "russian", "brazilian": "brazilian"}
"""The Hub ``variant`` value of each variant a hub player can play (Scan's and pydraughts' names)."""
DEFAULT_MOVE_TIME = 1.0
"""Seconds per move when the spec gives no ``time``, ``depth`` or ``nodes``."""
STARTUP_S = 60.0
"""Default seconds for the handshake (``hub`` ... ``wait``, ``init`` ... ``ready``)."""
NO_TIME_TIMEOUT_S = 300.0
"""Default seconds one move may take under a depth or node level (no move time)."""
QUIT_WAIT_S = 2.0
"""Seconds `close` waits after ``quit``, then after terminating, before it kills."""
RECENT_LINES = 12
"""How many of the engine's last lines an error quotes."""
OPTIONS = {"cmd", "time", "depth", "nodes", "name", "variant", "cwd", "startup", "timeout"}


class HubEngineError(TammiError):
    """An outside Hub engine failed during a game: it exited, did not answer or gave a bad move."""


class _Timeout(Exception):
    pass


class _EngineProcess:
    """The engine's process and its output, read line by line on background threads."""

    def __init__(self, argv: list[str], cwd: str | None, label: str) -> None:
        self.label = label
        try:
            self.popen = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
                bufsize=1,
                cwd=cwd,
                start_new_session=True,  # Ctrl-C at the terminal reaches us, and we quit the engine
            )
        except (OSError, ValueError) as exc:
            where = f" in {cwd}" if cwd else ""
            raise PlayerSpecError(f"cannot start hub engine {label!r}{where}: {exc}") from None
        self.lines: queue.Queue[str | None] = queue.Queue()
        self._recent: deque[str] = deque(maxlen=RECENT_LINES)
        self._recent_lock = threading.Lock()
        self._eof = False
        self._closed = False
        assert self.popen.stdout is not None and self.popen.stderr is not None
        self._readers = [
            threading.Thread(target=self._read, args=(self.popen.stdout, True), daemon=True),
            threading.Thread(target=self._read, args=(self.popen.stderr, False), daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read(self, stream: IO[str], protocol: bool) -> None:
        try:
            for raw in stream:
                line = raw.rstrip("\r\n")
                with self._recent_lock:
                    self._recent.append(line if protocol else f"(stderr) {line}")
                if protocol:
                    self.lines.put(line)
        except (OSError, ValueError):  # the pipe was closed under us
            pass
        finally:
            if protocol:
                self.lines.put(None)

    def recent(self) -> str:
        """The engine's last lines (stdout and stderr), for error messages."""
        if self.popen.poll() is not None:  # it ended: its last words are read once the pipes close
            for reader in self._readers:
                reader.join(timeout=1.0)
        with self._recent_lock:
            lines = list(self._recent)
        return "; its last lines: " + " | ".join(lines) if lines else "; it printed nothing"

    def alive(self) -> bool:
        return self.popen.poll() is None

    def send(self, line: str) -> None:
        """Write one line; `HubEngineError` when the engine is gone."""
        stdin = self.popen.stdin
        assert stdin is not None
        try:
            stdin.write(line + "\n")
            stdin.flush()
        except (OSError, ValueError):
            raise HubEngineError(f"hub engine {self.label!r} {self.exit_text()}{self.recent()}") from None

    def read(self, deadline: float) -> str | None:
        """The next line the engine prints (None once it has closed its output); `_Timeout`
        past ``deadline`` (a `time.monotonic` time)."""
        if self._eof:
            return None
        remaining = deadline - time.monotonic()
        try:
            line = self.lines.get(timeout=max(remaining, 0.0)) if remaining > 0 else self.lines.get_nowait()
        except queue.Empty:
            raise _Timeout from None
        if line is None:
            self._eof = True
        return line

    def exit_text(self) -> str:
        """How the process ended, or that it closed its output while still running."""
        try:
            code = self.popen.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return "closed its output"
        return f"exited with status {code}" if code >= 0 else f"was killed by signal {-code}"

    def close(self) -> None:
        """``quit``, then terminate, then kill; the process is always waited for (no zombie)."""
        if self._closed:
            return
        self._closed = True
        stdin = self.popen.stdin
        assert stdin is not None
        with contextlib.suppress(OSError, ValueError):  # a pipe the engine already closed
            if self.popen.poll() is None:
                stdin.write("quit\n")
                stdin.flush()
        with contextlib.suppress(OSError, ValueError):
            stdin.close()
        for stop in (None, self.popen.terminate, self.popen.kill):
            if stop is not None:
                with contextlib.suppress(OSError):  # it ended meanwhile
                    stop()
            try:
                self.popen.wait(timeout=QUIT_WAIT_S)
                break
            except subprocess.TimeoutExpired:
                continue
        for reader, stream in zip(self._readers, (self.popen.stdout, self.popen.stderr), strict=True):
            reader.join(timeout=1.0)
            if stream is not None and not reader.is_alive():  # else a child of the engine holds it open
                with contextlib.suppress(OSError, ValueError):
                    stream.close()


class HubPlayer:
    """A Hub-protocol engine in a subprocess, asked for every move (see the module docstring)."""

    def __init__(
        self,
        rules: Rules,
        command: str,
        *,
        move_time: float | None = DEFAULT_MOVE_TIME,
        depth: int | None = None,
        nodes: int | None = None,
        name: str | None = None,
        variant: str | None = None,
        params: dict[str, str] | None = None,
        cwd: str | None = None,
        startup_s: float = STARTUP_S,
        timeout_s: float | None = None,
    ) -> None:
        hub_variant = variant or hub_variant_name(rules)  # refuses a variant without Hub numbering
        if variant is not None:
            hub_variant_name(rules)
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise PlayerSpecError(f"hub engine command {command!r}: {exc}") from None
        if not argv:
            raise PlayerSpecError('hub engine command is empty; write e.g. cmd="scan hub"')
        self.rules = rules
        self.command = command
        self.notation = HubNotation(rules)
        self.move_time, self.depth, self.nodes = move_time, depth, nodes
        self.timeout_s = timeout_s or (10.0 + 4.0 * move_time if move_time else NO_TIME_TIMEOUT_S)
        self.errors: list[str] = []
        """Every ``error`` message the engine sent (also logged as warnings)."""
        self.last_info: HubCommand | None = None
        """The engine's last ``info`` line."""
        self.engine_id: dict[str, str] = {}
        self.engine_params: dict[str, dict[str, str]] = {}
        self._lock = threading.Lock()
        self._failed: str | None = None
        self._process = _EngineProcess(argv, cwd, command)
        self._finalizer = weakref.finalize(self, self._process.close)  # at collection and at exit
        try:
            self._handshake(hub_variant, variant is not None, params or {}, startup_s)
        except BaseException:
            self.close()
            raise
        self.name = name or f"{self.engine_id.get('name') or os.path.basename(argv[0])}({self.level_text()})"

    # --- the level ------------------------------------------------------------------------
    def level_text(self) -> str:
        """``time=0.1``, ``depth=4``, ... (the limits each move is asked with)."""
        parts = [f"time={self.move_time:g}" if self.move_time else "", f"depth={self.depth}" if self.depth else ""]
        parts.append(f"nodes={self.nodes}" if self.nodes else "")
        return ",".join(p for p in parts if p)

    def level_line(self) -> str:
        move_time = f"{self.move_time:g}" if self.move_time else None
        return format_line("level", move_time=move_time, depth=self.depth, nodes=self.nodes)

    # --- talking ----------------------------------------------------------------------------
    def _handshake(self, variant: str, insist: bool, params: dict[str, str], startup_s: float) -> None:
        deadline = time.monotonic() + startup_s
        errors: list[str] = []
        self._process.send("hub")
        for command in self._read_until("wait", deadline, "hub", errors, startup_s):
            if command.name == "id":
                self.engine_id = dict(command.args)
            elif command.name == "param" and command.get("name"):
                self.engine_params[command.args["name"]] = dict(command.args)
        listed = self.engine_params.get("variant")
        if listed is not None and listed.get("values") and variant not in listed["values"].split() and not insist:
            raise PlayerSpecError(
                f"hub engine {self.command!r} plays the variants {listed['values']}, not {variant!r} "
                f"({self.rules.variant.name}); give variant=NAME if it calls {self.rules.variant.name} otherwise"
            )
        if listed is not None or insist or variant != "normal":
            self._process.send(format_line("set-param", name="variant", value=variant))
        for key, value in params.items():
            self._process.send(format_line("set-param", name=key, value=value))
        self._process.send("init")
        list(self._read_until("ready", deadline, "init", errors, startup_s))
        if errors:
            raise PlayerSpecError(f"hub engine {self.command!r} refused the set-up: {'; '.join(errors)}")

    def _read_until(
        self, answer: str, deadline: float, asked: str, errors: list[str], seconds: float
    ) -> list[HubCommand]:
        """The commands the engine prints up to ``answer`` (the answer itself last) by
        ``deadline``, ``seconds`` after asking; its ``error`` messages go to ``errors``;
        lines that are not protocol lines are skipped."""
        commands: list[HubCommand] = []
        while True:
            try:
                line = self._process.read(deadline)
            except _Timeout:
                raise self._fail(f"did not answer {asked!r} with {answer!r} within {seconds:g} s") from None
            if line is None:
                raise self._fail(f"{self._process.exit_text()} before answering {asked!r} with {answer!r}")
            try:
                command = parse_line(line)
            except HubProtocolError:
                continue
            if command is None:
                continue
            if command.name == "error":
                message = command.get("message") or line
                errors.append(message)
                self.errors.append(message)
                logger.warning("hub engine %r: %s", self.command, message)
            commands.append(command)
            if command.name == answer:
                return commands

    def _fail(self, what: str) -> HubEngineError:
        """The error for an engine that stopped answering; it is closed and not asked again."""
        message = f"hub engine {self.command!r} {what}{self._process.recent()}"
        self._failed = message
        self._process.close()
        return HubEngineError(message)

    def _check_going(self) -> None:
        if self._failed is not None:
            raise HubEngineError(f"{self.name} failed earlier and is closed: {self._failed}")
        if not self._process.alive():
            raise self._fail(self._process.exit_text())

    # --- the player ---------------------------------------------------------------------------
    def choose(self, game: Game) -> Move:
        """The engine's move in ``game`` (a legal one, or `HubEngineError`)."""
        if game.is_over:
            raise ValueError(f"the game is over ({game.result}); nothing to choose")
        if game.chain_path():
            raise ValueError(f"{self.name} chooses whole moves only; it cannot continue a capture chain")
        start, moves = _since_irreversible(game)
        pos = format_line(
            "pos",
            pos=self.notation.format_position(start),
            moves=" ".join(self.notation.format_move(m) for m in moves) or None,
        )
        with self._lock:
            self._check_going()
            errors: list[str] = []
            for line in (pos, self.level_line(), "go think"):
                self._process.send(line)
            deadline = time.monotonic() + self.timeout_s
            asked = f"go think (after {self.level_line()})"
            answer = self._read_until("done", deadline, asked, errors, self.timeout_s)
            for command in answer:
                if command.name == "info":
                    self.last_info = command
        text = (answer[-1].get("move") or "").strip()
        where = f"{self.notation.format_position(game.position)} (FEN {self.rules.fen(game.position)})"
        said = f" (it said: {'; '.join(errors)})" if errors else ""
        if not text:
            raise HubEngineError(f"hub engine {self.name} ({self.command!r}) gave no move in {where}{said}")
        try:
            return self.notation.parse_move(game.position, text)
        except HubNotationError as exc:
            raise HubEngineError(
                f"hub engine {self.name} ({self.command!r}) answered {text!r} in {where}: {exc}{said}"
            ) from None

    def new_game(self, seed: int | None = None) -> None:
        """Tell the engine a new game starts (``new-game``); the seed cannot be passed on."""
        with self._lock:
            self._check_going()
            self._process.send("new-game")

    def close(self) -> None:
        """Quit the engine (``quit``, then terminate, then kill) and wait for it."""
        self._finalizer()

    def __enter__(self) -> HubPlayer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def pid(self) -> int:
        """The engine's process id."""
        return self._process.popen.pid


def _since_irreversible(game: Game) -> tuple[Position, list[Move]]:
    """The position after the game's last irreversible move and the moves played since."""
    k = len(game.reversible_history())
    return game.positions[-1 - k], game.moves[len(game.moves) - k :]


def hub_variant_name(rules: Rules) -> str:
    """The Hub ``variant`` value for ``rules``; `PlayerSpecError` for a variant hub players cannot play."""
    name = HUB_VARIANT_NAMES.get(rules.variant.name)
    if name is None:
        playable = ", ".join(f"{v} (Hub {h})" for v, h in HUB_VARIANT_NAMES.items())
        raise PlayerSpecError(
            f"hub players play {playable}; {rules.variant.name} has no Hub square numbering to rely on"
        )
    return name


def make_hub_player(rules: Rules, options: dict[str, str], spec: str) -> HubPlayer:
    """Factory behind ``hub:cmd=COMMAND[,time=T,depth=D,nodes=N,name=...,variant=...,cwd=...,
    startup=S,timeout=S,param:NAME=VALUE]`` (see the module docstring)."""
    reject_unknown(spec, {k: v for k, v in options.items() if not k.startswith("param:")}, OPTIONS | {"param:NAME"})
    if "cmd" not in options:
        raise PlayerSpecError(f'player spec {spec!r}: hub needs cmd=COMMAND, e.g. hub:cmd="scan hub",time=0.1')
    try:
        hub_variant_name(rules)
    except PlayerSpecError as exc:
        raise PlayerSpecError(f"player spec {spec!r}: {exc}") from None
    depth = int_option(spec, "depth", options["depth"], 1) if "depth" in options else None
    nodes = int_option(spec, "nodes", options["nodes"], 1) if "nodes" in options else None
    if "time" in options:
        move_time: float | None = float_option(spec, "time", options["time"])
    else:
        move_time = None if depth or nodes else DEFAULT_MOVE_TIME
    params = {k.partition(":")[2].strip(): v for k, v in options.items() if k.startswith("param:")}
    if "" in params:
        raise PlayerSpecError(f"player spec {spec!r}: write engine parameters as param:NAME=VALUE")
    cwd = options.get("cwd")
    if cwd is not None and not os.path.isdir(cwd):
        raise PlayerSpecError(f"player spec {spec!r}: cwd {cwd!r} is not a directory")
    return HubPlayer(
        rules,
        options["cmd"],
        move_time=move_time,
        depth=depth,
        nodes=nodes,
        name=options.get("name"),
        variant=options.get("variant"),
        params=params,
        cwd=cwd,
        startup_s=float_option(spec, "startup", options["startup"]) if "startup" in options else STARTUP_S,
        timeout_s=float_option(spec, "timeout", options["timeout"]) if "timeout" in options else None,
    )
