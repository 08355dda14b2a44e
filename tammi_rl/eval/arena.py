"""Arena: colour-paired matches between named players, every game kept as a record.

    arena = Arena(rules, seed=0)
    result = arena.play(agent, alphabeta, games=20)      # a `MatchResult` (W/D/L, CI, Elo)
    fit = fit_elo(arena.elo_games(), anchor=alphabeta.name)
    Path("games.pdn").write_text(arena.pdn())

Matches run through `tammi_rl.eval.match.run_match` (openings in pairs, colours swapped within
each pair, the variant's balanced openings by default). Every match gets its own seed
(``seed + index``) so the same arena replays exactly with deterministic players.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

from tammi_rl.eval.elo import EloGame
from tammi_rl.eval.match import DEFAULT_MAX_PLIES, MatchGame, MatchResult, match_pdn, run_match
from tammi_rl.eval.openings import Opening, load_openings
from tammi_rl.players import Player
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.errors import TammiError


class ArenaError(TammiError):
    """Players cannot meet in the arena (e.g. two players share a name)."""


@dataclass(frozen=True)
class GameRecord:
    """One arena game: who moved first and second, the colours, and the result."""

    first: str
    second: str
    white: str
    black: str
    first_score: float
    """Score of the first mover: 1 win, 1/2 draw, 0 loss."""
    result: str
    """PDN result tag (``2-0``, ``1-1``, ...)."""
    reason: str
    plies: int
    opening: str

    def elo_game(self) -> EloGame:
        return EloGame(self.first, self.second, self.first_score)

    def to_dict(self) -> dict:
        return asdict(self)


def record_of(rules: Rules, game: MatchGame) -> GameRecord:
    """The `GameRecord` of one game of a match."""
    result = game.game.result
    assert result is not None, "the game is not over"
    # The side to move once the opening book is played out has the first-move advantage.
    first_color = game.game.positions[len(game.opening.moves)].side
    first, second = (game.white, game.black) if first_color == 0 else (game.black, game.white)
    return GameRecord(
        first,
        second,
        game.white,
        game.black,
        result.score(first_color),
        result.pdn,
        result.reason,
        len(game.game.moves),
        game.opening.text,
    )


@dataclass
class Arena:
    """Plays matches and keeps every game (records for the Elo fit, PDN for people)."""

    rules: Rules
    openings: Sequence[Opening] | None = None
    """Opening book (default: the variant's shipped balanced openings)."""
    max_plies: int | None = DEFAULT_MAX_PLIES
    seed: int = 0
    matches: list[MatchResult] = field(default_factory=list)
    records: list[GameRecord] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.openings is None:
            self.openings = load_openings(self.rules)

    def play(
        self, a: Player, b: Player, games: int, on_game: Callable[[int, MatchGame], None] | None = None
    ) -> MatchResult:
        """A colour-paired match of ``games`` games between ``a`` and ``b`` (A's point of view)."""
        if a.name == b.name:
            raise ArenaError(f"both players are named {a.name!r}; give them different names")
        result = run_match(
            self.rules,
            a,
            b,
            games,
            openings=self.openings,
            max_plies=self.max_plies,
            seed=self.seed + len(self.matches),
            on_game=on_game,
        )
        self.matches.append(result)
        self.records.extend(record_of(self.rules, g) for g in result.games)
        return result

    def elo_games(self) -> list[EloGame]:
        return [r.elo_game() for r in self.records]

    def pdn(self, event: str = "tammi-rl eval") -> str:
        """Every game of every match as PDN."""
        return "\n".join(match_pdn(self.rules, m, event=f"{event}: {m.player_a} vs {m.player_b}") for m in self.matches)


def match_row(result: MatchResult) -> dict:
    """One match as a flat summary row: players, W/D/L, score with its 95% CI, Elo difference."""
    lo, hi = result.confidence_interval()
    elo, elo_lo, elo_hi = result.elo()
    return {
        "player": result.player_a,
        "opponent": result.player_b,
        "games": len(result.games),
        "wins": result.wins,
        "draws": result.draws,
        "losses": result.losses,
        "score": round(result.score, 4),
        "score_ci_low": round(lo, 4),
        "score_ci_high": round(hi, 4),
        "elo_diff": _finite(elo),
        "elo_diff_low": _finite(elo_lo),
        "elo_diff_high": _finite(elo_hi),
        "seconds_per_move": round(result.seconds_per_move(), 4),
        "opponent_seconds_per_move": round(result.seconds_per_move(player_a=False), 4),
    }


def _finite(x: float) -> float | str:
    """Rounded Elo; +-inf as text (JSON has no infinity)."""
    if x == float("inf"):
        return "inf"
    if x == float("-inf"):
        return "-inf"
    return round(x, 1)


__all__ = ["Arena", "ArenaError", "GameRecord", "match_row", "record_of"]
