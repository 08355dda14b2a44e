"""The Hub engine command by command (`tammi_rl.hub`): every command answered, every bad
line answered with ``error`` and the engine still reading."""

from __future__ import annotations

import io
import time

import pytest
from support.hub_session import RUSSIAN_START, Session

from tammi_rl.hub import HubEngine, HubNotation
from tammi_rl.hub.level import Level
from tammi_rl.hub.protocol import HubProtocolError, format_line, parse_line
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game

INTERNATIONAL_START = "W" + "b" * 20 + "e" * 10 + "w" * 20
RUSSIAN_FIRST_MOVES = "9-13 10-13 10-14 11-14 11-15 12-15 12-16"
"""White's first moves on 8x8: moves count from a1 = 1 (c3 = 10), positions from b8 = 1."""
HANG_S = 3.0
"""Bound on waits for a search's answer (budgets of 0.3 s or a stop): catches a hang."""


def errors(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("error ")]


# --- lines ------------------------------------------------------------------------------
def test_parse_line_reads_quotes_flags_and_unquoted_equals() -> None:
    cmd = parse_line('pos pos=Wbe moves="32-28 17-22"  ')
    assert cmd is not None and cmd.name == "pos" and cmd.args == {"pos": "Wbe", "moves": "32-28 17-22"}
    cmd = parse_line("level infinite")
    assert cmd is not None and cmd.args == {"infinite": ""}
    cmd = parse_line("set-param name=player value=alphabeta:depth=4")  # what pydraughts sends
    assert cmd is not None and cmd.args["value"] == "alphabeta:depth=4"
    assert parse_line("   ") is None
    with pytest.raises(HubProtocolError):
        parse_line('pos pos="Wbe')


def test_format_line_quotes_what_must_be_quoted() -> None:
    assert format_line("info", depth=3, pv="32-28 17-22", empty="") == 'info depth=3 pv="32-28 17-22" empty=""'
    assert format_line("done", move="32-28", ponder=None) == "done move=32-28"


# --- the initialisation phase -------------------------------------------------------------
def test_hub_init_ping_and_parameters() -> None:
    s = Session(variant="normal")
    lines = s.say("hub")
    assert lines[0].startswith("id name=tammi-rl ")
    assert 'param name=variant value=normal type=enum values="normal international russian brazilian"' in lines
    assert lines[-1] == "wait"
    assert s.say("set-param name=variant value=russian", "init", "ping") == ["ready", "pong"]
    assert s.engine.rules is not None and s.engine.rules.variant.name == "russian"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("set-param name=variant value=killer", "variant 'killer' is not played"),
        ("set-param name=variant value=frisian", "variants: normal, international, russian, brazilian"),
        ("set-param name=colour value=red", "unknown parameter 'colour'"),
        ("set-param name=variant", "set-param needs name=... and value=..."),
        ("frobnicate now", "unknown command 'frobnicate'"),
        ('pos pos="Wbbb', "cannot read"),
        ('pos pos=""', "pos needs pos="),
        ("pos pos=Wbbb", "has 4 characters; russian needs 33"),
        ("pos pos=X" + "e" * 32, "first character must be W or B"),
        ("pos pos=W" + "q" + "e" * 31, "square 1 holds 'q'"),
        ("pos pos=W" + "w" + "e" * 31, "a white man on square 1, its promotion row"),
        (f'pos pos={RUSSIAN_START} moves="9-13 9-13"', "pos: move 2 of moves: illegal move 9-13"),
        (f'pos pos={RUSSIAN_START} moves="9-14"', f"legal moves: {RUSSIAN_FIRST_MOVES}"),
        (f'pos pos={RUSSIAN_START} moves="21-17"', "illegal move 21-17"),  # the standard order is not used for moves
        (f'pos pos={RUSSIAN_START} moves="9to13"', "write it as from-to"),
        (f'pos pos={RUSSIAN_START} moves="9-99"', "square 99 is not on the board (1-32)"),
        ("level depth=zero", "depth='zero' is not a whole number"),
        ("level move-time=-1", "move-time must be >= 0"),
        ("level time=nan", "time must be >= 0"),
        ("go think", "go: no position"),
    ],
)
def test_bad_input_is_answered_with_an_error_and_the_engine_goes_on(line: str, message: str) -> None:
    s = Session()
    answer = s.say(line)
    assert len(errors(answer)) == 1 and message in answer[0], answer
    assert s.say("ping") == ["pong"]


