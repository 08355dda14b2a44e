"""The ``tammi-rl eval`` and ``tammi-rl match`` subcommands (registered in `tammi_rl.cli.main`).

    tammi-rl match russian alphabeta:depth=6 alphabeta:depth=2 --games 20
    tammi-rl eval runs/russian/checkpoints/ckpt_000050.pt --vs alphabeta:depth=1,2,4,6 --games 20
    tammi-rl eval runs/russian --gauntlet --vs alphabeta:depth=1,2,4 --anchor alphabeta:depth=2 --games 10

A checkpoint (or a run directory's latest checkpoint) plays the MCTS agent at ``--sims``
simulations per hop against each opponent: colour-paired games from the variant's
balanced openings. Printed: W/D/L and score with its 95% CI per opponent, then Elo
ratings fitted over all games (anchored on ``--anchor``). ``--gauntlet`` rates every
checkpoint of a run instead (`tammi_rl.eval.gauntlet`). Written to ``--out`` (default
``./eval_NAME``, or ``./gauntlet_RUN``, in the current directory): all games as
``games.pdn``, ``summary.json`` and ``summary.csv`` (one row per match), and in gauntlet
mode ``ladder.csv`` and ``ladder.png``. ``match`` writes its games to ``--out`` (default
``./match_VARIANT.pdn``). Outputs never go next to the checkpoint: a shipped model lives
inside the installed package (`tammi_rl.cli.outputs`).

``--vs`` takes player specs (`tammi_rl.players`); a comma-separated list of bare values
repeats the option before it, so ``alphabeta:depth=1,2,4`` means three opponents.
``--vs`` may be given several times (``--vs random --vs alphabeta:depth=2``).

``--time SECONDS`` (both commands) sets a time per move for both sides: ``time=SECONDS``
is added to every spec of a kind that searches on the clock (`TIMED_KINDS`) and sets no
``time`` of its own, and ``eval``'s agent searches each move until that deadline
(``--sims``, when given too, caps each hop). A spec's own ``depth``/``sims`` still caps its
search. The time per move is printed and written to the summary and the PDN ``Event``.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from pathlib import Path
from typing import TextIO

from tammi_rl.cli.outputs import output_path, pdn_date, shown
from tammi_rl.config import SEARCH_ALGORITHMS
from tammi_rl.eval.arena import Arena, match_row
from tammi_rl.eval.elo import fit_elo
from tammi_rl.eval.match import DEFAULT_MAX_PLIES, MatchGame, MatchResult, match_pdn, run_match
from tammi_rl.eval.openings import load_openings, read_openings
from tammi_rl.players import PlayerSpec, PlayerSpecError, parse_player_spec
from tammi_rl.players.spec import MAX_SECONDS, split_options
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.errors import TammiError

DEFAULT_VS = "alphabeta:depth=1,2,4,6"
DEFAULT_SIMS = 64
TIMED_KINDS = ("alphabeta", "ab", "mcts", "hub")
"""Player kinds whose specs take ``time=SECONDS`` (a time per move), which ``--time`` sets."""


def with_time(text: str, seconds: float | None) -> str:
    """``text`` with ``time=seconds`` added when its kind searches on the clock and it sets no
    time of its own (any other spec, or ``seconds`` None: ``text`` unchanged)."""
    if seconds is None:
        return text
    spec = PlayerSpec.parse(text)
    if spec.kind not in TIMED_KINDS or "time" in spec.options:
        return text
    body = text.strip().rstrip(",")
    if ":" not in body:
        return f"{body}:time={seconds}"
    return f"{body}{'' if body.endswith(':') else ','}time={seconds}"


def check_time(seconds: float | None) -> None:
    """A `TammiError` unless ``--time`` is unset or a finite number of seconds > 0."""
    if seconds is not None and not (0 < seconds <= MAX_SECONDS and math.isfinite(seconds)):
        raise TammiError(f"--time must be a number of seconds > 0 (at most {MAX_SECONDS:g}), got {seconds}")


def _add_time_argument(parser: argparse.ArgumentParser, who: str) -> None:
    parser.add_argument(
        "--time",
        type=float,
        metavar="SECONDS",
        help=f"time per move for {who}: adds time=SECONDS to every alphabeta/ab, mcts and hub spec "
        "that sets no time (a spec's own depth or sims still caps it)",
    )


def expand_specs(text: str) -> list[str]:
    """``kind:key=1,2,other=x`` -> one spec per value combination (bare values repeat the key before)."""
    kind, colon, rest = text.strip().partition(":")
    if not colon:
        return [text.strip()]
    options: list[tuple[str, list[str]]] = []
    for item in filter(None, (part.strip() for part in split_options(rest, text))):
        if "=" in item:
            key, _, value = item.partition("=")
            options.append((key.strip(), [value.strip()]))
        elif options:
            options[-1][1].append(item)
        else:
            raise PlayerSpecError(f"player spec {text!r}: option {item!r} must look like key=value")
    specs = [""]
    for key, values in options:
        specs = [f"{s},{key}={v}" if s else f"{key}={v}" for s in specs for v in values]
    return [f"{kind}:{s}" if s else kind for s in specs]


def add_eval_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "target",
        metavar="CHECKPOINT_OR_RUN_DIR",
        help="a checkpoint file (.pt) or a run directory (its latest checkpoint; all with --gauntlet)",
    )
    parser.add_argument(
        "--vs",
        action="append",
        metavar="SPEC",
        help=f"opponent spec(s); 'alphabeta:depth=1,2,4' expands to three (default {DEFAULT_VS})",
    )
    parser.add_argument("--games", type=int, default=20, help="games per pairing, colours paired (default 20)")
    parser.add_argument(
        "--sims",
        type=int,
        help=f"MCTS simulations per hop for the agent (default {DEFAULT_SIMS}; with --time: a cap per hop, "
        "none by default)",
    )
    _add_time_argument(parser, "the agent and every opponent")
    parser.add_argument("--algorithm", choices=SEARCH_ALGORITHMS, help="search (default: the run's eval.algorithm)")
    parser.add_argument(
        "--anchor",
        metavar="SPEC",
        help="the player rated --anchor-elo (default: the first --vs opponent); added if not in --vs",
    )
    parser.add_argument("--anchor-elo", type=float, default=0.0, help="the anchor's rating (default 0)")
    parser.add_argument(
        "--gauntlet",
        action="store_true",
        help="rate every checkpoint of the run against the opponents and its neighbour",
    )
    parser.add_argument("--no-neighbours", action="store_true", help="gauntlet: skip checkpoint-vs-next games")
    parser.add_argument(
        "--out",
        metavar="DIR",
        help="directory for games.pdn, summary.json and summary.csv (and ladder.csv, ladder.png with --gauntlet); "
        "default: eval_NAME in the current directory, NAME being the shipped model, the checkpoint file's stem or "
        "the run directory's name (gauntlet_RUN with --gauntlet), with _2, _3, ... added when that name is taken",
    )
    parser.add_argument("--seed", type=int, default=0, help="arena seed (default 0)")
    parser.add_argument("--max-plies", type=int, help="adjudicate after this many plies (default: the run's cap)")
    parser.add_argument("--openings", help="openings file (default: envs/openings/VARIANT.txt)")
    parser.add_argument("--device", default="auto", help="torch device for the network (default auto)")
    parser.add_argument("--quiet", action="store_true", help="no per-game lines")


def run_eval_command(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Play the evaluation, print the summary, write PDN/JSON/CSV (and the ladder in gauntlet mode)."""
    # Lazy: these import torch, and every command builds this module's parser (keeps --help fast).
    from tammi_rl.eval.gauntlet import plot_ladder, run_checkpoints, run_gauntlet, write_ladder_csv
    from tammi_rl.players.mcts import load_agent
    from tammi_rl.store.checkpoint import load_checkpoint

    out = out or sys.stdout
    if args.games < 1:
        raise TammiError(f"--games must be >= 1, got {args.games}")
    if args.sims is not None and args.sims < 1:
        raise TammiError(f"--sims must be >= 1, got {args.sims}")
    seconds = getattr(args, "time", None)
    check_time(seconds)
    sims = args.sims if args.sims is not None else DEFAULT_SIMS
    cap = args.sims if seconds is not None else None  # on the clock, --sims only caps a hop
    budget = f"{seconds:g} s a move" if seconds is not None else f"{sims} sims"
    target = Path(args.target)
    ckpt_path, run_dir = _resolve_target(target, args.gauntlet)
    ckpt = load_checkpoint(ckpt_path)
    rules = Rules.for_variant(ckpt["variant"])

    specs = [with_time(s, seconds) for text in (args.vs or [DEFAULT_VS]) for s in expand_specs(text)]
    opponents = [parse_player_spec(s, rules) for s in specs]
    anchor = parse_player_spec(with_time(args.anchor, seconds), rules) if args.anchor else opponents[0]
    names = [o.name for o in opponents]
    if len(set(names)) != len(names):
        raise TammiError(f"two opponents have the same name ({', '.join(names)}); add name=... to a spec")
    if anchor.name not in names:
        opponents.append(anchor)
        print(f"anchor {anchor.name} added to the opponents", file=out)

    saved_config = ckpt.get("config")
    run_cfg: dict = saved_config if isinstance(saved_config, dict) else {}
    max_plies = args.max_plies or run_cfg.get("selfplay", {}).get("max_plies") or DEFAULT_MAX_PLIES
    openings = read_openings(rules, args.openings) if args.openings else load_openings(rules)
    arena = Arena(rules, openings, max_plies, args.seed)
    out_dir = output_path(args.out, _default_stem(ckpt_path, run_dir, args.gauntlet))

    def on_game(i: int, record: MatchGame) -> None:
        if not args.quiet:
            print("  " + record.summary(i), file=out, flush=True)

    def on_match(result: MatchResult) -> None:
        print(_match_line(result), file=out, flush=True)

    summary: dict = {
        "variant": rules.variant.name,
        "sims": cap if seconds is not None else sims,
        "time_per_move": seconds,
        "games_per_pairing": args.games,
        "opponents": [o.name for o in opponents],
        "max_plies": max_plies,
        "seed": args.seed,
    }
    if args.gauntlet:
        assert run_dir is not None  # _resolve_target requires a run directory for --gauntlet
        entries = run_checkpoints(run_dir)
        print(
            f"gauntlet of {len(entries)} checkpoints of {run_dir} at {budget} vs "
            f"{', '.join(o.name for o in opponents)}; anchor {anchor.name}",
            file=out,
            flush=True,
        )
        result = run_gauntlet(
            arena,
            entries,
            lambda e: load_agent(
                rules,
                str(e.path),
                sims,
                args.device,
                args.algorithm,
                name=e.name,
                time_s=seconds,
                simulations_cap=cap,
            ),
            opponents,
            anchor.name,
            args.games,
            neighbours=not args.no_neighbours,
            anchor_rating=args.anchor_elo,
            on_match=on_match,
            on_game=on_game,
        )
        fit = result.fit
        print(result.table(), file=out)
        out_dir.mkdir(parents=True, exist_ok=True)
        write_ladder_csv(result.rows, out_dir / "ladder.csv")
        plot_ladder(result, out_dir / "ladder.png", title=f"{run_dir.name}: Elo ladder ({budget})")
        summary |= {"run_dir": str(run_dir), "mode": "gauntlet", "ladder": [r.to_dict() for r in result.rows]}
    else:
        agent = load_agent(
            rules,
            str(ckpt_path),
            sims,
            args.device,
            args.algorithm,
            name=_agent_name(ckpt_path, run_dir),
            time_s=seconds,
            simulations_cap=cap,
        )
        if agent.name in names:
            raise TammiError(f"an opponent is named like the agent ({agent.name!r}); add name=... to its spec")
        print(
            f"{agent.name} ({ckpt_path}) at {budget} vs {', '.join(o.name for o in opponents)}",
            file=out,
            flush=True,
        )
        for opponent in opponents:
            on_match(arena.play(agent, opponent, args.games, on_game))
        fit = fit_elo(arena.elo_games(), anchor=anchor.name, anchor_rating=args.anchor_elo)
        print(fit.table(), file=out)
        summary |= {"checkpoint": str(ckpt_path), "mode": "single", "agent": agent.name}
    summary |= {"anchor": anchor.name, "matches": [match_row(m) for m in arena.matches], "elo": fit.to_dict()}
    event = "tammi-rl eval" + (f", {seconds:g} s a move" if seconds is not None else "")
    _write_outputs(out_dir, arena, summary, event)
    print(f"{len(arena.records)} games and the summary written to {shown(out_dir)}", file=out)
    return 0


