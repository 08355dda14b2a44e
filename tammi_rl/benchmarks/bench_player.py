"""Simulations per second of MCTS players at play (a script, not a test).

    python -m tammi_rl.benchmarks.bench_player [--variant russian] [--games 2] [--plies 60]
        [--arms SPEC SPEC ...]

Plays ``--games`` games of alpha-beta against itself from the variant's first openings and
lets every arm (an ``mcts:`` player spec) search the positions of one side in game order, as
it would in a match: its evaluation cache carries over from move to move. The arms take
turns position by position, so the machine's noise falls on all of them alike. Prints, per
arm: simulations per second over the searched hops, network positions per simulation (what
the cache and the collisions leave), mean leaves per network call, and the ratio to the
first arm. The default arms are today's shipped player (``batch=16``, the cache, 8-bit
ONNX Runtime) against the one-leaf float32 player the project shipped before.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import torch

from tammi_rl.alphabeta.driver import AlphaBetaConfig
from tammi_rl.eval.openings import load_openings
from tammi_rl.players import parse_player_spec
from tammi_rl.players.alphabeta import AlphaBetaPlayer
from tammi_rl.players.mcts import MCTSPlayer
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game

DEFAULT_ARMS = (
    "mcts:model=russian,sims=800,runtime=onnx,batch=1,cache=0",
    "mcts:model=russian,sims=800",
)


@dataclass
class ArmStats:
    spec: str
    seconds: float = 0.0
    simulations: int = 0
    nn_positions: int = 0
    nn_calls: int = 0


def game_positions(rules: Rules, games: int, plies: int, depth: int) -> list[list[Game]]:
    """Per game, the positions White faces in a game of alpha-beta (``depth``) against itself."""
    openings = load_openings(rules)
    record: list[list[Game]] = []
    for i in range(games):
        game = Game(rules, start=openings[i % len(openings)].position(rules) if openings else None)
        player = AlphaBetaPlayer(rules, AlphaBetaConfig(depth=depth, margin=20), seed=i)
        seen: list[Game] = []
        while not game.is_over and len(seen) < plies // 2:
            if game.side == 0 and len(game.legal_moves()) > 1:
                seen.append(game.copy())
            game.play(player.choose(game))
        record.append(seen)
    return record


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variant", default="russian")
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--plies", type=int, default=60, help="plies per game (default 60)")
    parser.add_argument("--depth", type=int, default=4, help="depth of the alpha-beta that plays the games")
    parser.add_argument("--arms", nargs="+", default=list(DEFAULT_ARMS), help="mcts: player specs")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    rules = Rules.for_variant(args.variant)
    players = [parse_player_spec(spec, rules) for spec in args.arms]
    if not all(isinstance(p, MCTSPlayer) for p in players):
        parser.error("every arm must be an mcts: player spec")
    record = game_positions(rules, args.games, args.plies, args.depth)
    for player in players:  # compile, warm up, calibrate 8 bits, then start the count afresh
        assert isinstance(player, MCTSPlayer)
        player.analyse(record[0][0], simulations=400)
        player.search.clear_cache()
    stats = [ArmStats(spec) for spec in args.arms]
    for g, positions in enumerate(record):
        for i, game in enumerate(positions):
            order = range(len(players)) if (g + i) % 2 == 0 else reversed(range(len(players)))
            for a in order:
                player, st = players[a], stats[a]
                assert isinstance(player, MCTSPlayer)
                search = player.search
                before = (search.simulations, search.nn_positions, search.nn_calls)
                tic = time.perf_counter()
                player.choose(game)
                st.seconds += time.perf_counter() - tic
                st.simulations += search.simulations - before[0]
                st.nn_positions += search.nn_positions - before[1]
                st.nn_calls += search.nn_calls - before[2]
        for player in players:
            assert isinstance(player, MCTSPlayer)
            player.search.clear_cache()  # a new game: a new match's player would start empty
    searched = sum(len(p) for p in record)
    print(f"{args.variant}: {args.games} games, {searched} positions searched per arm, one thread")
    base = stats[0].simulations / stats[0].seconds
    for st in stats:
        rate = st.simulations / st.seconds
        print(
            f"{rate:8.0f} sims/s  x{rate / base:4.2f}  "
            f"network positions/sim {st.nn_positions / max(st.simulations, 1):.2f}  "
            f"leaves/call {st.nn_positions / max(st.nn_calls, 1):5.1f}  {st.spec}"
        )


if __name__ == "__main__":
    main()
