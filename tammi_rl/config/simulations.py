"""Progressive simulations: how many simulations self-play searches with as a run goes on.

    schedule = SimulationSchedule.of(cfg.mcts)     # mcts.progressive_from -> mcts.simulations
    schedule.at(0.0), schedule.at(1.0)             # 8, 64 (progressive_from 8, simulations 64)
    schedule.mean()                                # 26.9: the run's average, for the core split

A young network's search is worth little, so many simulations early buy little; late in a
run the network is good and the search improves on it more (MiniZero's progressive
simulation, which raises the budget stage by stage, beat every fixed budget in 9x9 Go and
Othello). Here the count grows geometrically with the run's progress, the fraction the
learning-rate schedule follows (`tammi_rl.train.budget.WallClockBudget.schedule_fraction`),
so it doubles over equal shares of the run: from 8 to 64, every third of it. Rounded to whole
simulations, it never falls as progress rises and meets both ends exactly. With
``mcts.progressive_from`` 0 (the default) the count is ``mcts.simulations`` throughout.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tammi_rl.config.schema import MCTSConfig


@dataclass(frozen=True)
class SimulationSchedule:
    """Self-play's simulations per searched hop from ``first`` (progress 0) to ``last`` (1)."""

    first: int
    last: int

    @classmethod
    def of(cls, mcts: MCTSConfig) -> SimulationSchedule:
        """The schedule ``mcts`` asks for (constant unless ``progressive_from`` is set)."""
        return cls(mcts.progressive_from or mcts.simulations, mcts.simulations)

    @property
    def progressive(self) -> bool:
        return self.first != self.last

    def at(self, progress: float) -> int:
        """Simulations at ``progress`` (0 to 1, clipped): ``first * (last/first) ** progress``, rounded."""
        p = min(1.0, max(0.0, progress))
        return max(1, round(self.first * (self.last / self.first) ** p))

    def mean(self) -> float:
        """The average count over a run whose progress moves evenly from 0 to 1 (before rounding)."""
        if not self.progressive:
            return float(self.last)
        return (self.last - self.first) / math.log(self.last / self.first)
