"""The self-play fingerprint: the same seed gives the same hash, another seed another one."""

from pathlib import Path

import pytest

from tammi_rl.benchmarks.fingerprint import fingerprint

SMOKE = Path(__file__).resolve().parents[2] / "configs" / "smoke.yaml"


@pytest.mark.slow
def test_same_seed_same_games_other_seed_other_games() -> None:
    first = fingerprint(SMOKE, 2, [])
    again = fingerprint(SMOKE, 2, [])
    other = fingerprint(SMOKE, 2, [], seed=1)
    assert first == again
    assert first[2] >= 2
    assert other[0] != first[0]
    assert other[1] == first[1]  # the same config: only the games differ
