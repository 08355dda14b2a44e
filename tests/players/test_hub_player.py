"""The hub player: an outside Hub engine as a player.

A scripted engine (`support/fake_hub_engine.py`) shows what the player sends and how it
meets every failure; `tammi-rl hub` run as an outside process plays full games through
the match machinery and the ``match`` command.
"""

from __future__ import annotations

import gc
import logging
import shlex
import sys
from pathlib import Path

import pytest

from tammi_rl.cli.main import main
from tammi_rl.eval.match import run_match
from tammi_rl.hub import HubNotation
from tammi_rl.players import PlayerSpecError, parse_player_spec
from tammi_rl.players import hub_player as hub_module
from tammi_rl.players.hub_player import HubEngineError, HubPlayer
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game
from tammi_rl.rules.notation import parse_move

FAKE = Path(__file__).resolve().parents[1] / "support" / "fake_hub_engine.py"
PYTHON = shlex.quote(sys.executable)
TAMMI_HUB = f"{PYTHON} -m tammi_rl.cli hub --player alphabeta:depth=2"


@pytest.fixture(scope="module")
def rules() -> Rules:
    return Rules.for_variant("russian")


def fake(mode: str, log: Path, answer: str | None = None) -> str:
    """The command line of the scripted engine in ``mode``, logging what it reads to ``log``."""
    words = [PYTHON, shlex.quote(str(FAKE)), mode, shlex.quote(str(log))]
    return " ".join([*words, answer] if answer else words)


