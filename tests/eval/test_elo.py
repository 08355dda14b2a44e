"""The Elo fit recovers known ratings from synthetic games (draws, first-move advantage, anchor)."""

from __future__ import annotations

import numpy as np
import pytest

from tammi_rl.eval.elo import EloFitError, EloGame, expected_score, fit_elo

TRUE = {"anchor": 0.0, "a": 150.0, "b": -100.0, "c": 320.0}
FMA = 40.0


def synthetic(
    ratings: dict[str, float], fma: float, games_per_pair: int, draw_share: float, seed: int
) -> list[EloGame]:
    """Colour-alternating games between every pair; results drawn so the first mover's
    expected score is the model's p, with draws making up ``draw_share`` of what the
    scores allow (P(draw) = draw_share * 2 min(p, 1 - p))."""
    rng = np.random.default_rng(seed)
    names = list(ratings)
    games = []
    for i, x in enumerate(names):
        for y in names[i + 1 :]:
            for k in range(games_per_pair):
                first, second = (x, y) if k % 2 == 0 else (y, x)
                p = float(expected_score(ratings[first] - ratings[second] + fma))
                draw = draw_share * 2 * min(p, 1 - p)
                u = rng.random()
                score = 1.0 if u < p - draw / 2 else 0.5 if u < p + draw / 2 else 0.0
                games.append(EloGame(first, second, score))
    return games


@pytest.mark.parametrize("draw_share", [0.0, 0.6])
def test_fit_recovers_known_ratings_within_error_bars(draw_share: float) -> None:
    games = synthetic(TRUE, FMA, 600, draw_share, seed=1)
    assert draw_share == 0.0 or sum(g.score == 0.5 for g in games) > 0.2 * len(games)
    fit = fit_elo(games, anchor="anchor")
    assert fit.ratings["anchor"] == 0.0 and fit.errors["anchor"] == 0.0
    for name, true in TRUE.items():
        if name != "anchor":
            assert 5 < fit.errors[name] < 40
            assert abs(fit.ratings[name] - true) < 3 * fit.errors[name], (name, fit.ratings[name], true)
    assert abs(fit.first_move_advantage - FMA) < 3 * fit.first_move_error
    assert fit.first_move_error < 15
    assert fit.ranked() == ["c", "a", "anchor", "b"]


def test_anchor_value_shifts_all_ratings_equally() -> None:
    games = synthetic(TRUE, FMA, 200, 0.3, seed=2)
    base = fit_elo(games, anchor="anchor", prior_sd=None)
    moved = fit_elo(games, anchor="anchor", anchor_rating=1000.0, prior_sd=None)
    for name in TRUE:
        assert moved.ratings[name] == pytest.approx(base.ratings[name] + 1000.0, abs=1e-6)
        assert moved.errors[name] == pytest.approx(base.errors[name], rel=1e-6)
    # Anchoring elsewhere only moves the zero point: differences stay.
    other = fit_elo(games, anchor="b", prior_sd=None)
    assert other.ratings["b"] == 0.0
    for name in TRUE:
        assert other.ratings[name] - other.ratings["anchor"] == pytest.approx(
            base.ratings[name] - base.ratings["anchor"], abs=1e-4
        )
    diff, err = base.difference("c", "a")
    assert diff == pytest.approx(base.ratings["c"] - base.ratings["a"])
    assert 0 < err < base.errors["c"] + base.errors["a"]


def test_matches_closed_form_for_one_pairing() -> None:
    # 50 wins, 20 draws, 30 losses, colours balanced: score 0.6, Elo -400 log10(1/0.6 - 1)
    games = []
    for k in range(100):
        s = 1.0 if k < 50 else 0.5 if k < 70 else 0.0
        games.append(EloGame("x", "y", s) if k % 2 == 0 else EloGame("y", "x", 1.0 - s))
    fit = fit_elo(games, anchor="y", prior_sd=None, first_move=False)
    assert fit.ratings["x"] == pytest.approx(-400 * np.log10(1 / 0.6 - 1), abs=1e-6)


def test_perfect_score_needs_the_prior() -> None:
    games = [EloGame("x", "y", 1.0), EloGame("y", "x", 0.0)] * 5
    with pytest.raises(EloFitError, match="do not exist"):
        fit_elo(games, anchor="y", prior_sd=None)
    fit = fit_elo(games, anchor="y")
    assert 300 < fit.ratings["x"] < 3000 and fit.errors["x"] > 100


def test_bad_inputs_are_clear_errors() -> None:
    with pytest.raises(EloFitError, match="no games"):
        fit_elo([], anchor="a")
    with pytest.raises(EloFitError, match="anchor 'z' played no games"):
        fit_elo([EloGame("a", "b", 1.0)], anchor="z")
    with pytest.raises(EloFitError, match="no chain of games"):
        fit_elo([EloGame("a", "b", 1.0), EloGame("c", "d", 0.5)], anchor="a")
    with pytest.raises(EloFitError, match="score must be"):
        fit_elo([EloGame("a", "b", 0.7)], anchor="a")
