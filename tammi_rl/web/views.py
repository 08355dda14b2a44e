"""JSON views of what the page shows: the board, the legal hops, the move list, the analysis.

Every view is a plain dict of JSON types built from engine values; the page draws only
what these say (it knows no rule of any variant). Squares are named twice: ``sq`` is the
internal index (`tammi_rl.rules.geometry`), the one requests send back, and ``name`` is
the variant's notation (``c3``, ``22``), the one people read.
"""

from __future__ import annotations

from typing import Any

from tammi_rl.players.analysis import Analysis
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game
from tammi_rl.rules.notation import format_move
from tammi_rl.rules.pdn import move_number, movetext
from tammi_rl.rules.position import COLOR_NAMES, Move, Position
from tammi_rl.rules.results import GameResult
from tammi_rl.rules.variant import Variant

JSON = dict[str, Any]


def variant_view(variant: Variant) -> JSON:
    """What the page needs to lay out a board of ``variant``."""
    return {
        "name": variant.name,
        "board_size": variant.board_size,
        "geometry": variant.geometry,
        "notation": variant.notation,
        "first_player": variant.first_player,
    }


def move_view(rules: Rules, move: Move) -> JSON:
    """A whole move: its text and the squares it visits and captures."""
    return {"text": format_move(rules, move), "path": list(move.path), "captures": list(move.captures)}


def squares_view(rules: Rules, position: Position) -> list[JSON]:
    """Every playable square: internal index, (row, col) with row 0 White's back row, name, piece."""
    g = rules.geometry
    return [
        {"sq": sq, "row": r, "col": c, "name": g.names[sq], "piece": position.piece_at(sq)}
        for sq, (r, c) in enumerate(g.coords)
    ]


def hops_view(game: Game) -> list[JSON]:
    """The legal hops now: action index, start and landing square (internal indices)."""
    codec, side = game.codec, game.side
    return [
        {"hop": a, "from": int(codec.action_from[side, a]), "to": int(codec.action_to[side, a])}
        for a in game.legal_hops()
    ]


def result_view(result: GameResult | None) -> JSON | None:
    if result is None:
        return None
    winner = None if result.winner is None else COLOR_NAMES[result.winner]
    return {"pdn": result.pdn, "winner": winner, "reason": result.reason, "text": str(result)}


def move_rows(game: Game) -> list[JSON]:
    """The move list as draughts software numbers it (`tammi_rl.rules.pdn.move_number`):
    one row per move pair (the first player's move, then the second's); a game the second
    player opens starts ``1...`` (a row with no first move)."""
    rules = game.rules
    first, start_side = rules.start_position().side, game.positions[0].side
    rows: list[JSON] = []
    for ply, move in enumerate(game.moves):
        number, second = move_number(ply, start_side, first)
        text = format_move(rules, move)
        if not second:
            rows.append({"number": number, "first": text, "second": None, "first_ply": ply})
            continue
        if not rows:
            rows.append({"number": number, "first": None, "second": None, "first_ply": None})
        rows[-1]["second"] = text
        rows[-1]["second_ply"] = ply
    return rows


def game_view(game: Game) -> JSON:
    """The board (mid-chain included), the legal hops, the last move, the record and the result."""
    rules = game.rules
    board, jumped = game.chain_board()
    chain = game.chain_path()
    start = game.positions[0]
    return {
        "variant": variant_view(rules.variant),
        "side": COLOR_NAMES[game.side],
        "fen": rules.fen(game.position),
        "squares": squares_view(rules, board),
        "chain": list(chain),
        "jumped": list(jumped),
        "hops": hops_view(game),
        "last_move": move_view(rules, game.moves[-1]) if game.moves and not chain else None,
        "plies": len(game.moves),
        "max_plies": game.max_plies,
        "start_fen": rules.fen(start),
        "moves": move_rows(game),
        "movetext": movetext(rules, game.moves, start),
        "result": result_view(game.result),
    }


def analysis_view(rules: Rules, analysis: Analysis, side: int, agent: str) -> JSON:
    """One search: the move, value and WDL for the side that searched, the principal
    variation, and every first hop with its network prior, visits and share of the search."""
    names = rules.geometry.names
    # Capturing is compulsory in every variant: either every hop here captures or none does.
    sep = (":" if rules.variant.notation == "algebraic" else "x") if analysis.move.is_capture else "-"
    return {
        "agent": agent,
        "side": COLOR_NAMES[side],
        "move": format_move(rules, analysis.move),
        "value": float(analysis.value),
        "wdl": None if analysis.wdl is None else [float(x) for x in analysis.wdl],
        "depth": int(analysis.depth),
        "nodes": int(analysis.nodes),
        "elapsed_s": float(analysis.elapsed_s),
        "pv": [format_move(rules, m) for m in analysis.pv],
        "hops": [
            {
                "hop": h.hop,
                "from": h.start,
                "to": h.end,
                "text": f"{names[h.start]}{sep}{names[h.end]}",
                "prior": float(h.prior),
                "visits": int(h.visits),
                "share": float(h.share),
            }
            for h in analysis.hops
        ],
    }
