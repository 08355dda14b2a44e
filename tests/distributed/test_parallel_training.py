"""The asynchronous loop: self-play worker processes beside the learner.

Covers the pieces (weight board, replay-ratio pacing, worker count) and the whole loop
on the smoke config with two worker processes: it trains, checkpoints and resumes; a
worker killed with SIGKILL is replaced and nothing is counted twice; too many deaths stop
the run with an error naming the worker; a SIGKILLed trainer takes its workers with it
and resumes; Ctrl-C writes a final checkpoint and leaves no process behind.
"""

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from support.processes_util import wait_dead
from support.tensorboard_log import scalar_steps

from tammi_rl.config import load_config
from tammi_rl.config.cores import split_cores
from tammi_rl.distributed.pool import WorkerDiedError, merge_stats
from tammi_rl.distributed.processes import ProcessPool
from tammi_rl.distributed.weights import WeightBoard
from tammi_rl.store.checkpoint import load_checkpoint
from tammi_rl.train.pacing import ReplayRatio
from tammi_rl.train.replay import ReplayBuffer
from tammi_rl.train.trainer import Trainer, resume_config, train, worker_count

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "configs" / "smoke.yaml"


def smoke(tmp_path, *overrides):
    return load_config(
        SMOKE, [f"runs_dir={tmp_path / 'runs'}", f"checkpoints_dir={tmp_path / 'ck'}", "selfplay.workers=2", *overrides]
    )


def children(pid: int) -> set[int]:
    """Direct child processes of ``pid`` (Linux /proc), without multiprocessing's resource tracker."""
    found = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found.update(int(p) for p in text)
    return {p for p in found if b"resource_tracker" not in Path(f"/proc/{p}/cmdline").read_bytes()}


# --- pieces --------------------------------------------------------------------------------
def _read_board(spec, than, conn):
    board = WeightBoard.attach(spec)
    version, w = board.read_newer(than)
    conn.send((version, w["w"].sum().item(), int(w["n"]), board.read_newer(version)))
    board.close()


@pytest.mark.slow
def test_weight_board_publishes_versions_across_processes():
    import multiprocessing as mp

    weights = {"w": torch.arange(6, dtype=torch.float32).reshape(2, 3), "n": torch.tensor(3)}
    board = WeightBoard.create(weights)
    try:
        assert board.version == -1 and board.read_newer(-1) is None
        board.publish(weights, 1)
        ctx = mp.get_context("spawn")  # how the pool starts its workers
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_read_board, args=(board.spec, 0, child))
        proc.start()
        assert parent.recv() == (1, 15.0, 3, None)
        proc.join(timeout=60)
        board.publish({"w": weights["w"] * 2, "n": torch.tensor(4)}, 2)
        version, back = board.read_newer(1)
        assert version == 2 and back["w"].sum().item() == 30.0 and int(back["n"]) == 4
        with pytest.raises(ValueError, match="layout"):
            board.publish({"other": torch.zeros(1)}, 3)
    finally:
        board.close()


def test_replay_ratio_pacing():
    pace = ReplayRatio(ratio=2.0, batch_size=10, min_samples=50, slack_steps=3)
    assert pace.steps_owed(positions=40, samples_trained=0, buffered=40) == 0  # before min_samples
    assert pace.steps_owed(positions=50, samples_trained=0, buffered=50) == 10  # the warm-up is owed
    assert pace.learner_behind(50, 0, 50) and not pace.learner_behind(50, 70, 50)
    assert pace.steps_owed(50, 95, 50) == 0 and pace.debt(50, 95, 50) == 5.0
    assert pace.steps_owed(50, 120, 50) == 0  # ahead: wait for self-play
    assert pace.held(positions=100, samples_trained=190) == 1.9


def test_worker_count_and_auto():
    assert worker_count(load_config(SMOKE)) == 0
    assert worker_count(load_config(SMOKE, ["selfplay.workers=3"])) == 3
    assert worker_count(load_config(None)) == split_cores(load_config(None)).workers >= 1


def test_merge_stats_sums_counts_and_weights_rates():
    a = {
        "games": 2,
        "positions": 30,
        "plies": 40,
        "decisions": 10,
        "draw": 1.0,
        "seconds": 2.0,
        "nn_seconds": 1.0,
        "nn_calls": 10,
        "nn_positions": 20,
        "resign_playouts": 1,
        "resign_false_positives": 1,
        "ends_no_moves": 1,
        "ends_adjudication": 1,
    }
    b = {
        "games": 6,
        "positions": 90,
        "plies": 80,
        "decisions": 30,
        "draw": 0.0,
        "seconds": 6.0,
        "nn_seconds": 3.0,
        "nn_calls": 10,
        "nn_positions": 60,
        "resign_playouts": 3,
        "resign_false_positives": 0,
        "ends_no_moves": 2,
        "ends_resignation": 4,
    }
    m = merge_stats([a, b], seconds=2.0)
    assert m["games"] == 8 and m["positions"] == 120 and m["positions_per_s"] == 60.0
    assert m["draw"] == 0.25 and m["mean_nn_batch"] == 4.0 and m["mean_game_length"] == 15.0
    assert m["nn_time_share"] == 0.5 and m["resign_false_positive_rate"] == 0.25 and m["worker_seconds"] == 8.0
    assert (m["ends_no_moves"], m["ends_resignation"], m["ends_adjudication"], m["ends_repetition"]) == (3, 4, 1, 0)