def test_a_bad_player_is_an_error_at_init_and_ready_still_comes() -> None:
    s = Session(player="nonsense")
    lines = s.say("init")
    assert "unknown player kind 'nonsense'" in lines[0] and lines[-1] == "ready"
    assert "human player cannot play" in s.say("set-param name=player value=human", "init")[0]
    assert s.say("set-param name=player value=random:seed=3", "init") == ["ready"]


def test_a_refused_go_is_an_error_then_done_without_a_move() -> None:
    s = Session()
    lines = s.say("go think")  # no position yet
    assert len(lines) == 2 and "go: no position" in lines[0] and lines[1] == 'done move=""'
    lines = s.say("pos pos=W" + "e" * 21 + "bee" + "b" + "eee" + "w" + "e" * 3, "go think")  # W:Wa1:Bb2,c3: blocked
    assert len(lines) == 2 and "is over" in lines[0] and lines[1] == 'done move=""'
    assert s.say("ping") == ["pong"]


def test_pos_without_a_position_is_the_start_position() -> None:
    s = Session()
    rules = Rules.for_variant("russian")
    for line, plies in (("pos", 0), ("pos start", 0), ('pos start moves="10-14"', 1), ('pos moves="10-14 21-17"', 2)):
        assert s.say(line) == [], line
        game = s.engine.game
        assert game is not None and game.positions[0] == rules.start_position() and len(game.moves) == plies, line


def test_moves_count_from_a1_on_8x8_and_positions_from_b8() -> None:
    from tammi_rl.rules.notation import parse_move

    s = Session()
    s.say(f'pos pos={RUSSIAN_START} moves="10-14 21-17"')  # c3-d4 b6-a5
    game = s.engine.game
    rules = Rules.for_variant("russian")
    position = rules.start_position()
    for text in ("c3-d4", "b6-a5"):
        position = rules.play(position, parse_move(rules, position, text))
    assert game is not None and game.position == position
    rows = ("bbbb", "bbbb", "ebbb", "beee", "ewee", "weww", "wwww", "wwww")  # b8 d8 f8 h8, a7 ... g1
    assert HubNotation(rules).format_position(position) == "W" + "".join(rows)


# --- searching --------------------------------------------------------------------------------
def test_go_think_reports_info_and_a_legal_move() -> None:
    s = Session()
    lines = s.say(f'pos pos={RUSSIAN_START} moves="10-14"', "level depth=3", "go think")
    infos = [line for line in lines if line.startswith("info ")]
    assert [int(parse_line(i).args["depth"]) for i in infos] == [1, 2, 3]  # type: ignore[union-attr]
    done = parse_line(lines[-1])
    assert done is not None and done.name == "done" and not errors(lines)
    notation = HubNotation(Rules.for_variant("russian"))
    position = s.engine.game.position  # type: ignore[union-attr]
    move = notation.parse_move(position, done.args["move"])
    assert move in Rules.for_variant("russian").legal_moves(position)
    last = parse_line(infos[-1])
    assert last is not None and last.args["pv"].split()[0] == done.args["move"]
    assert done.args.get("ponder") == last.args["pv"].split()[1]
    assert {"score", "nodes", "time", "nps"} <= set(last.args)


def test_stop_ends_an_infinite_search_and_ping_is_answered_meanwhile() -> None:
    s = Session()
    s.say(f"pos pos={RUSSIAN_START}", "level infinite")
    s.say("go analyze", wait=False)
    time.sleep(0.3)
    assert "pong" in s.say("ping", wait=False)
    tic = time.perf_counter()
    lines = s.say("stop")
    assert time.perf_counter() - tic < HANG_S
    assert lines[-1].startswith("done move=")


