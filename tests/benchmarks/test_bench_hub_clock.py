"""`tammi_rl.benchmarks.bench_hub_clock` runs end to end and prints its figures."""

from __future__ import annotations

import pytest

from tammi_rl.benchmarks.bench_hub_clock import main


@pytest.mark.slow
def test_bench_hub_clock_prints_time_use_and_latencies(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--player", "alphabeta", "--move-time", "0.1", "--games", "1", "--max-plies", "12"]
    main([*argv, "--stop-trials", "1", "--quit-trials", "1", "--stop-after", "0.2"])
    out = capsys.readouterr().out
    assert "game 1 ply   1:" in out and "game 1: 12 plies" in out
    assert "searched moves: mean " in out and "(goal >= 60%)" in out
    assert "stop under level infinite: mean " in out and "quit during a search: exit after mean " in out
