"""The ``train.hours`` budget: room for another iteration, the schedule by time, the eta.

The clock is wound by moving its start back (``clock.start -= seconds``), as if that much
time had passed; every decision below has a margin of many seconds over the test's own time.
"""

import math
import time

import pytest

from tammi_rl.train.budget import WallClockBudget
from tammi_rl.train.telemetry import RunClock


def budget(hours: float, eval_every: int = 0, before: float = 0.0, first_iteration: int = 0) -> WallClockBudget:
    """A budget whose session starts now, after ``before`` seconds of earlier sessions."""
    clock = RunClock(before=before, first_iteration=first_iteration, start=time.perf_counter())
    return WallClockBudget(hours, eval_every, clock)


def play(b: WallClockBudget, seconds: float) -> None:
    b.clock.start -= seconds


def iterate(b: WallClockBudget, seconds: float, evaluation: float = 0.0) -> float:
    """One iteration of ``seconds``, then an evaluation of ``evaluation`` seconds if any."""
    play(b, seconds)
    if evaluation:
        with b.evaluation():
            play(b, evaluation)
    return b.iteration_ended()


def test_without_a_budget_there_is_always_room():
    b = budget(0.0, eval_every=1)
    iterate(b, 10_000.0, evaluation=5_000.0)
    assert b.left() == math.inf and b.room_for_another(2)
    assert not b.spent_at_start(ended_on_budget=True)
    assert b.schedule_fraction(0.25) == 0.25 and b.schedule_fraction(1.5) == 1.0


def test_the_iteration_that_leaves_no_room_for_another_is_the_last():
    # 1,000 s an iteration under 3,500 s: after 3 iterations (3,000 s) a fourth would overrun
    b = budget(3500 / 3600)
    iterate(b, 1000.0)
    play(b, 1000.0)
    assert b.room_for_another(2)  # 2,000 s: a third fits
    b.iteration_ended()
    play(b, 1000.0)
    assert not b.room_for_another(3)
    assert b.left() == pytest.approx(500.0, abs=1.0)


def test_the_first_iteration_of_a_session_is_its_own_pace():
    b = budget(1000 / 3600)
    play(b, 400.0)
    assert b.pace(1) == pytest.approx(400.0, abs=1.0)
    assert b.room_for_another(1)  # 400 s so far, 400 s more: 800 s
    play(b, 150.0)
    assert not b.room_for_another(1)  # 550 s so far, 550 s more: 1,100 s


def test_the_rest_of_this_iteration_counts_when_it_is_slower_than_the_pace():
    # the synchronous loop decides before learning, so the iteration may not be over: at
    # 900 s, 100 s into an iteration at an 800 s pace, it needs 700 s more, then 800 s for
    # another (1,500 s): too much for the 1,400 s a 2,300 s budget leaves, enough under 2,500 s
    for seconds, room in ((2300.0, False), (2500.0, True)):
        b = budget(seconds / 3600)
        iterate(b, 800.0)
        play(b, 100.0)
        assert b.pace(2) == pytest.approx(800.0, abs=1.0)
        assert b.room_for_another(2) is room


def test_room_is_kept_for_the_evaluations_still_due():
    # 1,000 s an iteration, then a 400 s evaluation (every iteration), under 4,100 s: after
    # iteration 2's games (2,400 s) its evaluation, a third iteration and the final evaluation
    # would end at 4,200 s, so iteration 2 is the last (ending at 2,800 s)
    b = budget(4100 / 3600, eval_every=1)
    iterate(b, 1000.0, evaluation=400.0)
    assert b.eval_seconds == pytest.approx(400.0, abs=1.0)
    play(b, 1000.0)
    assert b.pace(2) == pytest.approx(1000.0, abs=1.0)  # evaluations are left out of the pace
    assert not b.room_for_another(2)
    # evaluating every other iteration, after iteration 3's games (3,400 s) only the final
    # evaluation is due: 1,000 + 400 s more fits in 4,900 s, not in 4,700 s
    for seconds, room in ((4900.0, True), (4700.0, False)):
        b = budget(seconds / 3600, eval_every=2)
        iterate(b, 1000.0)
        iterate(b, 1000.0, evaluation=400.0)
        play(b, 1000.0)
        assert b.room_for_another(3) is room


def test_a_failed_evaluation_is_not_timed():
    b = budget(1.0, eval_every=1)
    with pytest.raises(RuntimeError), b.evaluation():
        play(b, 300.0)
        raise RuntimeError("the evaluation failed")
    assert b.eval_seconds == 0.0 and b.session_eval_seconds == 0.0


def test_a_resume_counts_the_earlier_sessions_time_but_not_their_pace():
    # 3,000 s on a slower machine before iteration 10; here 100 s an iteration
    b = budget(3500 / 3600)
    b.resume(seconds=3000.0, iteration=10, eval_seconds=50.0, saved_hours=3500 / 3600)
    assert b.clock.before == 3000.0 and b.clock.first_iteration == 10 and b.eval_seconds == 50.0
    assert b.iteration_ended() == pytest.approx(3000.0, abs=1.0)  # no time passed yet in this session
    iterate(b, 100.0)
    play(b, 100.0)
    assert b.pace(12) == pytest.approx(100.0, abs=1.0)
    assert b.room_for_another(12)  # 3,200 s and 100 s more (at the earlier 300 s pace: no room)
    play(b, 250.0)
    assert not b.room_for_another(12)  # 3,450 s, and 100 s more overruns 3,500


def test_a_session_that_starts_with_no_room_says_so():
    b = budget(1.0)
    b.resume(seconds=3600.0, iteration=5, eval_seconds=0.0, saved_hours=1.0)
    assert b.spent_at_start(ended_on_budget=False)  # all of it used
    b = budget(1.0)
    b.resume(seconds=3000.0, iteration=5, eval_seconds=0.0, saved_hours=1.0)
    assert b.spent_at_start(ended_on_budget=True)  # the last session ended on this budget
    assert not b.spent_at_start(ended_on_budget=False)
    raised = budget(1.5)
    raised.resume(seconds=3000.0, iteration=5, eval_seconds=0.0, saved_hours=1.0)
    assert not raised.spent_at_start(ended_on_budget=True)


def test_the_schedule_follows_time_when_it_is_further_along():
    b = budget(1.0, before=900.0)
    assert b.schedule_fraction(0.1) == pytest.approx(0.25, abs=1e-3)  # 900 of 3,600 s
    assert b.schedule_fraction(0.5) == 0.5
    play(b, 3600.0)
    assert b.schedule_fraction(0.5) == 1.0  # never past the end


def test_iteration_ended_returns_the_runs_seconds():
    b = budget(0.0, before=500.0)
    assert iterate(b, 120.0) == pytest.approx(620.0, abs=1.0)
    assert b.at_last_iteration == pytest.approx(120.0, abs=1.0)


def test_the_eta_is_capped_by_what_the_budget_leaves():
    b = budget(2000 / 3600)
    assert b.eta(0, 10) is None  # nothing to go by before an iteration
    iterate(b, 100.0)
    assert b.eta(1, 10) == pytest.approx(900.0, rel=0.01)  # 9 more at 100 s
    iterate(b, 900.0)  # 1,000 s so far, 500 s an iteration: 8 more would take 4,000 s
    assert b.eta(2, 10) == pytest.approx(1000.0, abs=1.0)  # what the budget leaves
    unlimited = budget(0.0)
    iterate(unlimited, 1000.0)
    assert unlimited.eta(1, 3) == pytest.approx(2000.0, rel=0.01)
