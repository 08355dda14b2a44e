"""plot_run draws a run's curves (and an A/B baseline's) from TensorBoard events."""

import sys

import pytest
from torch.utils.tensorboard import SummaryWriter

from tammi_rl.benchmarks import plot_run


def fake_run(path, elo_shift: float) -> None:
    writer = SummaryWriter(str(path / "tb"))
    for it in range(1, 7):
        writer.add_scalar("loss/policy", 2.0 / it, it)
        writer.add_scalar("throughput/positions_per_s", 900.0, it)
        if it % 3 == 0:
            writer.add_scalar("eval/score_vs_ab_d2", 0.5 + it / 20, it)
            writer.add_scalar("eval/elo", elo_shift + 10 * it, it)
            writer.add_scalar("eval/elo_error", 40.0, it)
    writer.close()


@pytest.mark.slow
def test_plot_run_writes_a_figure_with_a_baseline(tmp_path, monkeypatch, capsys) -> None:
    fake_run(tmp_path / "a", 0.0)
    fake_run(tmp_path / "b", -50.0)
    out = tmp_path / "fig" / "run.png"
    argv = ["plot_run", str(tmp_path / "a"), str(out), "--baseline", str(tmp_path / "b")]
    monkeypatch.setattr(sys, "argv", argv)
    plot_run.main()
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 20_000
    assert f"wrote {out}" in capsys.readouterr().out