def sent(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8").splitlines()


def reaped(pid: int) -> bool:
    """The process ended and was waited for: no /proc entry, not even a zombie's."""
    return not Path(f"/proc/{pid}").exists()


def test_handshake_level_and_move_reach_the_engine(rules: Rules, tmp_path: Path) -> None:
    log = tmp_path / "lines"
    spec = f'hub:cmd="{fake("play", log)}",time=0.25,depth=3,param:threads=2'
    player = parse_player_spec(spec, rules)
    assert isinstance(player, HubPlayer)
    assert player.name == "fake(time=0.25,depth=3)"
    game = Game(rules)
    move = player.choose(game)
    assert move == parse_move(rules, game.position, "c3-b4")  # 10-13, numbered from a1
    assert player.last_info is not None and player.last_info.get("pv") == "10-13"
    player.new_game(seed=5)
    pid = player.pid
    player.close()
    assert reaped(pid)
    start = HubNotation(rules).format_position(game.position)
    assert start == "W" + "b" * 12 + "e" * 8 + "w" * 12
    assert sent(log) == [
        "hub",
        "set-param name=variant value=russian",
        "set-param name=threads value=2",
        "init",
        f"pos pos={start}",
        "level move-time=0.25 depth=3",
        "go think",
        "new-game",
        "quit",
    ]


def test_pos_sends_the_moves_since_the_last_irreversible_one(rules: Rules, tmp_path: Path) -> None:
    log = tmp_path / "lines"
    game = Game(rules, start=rules.parse_fen("W:WKc1,h2:BKh8,f8"))
    for text in ("h2-g3", "h8-g7", "c1-d2", "g7-h8"):  # a man move, then three king moves
        game.play(parse_move(rules, game.position, text))
    notation = HubNotation(rules)
    answer = notation.format_move(parse_move(rules, game.position, "d2-c1"))
    with parse_player_spec(f'hub:cmd="{fake("play", log, answer)}",depth=2', rules) as player:
        assert player.name == "fake(depth=2)"  # no time given: depth alone
        assert player.choose(game) == parse_move(rules, game.position, "d2-c1")
    after_man_move = notation.format_position(game.positions[1])
    moves = " ".join(notation.format_move(m) for m in game.moves[1:])
    assert f'pos pos={after_man_move} moves="{moves}"' in sent(log)
    assert "level depth=2" in sent(log)


@pytest.mark.parametrize(
    "mode, problem",
    [
        ("die", r"exited with status 4 before answering 'go think.*crashed in the search"),
        (
            "illegal",
            r"answered '1-2' in Wbbbbbbbbbbbbeeeeeeeewwwwwwwwwwww \(FEN W:.*illegal move 1-2.*legal moves: 9-13",
        ),
        ("error", r"gave no move in Wbbbb.*it said: no move for you"),
    ],
)
def test_a_failing_engine_is_a_clear_error(rules: Rules, tmp_path: Path, mode: str, problem: str) -> None:
    with parse_player_spec(f'hub:cmd="{fake(mode, tmp_path / "lines")}",time=0.1', rules) as player:
        with pytest.raises(HubEngineError, match=problem) as info:
            player.choose(Game(rules))
        assert "fake_hub_engine.py" in str(info.value)  # names the command
    assert reaped(player.pid)


def test_an_engine_that_never_answers_times_out_and_is_closed(rules: Rules, tmp_path: Path) -> None:
    player = parse_player_spec(f'hub:cmd="{fake("silent", tmp_path / "lines")}",time=0.1,timeout=0.5', rules)
    with pytest.raises(
        HubEngineError, match=r"did not answer 'go think \(after level move-time=0.1\)' with 'done' within 0.5 s"
    ):
        player.choose(Game(rules))
    assert reaped(player.pid)
    with pytest.raises(HubEngineError, match=r"failed earlier and is closed: .*did not answer"):
        player.choose(Game(rules))


def test_an_engine_that_never_starts_talking_times_out(rules: Rules, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hub_module, "QUIT_WAIT_S", 0.3)  # sleep ignores quit: terminated after this
    with pytest.raises(
        HubEngineError, match=r"'sleep 30' did not answer 'hub' with 'wait' within 0.5 s.*printed nothing"
    ):
        parse_player_spec('hub:cmd="sleep 30",startup=0.5', rules)


def test_an_engine_that_dies_at_init_names_its_last_words(rules: Rules, tmp_path: Path) -> None:
    with pytest.raises(HubEngineError, match=r"exited with status 3 before answering 'init'.*going away"):
        parse_player_spec(f'hub:cmd="{fake("die-at-init", tmp_path / "lines")}"', rules)


def test_error_lines_are_surfaced(rules: Rules, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger=hub_module.__name__)
    with parse_player_spec(f'hub:cmd="{fake("warn", tmp_path / "lines")}",time=0.1', rules) as player:
        assert player.choose(Game(rules)) == parse_move(rules, Game(rules).position, "c3-b4")
        assert player.errors == ["a small hiccup"]
    assert any("a small hiccup" in r.getMessage() for r in caplog.records)
    with pytest.raises(PlayerSpecError, match="refused the set-up: no parameters here"):
        parse_player_spec(f'hub:cmd="{fake("refuse", tmp_path / "lines")}"', rules)


def test_the_variant_must_be_one_the_engine_lists(tmp_path: Path) -> None:
    log = tmp_path / "lines"
    brazilian = Rules.for_variant("brazilian")
    with pytest.raises(PlayerSpecError, match="plays the variants normal russian, not 'brazilian'"):
        parse_player_spec(f'hub:cmd="{fake("play", log)}"', brazilian)
    with parse_player_spec(f'hub:cmd="{fake("play", log)}",variant=brazilian', brazilian) as player:
        assert player.choose(Game(brazilian)) == parse_move(brazilian, Game(brazilian).position, "c3-b4")
    assert "set-param name=variant value=brazilian" in sent(log)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("hub", "hub needs cmd=COMMAND"),
        ("hub:time=0.1", "hub needs cmd=COMMAND"),
        ('hub:cmd="scan hub",speed=3', "unknown option 'speed'; known options: .*cmd.*param:NAME"),
        ('hub:cmd="scan hub",time=0', "time must be > 0"),
        ('hub:cmd="scan hub",depth=0', "depth must be >= 1"),
        ('hub:cmd="scan hub', 'the " quote after cmd= is not closed'),
        ('hub:cmd="scan \'hub"', 'hub engine command "scan \'hub": No closing quotation'),
        ("hub:cmd=/no/such/engine", "cannot start hub engine '/no/such/engine'"),
        ('hub:cmd="scan hub",cwd=/no/such/dir', "cwd '/no/such/dir' is not a directory"),
        ('hub:cmd="scan hub",param:=1', "param:NAME=VALUE"),
    ],
)
def test_spec_errors_are_clear(rules: Rules, spec: str, message: str) -> None:
    with pytest.raises(PlayerSpecError, match=message):
        parse_player_spec(spec, rules)


