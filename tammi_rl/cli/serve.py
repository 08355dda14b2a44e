"""The ``tammi-rl serve`` subcommand (registered in `tammi_rl.cli`): the web page.

tammi-rl serve --port 8000 --player alphabeta:depth=6
"""

from __future__ import annotations

import argparse
import sys

from tammi_rl.rules.errors import TammiError

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000; 0 picks a free one)")
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: this machine only; the page has no login)",
    )
    parser.add_argument(
        "--player",
        default=None,
        help="the opponent's player spec for every variant (default: the variant's shipped model, "
        "mcts:model=VARIANT,sims=400, or alphabeta:depth=6 where none ships); the page can change it",
    )
    parser.add_argument("--variant", default="russian", help="the variant the page opens with (default russian)")
    parser.add_argument(
        "--think",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="most seconds the agent may search one move (default 5; 0: only the spec's own limits)",
    )
    parser.add_argument("--max-games", type=int, default=16, help="games kept in memory at once (default 16)")


def run_serve(args: argparse.Namespace) -> int:
    """Serve the page until Ctrl-C."""
    from tammi_rl.web import create_app, serve  # lazy: imports flask (keeps --help fast)

    if not 0 <= args.port <= 65535:
        raise TammiError(f"--port must be between 0 and 65535, got {args.port}")
    if args.think < 0:
        raise TammiError(f"--think must be >= 0 seconds, got {args.think:g}")
    if args.max_games < 1:
        raise TammiError(f"--max-games must be >= 1, got {args.max_games}")
    if args.player is not None:
        from tammi_rl.players import parse_player_spec
        from tammi_rl.rules.engine import Rules
        from tammi_rl.web.sessions import check_page_limits

        check_page_limits(args.player)  # a spec the page would refuse fails now, not on the page
        parse_player_spec(args.player, Rules.for_variant(args.variant))
    app = create_app(
        player=args.player,
        variant=args.variant,
        think_seconds=args.think or None,
        max_sessions=args.max_games,
    )
    if args.host not in LOCAL_HOSTS:
        print(f"tammi-rl serve: warning: listening on {args.host}, reachable from other machines", file=sys.stderr)

    def ready(url: str) -> None:
        print(f"tammi-rl serve: open {url} (Ctrl-C stops)", flush=True)

    try:
        serve(app, host=args.host, port=args.port, ready=ready)
    except OSError as exc:
        raise TammiError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
    return 0
