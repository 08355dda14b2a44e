"""Players interface, player specs and the human terminal player."""

from __future__ import annotations

import io

import pytest

from tammi_rl.players import (
    AlphaBetaPlayer,
    HumanPlayer,
    Player,
    PlayerQuit,
    PlayerSpec,
    PlayerSpecError,
    RandomPlayer,
    parse_player_spec,
)
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game
from tammi_rl.rules.notation import parse_move


@pytest.fixture(scope="module")
def rules() -> Rules:
    return Rules.for_variant("russian")


def test_spec_parsing(rules: Rules) -> None:
    assert PlayerSpec.parse("alphabeta:depth=6,seed=1") == PlayerSpec("alphabeta", {"depth": "6", "seed": "1"})
    player = parse_player_spec("alphabeta:depth=4,margin=10,seed=3,king=320", rules)
    assert isinstance(player, AlphaBetaPlayer) and isinstance(player, Player)
    assert player.config.depth == 4 and player.config.margin == 10 and player.seed == 3
    assert player.search.weights.king == 320
    timed = parse_player_spec("ab:time=0.5", rules)
    assert timed.config.depth is None and timed.config.time == 0.5
    assert isinstance(parse_player_spec("random:seed=2", rules), RandomPlayer)
    assert isinstance(parse_player_spec(" Human ", rules), HumanPlayer)


def test_spec_values_may_be_quoted() -> None:
    """A value quoted right after its ``=`` holds commas, spaces and the other quote; a quote
    elsewhere is an ordinary character (specs written before quoting mean what they meant)."""
    assert PlayerSpec.parse('hub:cmd="scan hub",time=0.1').options == {"cmd": "scan hub", "time": "0.1"}
    assert PlayerSpec.parse("x:a='p,q=r' , b= \" s \" ,").options == {"a": "p,q=r", "b": " s "}
    assert PlayerSpec.parse("""x:cmd='run "a b"',name=O'Brien""").options == {"cmd": 'run "a b"', "name": "O'Brien"}
    assert PlayerSpec.parse("mcts:checkpoint=/a/b.pt,sims=8").options == {"checkpoint": "/a/b.pt", "sims": "8"}


@pytest.mark.parametrize(
    "spec, message",
    [
        ("", "empty player spec"),
        ('x:cmd="scan hub', 'the " quote after cmd= is not closed'),
        ('x:cmd="scan" hub,time=1', "text after the quoted value of 'cmd'"),
        ('x:cmd=""', "option 'cmd=\"\"' must look like key=value"),
        ("minimax:depth=3", "unknown player kind 'minimax'.*known kinds: ab, alphabeta, hub, human, mcts, random"),
        ("alphabeta:depth", "option 'depth' must look like key=value"),
        ("alphabeta:depth=six", "depth must be a whole number, got 'six'"),
        ("alphabeta:depth=0", "depth must be >= 1"),
        ("alphabeta:depth=3,depth=4", "given twice"),
        ("alphabeta:speed=3", "unknown option 'speed'; known options: .*depth"),
        ("alphabeta:time=-1", "time must be > 0"),
        ("random:depth=3", "unknown option 'depth'; known options: seed"),
    ],
)
def test_spec_errors_are_clear(rules: Rules, spec: str, message: str) -> None:
    with pytest.raises(PlayerSpecError, match=message):
        parse_player_spec(spec, rules)


def test_random_player_is_seeded(rules: Rules) -> None:
    game = Game(rules)
    a = [RandomPlayer(5).choose(game) for _ in range(3)]
    assert len(set(a)) == 1 and a[0] in game.legal_moves()


def test_human_player_reprompts_and_lists_legal_moves(rules: Rules) -> None:
    game = Game(rules)
    out = io.StringIO()
    human = HumanPlayer(io.StringIO("\nmoves\nzz\nc3-d5\nc3-e5\nc3-d4\n"), out)
    move = human.choose(game)
    assert rules.square_name(move.start) == "c3" and rules.square_name(move.end) == "d4"
    text = out.getvalue()
    assert text.count("legal moves:") >= 4  # 'moves', and each bad input is answered with the list
    assert "a3-b4" in text


@pytest.mark.parametrize("text, resign", [("quit\n", False), ("resign\n", True), ("", False)])
def test_human_player_stops(rules: Rules, text: str, resign: bool) -> None:
    with pytest.raises(PlayerQuit) as info:
        HumanPlayer(io.StringIO(text), io.StringIO()).choose(Game(rules))
    assert info.value.resign is resign


def test_reversible_history_stops_at_irreversible_moves(rules: Rules) -> None:
    game = Game(rules, start=rules.parse_fen("W:WKc1,h2:BKh8,f8"))
    for text in ("c1-d2", "h8-g7", "h2-g3", "g7-h8", "d2-c1"):
        game.play(parse_move(rules, game.position, text))
    # h2-g3 (a man move) is irreversible: only the positions after it count
    assert game.reversible_history() == game.positions[3:5]
    game.play(parse_move(rules, game.position, "f8-e7"))  # another man move: nothing before it
    assert game.reversible_history() == []
    game.play(parse_move(rules, game.position, "c1-d2"))
    assert game.reversible_history() == [game.positions[-2]]


def test_alphabeta_player_plays_legal_moves_in_a_game(rules: Rules) -> None:
    player = parse_player_spec("alphabeta:depth=3", rules)
    game = Game(rules, max_plies=20)
    while not game.is_over:
        game.play(player.choose(game))
    assert len(game.moves) == 20 or game.result.reason != "adjudication"


@pytest.mark.parametrize("device", ["cuda", "cuda:0", "cuda:1"])
def test_mcts_spec_on_a_gpu_that_is_not_there_is_a_spec_error(
    rules: Rules, monkeypatch: pytest.MonkeyPatch, device: str
) -> None:
    """device=cuda on a torch without CUDA: a one-line PlayerSpecError naming the spec and the
    fix, before any loading (not torch's 'Torch not compiled with CUDA enabled' traceback)."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    spec = f"mcts:model=russian,device={device}"
    with pytest.raises(PlayerSpecError) as info:
        parse_player_spec(spec, rules)
    message = str(info.value)
    assert message.startswith(f"player spec {spec!r}: device={device} but CUDA is not available here")
    assert "use device=cpu" in message and "\n" not in message


def test_mcts_spec_on_a_gpu_index_past_the_last_is_a_spec_error(rules: Rules, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    with pytest.raises(PlayerSpecError, match=r"device=cuda:1 but this machine has 1 GPU\(s\), cuda:0 to cuda:0"):
        parse_player_spec("mcts:model=russian,device=cuda:1", rules)


@pytest.mark.parametrize("device", ["cuda:x", "cudax", "cuda:-1"])
def test_mcts_spec_with_a_malformed_gpu_name_is_a_spec_error(device: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from tammi_rl.players.mcts import check_device

    monkeypatch.setattr("torch.cuda.is_available", lambda: True)
    monkeypatch.setattr("torch.cuda.device_count", lambda: 1)
    with pytest.raises(PlayerSpecError, match="device must be cpu, auto, cuda or cuda:N"):
        check_device(f"mcts:model=russian,device={device}", device)
