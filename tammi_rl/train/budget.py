"""The ``train.hours`` wall-clock budget of a training run, over all its sessions.

    budget = WallClockBudget(hours=2.0, eval_every=10, clock=RunClock())
    budget.resume(seconds, iteration, eval_seconds, saved_hours)   # from the checkpoint
    with budget.evaluation():                  # timed: the final evaluation needs as long
        evaluate()
    counters.seconds = budget.iteration_ended()
    budget.room_for_another(it)                # False: iteration ``it`` must be the run's last
    lr_progress = budget.schedule_fraction(share_of_the_iterations)

The budget counts the run's own time (`RunClock`: the gaps between a stop and a resume are
not counted). Iteration ``it``, its games all in, is the last when the rest of it, one more
iteration at this session's pace and the evaluations still due would overrun the budget;
the pace is this session's mean over its completed iterations without their evaluations
(a resumed run may be on another machine), and each evaluation due is taken to last as
long as the latest. Without a budget (``hours`` 0) there is always room.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from tammi_rl.train.telemetry import RunClock


@dataclass
class WallClockBudget:
    """What the budget knows and answers (see the module docstring)."""

    hours: float
    """``train.hours``: the run's budget over all its sessions (0: none)."""
    eval_every: int
    """``eval.every``: iterations that are a multiple of it evaluate (0: none does)."""
    clock: RunClock = field(default_factory=RunClock)
    """The run's wall time; a resume carries the seconds of its earlier sessions."""
    saved_hours: float = 0.0
    """The budget the checkpoint this session resumed from ran under (0: none, or a fresh run)."""
    eval_seconds: float = 0.0
    """How long the latest in-training evaluation took (saved in the run's counters)."""
    at_last_iteration: float = 0.0
    """This session's seconds when its latest iteration ended."""
    session_eval_seconds: float = 0.0
    """This session's seconds spent in evaluations (left out of the pace)."""

    def resume(self, seconds: float, iteration: int, eval_seconds: float, saved_hours: float) -> None:
        """Carry on from a checkpoint: the run's ``seconds`` and ``iteration`` so far, its latest
        evaluation's ``eval_seconds`` and the ``saved_hours`` budget it ran under."""
        self.clock.before, self.clock.first_iteration = seconds, iteration
        self.eval_seconds, self.saved_hours = eval_seconds, saved_hours

    def left(self) -> float:
        """Seconds left of the budget (infinite without one)."""
        return self.hours * 3600 - self.clock.total() if self.hours else float("inf")

    def spent_at_start(self, ended_on_budget: bool) -> bool:
        """Whether a session has no room at all: the budget is used up, or the run's previous
        session ended on the budget (``ended_on_budget``) and it was not raised since."""
        return bool(self.hours) and (self.left() <= 0 or (ended_on_budget and self.hours <= self.saved_hours))

    def pace(self, it: int) -> float:
        """Seconds an iteration takes at this session's mean pace without evaluations, while
        iteration ``it`` plays (its time so far in the session's first iteration)."""
        completed = it - 1 - self.clock.first_iteration
        if not completed:
            return self.clock.session() - self.at_last_iteration
        return (self.at_last_iteration - self.session_eval_seconds) / completed

    def room_for_another(self, it: int) -> bool:
        """Whether iteration ``it``, its games all in, leaves room for one more: the rest of it
        (the synchronous loop asks before learning), one more at `pace`, and the evaluations
        still due (``it``'s regular one, then the final one) fit in what is `left`."""
        if not self.hours:
            return True
        pace = self.pace(it)
        rest_of_this = max(0.0, pace - (self.clock.session() - self.at_last_iteration))
        evaluations = (1 + (it % self.eval_every == 0)) * self.eval_seconds if self.eval_every else 0.0
        return rest_of_this + pace + evaluations < self.left()

    @contextmanager
    def evaluation(self) -> Iterator[None]:
        """Time an in-training evaluation (`eval_seconds`; one that fails is not counted)."""
        started = self.clock.session()
        yield
        self.eval_seconds = self.clock.session() - started
        self.session_eval_seconds += self.eval_seconds

    def iteration_ended(self) -> float:
        """Mark the end of an iteration; returns the run's seconds so far."""
        self.at_last_iteration = self.clock.session()
        return self.clock.before + self.at_last_iteration

    def schedule_fraction(self, by_iterations: float) -> float:
        """How far along its lr schedule the run is (0 to 1): ``by_iterations`` (its share of
        ``train.iterations``), or its share of the budget's time when that is further."""
        if self.hours:
            by_iterations = max(by_iterations, self.clock.total() / (self.hours * 3600))
        return min(1.0, by_iterations)

    def eta(self, done: int, target: int) -> float | None:
        """Seconds to reach iteration ``target`` from ``done`` at this session's pace, at most
        what the budget left after the latest iteration (None before this session completed one)."""
        left = self.clock.remaining(done, target)
        if left is not None and self.hours:
            left = min(left, max(0.0, self.hours * 3600 - (self.clock.before + self.at_last_iteration)))
        return left
