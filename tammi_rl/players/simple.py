"""The simplest players: a uniformly random one and a human at the terminal."""

from __future__ import annotations

import random
import sys
from typing import TextIO

from tammi_rl.players.base import Player, PlayerQuit
from tammi_rl.players.spec import int_option, reject_unknown
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.errors import MoveError
from tammi_rl.rules.game import Game
from tammi_rl.rules.notation import format_moves, parse_move
from tammi_rl.rules.pdn import move_label, movetext
from tammi_rl.rules.position import COLOR_NAMES, Move


class RandomPlayer:
    """Plays a uniformly random legal move."""

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self.name = "random" if seed is None else f"random(seed={seed})"

    def choose(self, game: Game) -> Move:
        return self.rng.choice(game.legal_moves())

    def new_game(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = random.Random(seed)


class HumanPlayer:
    """Moves typed at a terminal in the variant's notation.

    The prompt numbers moves in pairs as draughts software does (``3. white to move>``,
    ``3... black to move>``). ``moves`` or ``help`` lists the legal moves, ``history`` the
    game so far (``1. c3-d4 f6-g5 2. ...``), ``resign`` resigns, ``quit`` (or end of
    input) stops the game; an illegal or ambiguous move is answered with the reason
    and the legal moves, and asked again.
    """

    def __init__(self, input_stream: TextIO | None = None, output: TextIO | None = None, name: str = "human") -> None:
        self.input = input_stream
        self.output = output
        self.name = name

    def _write(self, text: str) -> None:
        print(text, file=self.output or sys.stdout, flush=True)

    def _read(self, prompt: str) -> str | None:
        out = self.output or sys.stdout
        out.write(prompt)
        out.flush()
        line = (self.input or sys.stdin).readline()
        return line if line else None

    def choose(self, game: Game) -> Move:
        rules = game.rules
        legal = game.legal_moves()
        side = COLOR_NAMES[game.side]
        label = move_label(rules, len(game.moves), game.positions[0])
        while True:
            line = self._read(f"{label} {side} to move> ")
            if line is None:
                self._write("")
                raise PlayerQuit(resign=False)
            text = line.strip()
            word = text.lower()
            if not text:
                continue
            if word in ("quit", "exit", "q"):
                raise PlayerQuit(resign=False)
            if word == "resign":
                raise PlayerQuit(resign=True)
            if word in ("moves", "help", "?"):
                self._write(f"legal moves: {format_moves(rules, legal)}")
                self._write("type a move, or: moves, history, resign, quit")
                continue
            if word == "history":
                self._write(movetext(rules, game.moves, game.positions[0]) or "no moves yet")
                continue
            try:
                return parse_move(rules, game.position, text)
            except MoveError as exc:
                message = str(exc)
                if "legal moves" not in message:
                    message += f"; legal moves: {format_moves(rules, legal)}"
                self._write(message)

    def new_game(self, seed: int | None = None) -> None:
        pass


def make_random_player(rules: Rules, options: dict[str, str], spec: str) -> Player:
    reject_unknown(spec, options, {"seed"})
    seed = int_option(spec, "seed", options["seed"]) if "seed" in options else None
    return RandomPlayer(seed)


def make_human_player(rules: Rules, options: dict[str, str], spec: str) -> Player:
    reject_unknown(spec, options, {"name"})
    return HumanPlayer(name=options.get("name", "human"))
