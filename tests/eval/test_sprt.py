"""SPRT: decisions on simulated results, error rates near alpha/beta, the gate's stopping rule."""

from __future__ import annotations

import numpy as np
import pytest

from tammi_rl.eval.elo import expected_score
from tammi_rl.eval.sprt import SPRT, gate, llr
from tammi_rl.players import RandomPlayer, parse_player_spec
from tammi_rl.rules.errors import TammiError


def _run(true_elo: float, rng: np.random.Generator, draw_share: float = 0.4, limit: int = 20_000) -> str:
    test = SPRT(elo0=0.0, elo1=40.0, alpha=0.05, beta=0.05)
    p = float(expected_score(true_elo))
    draw = draw_share * 2 * min(p, 1 - p)
    while test.status() == "continue" and test.games < limit:
        u = rng.random()
        test.add(1.0 if u < p - draw / 2 else 0.5 if u < p + draw / 2 else 0.0)
    return test.status()


def test_llr_sign_and_symmetry() -> None:
    assert llr(60, 20, 20, 0, 30) > 0 > llr(20, 20, 60, 0, 30)
    assert llr(50, 0, 50, -20, 20) == pytest.approx(0.0)


def test_decisions_follow_the_truth_with_about_the_stated_error_rates() -> None:
    rng = np.random.default_rng(0)
    strong = [_run(80.0, rng) for _ in range(40)]
    equal = [_run(0.0, rng) for _ in range(40)]
    assert strong.count("H1") >= 38
    assert equal.count("H0") >= 36  # alpha = 5%: a couple of false accepts at most


def test_bad_parameters() -> None:
    with pytest.raises(TammiError, match="elo1 > elo0"):
        SPRT(elo0=10, elo1=5)
    with pytest.raises(TammiError, match="alpha"):
        SPRT(alpha=0.0)
    with pytest.raises(ValueError, match="1, 1/2 or 0"):
        SPRT().add(0.3)


def test_gate_accepts_a_clearly_stronger_player_and_stops_early(russian) -> None:
    strong = parse_player_spec("alphabeta:depth=3", russian)
    weak = RandomPlayer(seed=1)
    out = gate(russian, strong, weak, elo0=0, elo1=100, max_games=40, max_plies=120)
    assert out.accepted and out.status == "H1" and out.games < 40 and out.games % 2 == 0
    undecided = gate(russian, weak, RandomPlayer(seed=2), max_games=2, max_plies=20)
    assert not undecided.accepted and undecided.games == 2
