"""A Hub client tammi-rl did not write, pydraughts' `HubEngine`, plays full games against
`tammi-rl hub`: 10 Russian and 10 International games (and 4 Brazilian), the engine against pydraughts'
own random legal moves, colours alternating.

Every move the engine returns must parse as a legal move of pydraughts' board; after
every ply pydraughts' Hub position must be the position tammi-rl's rules reach by the
same moves; the game must end on pydraughts' board (a win or pydraughts' draw rules);
and pydraughts must log no unexpected engine line (an ``error`` included).

pydraughts numbers 8x8 squares two ways: its Hub position strings in the standard order
(b8 = 1), its `Board` moves from a1 = 1 (Russian notation), and `HubEngine.play` sends
the second with the first. The engine reads one order for both (`tammi_rl.hub.notation`),
so Russian games here call `HubEngine.go` with the moves converted to the standard order
by pydraughts' own `move_from_variant`; International needs no conversion and goes
through `HubEngine.play`.
"""

from __future__ import annotations

import logging
import random
import sys
import threading
import time

import pytest

draughts = pytest.importorskip("draughts")
from draughts.convert import move_from_variant, move_to_variant  # noqa: E402
from draughts.engine import HubEngine, Limit  # noqa: E402

from tammi_rl.hub import HubNotation  # noqa: E402
from tammi_rl.rules.engine import Rules  # noqa: E402
from tammi_rl.rules.game import Game  # noqa: E402

GAMES = 10
MAX_PLIES = 400
COMMAND = [sys.executable, "-m", "tammi_rl.cli", "hub", "--player", "alphabeta:depth=2"]
CASES = {  # tammi-rl variant: (pydraughts variant, Hub variant name, level per engine move, games)
    "russian": ("russian", "russian", {"depth": 2}, GAMES),
    "international": ("standard", "normal", {"movetime": 0.02}, GAMES),
    "brazilian": ("brazilian", "brazilian", {"movetime": 0.02}, 4),
}


class _Watchdog:
    """Kills the engine if the test hangs (pydraughts reads its pipe without a timeout)."""

    def __init__(self, engine: HubEngine, seconds: float) -> None:
        self.timer = threading.Timer(seconds, engine.kill_process)
        self.timer.daemon = True
        self.timer.start()

    def cancel(self) -> None:
        self.timer.cancel()


def _engine_move(engine: HubEngine, board: object, variant: str, level: dict[str, float]) -> object:
    """The engine's move as a pydraughts Move of ``board`` (parsing it checks it is legal there)."""
    if variant == "standard":
        return engine.play(board, Limit(**level), ponder=False).move
    moves = " ".join(move_from_variant(m.hub_move, variant=variant) for m in board.move_stack)
    best, _ = engine.go(board._game.initial_hub_fen, moves=moves, **level)
    return draughts.Move(board, hub_move=move_to_variant(best, variant=variant, to_algebraic=False))


@pytest.mark.slow
@pytest.mark.parametrize("variant", sorted(CASES))
def test_pydraughts_hub_engine_plays_full_games(variant: str, caplog: pytest.LogCaptureFixture) -> None:
    pyd_variant, hub_variant, level, games = CASES[variant]
    rules = Rules.for_variant(variant)
    notation = HubNotation(rules)
    rng = random.Random(15)
    caplog.set_level(logging.WARNING, logger="pydraughts")
    start = time.perf_counter()
    engine = HubEngine(COMMAND)
    watchdog = _Watchdog(engine, 600)
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
                    move = _engine_move(engine, board, pyd_variant, level)
                    engine_moves += 1
                else:
                    move = rng.choice(board.legal_moves())
                hub_text = move_from_variant(move.hub_move, variant=pyd_variant)
                game.play(notation.parse_move(game.position, hub_text))
                board.push(move)
                assert notation.parse_position(board._game.get_fen()) == game.position
            assert board.is_over(), f"game {number + 1} did not end in {MAX_PLIES} plies"
            results.append((board.winner(), len(board.move_stack)))
        engine.ping()
        engine.quit()
        engine.p.wait(timeout=30)
    finally:
        watchdog.cancel()
        if engine.p.poll() is None:
            engine.kill_process()
    unexpected = [r.getMessage() for r in caplog.records if r.name == "pydraughts"]
    assert unexpected == []
    assert len(results) == games
    engine_wins = sum(1 for n, (winner, _) in enumerate(results) if winner == (2 if n % 2 == 0 else 1))
    print(
        f"{variant}: {games} games, {sum(p for _, p in results)} plies, {engine_moves} engine moves, "
        f"engine won {engine_wins}, {time.perf_counter() - start:.1f} s"
    )
    assert engine_wins >= games // 2  # a depth-2 search beats random moves
