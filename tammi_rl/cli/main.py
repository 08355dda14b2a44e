"""The ``tammi-rl`` command line.

Each subcommand is one `Command`: a function that adds its arguments to an argparse
sub-parser and a function that runs it and returns the exit status. Adding a
subcommand (train, eval, play, match) means writing those two functions and one
entry in `COMMANDS`. Imports of torch happen inside the run functions (train, and
eval's checkpoint loading), so ``--help`` and the light commands stay fast.

Bad input (an unknown variant, a malformed FEN or variant file, ...) raises a
`TammiError`; `main` prints it as ``tammi-rl: error: <message>`` and returns 2, the
status argparse uses for usage errors.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tammi_rl import __version__
from tammi_rl.cli.config_cmd import add_config_arguments, run_config_command
from tammi_rl.cli.hub import add_hub_arguments, run_hub
from tammi_rl.cli.matches import add_eval_arguments, add_match_arguments, run_eval_command, run_match_command
from tammi_rl.cli.play import add_play_arguments, fen_option, run_play
from tammi_rl.cli.serve import add_serve_arguments, run_serve
from tammi_rl.config import load_config
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.errors import TammiError
from tammi_rl.rules.notation import format_move
from tammi_rl.rules.position import Position
from tammi_rl.rules.variant import available_variants, load_variant

PROG = "tammi-rl"
EXIT_USAGE = 2


@dataclass(frozen=True)
class Command:
    """One subcommand: its name, one-line help, argument setup and runner."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def _variant_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "variant", metavar="VARIANT", help="shipped variant name (russian, english, ...) or a .toml path"
    )


def _depth(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"depth must be a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"depth must be 0 or more, got {value}")
    return value


def _rules_and_position(args: argparse.Namespace) -> tuple[Rules, Position]:
    """The engine of ``args.variant`` and the ``--fen`` position (or the start)."""
    rules = Rules.for_variant(args.variant)
    pos = fen_option(rules, args.fen)
    return rules, pos if pos is not None else rules.start_position()


# --- perft ----------------------------------------------------------------------------
def _perft_arguments(parser: argparse.ArgumentParser) -> None:
    _variant_arg(parser)
    parser.add_argument("depth", metavar="DEPTH", type=_depth, help="plies to search (whole moves)")
    parser.add_argument("--fen", help="start position as FEN (default, when left out: the variant's start position)")
    parser.add_argument("--divide", action="store_true", help="also print the count below each legal move")


def _perft(args: argparse.Namespace) -> int:
    """Leaf counts; the total is always alone on the last line."""
    rules, pos = _rules_and_position(args)
    if args.divide and args.depth >= 1:
        total = 0
        for move, count in rules.perft_divide(pos, args.depth):
            print(f"{format_move(rules, move)} {count}")
            total += count
    else:
        total = rules.perft(pos, args.depth)
    print(total)
    return 0


# --- legal ----------------------------------------------------------------------------
def _legal_arguments(parser: argparse.ArgumentParser) -> None:
    _variant_arg(parser)
    parser.add_argument("--fen", help="position as FEN (default, when left out: the variant's start position)")


def _legal(args: argparse.Namespace) -> int:
    """JSON list of legal moves; squares named as in the variant's FEN (numbers as ints)."""
    rules, pos = _rules_and_position(args)

    def name(sq: int) -> str | int:
        text = rules.square_name(sq)
        return int(text) if text.isdigit() else text

    moves = [
        {"path": [name(s) for s in m.path], "captures": [name(s) for s in m.captures]} for m in rules.legal_moves(pos)
    ]
    print(json.dumps(moves))
    return 0


# --- variants -------------------------------------------------------------------------
def _variants_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def _variants(args: argparse.Namespace) -> int:
    """One line per shipped variant: name, Gymnasium id, PDN GameType."""
    for name in available_variants():
        variant = load_variant(name)
        print(f"{name:<15} {variant.gym_id:<26} GameType {variant.pdn_gametype}")
    return 0


# --- train (logic in tammi_rl.train.trainer) --------------------------------------------
def _train_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "config",
        metavar="CONFIG",
        nargs="?",
        help="run config YAML (configs/russian.yaml, ...); with --resume the run's own config.yaml is used",
    )
    parser.add_argument(
        "overrides",
        metavar="key=value",
        nargs=argparse.REMAINDER,
        help="config overrides in dotted form, e.g. train.lr=3e-4 mcts.simulations=32",
    )
    parser.add_argument(
        "--resume",
        metavar="RUN_DIR",
        help="continue the run in RUN_DIR (weights, optimizer, counters, RNG, replay buffer)",
    )


