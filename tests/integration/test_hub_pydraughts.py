"""A Hub client tammi-rl did not write, pydraughts' `HubEngine`, plays full games against
`tammi-rl hub`: 10 Russian and 10 International games (and 4 Brazilian), the engine against pydraughts'
own random legal moves, colours alternating, every engine move asked for by
`HubEngine.play(board)` as a bot would, with no conversion. One more game on a move time
checks that the engine spends it (`test_pydraughts_move_time_is_spent`).

Every move the engine returns must parse as a legal move of pydraughts' board and of
tammi-rl's rules; after every ply pydraughts' Hub position must be the position tammi-rl's
rules reach by the same moves; the game must end on pydraughts' board (a win or
pydraughts' draw rules); and pydraughts must log no unexpected engine line (an ``error``
included).

pydraughts numbers 8x8 squares two ways: its Hub position strings in the standard order
(b8 = 1), its `Board` moves from a1 = 1, and `HubEngine.play` sends both as they are.
The engine reads and writes the same numbering (`tammi_rl.hub.notation`), so the moves of
pydraughts' board go to tammi-rl's notation unchanged here too.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from typing import Any

import draughts  # pydraughts, in the test extra: a missing one fails here rather than skips
import pytest
from draughts.engine import HubEngine, Limit

from tammi_rl.hub import HubNotation
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game

pytestmark = pytest.mark.slow

GAMES = 10
MAX_PLIES = 400
COMMAND = [
    shutil.which("env") or "/usr/bin/env",
    shlex.quote(sys.executable),
    "-m",
    "tammi_rl.cli",
    "hub",
    "--player",
    "alphabeta:depth=2",
]
"""Started through ``env``: pydraughts resolves the first word with ``os.path.realpath`` and
joins the rest for a shell, so a virtual environment's ``python`` (a link to the base
interpreter) would lose its environment if it came first."""
CASES = {  # tammi-rl variant: (pydraughts variant, Hub variant name, level per engine move, games)
    "russian": ("russian", "russian", {"depth": 2}, GAMES),
    "international": ("standard", "normal", {"movetime": 0.02}, GAMES),
    "brazilian": ("brazilian", "brazilian", {"movetime": 0.02}, 4),
}


class _WatchedEngine(HubEngine):  # type: ignore[misc]
    """pydraughts' `HubEngine`, its process killed after `seconds` (pydraughts reads its pipe
    without a timeout, from the constructor on): a hang becomes an `EOFError`, not a stuck test."""

    seconds = 600.0

    def _open_process(self, *args: Any, **kwargs: Any) -> subprocess.Popen:
        process = super()._open_process(*args, **kwargs)
        self.watchdog = threading.Timer(self.seconds, _kill, (process,))
        self.watchdog.daemon = True
        self.watchdog.start()
        return process

    def close(self) -> None:
        self.watchdog.cancel()
        if self.p.poll() is None:
            _kill(self.p)


def _kill(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)  # pydraughts starts the engine in its own group


@pytest.mark.parametrize("variant", sorted(CASES))
def test_pydraughts_hub_engine_plays_full_games(variant: str, caplog: pytest.LogCaptureFixture) -> None:
    pyd_variant, hub_variant, level, games = CASES[variant]
    rules = Rules.for_variant(variant)
    notation = HubNotation(rules)
    rng = random.Random(15)
    caplog.set_level(logging.WARNING, logger="pydraughts")
    start = time.perf_counter()
    engine = _WatchedEngine(COMMAND)
    results, engine_moves = [], 0
    try:
        assert engine.id["name"] == "tammi-rl"
        assert {"normal", "russian", "brazilian"} <= engine.variants
        engine.setoption("variant", hub_variant)
        engine.init()
        for number in range(games):
            engine.send("new-game")
            board = draughts.Board(variant=pyd_variant)
            game = Game(rules)
            engine_side = draughts.WHITE if number % 2 == 0 else draughts.BLACK
            while not board.is_over() and len(board.move_stack) < MAX_PLIES:
                if board.turn == engine_side:
                    move = engine.play(board, Limit(**level), ponder=False).move  # parsing it checks it is legal
                    engine_moves += 1
                else:
                    move = rng.choice(board.legal_moves())
                game.play(notation.parse_move(game.position, move.hub_move))  # legal for tammi-rl too
                board.push(move)
                assert notation.parse_position(board._game.get_fen()) == game.position
            assert board.is_over(), f"game {number + 1} did not end in {MAX_PLIES} plies"
            results.append((board.winner(), len(board.move_stack)))
        engine.ping()
        engine.quit()
        engine.p.wait(timeout=30)
    finally:
        engine.close()
    unexpected = [r.getMessage() for r in caplog.records if r.name == "pydraughts"]
    assert unexpected == []
    assert len(results) == games
    engine_wins = sum(1 for n, (winner, _) in enumerate(results) if winner == (2 if n % 2 == 0 else 1))
    print(
        f"{variant}: {games} games, {sum(p for _, p in results)} plies, {engine_moves} engine moves, "
        f"engine won {engine_wins}, {time.perf_counter() - start:.1f} s"
    )
    assert engine_wins >= games // 2  # a depth-2 search beats random moves


def test_pydraughts_gets_done_after_a_refused_go(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="pydraughts")
    engine = _WatchedEngine(COMMAND)
    try:
        engine.setoption("variant", "russian")
        engine.init()
        rules = Rules.for_variant("russian")
        over = HubNotation(rules).format_position(rules.parse_fen("W:Wa1:Bb2,c3"))  # White is blocked
        best, ponder = engine.go(over, depth=1)  # returns: the engine answered done
        assert (best, ponder) == ('""', None)  # done move="": no move
        board = draughts.Board(variant="russian")
        move = engine.play(board, Limit(depth=1), ponder=False).move  # and plays on
        assert move.hub_move in {m.hub_move for m in board.legal_moves()}
        engine.quit()
        engine.p.wait(timeout=30)
    finally:
        engine.close()
    unexpected = [r.getMessage() for r in caplog.records if r.name == "pydraughts"]
    assert len(unexpected) == 1 and "is over" in unexpected[0]


MOVE_TIME_S = 0.3


def test_pydraughts_move_time_is_spent(caplog: pytest.LogCaptureFixture) -> None:
    """Alpha-beta under ``level move-time`` (what `Limit(movetime=...)` sends) uses most of
    each move's time on the moves that are neither forced nor proven, and never much more.
    A node cap guessed from the speed of depths the transposition table answered once cut
    such searches to 0.01-0.03 s."""
    caplog.set_level(logging.WARNING, logger="pydraughts")
    command = [*COMMAND[:-1], "alphabeta"]
    engine = _WatchedEngine(command)
    rng = random.Random(3)
    spent: list[float] = []
    try:
        engine.setoption("variant", "russian")
        engine.init()
        board = draughts.Board(variant="russian")
        while not board.is_over() and len(spent) < 10 and len(board.move_stack) < MAX_PLIES:
            if board.turn == draughts.WHITE:
                forced = len(board.legal_moves()) == 1
                tic = time.perf_counter()
                result = engine.play(board, Limit(movetime=MOVE_TIME_S), ponder=False)
                seconds = time.perf_counter() - tic
                proven = "win" in (result.info.get("score") or {})
                if not forced and not proven:
                    spent.append(seconds)
                move = result.move
            else:
                move = rng.choice(board.legal_moves())
            board.push(move)
        engine.quit()
        engine.p.wait(timeout=30)
    finally:
        engine.close()
    assert [r.getMessage() for r in caplog.records if r.name == "pydraughts"] == []
    assert len(spent) >= 5, spent
    print(f"move-time {MOVE_TIME_S}: unforced moves took " + " ".join(f"{s:.3f}" for s in spent))
    assert sum(spent) / len(spent) > 0.6 * MOVE_TIME_S, spent  # generous: about 0.9 of it is used
    assert min(spent) > 0.3 * MOVE_TIME_S, spent  # the cut searches took 0.02-0.04 s of 0.3
    assert max(spent) < MOVE_TIME_S + 1.0, spent
