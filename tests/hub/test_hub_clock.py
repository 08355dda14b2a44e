"""The Hub engine on the clock (`tammi_rl.hub.engine`): the level's time is the search's
deadline for alpha-beta and MCTS, ``stop`` ends any search soon, ``level infinite`` and
``go ponder`` hold ``done`` until ``stop`` (or ``ponder-hit``), ``quit`` waits for no search.

Bounds are generous (a shared, busy test machine); `tammi_rl.benchmarks.bench_hub_clock`
measures the real figures.
"""

from __future__ import annotations

import io
import subprocess
import sys
import time

import pytest
from support.hub_session import RUSSIAN_START, SEARCH_TIMEOUT_S, Session

from tammi_rl.hub import HubEngine
from tammi_rl.hub.protocol import parse_line
from tammi_rl.players import PLAYER_KINDS
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game
from tammi_rl.rules.position import Move

LATE_S = 1.0
"""Generous bound on how late a stopped search may answer (the benchmark measures ~20 ms)."""


@pytest.fixture(scope="module", autouse=True)
def compiled_search() -> None:
    """Compile alpha-beta's timed search before any test times it: on a fresh checkout (no
    numba cache) the first search compiles for about 20 s, which no latency bound survives."""
    Session().say(f"pos pos={RUSSIAN_START}", "level move-time=0.2", "go think")


class SlowPlayer:
    """A player whose move takes `seconds` and cannot be interrupted (no analysis of its own)."""

    seconds = 3.0

    def __init__(self) -> None:
        self.name = "slow"

    def choose(self, game: Game) -> Move:
        time.sleep(self.seconds)
        return game.legal_moves()[0]

    def new_game(self, seed: int | None = None) -> None:
        pass


def _has_done(lines: list[str]) -> bool:
    return any(line.startswith("done") for line in lines)


# --- level infinite and ponder hold done ------------------------------------------------------
def test_level_infinite_holds_done_until_stop_even_after_the_search_ends() -> None:
    """A depth level ends alpha-beta's search at once; under `infinite` done waits for stop."""
    s = Session()
    s.say(f"pos pos={RUSSIAN_START}", "level infinite depth=2", "go analyze", wait=False)
    lines = s.lines_until("info depth=2")  # the search has reached its depth and is over
    time.sleep(0.3)
    lines += s.say("ping", wait=False)
    assert "pong" in lines and not _has_done(lines), lines  # the answer is held
    tic = time.perf_counter()
    lines = s.say("stop")
    assert time.perf_counter() - tic < LATE_S and lines[-1].startswith("done move=")


def test_stop_ends_a_deep_infinite_alphabeta_search_soon() -> None:
    s = Session("alphabeta:depth=2")
    s.say(f"pos pos={RUSSIAN_START}", "level infinite", "go analyze", wait=False)
    lines = s.lines_until("info ")  # searching (compiled), not still compiling
    time.sleep(0.5)
    lines += s.say(wait=False)
    assert not _has_done(lines)
    tic = time.perf_counter()
    lines += s.say("stop")
    assert time.perf_counter() - tic < LATE_S
    assert lines[-1].startswith("done move=")
    depths = [int(parse_line(line).args["depth"]) for line in lines if line.startswith("info ")]  # type: ignore[union-attr]
    assert depths and max(depths) > 2  # infinite: past the player's own depth


def test_ponder_holds_done_until_ponder_hit() -> None:
    """A ponder search that ends by itself (a depth level) answers only after ponder-hit."""
    s = Session()
    s.say(f"pos pos={RUSSIAN_START}", "level depth=2", "go ponder", wait=False)
    time.sleep(0.4)
    assert not _has_done(s.say(wait=False))
    lines = s.say("ponder-hit")
    assert lines[-1].startswith("done move=")


# --- quit -------------------------------------------------------------------------------------
def test_quit_does_not_wait_for_a_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """A search that cannot be interrupted (3 s here) does not hold up quit."""
    monkeypatch.setitem(PLAYER_KINDS, "slow-test", lambda rules, options, spec: SlowPlayer())
    engine = HubEngine("slow-test", io.StringIO(), "russian")
    lines = [f"pos pos={RUSSIAN_START}\n", "level infinite\n", "go think\n", "quit\n", "ping\n"]
    tic = time.perf_counter()
    assert engine.run(iter(lines)) == 0
    assert time.perf_counter() - tic < 1.5  # the search would take 3 s
    assert engine.quitting and engine.searching()
    assert "pong" not in engine.out.getvalue()  # nothing is read after quit


def test_the_end_of_input_still_waits_for_the_search() -> None:
    out = io.StringIO()
    engine = HubEngine("alphabeta:depth=3", out, "russian")
    assert engine.run(iter([f"pos pos={RUSSIAN_START}\n", "level depth=3\n", "go think\n"])) == 0
    assert out.getvalue().splitlines()[-1].startswith("done move=")


