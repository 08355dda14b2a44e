"""Players: anything that chooses a whole legal move for a game position.

    player = parse_player_spec("alphabeta:depth=6,seed=1", rules)
    move = player.choose(game)          # a Move from game.legal_moves()

A player spec is ``KIND`` or ``KIND:key=value,key=value``. Shipped kinds:

* ``random[:seed=S]``: a uniformly random legal move;
* ``alphabeta[:depth=D,time=T,nodes=N,margin=M,seed=S,tt_bits=B,<weight>=V]``
  (alias ``ab``): the compiled alpha-beta baseline; ``<weight>`` is any evaluation
  weight (``king=320``). Default ``depth=6``; giving only ``time`` or ``nodes``
  removes the depth limit;
* ``human``: moves typed at the terminal (see `HumanPlayer`).

Other packages add kinds with `register_player_kind` (the MCTS agent does).
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Protocol, TextIO, runtime_checkable

from tammi_rl.rules.engine import Rules
from tammi_rl.rules.errors import MoveError, TammiError
from tammi_rl.rules.game import Game
from tammi_rl.rules.position import COLOR_NAMES, Move, Position

if TYPE_CHECKING:
    from tammi_rl.search.alphabeta import SearchConfig


class PlayerSpecError(TammiError):
    """A player spec cannot be read or names unknown options."""


class PlayerQuit(Exception):
    """A (human) player stopped the game: ``resign`` True when they resigned rather than quit."""

    def __init__(self, resign: bool = False) -> None:
        super().__init__("resigned" if resign else "quit")
        self.resign = resign


@runtime_checkable
class Player(Protocol):
    """The interface every player implements."""

    name: str

    def choose(self, game: Game) -> Move:
        """A legal move for the side to move in ``game`` (not over)."""
        ...

    def new_game(self, seed: int | None = None) -> None:
        """Forget the previous game; reseed any randomness when given a seed."""
        ...


def reversible_history(game: Game) -> list[Position]:
    """Positions before the current one back to the last irreversible move (repetition candidates)."""
    forward_only = set(game.rules.variant.man_moves) == {"forward"}
    out: list[Position] = []
    for i in range(len(game.moves) - 1, -1, -1):
        before, move = game.positions[i], game.moves[i]
        man_move = bool(before.men(before.side) >> move.start & 1)
        if move.captures or move.promotes or (man_move and forward_only):
            break
        out.append(before)
    out.reverse()
    return out


# --- the shipped players -----------------------------------------------------------------
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


class AlphaBetaPlayer:
    """The alpha-beta baseline (`tammi_rl.search.alphabeta`); ``last`` holds the last `SearchResult`."""

    def __init__(self, rules: Rules, config: "SearchConfig | None" = None, seed: int | None = None,
                 name: str | None = None) -> None:
        from tammi_rl.search.alphabeta import AlphaBeta, SearchConfig

        self.config = config or SearchConfig()
        self.search = AlphaBeta(rules, self.config, seed=seed)
        self.seed = seed
        self.last = None
        self.name = name or _describe("alphabeta", self.config, seed)

    def choose(self, game: Game) -> Move:
        self.last = self.search.search(game.position, reversible_history(game))
        return self.last.move

    def new_game(self, seed: int | None = None) -> None:
        self.search.new_game(seed)


def _describe(kind: str, config: object, seed: int | None) -> str:
    parts = [f"{k}={getattr(config, k)}" for k in ("depth", "time", "nodes", "margin") if getattr(config, k)]
    if seed is not None:
        parts.append(f"seed={seed}")
    return f"{kind}({','.join(parts)})"


class HumanPlayer:
    """Moves typed at a terminal in the variant's notation.

    ``moves`` or ``help`` lists the legal moves, ``resign`` resigns, ``quit`` (or end of
    input) stops the game; an illegal or ambiguous move is answered with the reason
    and the legal moves, and asked again.
    """

    def __init__(self, input_stream: TextIO | None = None, output: TextIO | None = None,
                 name: str = "human") -> None:
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
        from tammi_rl.rules.notation import format_moves, parse_move

        rules = game.rules
        legal = game.legal_moves()
        side = COLOR_NAMES[game.side]
        while True:
            line = self._read(f"{side} to move> ")
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
                self._write("type a move, or: moves, resign, quit")
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


# --- specs ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class PlayerSpec:
    """A parsed player spec: its kind and ``key=value`` options (values as text)."""

    kind: str
    options: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> "PlayerSpec":
        body = text.strip()
        if not body:
            raise PlayerSpecError(f"empty player spec; known kinds: {', '.join(sorted(PLAYER_KINDS))}")
        kind, _, rest = body.partition(":")
        kind = kind.strip().lower()
        options: dict[str, str] = {}
        for item in filter(None, (part.strip() for part in rest.split(","))):
            key, eq, value = item.partition("=")
            if not eq or not key.strip() or not value.strip():
                raise PlayerSpecError(f"player spec {text!r}: option {item!r} must look like key=value")
            key = key.strip().lower()
            if key in options:
                raise PlayerSpecError(f"player spec {text!r}: option {key!r} given twice")
            options[key] = value.strip()
        return cls(kind, options)


PlayerFactory = Callable[[Rules, dict[str, str], str], Player]
PLAYER_KINDS: dict[str, PlayerFactory] = {}


def register_player_kind(kind: str, factory: PlayerFactory) -> None:
    """Make ``kind`` usable in player specs: ``factory(rules, options, spec_text) -> Player``."""
    PLAYER_KINDS[kind.lower()] = factory


def _int_option(spec: str, key: str, value: str, lo: int | None = None) -> int:
    try:
        number = int(value)
    except ValueError:
        raise PlayerSpecError(f"player spec {spec!r}: {key} must be a whole number, got {value!r}") from None
    if lo is not None and number < lo:
        raise PlayerSpecError(f"player spec {spec!r}: {key} must be >= {lo}, got {number}")
    return number


def _float_option(spec: str, key: str, value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise PlayerSpecError(f"player spec {spec!r}: {key} must be a number of seconds, got {value!r}") from None
    if not number > 0:
        raise PlayerSpecError(f"player spec {spec!r}: {key} must be > 0, got {value!r}")
    return number


def _reject_unknown(spec: str, options: dict[str, str], known: set[str]) -> None:
    unknown = sorted(set(options) - known)
    if unknown:
        raise PlayerSpecError(
            f"player spec {spec!r}: unknown option {unknown[0]!r}; known options: {', '.join(sorted(known)) or 'none'}"
        )


def _make_random(rules: Rules, options: dict[str, str], spec: str) -> Player:
    _reject_unknown(spec, options, {"seed"})
    seed = _int_option(spec, "seed", options["seed"]) if "seed" in options else None
    return RandomPlayer(seed)


def _make_human(rules: Rules, options: dict[str, str], spec: str) -> Player:
    _reject_unknown(spec, options, {"name"})
    return HumanPlayer(name=options.get("name", "human"))


def _make_alphabeta(rules: Rules, options: dict[str, str], spec: str) -> Player:
    from tammi_rl.search.alphabeta import MAX_DEPTH, SearchConfig
    from tammi_rl.search.evaluation import EvalWeights

    weight_names = set(EvalWeights.__dataclass_fields__)
    _reject_unknown(spec, options, {"depth", "time", "nodes", "margin", "seed", "tt_bits", "name"} | weight_names)
    kwargs: dict = {}
    if "depth" in options:
        kwargs["depth"] = _int_option(spec, "depth", options["depth"], 1)
        if kwargs["depth"] > MAX_DEPTH:
            raise PlayerSpecError(f"player spec {spec!r}: depth must be <= {MAX_DEPTH}, got {kwargs['depth']}")
    elif "time" in options or "nodes" in options:
        kwargs["depth"] = None
    if "time" in options:
        kwargs["time"] = _float_option(spec, "time", options["time"])
    if "nodes" in options:
        kwargs["nodes"] = _int_option(spec, "nodes", options["nodes"], 1)
    if "margin" in options:
        kwargs["margin"] = _int_option(spec, "margin", options["margin"], 0)
    if "tt_bits" in options:
        kwargs["tt_bits"] = _int_option(spec, "tt_bits", options["tt_bits"], 4)
        if kwargs["tt_bits"] > 28:
            raise PlayerSpecError(f"player spec {spec!r}: tt_bits must be <= 28, got {kwargs['tt_bits']}")
    weights = {k: _int_option(spec, k, v) for k, v in options.items() if k in weight_names}
    if weights:
        kwargs["weights"] = weights
    seed = _int_option(spec, "seed", options["seed"]) if "seed" in options else None
    try:
        config = SearchConfig(**kwargs)
    except ValueError as exc:
        raise PlayerSpecError(f"player spec {spec!r}: {exc}") from None
    return AlphaBetaPlayer(rules, config, seed=seed, name=options.get("name"))


register_player_kind("random", _make_random)
register_player_kind("human", _make_human)
register_player_kind("alphabeta", _make_alphabeta)
register_player_kind("ab", _make_alphabeta)


def _make_mcts(rules: Rules, options: dict[str, str], spec: str) -> Player:
    from tammi_rl.mcts.agent import make_mcts_player  # torch is imported only when asked for

    return make_mcts_player(rules, options, spec)


register_player_kind("mcts", _make_mcts)


def parse_player_spec(text: str, rules: Rules) -> Player:
    """The player a spec names, for ``rules``' variant; `PlayerSpecError` says what is wrong."""
    spec = PlayerSpec.parse(text)
    factory = PLAYER_KINDS.get(spec.kind)
    if factory is None:
        raise PlayerSpecError(
            f"unknown player kind {spec.kind!r} in {text!r}; known kinds: {', '.join(sorted(PLAYER_KINDS))}"
            " (write e.g. 'alphabeta:depth=6', 'random:seed=1' or 'human')"
        )
    return factory(rules, spec.options, text)


__all__ = [
    "AlphaBetaPlayer",
    "HumanPlayer",
    "PLAYER_KINDS",
    "Player",
    "PlayerQuit",
    "PlayerSpec",
    "PlayerSpecError",
    "RandomPlayer",
    "parse_player_spec",
    "register_player_kind",
    "reversible_history",
]