def test_ponder_searches_until_ponder_hit_then_for_the_level_time() -> None:
    s = Session()
    s.say(f"pos pos={RUSSIAN_START}", "level move-time=0.3")
    s.say("go ponder", wait=False)
    time.sleep(0.4)
    assert not any(line.startswith("done") for line in s.say(wait=False))  # no clock yet: still pondering
    tic = time.perf_counter()
    lines = s.say("ponder-hit")
    assert 0.15 < time.perf_counter() - tic < HANG_S
    assert lines[-1].startswith("done move=")


def test_a_new_command_during_a_search_stops_it_first() -> None:
    s = Session()
    s.say(f"pos pos={RUSSIAN_START}", "level infinite")
    s.say("go think", wait=False)
    time.sleep(0.1)
    lines = s.say(f"pos pos={RUSSIAN_START}", "ping")
    assert any(line.startswith("done ") for line in lines) and lines[-1] == "pong"


def test_new_game_clears_the_position_and_quit_ends_the_loop() -> None:
    s = Session()
    s.say(f"pos pos={RUSSIAN_START}", "new-game")
    assert "no position" in s.say("go think")[0]
    assert s.engine.handle("quit") is False


def test_run_reads_a_stream_to_its_end() -> None:
    out = io.StringIO()
    engine = HubEngine("alphabeta:depth=1", out, "normal")
    lines = ["init\n", f"pos pos={INTERNATIONAL_START}\n", "level depth=1\n", "go think\n"]
    assert engine.run(iter(lines)) == 0
    assert out.getvalue().splitlines()[-1].startswith("done move=3")  # a white man of 31-35 moves


# --- levels ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("line", "seconds"),
    [
        ("level move-time=2", 1.95),
        ("level time=60", 60 / 30 - 0.05),
        ("level moves=10 time=60", 6 - 0.05),
        ("level time=60 inc=1", 60 / 30 + 1 - 0.05),
        ("level time=0.2", 0.01),
    ],
)
def test_level_time_controls(line: str, seconds: float) -> None:
    cmd = parse_line(line)
    assert cmd is not None
    assert Level.parse(cmd).seconds() == pytest.approx(seconds)


def test_level_depth_and_nodes_become_search_limits() -> None:
    cmd = parse_line("level depth=7 nodes=1000")
    assert cmd is not None
    limits = Level.parse(cmd).limits()
    assert (limits.depth, limits.nodes, limits.time_s) == (7, 1000, None)


