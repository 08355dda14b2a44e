"""Progressive simulations: the schedule, its config key, and every way self-play is told the count."""

from __future__ import annotations

import io
import math
import time
from pathlib import Path

import pytest
import torch
from support.tensorboard_log import scalar_values
from support.tiny_worker import OVERRIDES, make_worker

from tammi_rl.config import ConfigError, load_config
from tammi_rl.config.cores import learner_share
from tammi_rl.config.simulations import SimulationSchedule
from tammi_rl.distributed.processes import ProcessPool
from tammi_rl.nn.model import build_model
from tammi_rl.rules.engine import Rules
from tammi_rl.selfplay.worker import SelfPlayWorker
from tammi_rl.store.checkpoint import load_checkpoint
from tammi_rl.train.trainer import resume_config, train

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "configs" / "smoke.yaml"


# --- the schedule -------------------------------------------------------------------------
def test_the_schedule_doubles_over_equal_shares_of_the_run_and_meets_both_ends():
    s = SimulationSchedule(8, 64)
    assert s.progressive
    assert [s.at(p) for p in (0.0, 1 / 3, 2 / 3, 1.0)] == [8, 16, 32, 64]
    counts = [s.at(i / 1000) for i in range(1001)]
    assert counts == sorted(counts) and set(counts) >= {8, 64}
    assert s.at(-0.5) == 8 and s.at(7.0) == 64  # progress is clipped to the run


def test_the_mean_is_the_average_count_over_the_run():
    s = SimulationSchedule(8, 64)
    riemann = sum(8 * 8 ** ((i + 0.5) / 10_000) for i in range(10_000)) / 10_000
    assert s.mean() == pytest.approx(riemann, rel=1e-6)
    assert 8 < s.mean() < 32  # cheaper than a fixed 32, the recipe's count
    assert SimulationSchedule(32, 32).mean() == 32.0


