"""Alpha-beta speed: nodes per second and depth reached in one second, per variant.

    python -m tammi_rl.benchmarks.bench_alphabeta [--seconds 1.0] [--variants russian,english]

The middlegame of each variant is reached deterministically: the first shipped opening,
then depth-3 alpha-beta self-play up to ply 20 and on to the first position with four or
more legal moves and no capture (printed as FEN so it can be reused).
Each search starts from an empty transposition table; one warm-up search loads the
compiled code first. "CPU" divides by the process's CPU time, which is steadier than
wall time on a shared machine.
"""

from __future__ import annotations

import argparse
import time

from tammi_rl.players import AlphaBetaPlayer
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game
from tammi_rl.rules.variant import available_variants
from tammi_rl.search.alphabeta import AlphaBeta, SearchConfig
from tammi_rl.search.openings import load_openings


def middlegame(rules: Rules, plies: int = 20) -> Game:
    game = Game(rules)
    for move in load_openings(rules)[0].moves:
        game.play(move)
    player = AlphaBetaPlayer(rules, SearchConfig(depth=3))
    def quiet(g: Game) -> bool:
        moves = g.legal_moves()
        return len(moves) >= 4 and not moves[0].captures

    while (len(game.moves) < plies or not quiet(game)) and not game.is_over:
        game.play(player.choose(game))
    return game


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--variants", default=",".join(available_variants()))
    args = parser.parse_args()
    print(f"{'variant':<14} {'nodes/s':>10} {'(CPU)':>10} {'depth':>5} {'nodes':>9} {'seconds':>7}  FEN")
    for name in args.variants.split(","):
        rules = Rules.for_variant(name)
        game = middlegame(rules)
        pos = game.position
        AlphaBeta(rules, SearchConfig(depth=2)).search(pos)  # warm-up: load compiled code
        search = AlphaBeta(rules, SearchConfig(depth=None, time=args.seconds))
        cpu = time.process_time()
        result = search.search(pos)
        cpu = time.process_time() - cpu
        print(f"{name:<14} {result.nps:>10,.0f} {result.nodes / cpu:>10,.0f} {result.depth:>5} {result.nodes:>9} "
              f"{result.seconds:>7.2f}  {rules.fen(pos)}")


if __name__ == "__main__":
    main()