def _resolve_target(target: Path, gauntlet: bool) -> tuple[Path, Path | None]:
    """(checkpoint to read the variant from, run directory or None)."""
    # Lazy: the checkpoint store imports torch (see run_eval_command).
    from tammi_rl.store.checkpoint import CheckpointError
    from tammi_rl.store.rundir import RunDir
    from tammi_rl.store.shipped import shipped_models

    if not target.exists():
        shipped = shipped_models()
        if str(target) in shipped and not gauntlet:  # a shipped model's name: tammi-rl eval russian
            return shipped[str(target)], None
        names = ", ".join(shipped) or "none"
        raise CheckpointError(
            f"{target}: no checkpoint file or run directory there, and no shipped model of that name "
            f"(shipped models: {names})"
        )
    if target.is_dir():
        run = RunDir(target)
        found = run.resume_checkpoint()
        if found is None:
            raise CheckpointError(f"{target}: no checkpoints in {run.checkpoints_dir}")
        return found, target
    if gauntlet:
        raise CheckpointError(f"{target}: --gauntlet needs a run directory, not a checkpoint file")
    return target, None


def _default_stem(ckpt_path: Path, run_dir: Path | None, gauntlet: bool) -> str:
    """``eval_NAME`` (shipped model, checkpoint stem or run name) or ``gauntlet_RUN``."""
    if run_dir is not None:
        return f"{'gauntlet' if gauntlet else 'eval'}_{run_dir.resolve().name}"
    return f"eval_{ckpt_path.stem}"


