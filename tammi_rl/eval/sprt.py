"""Sequential probability ratio test on game results, and gating a new network with it.

    test = SPRT(elo0=0, elo1=30, alpha=0.05, beta=0.05)
    for score in results: test.add(score)            # 1, 1/2, 0 for the candidate
    test.status()                                   # "H1" (stronger), "H0" (not), or "continue"

    outcome = gate(rules, candidate, incumbent, elo0=0, elo1=30, max_games=200)
    if outcome.accepted: publish(candidate)

H0: the candidate is ``elo0`` Elo stronger than the incumbent; H1: ``elo1`` stronger
(``elo1 > elo0``; Elo on the logistic scale of `tammi_rl.eval.elo`). The log-likelihood
ratio is the generalised SPRT's normal approximation for game scores with draws
(as used by chess engine testing frameworks):

    LLR = N / (2 var) * ((mean - s0)^2 - (mean - s1)^2),   s_i = expected score at elo_i

with the per-game score mean and variance of the games so far, plus half a win and
half a loss as a regulariser so the variance is never zero. The test stops at
``log(beta / (1 - alpha))`` (H0) or ``log((1 - beta) / alpha)`` (H1); ``alpha`` is the
false-accept rate of a candidate no better than ``elo0``, ``beta`` the false-reject
rate of one ``elo1`` better.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from tammi_rl.eval.elo import expected_score
from tammi_rl.eval.match import DEFAULT_MAX_PLIES, run_match
from tammi_rl.eval.openings import START, Opening, load_openings
from tammi_rl.players import Player
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.errors import TammiError


def check_sprt_parameters(elo0: float, elo1: float, alpha: float, beta: float) -> None:
    """Raise `TammiError` unless ``elo1 > elo0`` and ``alpha``, ``beta`` lie in (0, 1/2]."""
    if not elo1 > elo0:
        raise TammiError(f"SPRT needs elo1 > elo0, got elo0={elo0}, elo1={elo1}")
    for name, value in (("alpha", alpha), ("beta", beta)):
        if not 0.0 < value <= 0.5:
            raise TammiError(f"SPRT {name} must be in (0, 0.5], got {value}")


def llr(wins: float, draws: float, losses: float, elo0: float, elo1: float) -> float:
    """Generalised-SPRT log-likelihood ratio of H1 over H0 (see the module docstring)."""
    w, d, l = wins + 0.5, float(draws), losses + 0.5  # noqa: E741 (the GSPRT's w, d, l); regulariser: half a win, half a loss
    n = w + d + l
    mean = (w + 0.5 * d) / n
    var = (w + 0.25 * d) / n - mean * mean
    s0, s1 = float(expected_score(elo0)), float(expected_score(elo1))
    games = wins + draws + losses
    return games / (2.0 * var) * ((mean - s0) ** 2 - (mean - s1) ** 2)


@dataclass
class SPRT:
    """An SPRT fed one game score at a time (the candidate's: 1, 1/2 or 0)."""

    elo0: float = 0.0
    elo1: float = 30.0
    alpha: float = 0.05
    beta: float = 0.05
    wins: int = 0
    draws: int = 0
    losses: int = 0

    def __post_init__(self) -> None:
        check_sprt_parameters(self.elo0, self.elo1, self.alpha, self.beta)

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def bounds(self) -> tuple[float, float]:
        """(lower, upper) LLR bounds: below accepts H0, above accepts H1."""
        return math.log(self.beta / (1.0 - self.alpha)), math.log((1.0 - self.beta) / self.alpha)

    def add(self, score: float) -> None:
        if score == 1.0:
            self.wins += 1
        elif score == 0.5:
            self.draws += 1
        elif score == 0.0:
            self.losses += 1
        else:
            raise ValueError(f"a game score is 1, 1/2 or 0, got {score}")

    def llr(self) -> float:
        return llr(self.wins, self.draws, self.losses, self.elo0, self.elo1) if self.games else 0.0

    def status(self) -> str:
        """``"H1"`` (candidate stronger), ``"H0"`` (not), or ``"continue"``."""
        value, (lower, upper) = self.llr(), self.bounds
        return "H1" if value >= upper else "H0" if value <= lower else "continue"


@dataclass
class GateResult:
    """Outcome of `gate`: ``accepted`` only when the SPRT accepted H1."""

    accepted: bool
    status: str
    """"H1", "H0", or "continue" when ``max_games`` ran out first (then not accepted)."""
    llr: float
    bounds: tuple[float, float]
    wins: int
    draws: int
    losses: int

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        return (self.wins + 0.5 * self.draws) / self.games if self.games else 0.5

    def summary(self) -> str:
        verdict = {"H1": "accepted", "H0": "rejected"}.get(self.status, "undecided (kept the incumbent)")
        return (
            f"gating {verdict}: W/D/L {self.wins}/{self.draws}/{self.losses} score {self.score:.3f}, "
            f"LLR {self.llr:+.2f} in [{self.bounds[0]:.2f}, {self.bounds[1]:.2f}]"
        )


def gate(
    rules: Rules,
    candidate: Player,
    incumbent: Player,
    elo0: float = 0.0,
    elo1: float = 30.0,
    alpha: float = 0.05,
    beta: float = 0.05,
    max_games: int = 200,
    openings: Sequence[Opening] | None = None,
    max_plies: int | None = DEFAULT_MAX_PLIES,
    seed: int = 0,
) -> GateResult:
    """Play colour-paired games (one opening per pair, in book order) until the SPRT decides
    or ``max_games`` are played; the candidate replaces the incumbent only on H1."""
    test = SPRT(elo0, elo1, alpha, beta)
    if max_games < 2:
        raise TammiError(f"gating needs max_games >= 2, got {max_games}")
    book = list(openings) if openings is not None else load_openings(rules)
    book = book or [START]
    pair = 0
    while test.games + 2 <= max_games and test.status() == "continue":
        result = run_match(
            rules, candidate, incumbent, 2, openings=[book[pair % len(book)]], max_plies=max_plies, seed=seed + pair
        )
        for g in result.games:
            test.add(g.a_score)
        pair += 1
    status = test.status()
    return GateResult(status == "H1", status, test.llr(), test.bounds, test.wins, test.draws, test.losses)


__all__ = ["SPRT", "GateResult", "check_sprt_parameters", "gate", "llr"]