def test_off_by_default_the_count_is_mcts_simulations_throughout():
    cfg = load_config(None)
    assert cfg.mcts.progressive_from == 0
    s = SimulationSchedule.of(cfg.mcts)
    assert not s.progressive and {s.at(p / 10) for p in range(11)} == {cfg.mcts.simulations}
    on = SimulationSchedule.of(load_config(None, ["mcts.progressive_from=4", "mcts.simulations=48"]).mcts)
    assert (on.first, on.last, on.at(0.5)) == (4, 48, round(math.sqrt(4 * 48)))


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["mcts.progressive_from=40"], r"mcts\.progressive_from.*40 is more than mcts\.simulations \(32\)"),
        (["mcts.progressive_from=-1"], r"mcts\.progressive_from"),
    ],
)
def test_a_start_above_the_final_count_or_below_zero_is_refused_naming_the_key(overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_config(None, overrides)


def test_the_core_split_prices_a_position_at_the_runs_mean_count():
    fixed_start = learner_share(load_config(None, ["mcts.simulations=8"]))
    fixed_end = learner_share(load_config(None, ["mcts.simulations=64"]))
    growing = learner_share(load_config(None, ["mcts.simulations=64", "mcts.progressive_from=8"]))
    assert fixed_end < growing < fixed_start  # cheaper positions leave the learner more of the cores


# --- self-play is told the count ----------------------------------------------------------
def test_the_worker_searches_the_count_it_is_given():
    worker = make_worker()
    for n in (2, 7):
        worker.set_simulations(n)
        stats = worker.play(2).stats
        assert stats["decisions"] > 0 and stats["simulations_per_decision"] == n
    with pytest.raises(ValueError, match="at least 1"):
        worker.set_simulations(0)


def test_a_cheap_search_keeps_its_share_of_the_full_count():
    every_search_cheap = ["mcts.playout_cap_fraction=0", "mcts.simulations=16", "mcts.cheap_simulations=4"]
    cfg = load_config(None, [*OVERRIDES, *every_search_cheap])
    worker = SelfPlayWorker(Rules.for_variant("russian"), cfg, torch.device("cpu"), seed=0)
    assert worker.play(2).stats["simulations_per_decision"] == 4  # not progressive: as configured
    worker.set_simulations(8)  # half way: a cheap search takes half of 4
    assert worker.play(2).stats["simulations_per_decision"] == 2


def test_the_synchronous_loop_follows_the_schedule(tmp_path):
    cfg = load_config(
        SMOKE,
        [
            f"runs_dir={tmp_path / 'runs'}",
            f"checkpoints_dir={tmp_path / 'ck'}",
            "train.iterations=3",
            "eval.every=0",
            "mcts.simulations=8",
            "mcts.progressive_from=2",
        ],
    )
    out = io.StringIO()
    summary = train(cfg, out=out)
    # Iterations 1, 2, 3 play at their midpoints, progress 1/6, 1/2, 5/6: 2 * 4 ** p simulations.
    assert scalar_values(summary.run_dir / "tb", "selfplay/simulations") == [3.0, 4.0, 6.0]
    lines = [line for line in out.getvalue().splitlines() if line.startswith("[smoke] iter")]
    assert [line.split("sims ")[1].split()[0] for line in lines] == ["3", "4", "6"]


def stops_at_play(n: int):
    """A worker factory whose worker raises KeyboardInterrupt at its ``n``-th play call."""

    def factory(rules, cfg, device, seed):
        worker = SelfPlayWorker(rules, cfg, device, seed)
        plays = worker.play
        calls = iter(range(1, 10**9))

        def play(n_games):
            if next(calls) == n:
                raise KeyboardInterrupt
            return plays(n_games)

        worker.play = play
        return worker

    return factory


def test_a_stopped_run_resumes_at_the_same_count_and_ends_exactly_as_a_straight_one(tmp_path):
    common = [
        f"runs_dir={tmp_path / 'runs'}",
        f"checkpoints_dir={tmp_path / 'ck'}",
        "train.iterations=3",
        "checkpoint.every=1",
        "eval.every=0",
        "mcts.simulations=8",
        "mcts.progressive_from=2",
    ]
    straight = train(load_config(SMOKE, [*common, "name=straight"]), out=io.StringIO())
    with pytest.raises(KeyboardInterrupt):  # stopped in iteration 3, after iteration 2's checkpoint
        train(load_config(SMOKE, [*common, "name=split"]), out=io.StringIO(), worker_factory=stops_at_play(3))
    run = tmp_path / "runs" / "split"
    split = train(resume_config(run), resume_dir=run, out=io.StringIO())
    assert split.counters == straight.counters
    a = load_checkpoint(straight.run_dir / "checkpoints" / "latest.pt")["model"]
    b = load_checkpoint(run / "checkpoints" / "latest.pt")["model"]
    for key in a:
        torch.testing.assert_close(a[key], b[key], msg=key)
    for r in (straight.run_dir, run):
        assert scalar_values(r / "tb", "selfplay/simulations") == [3.0, 4.0, 6.0]


@pytest.mark.slow
def test_process_workers_take_a_new_count_and_a_new_worker_starts_with_it(tmp_path, russian):
    cfg = load_config(SMOKE, [f"runs_dir={tmp_path}"])
    pool = ProcessPool(cfg, 2, seed=0, log=lambda text: None)
    try:
        pool.set_simulations(3)  # before the workers start: their first games search 3
        pool.publish(build_model(russian, cfg.network).state_dict(), 0)
        got: list = []
        deadline = time.monotonic() + 180
        while {d.worker for d in got} != {0, 1} and time.monotonic() < deadline:
            got += pool.poll(0.5)
        assert {d.worker for d in got} == {0, 1}
        assert {d.result.stats["simulations_per_decision"] for d in got} == {3.0}
        pool.set_simulations(6)
        later: list = []
        while not (later and {6.0} == {d.result.stats["simulations_per_decision"] for d in later[-2:]}):
            assert time.monotonic() < deadline, "the workers never took the new count"
            later += pool.poll(0.5)
        # A delivery is one count throughout: 3 until a worker looked again, 6 after.
        assert {d.result.stats["simulations_per_decision"] for d in later} <= {3.0, 6.0}
        with pytest.raises(ValueError, match="at least 1"):
            pool.set_simulations(0)
    finally:
        pool.close()


@pytest.mark.slow
def test_the_asynchronous_loop_raises_the_workers_count_as_the_run_goes_on(tmp_path):
    sent: list[int] = []

    class Recording(ProcessPool):
        def set_simulations(self, simulations):
            sent.append(simulations)
            super().set_simulations(simulations)

    cfg = load_config(
        SMOKE,
        [
            f"runs_dir={tmp_path / 'runs'}",
            f"checkpoints_dir={tmp_path / 'ck'}",
            "selfplay.workers=2",
            "train.iterations=4",
            "eval.every=0",
            "mcts.simulations=8",
            "mcts.progressive_from=2",
        ],
    )
    out = io.StringIO()
    summary = train(cfg, out=out, pool_factory=lambda c, e: Recording(c, 2, c.seed, epoch=e))
    # Sent before the workers start (progress 0: 2), then each time the count moves, up to
    # iteration 4's start at least (progress 3/4: 2 * 4 ** 0.75, 6).
    assert sent[0] == 2 and sent == sorted(set(sent)) and sent[-1] >= 6
    searched = scalar_values(summary.run_dir / "tb", "selfplay/simulations")
    # What the workers searched lags by the deliveries in flight (a whole smoke iteration's
    # games can be one delivery), but it is the counts sent, and the first games search 2.
    assert len(searched) == 4 and all(2.0 <= s <= sent[-1] for s in searched) and searched[0] < 3.0
    assert "sims " in out.getvalue().splitlines()[-1]