@pytest.mark.parametrize("variant", ["english", "italian", "turkish"])
def test_variants_without_a_hub_numbering_are_refused(variant: str) -> None:
    with pytest.raises(PlayerSpecError, match=f"international \\(Hub normal\\), russian.*; {variant} has no Hub"):
        parse_player_spec('hub:cmd="scan hub",variant=normal', Rules.for_variant(variant))


def test_a_game_mid_chain_or_over_is_refused(rules: Rules, tmp_path: Path) -> None:
    game = Game(rules, start=rules.parse_fen("W:Wc3:Bd4,f6,b8"))
    with parse_player_spec(f'hub:cmd="{fake("play", tmp_path / "lines")}"', rules) as player:
        game.play_hop(game.legal_hops()[0])  # c3xe5, one hop of two
        with pytest.raises(ValueError, match="whole moves only"):
            player.choose(game)
        with pytest.raises(ValueError, match="the game is over"):
            player.choose(Game(rules, start=rules.parse_fen("W:Wa1:Bb2,c3")))  # White is blocked
    assert "go think" not in sent(tmp_path / "lines")


def test_close_terminates_an_engine_that_ignores_quit(
    rules: Rules, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hub_module, "QUIT_WAIT_S", 0.3)
    player = parse_player_spec(f'hub:cmd="{fake("stubborn", tmp_path / "lines")}"', rules)
    pid = player.pid
    player.close()
    assert reaped(pid)
    assert sent(tmp_path / "lines")[-1] == "quit"


def test_a_collected_player_quits_its_engine(rules: Rules, tmp_path: Path) -> None:
    player = parse_player_spec(f'hub:cmd="{fake("play", tmp_path / "lines")}"', rules)
    pid = player.pid
    del player
    gc.collect()
    assert reaped(pid)
    assert sent(tmp_path / "lines")[-1] == "quit"


@pytest.mark.slow
@pytest.mark.parametrize("variant, level", [("russian", "depth=2"), ("international", "time=0.05")])
def test_tammi_rl_hub_as_an_outside_engine_plays_full_games(variant: str, level: str) -> None:
    rules = Rules.for_variant(variant)
    engine = parse_player_spec(f'hub:cmd="{TAMMI_HUB}",{level}', rules)
    random = parse_player_spec("random", rules)
    engine_moves = 0

    class Checked:
        """The engine, each move checked against the legal moves before it is played."""

        name = engine.name

        def choose(self, game: Game) -> object:
            nonlocal engine_moves
            move = engine.choose(game)
            assert move in game.legal_moves()
            engine_moves += 1
            return move

        def new_game(self, seed: int | None = None) -> None:
            engine.new_game(seed)

    try:
        result = run_match(rules, Checked(), random, games=4, seed=3, max_plies=200)  # type: ignore[arg-type]
    finally:
        engine.close()
    assert reaped(engine.pid)
    assert len(result.games) == 4 and all(g.game.is_over for g in result.games)
    assert engine_moves >= 4 * 5
    assert engine.errors == []
    assert result.wins >= 3, result.summary()  # a depth-2 search beats random moves


@pytest.mark.slow
def test_match_command_against_an_outside_engine(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pdn = tmp_path / "games.pdn"
    spec = f'hub:cmd="{TAMMI_HUB}",time=0.05,name=outside'
    assert main(["match", "russian", spec, "random", "--games", "2", "--out", str(pdn)]) == 0
    out = capsys.readouterr().out
    assert "outside vs random, 2 games" in out and "W/D/L" in out
    assert pdn.read_text(encoding="utf-8").count('[White "') == 2
