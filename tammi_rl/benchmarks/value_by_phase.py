"""How well a network's value head predicts its run's game outcomes, phase by phase.

The value loss a run logs mixes every phase of the game, and its targets blend outcome and
search value, so a flat curve cannot say whether the head learns. This diagnostic reads a
run's newest self-play samples and, in bins of pieces left on the board (a fraction of the
most in any sample), compares the head's win/draw/loss cross-entropy against the games'
outcomes with that of always predicting the bin's outcome frequencies. The share of that
baseline the head removes is how much of the outcome it explains; a negative share means
its win/draw/loss is worse than those frequencies. Search uses only the expected value
(win minus loss), so the table also gives that value's correlation with the outcome, and the
head's mean draw probability beside the draws' frequency: a blended value target reads a
search value near 0 as a sure draw, which inflates the draw mass without moving the value.

    python -m tammi_rl.benchmarks.value_by_phase runs/international [--model FILE] [--samples 20000]
"""

from __future__ import annotations

import argparse
import itertools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from tammi_rl.env.observation import OPP_KINGS, OPP_MEN, OWN_KINGS, OWN_MEN
from tammi_rl.nn.model import wdl_to_value
from tammi_rl.nn.saved import load_network
from tammi_rl.store.rundir import RunDir
from tammi_rl.train.replay import ReplayBuffer

PHASE_EDGES = (0.0, 0.25, 0.5, 0.75, 1.0)
"""Bin edges over the fraction of pieces left; the last bin includes 1.0 (the start)."""
MIN_BIN_SAMPLES = 100
"""Bins with fewer samples are left out of the table: their frequencies mean little."""
FORWARD_BATCH = 1000


@dataclass(frozen=True)
class PhaseRow:
    """One bin of the table. ``outcome_freq`` is (win, draw, loss) for the side to move."""

    pieces_low: float
    pieces_high: float
    samples: int
    outcome_freq: tuple[float, float, float]
    baseline_ce: float
    """Cross-entropy (nats) of always predicting ``outcome_freq``: the bin's outcome entropy."""
    value_ce: float
    """Cross-entropy (nats) of the value head's win/draw/loss against the outcomes."""
    value_outcome_corr: float
    """Correlation of the expected value (P(win) - P(loss)) with the outcome (+1, 0, -1)."""
    mean_draw_prob: float
    """The head's mean draw probability (compare ``outcome_freq[1]``)."""
    kings_per_position: float

    @property
    def explained(self) -> float:
        """The share of the outcome entropy the head removes (negative: worse than the baseline)."""
        return 1.0 - self.value_ce / self.baseline_ce if self.baseline_ce > 0 else float("nan")


def correlation(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson correlation; NaN where either side is constant."""
    if a.std() == 0 or b.std() == 0:
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])


def entropy(freq: np.ndarray) -> float:
    nonzero = freq[freq > 0]
    return float(-(nonzero * np.log(nonzero)).sum())


def value_logits(model: torch.nn.Module, obs: np.ndarray) -> torch.Tensor:
    """obs [N, C, H, W] float32 -> the value head's WDL logits [N, 3], in eval mode."""
    model.eval()
    with torch.no_grad():
        chunks = [model(torch.from_numpy(obs[i : i + FORWARD_BATCH]))[1] for i in range(0, len(obs), FORWARD_BATCH)]
    return torch.cat(chunks) if chunks else torch.zeros((0, 3))


def value_by_phase(
    model: torch.nn.Module, obs: np.ndarray, outcome: np.ndarray, edges: tuple[float, ...] = PHASE_EDGES
) -> list[PhaseRow]:
    """The table, one row per bin of pieces left, from the opening bin down. obs [N, C, H, W]
    float32 observation planes; outcome [N] int (`SampleBatch.outcome`: 0 win, 1 draw, 2 loss
    for the side to move). Bins under `MIN_BIN_SAMPLES` samples are left out."""
    logits = value_logits(model, obs)
    draw_prob = logits.softmax(dim=1)[:, 1].numpy().astype(np.float64)
    expected = wdl_to_value(logits).numpy().astype(np.float64)
    pieces = obs[:, [OWN_MEN, OWN_KINGS, OPP_MEN, OPP_KINGS]].sum(axis=(1, 2, 3))
    kings = obs[:, [OWN_KINGS, OPP_KINGS]].sum(axis=(1, 2, 3))
    fraction = pieces / max(float(pieces.max(initial=0.0)), 1.0)
    outcome = np.asarray(outcome, dtype=np.int64)
    outcome_value = np.array([1.0, 0.0, -1.0])[outcome]
    rows = []
    for low, high in reversed(list(itertools.pairwise(edges))):
        in_bin = (fraction >= low) & ((fraction < high) | (high >= edges[-1]))
        count = int(in_bin.sum())
        if count < MIN_BIN_SAMPLES:
            continue
        freq = np.bincount(outcome[in_bin], minlength=3) / count
        value_ce = F.cross_entropy(logits[torch.from_numpy(in_bin)], torch.from_numpy(outcome[in_bin])).item()
        outcome_freq = (float(freq[0]), float(freq[1]), float(freq[2]))
        rows.append(
            PhaseRow(
                low,
                high,
                count,
                outcome_freq,
                entropy(freq),
                value_ce,
                correlation(expected[in_bin], outcome_value[in_bin]),
                float(draw_prob[in_bin].mean()),
                float(kings[in_bin].mean()),
            )
        )
    return rows


def format_table(rows: list[PhaseRow]) -> str:
    lines = [
        "pieces left   samples   W/D/L            outcome entropy   value CE   explained   corr(v, z)   draw p   kings"
    ]
    for r in rows:
        w, d, loss = r.outcome_freq
        lines.append(
            f"{r.pieces_low:4.2f}-{r.pieces_high:4.2f}  {r.samples:8d}   {w:.2f}/{d:.2f}/{loss:.2f}   "
            f"{r.baseline_ce:15.3f}   {r.value_ce:8.3f}   {r.explained:+9.0%}   {r.value_outcome_corr:+10.2f}   "
            f"{r.mean_draw_prob:6.2f}   {r.kings_per_position:5.2f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", help="a run directory (its replay/ holds the self-play samples)")
    parser.add_argument("--model", help="the checkpoint to judge (default: the run's latest)")
    parser.add_argument("--samples", type=int, default=20_000, help="the newest N samples (default 20000)")
    args = parser.parse_args(argv)
    run = RunDir(Path(args.run))
    saved = load_network(args.model or args.run)
    batch = ReplayBuffer.load_chunks(run.replay_dir, args.samples).contents()
    if len(batch) == 0:
        raise SystemExit(f"{run.replay_dir}: no self-play samples")
    print(f"{saved.path} on the newest {len(batch)} samples of {args.run} ({saved.rules.variant.name})")
    print(format_table(value_by_phase(saved.model, batch.obs, batch.outcome)))


if __name__ == "__main__":
    main()