# --- the pool ------------------------------------------------------------------------------
@pytest.mark.slow
def test_pool_replaces_a_killed_worker_and_counts_nothing_twice(tmp_path, russian):
    from tammi_rl.nn.model import build_model

    cfg = smoke(tmp_path)
    pool = ProcessPool(cfg, 2, seed=0, log=lambda text: None)
    replay = ReplayBuffer(100_000, (11, 8, 8), 32)
    try:
        pool.publish(build_model(russian, cfg.network).state_dict(), 0)
        got = []
        deadline = time.monotonic() + 120
        while len(got) < 4 and time.monotonic() < deadline:
            got += pool.poll(0.5)
        victim = pool.pids[0]
        os.kill(victim, signal.SIGKILL)
        while not any(d.generation == 1 for d in got) and time.monotonic() < deadline:
            got += pool.poll(0.5)  # until the replacement has delivered
        for d in got:
            replay.add(d.result.samples)
        ids = [(d.worker, d.generation, d.sequence) for d in got]
        assert len(ids) == len(set(ids))
        assert pool.restarts == 1 and victim not in pool.pids and len(pool.pids) == 2
        assert replay.total_added == sum(len(d.result.samples) for d in got)
        assert all(d.result.stats["games"] >= 1 and len(d.result.games) == d.result.stats["games"] for d in got)
    finally:
        pids = pool.pids
        pool.close()
    assert not wait_dead(pids)


# --- the loop ------------------------------------------------------------------------------
@pytest.mark.slow
def test_async_smoke_trains_checkpoints_and_resumes(tmp_path):
    out = io.StringIO()
    summary = train(smoke(tmp_path, "eval.every=0"), out=out)
    c = summary.counters
    run = summary.run_dir
    assert c.iteration == 2 and c.games >= 8 and summary.learner_step > 0
    assert c.samples_trained == summary.learner_step * 32
    replay = ReplayBuffer.load_chunks(run / "replay", 5000)
    assert replay.total_added == c.replay_total_added == c.positions
    lines = out.getvalue().splitlines()
    assert "pos/s" in lines[-1] and "learn" in lines[-1] and "ratio" in lines[-1] and "workers:" in lines[-1]
    for tag in (
        "throughput/positions_per_s",
        "throughput/learner_samples_per_s",
        "replay/ratio_held",
        "selfplay/mean_nn_batch",
        "time/search",
        "time/inference",
        "time/transport",
        "time/learner",
    ):
        assert scalar_steps(run / "tb", tag) == [1, 2], tag
    ckpt = load_checkpoint(run / "checkpoints" / "latest.pt")
    assert ckpt["worker"] == {"pool": {"workers": 2}}

    out = io.StringIO()
    summary = train(resume_config(run, ["train.iterations=3"]), resume_dir=run, out=out)
    assert summary.counters.iteration == 3 and summary.counters.games >= c.games + 4
    assert scalar_steps(run / "tb", "replay/size") == [1, 2, 3]


@pytest.mark.slow
def test_async_run_ends_on_its_hours_budget(tmp_path, monkeypatch):
    """Under ``train.hours`` the pool's run ends like the in-process one: each iteration here
    takes 1,000 s more (the clock is wound on) under a 2,500 s budget, so the second is the
    last (a third would overrun), with what the learner still owed trained and a checkpoint."""
    original = Trainer._async_iteration

    def slow_iteration(self, it, logger, restarts0):
        self.clock.start -= 1000.0
        return original(self, it, logger, restarts0)

    monkeypatch.setattr(Trainer, "_async_iteration", slow_iteration)
    out = io.StringIO()
    summary = train(smoke(tmp_path, "eval.every=0", "train.iterations=10", f"train.hours={2500 / 3600}"), out=out)
    c = summary.counters
    assert c.iteration == 2 and c.budget_spent and 2000 < c.seconds < 2500
    assert "budget ends the run after iteration 2 of at most 10" in out.getvalue()
    assert 0 <= c.positions - c.samples_trained < 32  # replay ratio 1: nothing owed is left untrained
    ckpt = load_checkpoint(summary.run_dir / "checkpoints" / "latest.pt")
    assert ckpt["counters"]["iteration"] == 2 and ckpt["counters"]["budget_spent"]