@pytest.mark.slow
def test_the_hub_command_serves_stdin() -> None:
    import subprocess
    import sys

    script = f"hub\nset-param name=variant value=brazilian\ninit\npos pos={RUSSIAN_START}\nlevel depth=2\ngo think\n"
    done = subprocess.run(
        [sys.executable, "-m", "tammi_rl.cli", "hub", "--player", "alphabeta:depth=2"],
        input=script + "frob\nstop\nquit\n",  # stop waits for done; quit would not
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = done.stdout.splitlines()
    assert done.returncode == 0 and lines[0].startswith("id name=tammi-rl") and "ready" in lines
    assert any(line.startswith("done move=") for line in lines)
    assert any(line.startswith("error message=\"unknown command 'frob'") for line in lines)  # the search goes on


def test_an_mcts_player_reports_simulations_and_wdl(monkeypatch: pytest.MonkeyPatch) -> None:
    from tammi_rl.config import NetworkConfig
    from tammi_rl.nn.model import build_model
    from tammi_rl.players import PLAYER_KINDS
    from tammi_rl.players.mcts import MCTSPlayer

    def tiny(rules: Rules, options: dict[str, str], spec: str) -> MCTSPlayer:
        return MCTSPlayer(rules, build_model(rules, NetworkConfig(blocks=1, channels=8, value_hidden=8)), 8, seed=0)

    monkeypatch.setitem(PLAYER_KINDS, "tiny-mcts", tiny)
    s = Session(player="tiny-mcts")
    lines = s.say(f"pos pos={RUSSIAN_START}", "level nodes=12", "go think")
    info = parse_line(lines[0])
    assert info is not None and info.name == "info" and info.args["nodes"] == "12"
    assert len(info.args["wdl"].split("/")) == 3 and lines[-1].startswith("done move=")


@pytest.mark.parametrize(
    ("board", "reason"),
    [
        ("B" + "e" * 28 + "w" + "e" * 3, "black has no piece"),
        ("W" + "b" + "e" * 31, "white has no piece"),
        ("W" + "e" * 32, "no pieces at all"),
    ],
)
def test_pos_without_a_piece_for_a_side_is_refused(board: str, reason: str) -> None:
    """A side without pieces is a finished game, never a position to set up: pos answers error."""
    s = Session()
    answer = s.say(f"pos pos={board}")
    assert len(answer) == 1 and reason in answer[0] and "each side needs at least one piece" in answer[0], answer
    assert s.engine.game is None
    assert s.say("ping") == ["pong"]


def test_a_forced_capture_reports_the_search_of_the_position_after_it() -> None:
    """c3:e5:g7 (two men) is White's only move: info reports a searched depth and the score
    after the capture (White a man up), not the depth-0 static score before it (a man down)."""
    rules = Rules.for_variant("russian")
    s = Session()
    board = HubNotation(rules).format_position(rules.parse_fen("W:Wc3,g1:Bd4,f6,b8"))
    lines = s.say(f"pos pos={board}", "level depth=3", "go think")
    assert not errors(lines)
    infos = [parse_line(line) for line in lines if line.startswith("info ")]
    done = parse_line(lines[-1])
    assert infos and done is not None and done.name == "done"
    last = infos[-1]
    assert last is not None and int(last.args["depth"]) >= 2 and float(last.args["score"]) > 0
    assert last.args["pv"].split()[0] == done.args["move"] and "ponder" in done.args


@pytest.mark.parametrize("level", ["level move-time=30", "level time=600 moves=20"])
def test_a_forced_move_on_the_clock_is_answered_at_once(level: str) -> None:
    """On a time control the only legal move is played without a search (no clock spent, no
    info about a position nobody searched); a depth level searches past it (test above)."""
    rules = Rules.for_variant("russian")
    s = Session("alphabeta:depth=20")
    board = HubNotation(rules).format_position(rules.parse_fen("W:Wc3,g1:Bd4,f6,b8"))
    started = time.perf_counter()
    lines = s.say(f"pos pos={board}", level, "go think")
    assert time.perf_counter() - started < 5.0  # the level allows 30 s for this move
    assert not errors(lines) and not [line for line in lines if line.startswith("info ")]
    done = parse_line(lines[-1])
    assert done is not None and done.name == "done"
    (only,) = Game(rules, start=rules.parse_fen("W:Wc3,g1:Bd4,f6,b8")).legal_moves()
    assert done.args["move"] == HubNotation(rules).format_move(only)


def test_a_10x10_gui_is_offered_the_shipped_international_model() -> None:
    """With no ``--player``, Hub's default variant (``normal``, 10x10) plays `international.pt`."""
    from tammi_rl.players.mcts import MCTSPlayer

    out = io.StringIO()
    engine = HubEngine(None, out, "normal")
    for line in ("init", f"pos pos={INTERNATIONAL_START}", "level nodes=16", "go think"):
        assert engine.handle(line) is True
    assert engine.wait(120.0), "no done within 120 s"
    lines = out.getvalue().splitlines()
    assert not errors(lines), lines
    assert isinstance(engine.player, MCTSPlayer) and engine.player.name == "mcts:model=international"
    assert engine.rules is not None and engine.rules.variant.name == "international"
    done = parse_line(lines[-1])
    assert done is not None and done.name == "done"
    start = Game(engine.rules).position
    assert HubNotation(engine.rules).parse_move(start, done.args["move"]) in engine.rules.legal_moves(start)
