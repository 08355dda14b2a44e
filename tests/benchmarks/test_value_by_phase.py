"""value_by_phase: the value head's cross-entropy against outcomes, by pieces left, and its CLI."""

import math
import sys

import numpy as np
import pytest
import torch
from support.tiny_checkpoint import TINY_NETWORK, write_tiny_checkpoint

from tammi_rl.benchmarks import value_by_phase as vbp
from tammi_rl.env.observation import N_PLANES, OPP_KINGS, OPP_MEN, OWN_KINGS, OWN_MEN
from tammi_rl.nn.model import build_model
from tammi_rl.rules.engine import Rules
from tammi_rl.selfplay.samples import MAX_LEGAL, SampleBatch
from tammi_rl.train.replay import ReplayBuffer


class FixedValue(torch.nn.Module):
    """A stand-in network whose WDL logits are the log of ``probs`` for every position."""

    def __init__(self, probs: tuple[float, float, float]) -> None:
        super().__init__()
        self.logits = torch.log(torch.tensor(probs))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.zeros((len(x), 1)), self.logits.expand(len(x), 3)


def positions(pieces: list[int], kings: int = 0) -> np.ndarray:
    """One 8x8 observation per entry, holding that many pieces (the first ``kings`` as kings)."""
    obs = np.zeros((len(pieces), N_PLANES, 8, 8), np.float32)
    for i, n in enumerate(pieces):
        cells = [(r, c) for r in range(8) for c in range(8)][:n]
        for j, (r, c) in enumerate(cells):
            own = j % 2 == 0
            king = j < kings
            obs[i, (OWN_KINGS if king else OWN_MEN) if own else (OPP_KINGS if king else OPP_MEN), r, c] = 1
    return obs


def test_bins_split_by_pieces_left_and_count_their_outcomes():
    # 200 openings (24 pieces), 300 endgames (4 pieces, of them 2 kings); outcome cycles W/D/L
    obs = np.concatenate([positions([24] * 200), positions([4] * 300, kings=2)])
    outcome = np.arange(500) % 3
    rows = vbp.value_by_phase(FixedValue((1 / 3, 1 / 3, 1 / 3)), obs, outcome)
    assert [(r.pieces_low, r.pieces_high, r.samples) for r in rows] == [(0.75, 1.0, 200), (0.0, 0.25, 300)]
    assert rows[0].kings_per_position == 0 and rows[1].kings_per_position == 2
    # uniform outcomes and a uniform head: both cross-entropies are ln 3, nothing explained
    ending = rows[1]
    assert ending.outcome_freq == pytest.approx((1 / 3, 1 / 3, 1 / 3))
    assert ending.baseline_ce == pytest.approx(math.log(3)) and ending.value_ce == pytest.approx(math.log(3))
    assert ending.explained == pytest.approx(0.0, abs=1e-6)


def test_explained_is_positive_for_a_head_that_knows_and_negative_for_an_overconfident_one():
    obs = positions([24] * 300)
    outcome = np.repeat([0, 1, 2], 100)
    freq_head = vbp.value_by_phase(FixedValue((1 / 3, 1 / 3, 1 / 3)), obs, outcome)[0]
    sure_of_a_win = vbp.value_by_phase(FixedValue((0.9, 0.05, 0.05)), obs, outcome)[0]
    assert freq_head.explained == pytest.approx(0.0, abs=1e-6)
    assert sure_of_a_win.value_ce == pytest.approx(-(math.log(0.9) + 2 * math.log(0.05)) / 3)
    assert sure_of_a_win.explained < -0.5

    class Knows(torch.nn.Module):  # reads the outcome off a marker plane
        def forward(self, x):
            marker = x[:, 4, 0, 0].long()
            return torch.zeros((len(x), 1)), torch.nn.functional.one_hot(marker, 3).float() * 20

    obs[:, 4, 0, 0] = outcome
    knows = vbp.value_by_phase(Knows(), obs, outcome)[0]
    assert knows.explained > 0.99 and knows.value_outcome_corr == pytest.approx(1.0)
    assert knows.mean_draw_prob == pytest.approx(1 / 3, abs=1e-6)


def test_a_draw_heavy_head_keeps_its_value_but_loses_cross_entropy():
    """What a blended target does where the search value is near 0: the draw mass grows, the
    expected value (win minus loss) is unchanged, so its correlation with the outcome is too."""
    rng = np.random.default_rng(0)
    outcome = rng.integers(0, 3, 600)
    obs = positions([24] * 600)
    obs[:, 4, 0, 0] = outcome  # the marker the heads read

    def head(draw: float) -> torch.nn.Module:
        class Leaning(torch.nn.Module):  # expected value +-0.2 towards the outcome, whatever the draw mass
            def forward(self, x):
                z = x[:, 4, 0, 0].long()
                lean = torch.where(z == 0, 0.2, torch.where(z == 2, -0.2, 0.0))
                p = torch.stack([(1 - draw) / 2 + lean / 2, torch.full_like(lean, draw), (1 - draw) / 2 - lean / 2], 1)
                return torch.zeros((len(x), 1)), torch.log(p)

        return Leaning()

    calibrated, drawish = (vbp.value_by_phase(head(d), obs, outcome)[0] for d in (1 / 3, 2 / 3))
    assert drawish.mean_draw_prob == pytest.approx(2 / 3) and calibrated.mean_draw_prob == pytest.approx(1 / 3)
    assert drawish.value_ce > calibrated.value_ce and drawish.explained < calibrated.explained
    assert drawish.value_outcome_corr == pytest.approx(calibrated.value_outcome_corr)
    assert calibrated.value_outcome_corr > 0.5


def test_bins_under_the_minimum_are_left_out():
    obs = positions([24] * (vbp.MIN_BIN_SAMPLES - 1) + [12] * vbp.MIN_BIN_SAMPLES)
    rows = vbp.value_by_phase(FixedValue((0.4, 0.2, 0.4)), obs, np.zeros(len(obs), np.int64))
    assert [(r.pieces_low, r.samples) for r in rows] == [(0.5, vbp.MIN_BIN_SAMPLES)]


def test_cli_prints_the_table_for_a_run_directory(tmp_path, monkeypatch, capsys):
    rules = Rules.for_variant("russian")
    run = tmp_path / "run"
    write_tiny_checkpoint(run / "checkpoints" / "latest.pt", "russian", build_model(rules, TINY_NETWORK))
    n = 250
    obs = positions([24] * n)
    batch = SampleBatch(
        obs,
        np.full((n, MAX_LEGAL), -1, np.int32),
        np.zeros((n, MAX_LEGAL), np.float32),
        np.arange(n) % 3,
        np.zeros(n, np.float32),
        np.full(n, np.nan, np.float32),
        np.full((n, 32), -1, np.int8),
        np.full(n, np.nan, np.float32),
        np.full((n, MAX_LEGAL), -1, np.int32),
        np.zeros((n, MAX_LEGAL), np.float32),
    )
    buffer = ReplayBuffer(1000, obs.shape[1:], 32)
    buffer.add(batch)
    buffer.save_chunks(run / "replay")
    monkeypatch.setattr(sys, "argv", ["value_by_phase", str(run), "--samples", "200"])
    vbp.main()
    out = capsys.readouterr().out
    assert "on the newest 200 samples" in out and "(russian)" in out
    rows = [line.split() for line in out.splitlines()[2:]]
    assert [row[:2] for row in rows] == [["0.75-1.00", "200"]]  # one bin: every position is an opening
