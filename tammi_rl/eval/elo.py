"""Maximum-likelihood Elo ratings over all games played, with a first-move advantage.

    games = [EloGame(first="net", second="alphabeta(depth=2)", score=1.0), ...]
    fit = fit_elo(games, anchor="alphabeta(depth=2)")
    fit.ratings["net"], fit.errors["net"], fit.first_move_advantage

The model (logistic / Bradley-Terry on the Elo scale): in a game where player ``i``
moves first and ``j`` second, the first mover's expected score is

    p = 1 / (1 + 10 ** (-(r_i - r_j + a) / 400))

with ``a`` the first-move advantage in Elo, one parameter shared by all games.
**Draws count as half a win and half a loss**: each game adds
``s * log p + (1 - s) * log(1 - p)`` to the log-likelihood with ``s`` in {0, 1/2, 1}
(the same expected-score model as the per-match Elo of `tammi_rl.eval.match`, so the two
agree). The anchor's rating is fixed (0 by default); the other ratings and ``a`` are
found by Newton's method (with step halving) on the log-likelihood.

Error bars are standard deviations from the inverse of the negative Hessian at the
optimum. With many draws they are somewhat conservative: a draw carries less variance
than a coin-flip win/loss, which the half-win likelihood does not know about.

A player who won (or lost) every game has an infinite maximum-likelihood rating; a
weak Gaussian prior (``prior_sd`` Elo around the anchor's rating for every player, and
around 0 for ``a``) keeps the fit finite then and otherwise moves ratings very little.
``prior_sd=None`` gives the pure maximum-likelihood fit (and an `EloFitError` when it
does not exist). A player with no chain of games to the anchor cannot be rated and is
an `EloFitError`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from tammi_rl.rules.errors import TammiError

ELO_K = math.log(10.0) / 400.0
"""d(logit)/d(Elo): the logistic slope of the Elo scale."""
DEFAULT_PRIOR_SD = 1000.0
DEFAULT_FMA_PRIOR_SD = 400.0


class EloFitError(TammiError):
    """The games do not determine the ratings (no games, players not linked to the anchor, no optimum)."""


@dataclass(frozen=True)
class EloGame:
    """One game for the fit: who moved first, who second, and the first mover's score (1, 1/2, 0)."""

    first: str
    second: str
    score: float


def expected_score(elo_diff: float | np.ndarray) -> float | np.ndarray:
    """Expected score of a player ``elo_diff`` Elo stronger (logistic Elo curve)."""
    return 1.0 / (1.0 + np.power(10.0, -np.asarray(elo_diff, dtype=float) / 400.0))


@dataclass
class EloFit:
    """Fitted ratings with their standard errors (Elo), the first-move advantage, and the fit's covariance."""

    anchor: str
    anchor_rating: float
    ratings: dict[str, float]
    errors: dict[str, float]
    """Standard deviation of each rating (0 for the anchor, which is fixed)."""
    first_move_advantage: float
    first_move_error: float
    games: dict[str, int]
    """Games played per player."""
    covariance: np.ndarray = field(repr=False)
    """Covariance of the free parameters, in the order of `params` (Elo^2)."""
    params: list[str] = field(repr=False)
    """Names of the free parameters: the non-anchor players, then ``"<first-move>"``."""
    log_likelihood: float = 0.0
    iterations: int = 0

    def difference(self, a: str, b: str) -> tuple[float, float]:
        """Rating of ``a`` minus ``b`` and the difference's standard error (covariance included)."""
        diff = self.ratings[a] - self.ratings[b]
        w = np.zeros(len(self.params))
        for name, sign in ((a, 1.0), (b, -1.0)):
            if name != self.anchor:
                w[self.params.index(name)] += sign
        return diff, float(math.sqrt(max(w @ self.covariance @ w, 0.0)))

    def ranked(self) -> list[str]:
        """Player names, strongest first."""
        return sorted(self.ratings, key=lambda n: -self.ratings[n])

    def table(self) -> str:
        """A printable ladder: rank, player, Elo ± error (anchor marked), games."""
        width = max(len(n) for n in self.ratings)
        lines = [f"{'#':>3}  {'player':<{width}}  {'Elo':>7}  {'± (1 sd)':>8}  {'games':>5}"]
        for i, name in enumerate(self.ranked(), 1):
            err = "anchor" if name == self.anchor else f"{self.errors[name]:.0f}"
            lines.append(f"{i:>3}  {name:<{width}}  {self.ratings[name]:>+7.0f}  {err:>8}  {self.games[name]:>5}")
        lines.append(f"first-move advantage {self.first_move_advantage:+.0f} ± {self.first_move_error:.0f} Elo")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """JSON-ready summary (no covariance)."""
        return {
            "model": "logistic (Bradley-Terry on the Elo scale), draws as half wins, first-move advantage",
            "anchor": self.anchor,
            "anchor_rating": self.anchor_rating,
            "first_move_advantage": self.first_move_advantage,
            "first_move_error": self.first_move_error,
            "players": [
                {"name": n, "elo": self.ratings[n], "error": self.errors[n], "games": self.games[n]}
                for n in self.ranked()
            ],
        }


