"""The run clock: wall time carried over resumes, and the estimate of what is left."""

import pytest

from tammi_rl.train.telemetry import RunClock, format_duration


def test_total_adds_the_earlier_sessions() -> None:
    clock = RunClock(before=100.0, first_iteration=10, start=50.0)
    assert clock.session(now=80.0) == 30.0
    assert clock.total(now=80.0) == 130.0


def test_remaining_uses_this_sessions_pace_only() -> None:
    # 1,000 s before the resume at iteration 10 (a slower machine) must not count:
    # 4 iterations in this session's 20 s is 5 s each, and 6 are left.
    clock = RunClock(before=1000.0, first_iteration=10, start=0.0)
    assert clock.remaining(done=14, target=20, now=20.0) == pytest.approx(30.0)
    assert clock.remaining(done=20, target=20, now=60.0) == 0.0


def test_no_estimate_before_an_iteration_of_this_session() -> None:
    clock = RunClock(before=50.0, first_iteration=7, start=0.0)
    assert clock.remaining(done=7, target=20, now=5.0) is None


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (42.4, "42s"),
        (59.6, "1m00s"),
        (425, "7m05s"),
        (3599, "59m59s"),
        (3600, "1h00m"),
        (4140, "1h09m"),
        (-3, "0s"),
    ],
)
def test_format_duration(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text