@pytest.mark.slow
def test_the_hub_process_exits_promptly_on_quit_during_a_search() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tammi_rl.cli", "hub", "--player", "alphabeta:depth=4", "--variant", "russian"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(f"init\npos pos={RUSSIAN_START}\nlevel infinite\ngo analyze\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "ready"
        assert proc.stdout.readline().startswith("info ")  # searching
        time.sleep(0.3)
        tic = time.perf_counter()
        proc.stdin.write("quit\n")
        proc.stdin.flush()
        assert proc.wait(timeout=30) == 0
        assert time.perf_counter() - tic < 5.0  # interpreter shutdown included; no waiting on the search
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# --- the level's time is the deadline ---------------------------------------------------------
@pytest.mark.slow
def test_move_time_is_spent_when_the_tt_answers_the_first_depths() -> None:
    """Each position follows the engine's own expected line (move and ponder move), so the
    transposition table answers its first depths at once; the search must still use its time
    (it stopped after 0.05 s of 0.55 when a node cap came from the speed of those depths)."""
    s = Session("alphabeta:depth=2")
    rules = Rules.for_variant("russian")
    game = Game(rules)
    s.say("init")
    moves: list[str] = []
    spent: list[float] = []
    for _ in range(4):
        s.say(f'pos pos={RUSSIAN_START} moves="{" ".join(moves)}"', "level move-time=0.6")
        tic = time.perf_counter()
        lines = s.say("go think")
        seconds = time.perf_counter() - tic
        done = parse_line(lines[-1])
        assert done is not None and done.name == "done"
        forced = len(game.legal_moves()) == 1
        mate = any(abs(float(parse_line(line).args["score"])) > 90 for line in lines if line.startswith("info "))  # type: ignore[union-attr]
        if not forced and not mate:
            spent.append(seconds)
        if "ponder" not in done.args:
            break
        for text in (done.args["move"], done.args["ponder"]):
            from tammi_rl.hub import HubNotation

            game.play(HubNotation(rules).parse_move(game.position, text))
            moves.append(text)
    assert spent, "no unforced move was searched"
    assert min(spent) > 0.3, spent  # at least about half of the 0.55 s budget, every time
    assert max(spent) < 0.6 + LATE_S, spent


def _tiny_mcts(simulations: int):  # type: ignore[no-untyped-def]
    from tammi_rl.config import NetworkConfig
    from tammi_rl.nn.model import build_model
    from tammi_rl.players.mcts import MCTSPlayer

    def make(rules: Rules, options: dict[str, str], spec: str) -> MCTSPlayer:
        model = build_model(rules, NetworkConfig(blocks=1, channels=8, value_hidden=8))
        return MCTSPlayer(rules, model, simulations, seed=0)

    return make


@pytest.mark.slow
def test_an_mcts_search_uses_the_move_time_not_its_simulation_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """``sims=8`` is the player's own budget; under ``level move-time`` the time rules."""
    monkeypatch.setitem(PLAYER_KINDS, "tiny-mcts", _tiny_mcts(8))
    s = Session("tiny-mcts")
    s.say("init")
    tic = time.perf_counter()
    lines = s.say(f"pos pos={RUSSIAN_START}", "level move-time=0.6", "go think")
    seconds = time.perf_counter() - tic
    infos = [parse_line(line) for line in lines if line.startswith("info ")]
    assert infos and lines[-1].startswith("done move=")
    assert int(infos[-1].args["nodes"]) > 8  # type: ignore[union-attr]
    assert 0.25 < seconds < 0.6 + LATE_S, seconds


@pytest.mark.slow
def test_stop_ends_a_long_mcts_search_soon(monkeypatch: pytest.MonkeyPatch) -> None:
    """200,000 simulations under ``level infinite``: stop answers within a generous bound."""
    monkeypatch.setitem(PLAYER_KINDS, "tiny-mcts", _tiny_mcts(200_000))
    s = Session("tiny-mcts")
    s.say("init")
    s.say(f"pos pos={RUSSIAN_START}", "level infinite", "go analyze", wait=False)
    time.sleep(0.5)
    assert not _has_done(s.say(wait=False))
    tic = time.perf_counter()
    s.engine.handle("stop")
    late = time.perf_counter() - tic
    lines = s.done_within(SEARCH_TIMEOUT_S)
    assert lines[-1].startswith("done move=")
    assert late < LATE_S, f"stop answered after {late:.2f} s"


@pytest.mark.parametrize("player", ["alphabeta:depth=2", "tiny-mcts"])
def test_a_clock_level_gives_its_share_to_either_player(player: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``level moves=2 time=0.9``: 0.45 s a move less 0.05 s kept back, for both kinds of player
    (the spec's own depth 2 or 8 simulations would take a few milliseconds)."""
    monkeypatch.setitem(PLAYER_KINDS, "tiny-mcts", _tiny_mcts(8))
    s = Session(player)
    s.say("init")
    tic = time.perf_counter()
    lines = s.say(f"pos pos={RUSSIAN_START}", "level moves=2 time=0.9", "go think")
    seconds = time.perf_counter() - tic
    assert lines[-1].startswith("done move=")
    assert 0.25 < seconds < 0.4 + LATE_S, seconds
