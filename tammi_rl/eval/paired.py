"""Paired comparison: two agents rated against the same opponent from the same openings.

    diff = paired_difference(base_scores, new_scores, base_openings, new_openings)
    print(diff)                      # "+0.045 (95% CI -0.062..+0.152, 50 opening pairs)"

    python -m tammi_rl.eval.paired rate/base rate/new   # two `tammi-rl eval` outputs: a line per shared opponent

When two networks each play the same colour-paired openings against the same deterministic
opponent (alpha-beta at a fixed depth), most of the spread of either score comes from the
openings: some are won from either side, some lost. Comparing the games opening by opening
cancels that shared part, so the difference of the two scores has a narrower interval than
the two scores' own intervals suggest. The unit is the opening pair (games ``2k`` and
``2k + 1``, one from each side): its two games are not independent of each other, the pairs
are. The interval is the normal approximation over the pairs' differences.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tammi_rl.rules.errors import TammiError


class PairingError(TammiError):
    """Two matches cannot be paired: different lengths or different openings."""


@dataclass(frozen=True)
class PairedDifference:
    """New agent's score minus the base's, over the opening pairs both played."""

    mean: float
    low: float
    high: float
    pairs: int

    def __str__(self) -> str:
        pairs = f"{self.pairs} opening pair" + "s" * (self.pairs != 1)
        return f"{self.mean:+.3f} (95% CI {self.low:+.3f}..{self.high:+.3f}, {pairs})"


def paired_difference(
    base: Sequence[float],
    new: Sequence[float],
    base_openings: Sequence[str] | None = None,
    new_openings: Sequence[str] | None = None,
    z: float = 1.96,
) -> PairedDifference:
    """Mean of ``new - base`` over the colour pairs of games, with its normal 95% interval.

    ``base``/``new``: each agent's per-game scores (1, 1/2, 0) in game order, an even number
    of games, game ``2k`` and ``2k + 1`` from the same opening. The openings (when given) must
    be the same sequence: a difference between different openings measures the openings.
    """
    if len(base) != len(new):
        raise PairingError(f"the matches have {len(base)} and {len(new)} games: pair only equal matches")
    if len(base) < 2 or len(base) % 2:
        raise PairingError(f"{len(base)} games: a paired comparison needs whole colour pairs (an even number >= 2)")
    if base_openings is not None and new_openings is not None:
        for i, (a, b) in enumerate(zip(base_openings, new_openings, strict=True)):
            if a != b:
                raise PairingError(f"game {i + 1} opened with {a!r} in one match and {b!r} in the other")
    diffs = [(new[i] + new[i + 1] - base[i] - base[i + 1]) / 2 for i in range(0, len(base), 2)]
    mean, low, high = mean_interval(diffs, z)
    return PairedDifference(mean, max(-1.0, low), min(1.0, high), len(diffs))


def mean_interval(values: Sequence[float], z: float = 1.96) -> tuple[float, float, float]:
    """Mean of ``values`` (independent units, e.g. opening pairs) and its normal interval, not
    clipped to any range; (-inf, inf) for a single value, whose spread is unknown."""
    n = len(values)
    if n == 0:
        raise ValueError("the mean of no values")
    mean = sum(values) / n
    if n < 2:
        return mean, -math.inf, math.inf
    half = z * math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) / math.sqrt(n)
    return mean, mean - half, mean + half


@dataclass(frozen=True)
class AgentGames:
    """One agent's games of a single-agent ``tammi-rl eval`` output against one opponent."""

    agent: str
    opponent: str
    scores: tuple[float, ...]
    openings: tuple[str, ...]

    @classmethod
    def from_summary(cls, summary: dict, opponent: str, where: str = "summary") -> AgentGames:
        """The agent's games against ``opponent`` from a ``summary.json``'s contents."""
        agent = summary.get("agent")
        if summary.get("mode") != "single" or not agent:
            raise PairingError(f"{where}: not a single-agent evaluation (a gauntlet has no one agent)")
        scores: list[float] = []
        openings: list[str] = []
        for g in summary["games"]:
            if {g["first"], g["second"]} != {agent, opponent}:
                continue
            scores.append(g["first_score"] if g["first"] == agent else 1.0 - g["first_score"])
            openings.append(g["opening"])
        if not scores:
            raise PairingError(f"{where}: no games of {agent} against {opponent!r}")
        return cls(agent, opponent, tuple(scores), tuple(openings))

    @classmethod
    def read(cls, path: Path, opponent: str) -> AgentGames:
        """From a ``tammi-rl eval --out`` directory or its ``summary.json``."""
        summary, where = _read_summary(path)
        return cls.from_summary(summary, opponent, where)

    @classmethod
    def read_all(cls, path: Path) -> list[AgentGames]:
        """One per opponent of a ``tammi-rl eval --out`` directory or its ``summary.json``."""
        summary, where = _read_summary(path)
        return [cls.from_summary(summary, name, where) for name in summary.get("opponents", [])]


def _read_summary(path: Path) -> tuple[dict, str]:
    file = path / "summary.json" if path.is_dir() else path
    if not file.is_file():
        raise PairingError(f"{path}: no summary.json (give a `tammi-rl eval --out` directory)")
    return json.loads(file.read_text(encoding="utf-8")), str(file)


def shared_opponents(base: Sequence[AgentGames], new: Sequence[AgentGames]) -> list[tuple[AgentGames, AgentGames]]:
    """The (base, new) games against each opponent both met, in ``base``'s order."""
    by_name = {games.opponent: games for games in new}
    pairs = [(games, by_name[games.opponent]) for games in base if games.opponent in by_name]
    if not pairs:
        base_names = ", ".join(g.opponent for g in base) or "none"
        new_names = ", ".join(g.opponent for g in new) or "none"
        raise PairingError(f"the evaluations share no opponent (base: {base_names}; new: {new_names})")
    return pairs


def compare(base: AgentGames, new: AgentGames) -> PairedDifference:
    """``new`` minus ``base``: both must have met the same opponent from the same openings."""
    if base.opponent != new.opponent:
        raise PairingError(f"the agents met different opponents ({base.opponent} and {new.opponent})")
    return paired_difference(base.scores, new.scores, base.openings, new.openings)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", type=Path, help="the base agent's `tammi-rl eval --out` directory (or summary.json)")
    parser.add_argument("new", type=Path, help="the new agent's, against the same opponent from the same openings")
    parser.add_argument("--vs", help="only this opponent (default: every opponent both evaluations met)")
    args = parser.parse_args(argv)
    try:
        if args.vs is not None:
            pairs = [(AgentGames.read(args.base, args.vs), AgentGames.read(args.new, args.vs))]
        else:
            pairs = shared_opponents(AgentGames.read_all(args.base), AgentGames.read_all(args.new))
        lines = [f"{new.agent} minus {base.agent} against {base.opponent}: {compare(base, new)}" for base, new in pairs]
    except TammiError as exc:
        parser.exit(2, f"error: {exc}\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
