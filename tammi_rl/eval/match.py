"""Games and matches between players (any `tammi_rl.players.Player`).

    game = play_game(rules, white, black, opening, max_plies=300)
    result = run_match(rules, player_a, player_b, games=20, seed=0)
    print(result.summary()); Path("m.pdn").write_text(match_pdn(rules, result))

A match plays openings in pairs: game ``2k`` opens with opening ``k`` and player A as
White (the side that moves first in the variant's start position, whatever its colour
name), game ``2k + 1`` repeats the opening with colours swapped. Before every game each
player's ``new_game`` is called with a seed derived from the match seed, so a match
replays exactly when its players are deterministic (depth or node limits).

The score is player A's: a win 1, a draw 1/2. Its 95% confidence interval is the normal
approximation over per-game scores (mean ± 1.96 standard errors, clipped to [0, 1]; the
Wilson interval when every game scored the same, where that would have no width);
the Elo difference is derived from the score and its interval.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from tammi_rl.eval.openings import START, Opening, load_openings
from tammi_rl.players import Player
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game
from tammi_rl.rules.pdn import game_to_pdn

DEFAULT_MAX_PLIES = 300


@dataclass
class ThinkTime:
    """Wall-clock seconds each colour spent choosing its moves in one game, and how many."""

    seconds: list[float] = field(default_factory=lambda: [0.0, 0.0])
    moves: list[int] = field(default_factory=lambda: [0, 0])

    def add(self, color: int, seconds: float) -> None:
        self.seconds[color] += seconds
        self.moves[color] += 1


def play_game(
    rules: Rules,
    white: Player,
    black: Player,
    opening: Opening = START,
    max_plies: int | None = DEFAULT_MAX_PLIES,
    on_move: Callable[[Game], None] | None = None,
    clock: ThinkTime | None = None,
) -> Game:
    """Play one game to its end (or the ply cap, adjudicated by the variant's rule).

    ``white``/``black`` are the colours of the pieces; ``opening`` moves are played first.
    ``on_move(game)`` is called after every move played by a player; ``clock`` (when
    given) adds up each colour's time to choose.
    """
    game = Game(rules, max_plies=max_plies)
    for move in opening.moves:
        if game.is_over:
            break
        game.play(move)
    players = (white, black)
    while not game.is_over:
        side, started = game.side, time.perf_counter()
        move = players[side].choose(game)
        if clock is not None:
            clock.add(side, time.perf_counter() - started)
        game.play(move)
        if on_move is not None:
            on_move(game)
    return game


@dataclass
class MatchGame:
    """One game of a match and who played which colour."""

    game: Game
    opening: Opening
    a_color: int
    """The colour (0 white, 1 black) player A had."""
    white: str
    black: str
    clock: ThinkTime = field(default_factory=ThinkTime)

    @property
    def a_score(self) -> float:
        assert self.game.result is not None
        return self.game.result.score(self.a_color)

    def summary(self, index: int) -> str:
        """One progress line: ``game N: white - black  result  (plies, opening)``."""
        return (
            f"game {index + 1}: {self.white} - {self.black}  {self.game.result}  "
            f"({len(self.game.moves)} plies, opening {self.opening.text})"
        )


@dataclass
class MatchResult:
    """Outcome of a match from player A's point of view."""

    player_a: str
    player_b: str
    variant: str
    games: list[MatchGame] = field(default_factory=list)

    @property
    def wins(self) -> int:
        return sum(g.a_score == 1.0 for g in self.games)

    @property
    def draws(self) -> int:
        return sum(g.a_score == 0.5 for g in self.games)

    @property
    def losses(self) -> int:
        return sum(g.a_score == 0.0 for g in self.games)

    def seconds_per_move(self, player_a: bool = True) -> float:
        """Mean wall-clock seconds player A (or B) took to choose a move over the match."""
        color = [g.a_color if player_a else 1 - g.a_color for g in self.games]
        moves = sum(g.clock.moves[c] for g, c in zip(self.games, color, strict=True))
        seconds = sum(g.clock.seconds[c] for g, c in zip(self.games, color, strict=True))
        return seconds / moves if moves else 0.0

    @property
    def score(self) -> float:
        """Player A's mean score per game (0..1)."""
        return sum(g.a_score for g in self.games) / len(self.games) if self.games else 0.5

    def confidence_interval(self, z: float = 1.96) -> tuple[float, float]:
        """Normal-approximation interval of the score (95% by default)."""
        n = len(self.games)
        if n < 2:
            return 0.0, 1.0
        mean = self.score
        var = sum((g.a_score - mean) ** 2 for g in self.games) / (n - 1)
        if var == 0.0:  # every game scored alike: the Wilson interval still has a width
            centre = (mean + z * z / (2 * n)) / (1 + z * z / n)
            half = z * math.sqrt(mean * (1 - mean) / n + z * z / (4 * n * n)) / (1 + z * z / n)
            return max(0.0, centre - half), min(1.0, centre + half)
        half = z * math.sqrt(var / n)
        return max(0.0, mean - half), min(1.0, mean + half)

    def elo(self) -> tuple[float, float, float]:
        """Elo difference of A over B with the interval's ends (±inf at a score of 1 or 0)."""
        lo, hi = self.confidence_interval()
        return _elo(self.score), _elo(lo), _elo(hi)

    def summary(self) -> str:
        lo, hi = self.confidence_interval()
        elo, elo_lo, elo_hi = self.elo()
        return (
            f"{self.variant}: {self.player_a} vs {self.player_b}, {len(self.games)} games\n"
            f"W/D/L {self.wins}/{self.draws}/{self.losses}  score {self.score:.3f} "
            f"(95% CI {lo:.3f}..{hi:.3f})  Elo {elo:+.0f} ({elo_lo:+.0f}..{elo_hi:+.0f})\n"
            f"seconds a move: {self.player_a} {self.seconds_per_move():.3f}, "
            f"{self.player_b} {self.seconds_per_move(player_a=False):.3f}"
        )


def _elo(score: float) -> float:
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def _game_seed(seed: int | None, index: int, slot: int) -> int | None:
    return None if seed is None else (seed * 1_000_003 + index * 2 + slot) & 0x7FFFFFFF


def run_match(
    rules: Rules,
    player_a: Player,
    player_b: Player,
    games: int,
    openings: Sequence[Opening] | None = None,
    max_plies: int | None = DEFAULT_MAX_PLIES,
    seed: int | None = 0,
    on_game: Callable[[int, MatchGame], None] | None = None,
) -> MatchResult:
    """Play ``games`` games, colours alternating per opening pair (see the module docstring)."""
    if games < 1:
        raise ValueError(f"games must be >= 1, got {games}")
    book = list(openings) if openings is not None else load_openings(rules)
    if not book:
        book = [START]
    first = rules.start_position().side
    result = MatchResult(player_a.name, player_b.name, rules.variant.name)
    for i in range(games):
        opening = book[(i // 2) % len(book)]
        a_first = i % 2 == 0
        a_color = first if a_first else 1 - first
        player_a.new_game(_game_seed(seed, i, 0))
        player_b.new_game(_game_seed(seed, i, 1))
        white, black = (player_a, player_b) if a_color == 0 else (player_b, player_a)
        clock = ThinkTime()
        game = play_game(rules, white, black, opening, max_plies, clock=clock)
        record = MatchGame(game, opening, a_color, white.name, black.name, clock)
        result.games.append(record)
        if on_game is not None:
            on_game(i, record)
    return result


def match_pdn(rules: Rules, result: MatchResult, event: str | None = None) -> str:
    """Every game of the match as PDN, separated by blank lines."""
    event = event or f"tammi-rl match: {result.player_a} vs {result.player_b}"
    texts = []
    for i, record in enumerate(result.games):
        game = record.game
        assert game.result is not None
        tags = {
            "Event": event,
            "Site": "tammi-rl",
            "Round": str(i + 1),
            "White": record.white,
            "Black": record.black,
            "Termination": game.result.reason,
        }
        if record.opening.moves:
            tags["Opening"] = record.opening.text
        texts.append(game_to_pdn(rules, game.moves, tags=tags, result=game.result.pdn))
    return "\n".join(texts)


__all__ = ["DEFAULT_MAX_PLIES", "MatchGame", "MatchResult", "match_pdn", "play_game", "run_match"]
