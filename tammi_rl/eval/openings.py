"""Opening lists for matches: short balanced move sequences per variant, shipped as data.

Files live in ``envs/openings/<variant>.txt`` beside the variant files. Format: one
opening per line, its moves in the variant's notation separated by spaces (``c3-d4
f6-g5 g3-h4``); ``#`` starts a comment; blank lines are ignored. The empty opening
(the start position) is written as a line holding only ``-``.

The shipped lists were made with ``python -m tammi_rl.eval.openings VARIANT``: every
line of ``--plies`` moves from the start position is scored by an alpha-beta search of
``--depth`` plies, lines whose score lies within ``--max-abs`` (hundredths of a man) of
level are kept, and ``--count`` of them are picked with a fixed seed. A variant
without a file plays every game from its start position.
"""

from __future__ import annotations

import argparse
import random
from dataclasses import dataclass
from pathlib import Path

from tammi_rl.alphabeta.driver import AlphaBeta, AlphaBetaConfig
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.errors import MoveError, TammiError, read_user_text
from tammi_rl.rules.notation import format_move, parse_move
from tammi_rl.rules.position import Move, Position
from tammi_rl.rules.variant import ENVS_DIR

OPENINGS_DIR = ENVS_DIR / "openings"


@dataclass(frozen=True)
class Opening:
    """A named sequence of opening moves."""

    moves: tuple[Move, ...]
    text: str

    def position(self, rules: Rules) -> Position:
        """The position after the opening moves."""
        pos = rules.start_position()
        for move in self.moves:
            pos = rules.play(pos, move)
        return pos


START = Opening((), "-")


def parse_opening(rules: Rules, text: str) -> Opening:
    """An opening from its move text; `TammiError` names the bad move."""
    body = text.strip()
    if body in ("", "-"):
        return START
    pos = rules.start_position()
    moves = []
    for token in body.split():
        try:
            move = parse_move(rules, pos, token)
        except MoveError as exc:
            raise TammiError(f"opening {body!r}: {exc}") from None
        moves.append(move)
        pos = rules.play(pos, move)
    return Opening(tuple(moves), " ".join(format_move(rules, m) for m in moves))


def read_openings(rules: Rules, path: str | Path) -> list[Opening]:
    """Openings from a file in the format above."""
    path = Path(path)
    lines = read_user_text(path, "openings file", TammiError).splitlines()
    openings = []
    for number, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        try:
            openings.append(parse_opening(rules, text))
        except TammiError as exc:
            raise TammiError(f"{path}:{number}: {exc}") from None
    if not openings:
        raise TammiError(f"{path}: no openings in the file")
    return openings


def load_openings(rules: Rules) -> list[Opening]:
    """The shipped openings of ``rules``' variant, or just the start position if none ship."""
    path = OPENINGS_DIR / f"{rules.variant.name}.txt"
    return read_openings(rules, path) if path.exists() else [START]


def _lines(rules: Rules, pos: Position, plies: int) -> list[tuple[Move, ...]]:
    if plies == 0:
        return [()]
    out: list[tuple[Move, ...]] = []
    for move in rules.legal_moves(pos):
        out.extend((move, *rest) for rest in _lines(rules, rules.play(pos, move), plies - 1))
    return out


def generate_openings(
    rules: Rules, plies: int = 3, depth: int = 6, max_abs: int = 25, count: int = 24, seed: int = 0
) -> list[tuple[Opening, int]]:
    """Balanced openings: (opening, score for the side to move after it), chosen as described above."""
    search = AlphaBeta(rules, AlphaBetaConfig(depth=depth, tt_bits=18))
    lines = _lines(rules, rules.start_position(), plies)
    random.Random(seed).shuffle(lines)
    kept: list[tuple[Opening, int]] = []
    for moves in lines:
        pos = rules.start_position()
        for move in moves:
            pos = rules.play(pos, move)
        if not rules.legal_moves(pos):
            continue
        search.new_game()
        score = search.search(pos).score
        if abs(score) <= max_abs:
            text = " ".join(format_move(rules, m) for m in moves)
            kept.append((Opening(moves, text), score))
            if len(kept) >= count:
                break
    return kept


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Write a balanced opening list for a variant.")
    parser.add_argument("variant")
    parser.add_argument("--plies", type=int, default=3)
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--max-abs", type=int, default=25)
    parser.add_argument("--count", type=int, default=24)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="file to write (default: print)")
    args = parser.parse_args(argv)
    rules = Rules.for_variant(args.variant)
    kept = generate_openings(rules, args.plies, args.depth, args.max_abs, args.count, args.seed)
    header = [
        f"# {rules.variant.name}: {len(kept)} openings of {args.plies} plies, balanced within "
        f"{args.max_abs}/100 of a man by alpha-beta depth {args.depth} (seed {args.seed}).",
        "# Made by: python -m tammi_rl.eval.openings "
        f"{rules.variant.name} --plies {args.plies} --depth {args.depth} --max-abs {args.max_abs} "
        f"--count {args.count} --seed {args.seed}",
        "# Format: moves in the variant's notation; the score after the line (side to move) as a comment.",
    ]
    body = [f"{o.text:<40} # {score:+d}" for o, score in kept]
    text = "\n".join(header + body) + "\n"
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        print(text, end="")


if __name__ == "__main__":
    main()
