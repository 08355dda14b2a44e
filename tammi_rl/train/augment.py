"""Training samples mirrored at random, on boards with a left-right symmetry (`train.mirror_samples`).

AlphaGo Zero trained each position in one of Go's eight symmetries picked at random; draughts
boards have at most one to spare (`tammi_rl.nn.symmetry`), the Turkish mirror. A mirrored
sample is as true as the one self-play stored (same outcome, values and mirrored policies), so
half the batches' samples, mirrored, show the network twice the distinct positions at no cost
in self-play.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from tammi_rl.nn.symmetry import Mirror
from tammi_rl.selfplay.samples import SampleBatch
from tammi_rl.train.learner import SampleSource


def mirror_samples(batch: SampleBatch, mirror: Mirror, rows: np.ndarray) -> SampleBatch:
    """``batch`` with the samples at ``rows`` (bool ``[N]``) mirrored: planes, legal hops, the
    opponent's reply hops and the ownership squares; outcome, values and the policies' weights
    (listed against the mirrored hops) are the same. The other rows and ``batch`` are untouched."""
    obs = batch.obs.copy()
    obs[rows] = Mirror.planes(batch.obs[rows])
    legal, reply_legal = batch.legal.copy(), batch.reply_legal.copy()
    for hops in (legal, reply_legal):
        flipped = hops[rows]
        listed = flipped >= 0
        flipped[listed] = mirror.actions[flipped[listed]]
        hops[rows] = flipped
    ownership = batch.ownership.copy()
    ownership[rows] = batch.ownership[rows][:, mirror.squares]
    return dataclasses.replace(batch, obs=obs, legal=legal, ownership=ownership, reply_legal=reply_legal)


class MirroredSamples:
    """A `SampleSource` that mirrors each sample it draws with probability 1/2."""

    def __init__(self, source: SampleSource, mirror: Mirror) -> None:
        self.source = source
        self.mirror = mirror

    def sample(self, n: int, rng: np.random.Generator) -> SampleBatch:
        batch = self.source.sample(n, rng)
        return mirror_samples(batch, self.mirror, rng.random(len(batch)) < 0.5)

    def __len__(self) -> int:
        return len(self.source)