@pytest.mark.slow
def test_a_worker_killed_mid_run_is_replaced(tmp_path):
    seen = []
    played = []  # every game delivered, as its move paths

    class KillOnce(ProcessPool):
        def poll(self, timeout):
            got = super().poll(timeout)
            seen.extend((d.worker, d.generation, d.sequence) for d in got)
            played.extend(tuple(m.path for m in g.moves) for d in got for g in d.result.games)
            if got and self.restarts == 0 and not getattr(self, "killed", False):
                self.killed = True
                os.kill(self.pids[0], signal.SIGKILL)
            return got

    cfg = smoke(tmp_path, "eval.every=0", "train.iterations=3")
    summary = train(
        cfg,
        out=io.StringIO(),
        pool_factory=lambda cfg, epoch: KillOnce(cfg, 2, cfg.seed, epoch=epoch, log=lambda t: None),
    )
    c = summary.counters
    assert c.iteration == 3 and c.worker_restarts == 1
    assert len(seen) == len(set(seen))
    assert c.games == len(played) and len(set(played)) == len(played)  # no game counted twice
    assert ReplayBuffer.load_chunks(summary.run_dir / "replay", 5000).total_added == c.positions


@pytest.mark.slow
def test_a_worker_that_dies_too_often_stops_the_run_naming_it(tmp_path):
    pools = []

    class KillAlways(ProcessPool):
        def poll(self, timeout):
            got = super().poll(timeout)
            for pid in self.pids[:1]:
                os.kill(pid, signal.SIGKILL)
            return got

    def factory(cfg, epoch):
        pools.append(KillAlways(cfg, 2, cfg.seed, epoch=epoch, log=lambda t: None))
        return pools[0]

    cfg = smoke(tmp_path, "eval.every=0", "train.iterations=50", "selfplay.max_restarts=1")
    with pytest.raises(
        WorkerDiedError,
        match=r"self-play worker \d \(pid \d+\) was killed by SIGKILL; it died 2 times, "
        r"more than selfplay.max_restarts=1 allows",
    ):
        train(cfg, out=io.StringIO(), pool_factory=factory)
    started = {pid for slot in pools[0]._slots for pid in slot.pids}
    assert not wait_dead(started)


def _start_cli(tmp_path, *args):
    runs = tmp_path / "runs"
    cmd = [
        sys.executable,
        "-m",
        "tammi_rl.cli",
        "train",
        str(SMOKE),
        f"runs_dir={runs}",
        f"checkpoints_dir={tmp_path / 'ck'}",
        "selfplay.workers=2",
        "eval.every=0",
        *args,
    ]
    proc = subprocess.Popen(
        cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )  # its own process group, as in a terminal
    return proc, runs / "smoke"


def _read_until(proc, needle: str) -> list[str]:
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if needle in line:
            return seen
    raise AssertionError(f"{needle!r} never printed:\n{''.join(seen)}")


@pytest.mark.slow
def test_sigkill_of_the_trainer_takes_its_workers_and_resumes(tmp_path):
    proc, run = _start_cli(tmp_path, "train.iterations=5", "checkpoint.every=2")
    try:
        seen = _read_until(proc, "iter 3/5")
        workers = children(proc.pid)
        assert len(workers) == 2, workers
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=120)
    assert proc.returncode == -signal.SIGKILL, "".join(seen)
    assert not wait_dead(workers), "worker processes outlived the trainer"
    assert load_checkpoint(run / "checkpoints" / "latest.pt")["counters"]["iteration"] == 2

    done = subprocess.run(
        [sys.executable, "-m", "tammi_rl.cli", "train", "--resume", str(run)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "iter 3/5" in done.stdout
    counters = load_checkpoint(run / "checkpoints" / "latest.pt")["counters"]
    assert counters["iteration"] == 5
    assert ReplayBuffer.load_chunks(run / "replay", 5000).total_added == counters["positions"]
    assert scalar_steps(run / "tb", "replay/size") == [1, 2, 3, 4, 5]  # every step once: no duplicates


@pytest.mark.slow
def test_ctrl_c_stops_the_workers_and_writes_a_final_checkpoint(tmp_path):
    proc, run = _start_cli(tmp_path, "train.iterations=50", "checkpoint.every=100")
    try:
        seen = _read_until(proc, "iter 2/50")
        workers = children(proc.pid)
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground group
        rest, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    text = "".join(seen) + rest
    assert proc.returncode == 130, text
    assert "interrupted: stopping the self-play workers and writing a checkpoint" in text
    assert not wait_dead(workers), "worker processes outlived Ctrl-C"
    ckpt = load_checkpoint(run / "checkpoints" / "latest.pt")
    c = ckpt["counters"]
    assert c["iteration"] >= 2
    assert ReplayBuffer.load_chunks(run / "replay", 5000).total_added == c["replay_total_added"] == c["positions"]
    assert c["samples_trained"] == ckpt["learner"]["step"] * 32
    assert f"--resume {run}" in text

    done = subprocess.run(
        [sys.executable, "-m", "tammi_rl.cli", "train", "--resume", str(run), f"train.iterations={c['iteration'] + 1}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    after = load_checkpoint(run / "checkpoints" / "latest.pt")["counters"]
    assert after["iteration"] == c["iteration"] + 1 and after["games"] >= c["games"] + 4