def _train(args: argparse.Namespace) -> int:
    """Train (or resume) a run; one status line per iteration."""
    from tammi_rl.train.trainer import resume_config, train  # lazy: imports torch (keeps --help fast)

    overrides: list[str] = []
    items = iter(args.overrides)  # REMAINDER: --resume may come after the overrides too
    for item in items:
        if item == "--resume":
            args.resume = next(items, None)
            if args.resume is None:
                print(f"{PROG} train: error: --resume needs a RUN_DIR", file=sys.stderr)
                return EXIT_USAGE
        elif item.startswith("--resume="):
            args.resume = item.split("=", 1)[1]
        else:
            overrides.append(item)
    config = args.config
    if config is not None and "=" in config and not config.endswith((".yaml", ".yml")):
        overrides.insert(0, config)  # `train --resume DIR key=value`: no CONFIG given
        config = None
    if args.resume:
        if config is not None:
            print(f"{PROG}: resuming {args.resume} with its own config.yaml ({config} is not read)", file=sys.stderr)
        cfg = resume_config(args.resume, overrides)
    elif config is None:
        print(f"{PROG} train: error: give a CONFIG file or --resume RUN_DIR", file=sys.stderr)
        return EXIT_USAGE
    else:
        cfg = load_config(config, overrides)
    summary = train(cfg, resume_dir=args.resume)
    print(
        f"run directory: {summary.run_dir} (iteration {summary.counters.iteration}, "
        f"learner step {summary.learner_step})"
    )
    return 0


# play lives in tammi_rl.cli.play, eval and match in tammi_rl.cli.matches.
def _export_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("checkpoint", help="a checkpoint file or a run directory (its latest checkpoint)")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--onnx", metavar="FILE", help="where to write the ONNX model")
    target.add_argument(
        "--model",
        metavar="FILE",
        help="where to write a playing checkpoint: weights, variant and run config, no optimizer state "
        "(how checkpoints/<variant>.pt are made)",
    )


def _export(args: argparse.Namespace) -> int:
    from tammi_rl.cli.export import run_export_command  # lazy: imports torch and onnx (keeps --help fast)

    return run_export_command(args)


COMMANDS: tuple[Command, ...] = (
    Command("perft", "count leaf positions of whole moves to a depth", _perft_arguments, _perft),
    Command("legal", "print the legal moves of a position as JSON", _legal_arguments, _legal),
    Command("variants", "list the shipped variants and their Gymnasium ids", _variants_arguments, _variants),
    Command("play", "play a game in the terminal (human or engine on either side)", add_play_arguments, run_play),
    Command(
        "match",
        "play a match between two players; W/D/L, score with its 95 percent CI, PDN",
        add_match_arguments,
        run_match_command,
    ),
    Command("train", "train an agent by self-play from a run config (or --resume a run)", _train_arguments, _train),
    Command(
        "config",
        "print a run config fully resolved, every key with its doc, marking what the file and overrides set",
        add_config_arguments,
        run_config_command,
    ),
    Command(
        "eval",
        "rate a checkpoint (or every checkpoint of a run) against alpha-beta; W/D/L, CI, Elo",
        add_eval_arguments,
        run_eval_command,
    ),
    Command(
        "export",
        "write a checkpoint's network as an ONNX model (--onnx) or a small playing checkpoint (--model)",
        _export_arguments,
        _export,
    ),
    Command(
        "serve",
        "serve a local web page to play any variant against any player, with the agent's analysis",
        add_serve_arguments,
        run_serve,
    ),
    Command(
        "hub",
        "a Hub-protocol engine on stdin/stdout for draughts GUIs and pydraughts (Russian, Brazilian, International)",
        add_hub_arguments,
        run_hub,
    ),
)


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with one sub-parser per entry of `COMMANDS`."""
    parser = argparse.ArgumentParser(prog=PROG, description="AlphaZero-style RL for draughts (tammi).")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        sub_parser = sub.add_parser(command.name, help=command.help, description=command.help)
        command.add_arguments(sub_parser)
        sub_parser.set_defaults(run=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 bad input)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version and usage errors
        if exc.code is None:
            return 0
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    try:
        return args.run(args)
    except TammiError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