def _check_connected(names: Sequence[str], games: Sequence[EloGame], anchor: str) -> None:
    parent = {n: n for n in names}

    def root(n: str) -> str:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for g in games:
        parent[root(g.first)] = root(g.second)
    lost = sorted(n for n in names if root(n) != root(anchor))
    if lost:
        raise EloFitError(f"cannot rate {', '.join(lost)}: no chain of games links them to the anchor {anchor!r}")


def fit_elo(
    games: Iterable[EloGame],
    anchor: str,
    anchor_rating: float = 0.0,
    prior_sd: float | None = DEFAULT_PRIOR_SD,
    first_move: bool = True,
    fma_prior_sd: float | None = DEFAULT_FMA_PRIOR_SD,
    tol: float = 1e-6,
    max_iter: int = 100,
) -> EloFit:
    """Fit ratings to ``games`` (see the module docstring); ``first_move=False`` fixes ``a`` at 0."""
    games = list(games)
    if not games:
        raise EloFitError("no games to fit ratings to")
    for g in games:
        if g.score not in (0.0, 0.5, 1.0):
            raise EloFitError(f"game {g}: score must be 0, 1/2 or 1")
        if g.first == g.second:
            raise EloFitError(f"game {g}: a player cannot play itself (give the two sides different names)")
    names = sorted({g.first for g in games} | {g.second for g in games})
    if anchor not in names:
        raise EloFitError(f"anchor {anchor!r} played no games; players: {', '.join(names)}")
    _check_connected(names, games, anchor)

    free = [n for n in names if n != anchor]
    index = {n: i for i, n in enumerate(free)}
    n_free = len(free) + (1 if first_move else 0)
    # Design matrix: +1 for the first mover, -1 for the second, +1 in the first-move column.
    rows = len(games)
    design = np.zeros((rows, n_free))
    offset = np.zeros(rows)
    for r, g in enumerate(games):
        for name, sign in ((g.first, 1.0), (g.second, -1.0)):
            if name == anchor:
                offset[r] += sign * anchor_rating
            else:
                design[r, index[name]] += sign
        if first_move:
            design[r, -1] = 1.0
    score = np.array([g.score for g in games])
    prior_mean = np.zeros(n_free)
    prior_prec = np.zeros(n_free)
    if prior_sd is not None:
        prior_mean[: len(free)] = anchor_rating
        prior_prec[: len(free)] = 1.0 / prior_sd**2
    if first_move and fma_prior_sd is not None:
        prior_prec[-1] = 1.0 / fma_prior_sd**2

    def objective(x: np.ndarray) -> float:
        z = ELO_K * (design @ x + offset)
        # s*log(p) + (1-s)*log(1-p) with p = sigmoid(z), computed stably
        ll = float(np.sum(score * z - np.logaddexp(0.0, z)))
        return ll - 0.5 * float(np.sum(prior_prec * (x - prior_mean) ** 2))

    x = prior_mean.copy()
    value = objective(x)
    hess = np.eye(n_free)
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 (`it` is read after the loop: the steps taken)
        z = ELO_K * (design @ x + offset)
        p = 1.0 / (1.0 + np.exp(-z))
        grad = ELO_K * design.T @ (score - p) - prior_prec * (x - prior_mean)
        weight = ELO_K**2 * p * (1.0 - p)
        hess = (design * weight[:, None]).T @ design + np.diag(prior_prec)  # negative Hessian
        try:
            step = np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            raise EloFitError(_not_determined(prior_sd)) from None
        t = 1.0
        while True:
            candidate = x + t * step
            new_value = objective(candidate)
            if new_value >= value - 1e-12 or t < 1e-8:
                break
            t *= 0.5
        x, value = candidate, new_value
        if np.max(np.abs(t * step)) < tol:
            break
        if np.max(np.abs(x)) > 1e6:
            raise EloFitError(_not_determined(prior_sd))
    else:
        raise EloFitError(f"the Elo fit did not converge in {max_iter} Newton steps ({_not_determined(prior_sd)})")
    try:
        cov = np.linalg.inv(hess)
    except np.linalg.LinAlgError:
        raise EloFitError(_not_determined(prior_sd)) from None
    sd = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    ratings = {anchor: float(anchor_rating)} | {n: float(x[index[n]]) for n in free}
    errors = {anchor: 0.0} | {n: float(sd[index[n]]) for n in free}
    counts = {n: 0 for n in names}
    for g in games:
        counts[g.first] += 1
        counts[g.second] += 1
    params = free + (["<first-move>"] if first_move else [])
    return EloFit(
        anchor=anchor,
        anchor_rating=float(anchor_rating),
        ratings=ratings,
        errors=errors,
        first_move_advantage=float(x[-1]) if first_move else 0.0,
        first_move_error=float(sd[-1]) if first_move else 0.0,
        games=counts,
        covariance=cov,
        params=params,
        log_likelihood=value,
        iterations=it,
    )


def _not_determined(prior_sd: float | None) -> str:
    if prior_sd is None:
        return (
            "the maximum-likelihood ratings do not exist (a player won or lost every game?); "
            "fit with a prior (prior_sd) to keep them finite"
        )
    return "the ratings are not determined by these games"


__all__ = ["DEFAULT_PRIOR_SD", "ELO_K", "EloFit", "EloFitError", "EloGame", "expected_score", "fit_elo"]
