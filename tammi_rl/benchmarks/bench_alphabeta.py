"""Alpha-beta speed: nodes per second and depth reached in one second, per variant.

    python -m tammi_rl.benchmarks.bench_alphabeta [--seconds 1.0] [--variants russian,english]

Each variant searches a pinned middlegame (`MIDDLEGAMES`), so figures stay comparable
when the search changes. They were made by earlier versions of `middlegame` (its output
moves whenever the search does): the first shipped opening, then
depth-3 alpha-beta self-play up to ply 20 and on to the first position with four or more
legal moves and no capture. A variant without a pinned FEN uses `middlegame` directly.
Each search starts from an empty transposition table; one warm-up search loads the
compiled code first. "CPU" divides by the process's CPU time, which is steadier than
wall time on a shared machine.
"""

from __future__ import annotations

import argparse
import time

from tammi_rl.alphabeta.driver import AlphaBeta, AlphaBetaConfig
from tammi_rl.eval.openings import load_openings
from tammi_rl.players import AlphaBetaPlayer
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game
from tammi_rl.rules.variant import available_variants

MIDDLEGAMES = {
    "russian": "B:Wa3,a5,b2,c1,c3,e1,f4,h2:Ba7,b8,c7,d8,f6,f8,g7,h4",
    "english": "B:W19,20,21,22,23,24,27,30,32:B2,3,4,5,6,9,11,12,14",
    "italian": "W:W17,18,22,26,27,28,29,31,32:B1,3,4,6,9,10,13,16,20",
    "brazilian": "W:Wa1,a3,a5,c1,c3,d2,e1,h2:Bb8,c5,c7,d8,f6,f8,g7,h4",
    "turkish": "W:Wa2,a3,a4,b3,c2,c3,c4,d4,e2,e3,f2,f3,f4,g3,h2,h3:Ba6,a7,b5,b7,c5,c6,c7,d6,e5,e6,f5,f6,f7,g6,h5,h7",
    "international": "B:W26,28,31,34,35,36,40,41,42,44,45,46,47,48,49,50:B1,2,3,4,5,6,8,9,10,11,12,13,15,17,24",
}


def middlegame(rules: Rules, plies: int = 20) -> Game:
    game = Game(rules)
    for move in load_openings(rules)[0].moves:
        game.play(move)
    player = AlphaBetaPlayer(rules, AlphaBetaConfig(depth=3))

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
        fen = MIDDLEGAMES.get(name)
        pos = rules.parse_fen(fen) if fen else middlegame(rules).position
        AlphaBeta(rules, AlphaBetaConfig(depth=2)).search(pos)  # warm-up: load compiled code
        search = AlphaBeta(rules, AlphaBetaConfig(depth=None, time=args.seconds))
        cpu = time.process_time()
        result = search.search(pos)
        cpu = time.process_time() - cpu
        print(
            f"{name:<14} {result.nps:>10,.0f} {result.nodes / cpu:>10,.0f} {result.depth:>5} {result.nodes:>9} "
            f"{result.seconds:>7.2f}  {rules.fen(pos)}"
        )


if __name__ == "__main__":
    main()
