"""The replay ratio: how many samples the learner trains on per sample self-play makes.

    pace = ReplayRatio(ratio=4.0, batch_size=256, min_samples=2000, slack_steps=8)
    pace.steps_owed(positions, samples_trained, buffered)    # learner steps due now
    pace.learner_behind(positions, samples_trained, buffered)  # True: stop reading self-play

The target is cumulative: after ``positions`` samples have been played, the learner
should have drawn ``ratio x positions`` samples (once the buffer first reaches
``min_samples``; the samples played before then are owed at once, which trains on the
first window ``ratio`` times over). The trainer counts from the point the ratio took
effect (the run's start, or a resume that changed it), so a changed ratio owes no burst.
Counting cumulatively rather than per iteration holds the ratio over the run, whatever
the speeds of self-play and learner: the
synchronous loop (``selfplay.workers: 0``) trains the owed steps after every
iteration's games; the asynchronous one trains whenever a step is owed, waits for
games when none is, and stops reading from the workers (so they wait) when more than
``slack_steps`` steps are owed, which is what keeps a slow learner from falling behind
and a fast one from overfitting.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ReplayRatio:
    """Pacing rule for the learner (see the module docstring)."""

    ratio: float
    batch_size: int
    min_samples: int
    slack_steps: int = 8
    """Steps the learner may owe before self-play is held back."""

    def debt(self, positions: int, samples_trained: int, buffered: int) -> float:
        """Samples the learner owes (negative: it is ahead); 0 until learning may start."""
        if buffered < self.min_samples:
            return 0.0
        return self.ratio * positions - samples_trained

    def steps_owed(self, positions: int, samples_trained: int, buffered: int) -> int:
        """Whole learner steps due now."""
        return max(0, int(self.debt(positions, samples_trained, buffered) // self.batch_size))

    def learner_behind(self, positions: int, samples_trained: int, buffered: int) -> bool:
        """True when the learner owes more than ``slack_steps`` steps: hold self-play back."""
        return self.steps_owed(positions, samples_trained, buffered) > self.slack_steps

    def held(self, positions: int, samples_trained: int) -> float:
        """The ratio actually held so far: samples trained per sample played."""
        return samples_trained / positions if positions else 0.0
