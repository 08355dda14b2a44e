"""Gauntlet: every checkpoint of a run rated against fixed anchors and against its neighbours.

    entries = run_checkpoints("runs/russian")
    result = run_gauntlet(arena, entries, load, opponents, anchor="alphabeta(depth=2)", games=20)
    write_ladder_csv(result.rows, "ladder.csv"); plot_ladder(result, "ladder.png")

Each checkpoint plays ``games`` colour-paired games against every opponent (the
anchors: alpha-beta at fixed depths) and against the next checkpoint, so the ladder is
linked both to fixed references and along the run. One Elo fit over all games
(`tammi_rl.eval.elo`) gives every checkpoint and opponent a rating relative to the anchor.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tammi_rl.eval.arena import Arena
from tammi_rl.eval.elo import EloFit, fit_elo
from tammi_rl.eval.match import MatchGame, MatchResult
from tammi_rl.players import Player
from tammi_rl.rules.errors import TammiError
from tammi_rl.store.checkpoint import CheckpointError, load_checkpoint
from tammi_rl.store.rundir import RunDir


@dataclass(frozen=True)
class CheckpointEntry:
    """One checkpoint of a run: its training iteration, file and player name."""

    iteration: int
    path: Path
    games: int = 0
    """Self-play games played up to this checkpoint (from its counters; 0 when unknown)."""

    @property
    def name(self) -> str:
        return f"iter_{self.iteration:06d}"


def run_checkpoints(run_dir: str | Path) -> list[CheckpointEntry]:
    """The numbered checkpoints of a run (oldest first); ``latest.pt`` alone when there are none."""
    run = RunDir(Path(run_dir))
    if not run.root.is_dir():
        raise CheckpointError(f"{run.root}: no run directory there")
    found = run.checkpoints()
    if not found and run.latest_path.is_file():
        ckpt = load_checkpoint(run.latest_path)
        found = [(int(ckpt["counters"].get("iteration", 0)), run.latest_path)]
    if not found:
        raise CheckpointError(f"{run.root}: no checkpoints in {run.checkpoints_dir}")
    entries = []
    for iteration, path in found:
        counters = load_checkpoint(path)["counters"]
        entries.append(CheckpointEntry(iteration, path, int(counters.get("games", 0))))
    return entries


@dataclass
class LadderRow:
    """One line of the ladder."""

    name: str
    iteration: int | None
    """Training iteration (None for the anchors and other fixed opponents)."""
    selfplay_games: int | None
    elo: float
    error: float
    games: int
    scores: dict[str, float]
    """Score against each opponent this player met."""

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "iteration": self.iteration,
            "selfplay_games": self.selfplay_games,
            "elo": round(self.elo, 1),
            "error": round(self.error, 1),
            "elo_low": round(self.elo - 1.96 * self.error, 1),
            "elo_high": round(self.elo + 1.96 * self.error, 1),
            "games": self.games,
            "scores": {k: round(v, 4) for k, v in self.scores.items()},
        }


@dataclass
class GauntletResult:
    fit: EloFit
    rows: list[LadderRow]
    """Checkpoints first (by iteration), then the fixed opponents (strongest first)."""
    matches: list[MatchResult]

    def table(self) -> str:
        """The ladder as printable text."""
        width = max(len(r.name) for r in self.rows)
        lines = [f"{'player':<{width}}  {'iter':>6}  {'Elo':>7}  {'95% CI':>15}  {'games':>5}"]
        for r in self.rows:
            it = "" if r.iteration is None else str(r.iteration)
            ci = (
                "anchor"
                if r.name == self.fit.anchor
                else f"{r.elo - 1.96 * r.error:+.0f}..{r.elo + 1.96 * r.error:+.0f}"
            )
            lines.append(f"{r.name:<{width}}  {it:>6}  {r.elo:>+7.0f}  {ci:>15}  {r.games:>5}")
        lines.append(
            f"anchor {self.fit.anchor} = {self.fit.anchor_rating:+.0f}; first-move advantage "
            f"{self.fit.first_move_advantage:+.0f} ± {self.fit.first_move_error:.0f} Elo"
        )
        return "\n".join(lines)


def run_gauntlet(
    arena: Arena,
    entries: Sequence[CheckpointEntry],
    load: Callable[[CheckpointEntry], Player],
    opponents: Sequence[Player],
    anchor: str,
    games: int,
    neighbours: bool = True,
    anchor_rating: float = 0.0,
    on_match: Callable[[MatchResult], None] | None = None,
    on_game: Callable[[int, MatchGame], None] | None = None,
) -> GauntletResult:
    """Play the gauntlet in ``arena`` and fit the ladder (see the module docstring).

    ``load(entry)`` builds the player of a checkpoint (its name must be ``entry.name``).
    """
    if not entries:
        raise TammiError("the gauntlet needs at least one checkpoint")
    if anchor not in {o.name for o in opponents}:
        raise TammiError(f"the anchor {anchor!r} is not among the opponents ({', '.join(o.name for o in opponents)})")
    players = [load(e) for e in entries]
    for entry, player in zip(entries, players, strict=True):
        player.name = entry.name
    start = len(arena.matches)
    for i, player in enumerate(players):
        for opponent in opponents:
            _report(arena.play(player, opponent, games, on_game), on_match)
        if neighbours and i + 1 < len(players):
            _report(arena.play(player, players[i + 1], games, on_game), on_match)
    fit = fit_elo(arena.elo_games(), anchor=anchor, anchor_rating=anchor_rating)
    matches = arena.matches[start:]
    rows = [_row(fit, matches, e.name, e.iteration, e.games) for e in entries]
    fixed = sorted({o.name for o in opponents}, key=lambda n: -fit.ratings[n])
    rows += [_row(fit, matches, n, None, None) for n in fixed]
    return GauntletResult(fit, rows, matches)


def _report(result: MatchResult, on_match: Callable[[MatchResult], None] | None) -> None:
    if on_match is not None:
        on_match(result)


def _row(
    fit: EloFit, matches: Sequence[MatchResult], name: str, iteration: int | None, selfplay_games: int | None
) -> LadderRow:
    scores: dict[str, float] = {}
    for m in matches:
        if m.player_a == name:
            scores[m.player_b] = m.score
        elif m.player_b == name:
            scores[m.player_a] = 1.0 - m.score
    return LadderRow(name, iteration, selfplay_games, fit.ratings[name], fit.errors[name], fit.games[name], scores)


LADDER_FIELDS = ("name", "iteration", "selfplay_games", "elo", "error", "elo_low", "elo_high", "games")


def write_ladder_csv(rows: Sequence[LadderRow], path: str | Path) -> Path:
    """The ladder as CSV: one row per player, a ``score_vs_<opponent>`` column per opponent met."""
    path = Path(path)
    opponents = sorted({o for r in rows for o in r.scores})
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow([*LADDER_FIELDS, *(f"score_vs_{o}" for o in opponents)])
        for r in rows:
            d = r.to_dict()
            writer.writerow(
                [("" if d[k] is None else d[k]) for k in LADDER_FIELDS] + [d["scores"].get(o, "") for o in opponents]
            )
    return path


def plot_ladder(result: GauntletResult, path: str | Path, title: str = "") -> Path:
    """PNG: Elo of each checkpoint vs training iteration (95% error bars), anchors as lines."""
    # Lazy: matplotlib.pyplot takes ~0.4 s to import and only this plot needs it.
    try:
        import matplotlib
    except ImportError:  # a core dependency; only a broken install lands here
        raise TammiError("the ladder plot needs matplotlib (pip install matplotlib)") from None
    matplotlib.use("Agg", force=True)
    from matplotlib import pyplot as plt
    from matplotlib.ticker import MaxNLocator

    path = Path(path)
    ckpts = [r for r in result.rows if r.iteration is not None]
    fixed = [r for r in result.rows if r.iteration is None]
    fig, ax = plt.subplots(figsize=(8, 5))
    try:
        ax.errorbar(
            [r.iteration for r in ckpts if r.iteration is not None],  # every one of them (narrows the type)
            [r.elo for r in ckpts],
            yerr=[1.96 * r.error for r in ckpts],
            marker="o",
            capsize=3,
            label="checkpoints (95% CI)",
        )
        for r in fixed:
            style = "-" if r.name == result.fit.anchor else ":"
            ax.axhline(r.elo, linestyle=style, color="grey", linewidth=1)
            ax.annotate(
                r.name + (" (anchor)" if r.name == result.fit.anchor else ""),
                (0, r.elo),
                xycoords=("axes fraction", "data"),
                xytext=(4, 2),
                textcoords="offset points",
                fontsize=8,
                color="grey",
            )
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("training iteration")
        ax.set_ylabel(f"Elo (anchor {result.fit.anchor} = {result.fit.anchor_rating:+.0f})")
        ax.set_title(title or "Elo ladder")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="lower right")
        fig.tight_layout()
        fig.savefig(path, dpi=100)
    finally:
        plt.close(fig)
    return path


__all__ = [
    "CheckpointEntry",
    "GauntletResult",
    "LadderRow",
    "plot_ladder",
    "run_checkpoints",
    "run_gauntlet",
    "write_ladder_csv",
]