def _agent_name(ckpt_path: Path, run_dir: Path | None) -> str:
    if run_dir is not None:
        return f"{run_dir.resolve().name}/{ckpt_path.stem}"
    return ckpt_path.stem


def _match_line(result: MatchResult) -> str:
    lo, hi = result.confidence_interval()
    return (
        f"{result.player_a} vs {result.player_b}: W/D/L {result.wins}/{result.draws}/{result.losses}  "
        f"score {result.score:.3f} (95% CI {lo:.3f}..{hi:.3f}) in {len(result.games)} games, "
        f"{result.seconds_per_move():.3f} s per move (opponent {result.seconds_per_move(player_a=False):.3f})"
    )


def _write_outputs(out_dir: Path, arena: Arena, summary: dict, event: str = "tammi-rl eval") -> None:
    """games.pdn, summary.json (with every game record) and summary.csv (one row per match)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "games.pdn").write_text(
        arena.pdn(event).replace('[Date "????.??.??"]', f'[Date "{pdn_date()}"]'), encoding="utf-8"
    )
    summary["games"] = [r.to_dict() for r in arena.records]
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    rows = summary["matches"]
    ratings = {p["name"]: p for p in summary["elo"]["players"]}
    with (out_dir / "summary.csv").open("w", newline="", encoding="utf-8") as fh:
        fields = [*rows[0], "player_elo", "player_elo_error", "opponent_elo", "opponent_elo_error"]
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        for row in rows:
            p, o = ratings[row["player"]], ratings[row["opponent"]]
            writer.writerow(
                row
                | {
                    "player_elo": round(p["elo"], 1),
                    "player_elo_error": round(p["error"], 1),
                    "opponent_elo": round(o["elo"], 1),
                    "opponent_elo_error": round(o["error"], 1),
                }
            )


# --- match ----------------------------------------------------------------------------------
def add_match_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("variant", metavar="VARIANT", help="variant name (russian, english, ...) or a .toml path")
    parser.add_argument("player_a", metavar="PLAYER_A", help="player spec, e.g. alphabeta:depth=6")
    parser.add_argument("player_b", metavar="PLAYER_B", help="player spec, e.g. random")
    parser.add_argument("--games", type=int, default=10, help="number of games (default 10)")
    parser.add_argument(
        "--out",
        "--pdn",
        metavar="FILE",
        help="PDN file for the games (default: match_VARIANT.pdn in the current directory, with _2, _3, ... "
        "added when that name is taken)",
    )
    parser.add_argument("--seed", type=int, default=0, help="match seed (players are reseeded per game)")
    parser.add_argument("--max-plies", type=int, default=300, help="adjudicate after this many plies (default 300)")
    parser.add_argument("--openings", help="openings file (default: envs/openings/VARIANT.txt)")
    parser.add_argument("--quiet", action="store_true", help="print only the final summary")
    _add_time_argument(parser, "both players")


def run_match_command(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Play a match, print W/D/L, the score with its 95% interval and the Elo difference, write the PDN."""
    out = out or sys.stdout
    if args.games < 1:
        raise TammiError(f"--games must be >= 1, got {args.games}")
    seconds = getattr(args, "time", None)
    check_time(seconds)
    rules = Rules.for_variant(args.variant)
    a = parse_player_spec(with_time(args.player_a, seconds), rules)
    b = parse_player_spec(with_time(args.player_b, seconds), rules)
    if seconds is not None:
        print(f"{seconds:g} s a move for both: {a.name} vs {b.name}", file=out, flush=True)
    if a.name == b.name:
        a.name, b.name = f"A:{a.name}", f"B:{b.name}"
    openings = read_openings(rules, args.openings) if args.openings else load_openings(rules)

    def progress(i: int, record: MatchGame) -> None:
        if not args.quiet:
            print(record.summary(i), file=out, flush=True)

    result = run_match(
        rules, a, b, args.games, openings=openings, max_plies=args.max_plies, seed=args.seed, on_game=progress
    )
    print(result.summary(), file=out)
    path = output_path(args.out, f"match_{rules.variant.name}", ".pdn")
    event = f"tammi-rl match: {result.player_a} vs {result.player_b}"
    if seconds is not None:
        event += f", {seconds:g} s a move"
    text = match_pdn(rules, result, event).replace('[Date "????.??.??"]', f'[Date "{pdn_date()}"]')
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    print(f"{len(result.games)} games written to {shown(path)}", file=out)
    return 0
