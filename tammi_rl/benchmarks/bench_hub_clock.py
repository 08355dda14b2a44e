"""The Hub engine on the clock, as a GUI sees it: time used per move, ``stop`` and ``quit`` latency.

    python -m tammi_rl.benchmarks.bench_hub_clock --player alphabeta --move-time 1 --games 2
    python -m tammi_rl.benchmarks.bench_hub_clock --player mcts:model=russian --move-time 1 --games 2

``tammi-rl hub --player SPEC`` runs as a subprocess driven by pydraughts' `HubEngine` (a
client tammi-rl did not write), which sends ``level move-time=T`` before every engine move.
The engine plays against random replies (``--opponent random``, seeded) or against a second
``tammi-rl hub`` (``--opponent SPEC``). Printed per engine move: the seconds from ``go`` to
``done`` at the client, whether the move was forced (one legal move; answered at once) or
proven (a mate score), the depth and nodes the engine reported. Then the mean share of the
move time used on the moves that are neither, the maximum, and the issue's goals (mean at
least 60% of the move time, never more than 1.3x it). Then the latency of ``stop`` under
``level infinite`` (``go``, wait ``--stop-after`` seconds, ``stop``, time to ``done``; goal
50 ms) and of ``quit`` during such a search (time until the process exits).
"""

from __future__ import annotations

import argparse
import random
import shlex
import shutil
import statistics
import sys
import time
from dataclasses import dataclass

import draughts  # type: ignore[import-untyped]  # pydraughts (the test extra)
from draughts.engine import HubEngine, Limit  # type: ignore[import-untyped]

VARIANTS = {"russian": ("russian", "russian"), "international": ("standard", "normal"), "brazilian": ("brazilian",) * 2}
"""tammi-rl variant: (pydraughts variant, Hub variant name)."""
MEAN_GOAL = 0.6
MAX_GOAL = 1.3
STOP_GOAL_S = 0.05


@dataclass(frozen=True)
class MoveTime:
    game: int
    ply: int
    seconds: float
    forced: bool
    proven: bool
    depth: int | None
    nodes: int | None


def hub_command(spec: str) -> list[str]:
    """``tammi-rl hub --player SPEC`` as pydraughts starts it (through ``env``: pydraughts
    resolves the first word's links, which would lose a virtual environment's python)."""
    return [shutil.which("env") or "/usr/bin/env", shlex.quote(sys.executable), "-m", "tammi_rl.cli", "hub",
            "--player", shlex.quote(spec)]  # fmt: skip


def close(engine: HubEngine) -> None:
    """``quit``, wait for the process, close its pipes."""
    engine.quit()
    engine.p.wait(timeout=120)
    engine.p.stdin.close()
    engine.p.stdout.close()


def start_engine(spec: str, hub_variant: str) -> HubEngine:
    engine = HubEngine(hub_command(spec))
    engine.setoption("variant", hub_variant)
    engine.init()
    return engine


def play_games(args: argparse.Namespace) -> list[MoveTime]:
    """The engine's moves over ``args.games`` games, colours alternating."""
    pyd_variant, hub_variant = VARIANTS[args.variant]
    engine = start_engine(args.player, hub_variant)
    other = start_engine(args.opponent, hub_variant) if args.opponent != "random" else None
    rng = random.Random(args.seed)
    moves: list[MoveTime] = []
    try:
        for number in range(args.games):
            engine.send("new-game")
            if other is not None:
                other.send("new-game")
            board = draughts.Board(variant=pyd_variant)
            side = draughts.WHITE if number % 2 == 0 else draughts.BLACK
            while not board.is_over() and len(board.move_stack) < args.max_plies:
                if board.turn == side:
                    forced = len(board.legal_moves()) == 1
                    tic = time.perf_counter()
                    result = engine.play(board, Limit(movetime=args.move_time), ponder=False)
                    seconds = time.perf_counter() - tic
                    info = result.info or {}
                    proven = "win" in (info.get("score") or {})
                    record = MoveTime(
                        number + 1,
                        len(board.move_stack) + 1,
                        seconds,
                        forced,
                        proven,
                        info.get("depth"),
                        info.get("nodes"),
                    )
                    moves.append(record)
                    flag = "forced" if forced else "proven" if proven else ""
                    print(
                        f"game {record.game} ply {record.ply:3d}: {seconds:6.3f} s  {seconds / args.move_time:5.0%}  "
                        f"depth {record.depth}  nodes {record.nodes}  {flag}",
                        flush=True,
                    )
                    move = result.move
                elif other is not None:
                    move = other.play(board, Limit(movetime=args.move_time), ponder=False).move
                else:
                    move = rng.choice(board.legal_moves())
                board.push(move)
            print(f"game {number + 1}: {len(board.move_stack)} plies, winner {board.winner()}", flush=True)
    finally:
        for e in (engine, other):
            if e is not None:
                close(e)
    return moves


