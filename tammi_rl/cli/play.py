"""The ``tammi-rl play`` subcommand: one game in the terminal (registered in `tammi_rl.cli.main`).

Example: ``tammi-rl play russian --white human --black alphabeta:depth=6``. The game is saved
as PDN when it ends or stops, to ``--out`` or ``./play_VARIANT.pdn`` (`tammi_rl.cli.outputs`).
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from tammi_rl.cli.outputs import output_path, pdn_date, shown
from tammi_rl.env.render import board_text
from tammi_rl.players import HumanPlayer, Player, PlayerQuit, parse_player_spec
from tammi_rl.players.defaults import default_player_spec
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.errors import FenError
from tammi_rl.rules.fen import fen_example
from tammi_rl.rules.game import Game
from tammi_rl.rules.notation import format_move
from tammi_rl.rules.pdn import game_to_pdn, move_label, movetext
from tammi_rl.rules.position import BLACK, COLOR_NAMES, WHITE, Position


def fen_option(rules: Rules, fen: str | None) -> Position | None:
    """The position of a ``--fen`` option, None when it was left out (the start position);
    an empty ``--fen ""`` is refused rather than read as the start."""
    if fen is None:
        return None
    if not fen.strip():
        raise FenError(
            f"--fen is empty: give a position such as {fen_example(rules.geometry)!r}, "
            "or leave --fen out for the start position"
        )
    return rules.parse_fen(fen)


def _describe_search(player: object) -> str:
    last = getattr(player, "last", None)
    if last is None:
        return ""
    if last.depth == 0:
        return "  (forced)"
    mate = last.mate_in
    score = f"win in {mate}" if mate and mate > 0 else f"loss in {-mate}" if mate else f"{last.score:+d}"
    return f"  ({score}, depth {last.depth}, {last.nodes} nodes, {last.seconds:.2f}s)"


def add_play_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("variant", metavar="VARIANT", help="variant name (russian, english, ...) or a .toml path")
    parser.add_argument("--white", default="human", help="player spec for White (default: human)")
    parser.add_argument(
        "--black",
        default=None,
        help="player spec for Black (default: the variant's shipped model, mcts:model=VARIANT,sims=400, "
        "or alphabeta:depth=6 where none ships)",
    )
    parser.add_argument("--fen", help="start position as FEN (default, when left out: the variant's start)")
    parser.add_argument("--max-plies", type=int, default=None, help="adjudicate after this many plies")
    parser.add_argument(
        "--out",
        "--pdn",
        metavar="FILE",
        help="PDN file the game is saved to when it ends or stops (default: play_VARIANT.pdn in the current "
        "directory, with _2, _3, ... added when that name is taken; nothing is saved when no move was played)",
    )


def run_play(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Play one game in the terminal; moves typed in the variant's notation."""
    out = out or sys.stdout
    rules = Rules.for_variant(args.variant)
    black = args.black or default_player_spec(rules.variant.name)  # the shipped agent, else alpha-beta
    players = {WHITE: parse_player_spec(args.white, rules), BLACK: parse_player_spec(black, rules)}
    for player in players.values():
        if isinstance(player, HumanPlayer) and player.output is None:
            player.output = out
    start = fen_option(rules, args.fen)
    game = Game(rules, start=start, max_plies=args.max_plies)

    def say(text: str = "") -> None:
        print(text, file=out, flush=True)

    say(f"{rules.variant.name}: {players[WHITE].name} (white) vs {players[BLACK].name} (black)")
    say(
        "type moves like "
        + ("c3-d4 or c3:e5" if rules.variant.notation == "algebraic" else "22-18 or 22x15")
        + "; 'moves' lists the legal moves, 'history' the game so far, 'resign' resigns, 'quit' stops"
    )
    say(board_text(rules, game.position))
    while not game.is_over:
        side = game.side
        player = players[side]
        try:
            move = player.choose(game)
        except PlayerQuit as stop:
            if stop.resign:
                game.resign(side)
                break
            if game.moves:
                say(f"moves: {movetext(rules, game.moves, game.positions[0])}")
            say("game stopped.")
            _write_pdn(args, rules, game, players, out)
            return 0
        label = move_label(rules, len(game.moves), game.positions[0])
        game.play(move)
        say(f"{label} {COLOR_NAMES[side]} plays {format_move(rules, move)}{_describe_search(player)}")
        say(board_text(rules, game.position, move))
    assert game.result is not None
    say(f"moves: {movetext(rules, game.moves, game.positions[0])}")
    say(f"result: {game.result}")
    _write_pdn(args, rules, game, players, out)
    return 0


def _write_pdn(args: argparse.Namespace, rules: Rules, game: Game, players: dict[int, Player], out: TextIO) -> None:
    if not game.moves and not args.out:
        return
    result = game.result.pdn if game.result is not None else "*"
    tags = {"Event": "tammi-rl play", "Date": pdn_date(), "White": players[WHITE].name, "Black": players[BLACK].name}
    path = output_path(args.out, f"play_{rules.variant.name}", ".pdn")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(game_to_pdn(rules, game.moves, start=game.positions[0], tags=tags, result=result), encoding="utf-8")
    print(f"game written to {shown(path)}", file=out)
