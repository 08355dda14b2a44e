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
from tammi_rl.rules.pdn import movetext
from tammi_rl.rules.position import COLOR_NAMES, WHITE, Move, Position
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


def chain_board(game: Game) -> tuple[Position, tuple[int, ...], tuple[int, ...]]:
    """The board as it stands mid-turn: the position with the moving piece on the square
    it has reached, the squares visited so far this turn and the pieces jumped so far.

    At the start of a turn this is ``game.position`` and two empty tuples. Jumped pieces
    stay on the board until the move completes (``capture_removal = "end_of_chain"``) or
    leave at once (``"immediate"``); a man that reached the far row goes on as a king where
    the variant says so (``promotion_in_chain = "continue"``).
    """
    pos = game.position
    path = game.chain_path()
    if len(path) < 2:
        return pos, (), ()
    # The legal whole moves that begin with the hops played so far all jumped the same
    # pieces on the way (one piece lies between two landing squares on a line).
    prefix = next(m for m in game.legal_moves() if m.path[: len(path)] == path)
    jumped = prefix.captures[: len(path) - 1]
    variant, g = game.rules.variant, game.rules.geometry
    start, here = 1 << path[0], 1 << path[-1]
    side = pos.side
    men, kings = pos.men(side), pos.kings(side)
    if kings & start:
        kings = (kings & ~start) | here
    else:
        far_row = g.size - 1 if side == WHITE else 0
        crowned = variant.promotion_in_chain == "continue" and any(g.coords[sq][0] == far_row for sq in path[1:])
        men &= ~start
        if crowned:
            kings |= here
        else:
            men |= here
    their_men, their_kings = pos.men(1 - side), pos.kings(1 - side)
    if variant.capture_removal == "immediate":
        gone = sum(1 << sq for sq in jumped)
        their_men, their_kings = their_men & ~gone, their_kings & ~gone
    if side == WHITE:
        return Position(men, kings, their_men, their_kings, side), path, jumped
    return Position(their_men, their_kings, men, kings, side), path, jumped


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


def move_rows(rules: Rules, moves: list[Move], start: Position) -> list[JSON]:
    """The move list as draughts software numbers it: one row per move pair (the first
    player's move, then the second's); a game the second player opens starts ``1...``."""
    first = rules.start_position().side
    rows: list[JSON] = []
    pos = start
    number = 1
    for ply, move in enumerate(moves):
        text = format_move(rules, move)
        if pos.side == first:
            rows.append({"number": number, "first": text, "second": None, "first_ply": ply})
        else:
            if not rows:
                rows.append({"number": number, "first": None, "second": None, "first_ply": None})
            rows[-1]["second"] = text
            rows[-1]["second_ply"] = ply
            number += 1
        pos = rules.play(pos, move)
    return rows


def game_view(game: Game) -> JSON:
    """The board (mid-chain included), the legal hops, the last move, the record and the result."""
    rules = game.rules
    board, chain, jumped = chain_board(game)
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
        "moves": move_rows(rules, game.moves, start),
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