def _start_position(hub_variant: str) -> str:
    return "W" + "b" * 12 + "e" * 8 + "w" * 12 if hub_variant != "normal" else "W" + "b" * 20 + "e" * 10 + "w" * 20


def _go_infinite(engine: HubEngine, hub_variant: str) -> None:
    engine.send(f"pos pos={_start_position(hub_variant)}")
    engine.send("level infinite")
    engine.send("go analyze")


def stop_latency(args: argparse.Namespace) -> list[float]:
    """Seconds from ``stop`` to ``done`` under ``level infinite``, one per trial."""
    _, hub_variant = VARIANTS[args.variant]
    engine = start_engine(args.player, hub_variant)
    out = []
    try:
        for _ in range(args.stop_trials):
            _go_infinite(engine, hub_variant)
            time.sleep(args.stop_after)
            tic = time.perf_counter()
            engine.send("stop")
            while engine.recv_hub()[0] != "done":
                pass
            out.append(time.perf_counter() - tic)
    finally:
        close(engine)
    return out


def quit_latency(args: argparse.Namespace) -> list[float]:
    """Seconds from ``quit`` during a ``level infinite`` search to the process's exit, one per trial."""
    _, hub_variant = VARIANTS[args.variant]
    out = []
    for _ in range(args.quit_trials):
        engine = start_engine(args.player, hub_variant)
        _go_infinite(engine, hub_variant)
        time.sleep(args.stop_after)
        tic = time.perf_counter()
        engine.send("quit")
        engine.p.wait(timeout=120)
        out.append(time.perf_counter() - tic)
        engine.p.stdin.close()
        engine.p.stdout.close()
    return out


def report(args: argparse.Namespace, moves: list[MoveTime], stops: list[float], quits: list[float]) -> None:
    t = args.move_time
    searched = [m for m in moves if not m.forced and not m.proven]
    forced = [m for m in moves if m.forced]
    print(f"\n{args.player} at move-time={t:g} vs {args.opponent}, {args.variant}, {args.games} games")
    proven = sum(m.proven for m in moves)
    print(f"engine moves {len(moves)}: {len(forced)} forced, {proven} proven, {len(searched)} searched")
    if forced:
        print(f"forced moves: at most {max(m.seconds for m in forced):.3f} s")
    if searched:
        shares = [m.seconds / t for m in searched]
        worst = max(m.seconds for m in moves)
        print(
            f"searched moves: mean {statistics.mean(shares):.0%} of the move time (goal >= {MEAN_GOAL:.0%}), "
            f"min {min(shares):.0%}, max {max(shares):.0%}; longest move {worst:.3f} s (goal <= {MAX_GOAL * t:.2f} s)"
        )
    if stops:
        print(
            f"stop under level infinite: mean {1e3 * statistics.mean(stops):.1f} ms, max {1e3 * max(stops):.1f} ms "
            f"over {len(stops)} (goal <= {1e3 * STOP_GOAL_S:.0f} ms)"
        )
    if quits:
        print(f"quit during a search: exit after mean {statistics.mean(quits):.3f} s, max {max(quits):.3f} s")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--player", default="alphabeta", help="the engine's player spec (default alphabeta)")
    parser.add_argument("--move-time", type=float, default=1.0, help="seconds a move (default 1)")
    parser.add_argument("--games", type=int, default=2, help="games, colours alternating (default 2)")
    parser.add_argument("--variant", choices=sorted(VARIANTS), default="russian")
    parser.add_argument("--opponent", default="random", help="random (seeded) or a second engine's spec")
    parser.add_argument("--max-plies", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stop-trials", type=int, default=5, help="stop-latency trials (0: none)")
    parser.add_argument("--quit-trials", type=int, default=2, help="quit-latency trials (0: none)")
    parser.add_argument("--stop-after", type=float, default=0.5, help="seconds of search before stop or quit")
    args = parser.parse_args(argv)
    if not args.move_time > 0:
        parser.error(f"--move-time must be > 0, got {args.move_time}")
    moves = play_games(args) if args.games > 0 else []
    stops = stop_latency(args) if args.stop_trials > 0 else []
    quits = quit_latency(args) if args.quit_trials > 0 else []
    report(args, moves, stops, quits)


if __name__ == "__main__":
    main()
