"""The ``tammi-rl hub`` subcommand: the Hub-protocol engine on stdin/stdout (`tammi_rl.hub`).

tammi-rl hub                                  # the variant's shipped model, else alpha-beta
tammi-rl hub --player alphabeta:depth=8       # any player spec
"""

from __future__ import annotations

import argparse
import os
import sys

from tammi_rl.hub import HUB_VARIANTS, HubEngine


def add_hub_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--player",
        default=None,
        help="player spec (default: the variant's shipped model, mcts:model=VARIANT,sims=400, "
        "or alphabeta:depth=6 where none ships; a GUI may also set the 'player' parameter)",
    )
    parser.add_argument(
        "--variant",
        default="normal",
        choices=sorted(HUB_VARIANTS),
        help="variant before the GUI sets one with set-param (Hub names; default normal = International)",
    )


def run_hub(args: argparse.Namespace) -> int:
    """Serve the Hub protocol until ``quit`` or the end of input. After ``quit`` the process
    exits at once, even while a search is still winding down (it would only answer ``done``
    to a GUI that has gone)."""
    engine = HubEngine(args.player, sys.stdout, args.variant)
    status = engine.run(iter(sys.stdin.readline, ""))
    if engine.searching():  # only after quit: the end of input waits for the search
        engine.flush_and_lock()
        sys.stderr.flush()
        os._exit(status)
    return status
