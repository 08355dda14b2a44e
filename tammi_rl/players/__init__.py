"""Players: anything that chooses a whole legal move for a game position.

    player = parse_player_spec("alphabeta:depth=6,seed=1", rules)
    move = player.choose(game)          # a Move from game.legal_moves()

A player spec is ``KIND`` or ``KIND:key=value,key=value``. Shipped kinds:

* ``random[:seed=S]``: a uniformly random legal move;
* ``human``: moves typed at the terminal (`HumanPlayer`);
* ``alphabeta[:depth=D,time=T,nodes=N,margin=M,seed=S,tt_bits=B,<weight>=V]`` (alias
  ``ab``): the compiled alpha-beta baseline (`AlphaBetaPlayer`);
* ``mcts:checkpoint=PATH[,sims=N,algorithm=gumbel|puct,device=auto,name=...]``: a trained
  network with MCTS (`tammi_rl.players.mcts`; torch is imported only when one is made);
* ``hub:cmd=COMMAND[,time=T,depth=D,nodes=N,name=...,variant=...,cwd=DIR,param:NAME=V]``:
  an outside Hub-protocol engine run as a subprocess (`tammi_rl.players.hub_player`).

Other code adds kinds with `register_player_kind`. `tammi_rl.players.analysis.analyse`
says what any player thinks of a position (move, value, WDL, PV, hop shares) within
time, depth or node limits; the Hub engine and the web page show it.
"""

from __future__ import annotations

from tammi_rl.players.alphabeta import AlphaBetaPlayer, make_alphabeta_player
from tammi_rl.players.base import Player, PlayerQuit
from tammi_rl.players.simple import HumanPlayer, RandomPlayer, make_human_player, make_random_player
from tammi_rl.players.spec import (
    PLAYER_KINDS,
    PlayerSpec,
    PlayerSpecError,
    parse_player_spec,
    register_player_kind,
)
from tammi_rl.rules.engine import Rules


def _make_mcts(rules: Rules, options: dict[str, str], spec: str) -> Player:
    from tammi_rl.players.mcts import make_mcts_player  # lazy: imports torch, only when an mcts player is made

    return make_mcts_player(rules, options, spec)


def _make_hub(rules: Rules, options: dict[str, str], spec: str) -> Player:
    from tammi_rl.players.hub_player import make_hub_player  # lazy: it uses tammi_rl.hub's notation

    return make_hub_player(rules, options, spec)


register_player_kind("random", make_random_player)
register_player_kind("human", make_human_player)
register_player_kind("alphabeta", make_alphabeta_player)
register_player_kind("ab", make_alphabeta_player)
register_player_kind("mcts", _make_mcts)
register_player_kind("hub", _make_hub)

__all__ = [
    "PLAYER_KINDS",
    "AlphaBetaPlayer",
    "HumanPlayer",
    "Player",
    "PlayerQuit",
    "PlayerSpec",
    "PlayerSpecError",
    "RandomPlayer",
    "parse_player_spec",
    "register_player_kind",
]
