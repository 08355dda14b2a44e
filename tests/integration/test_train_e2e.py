"""End to end: the smoke config trains, checkpoints, resumes, evaluates, survives SIGKILL."""

import io
import itertools
import math
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from support.tensorboard_log import scalar_steps, scalar_values

from tammi_rl.config import load_config
from tammi_rl.players import parse_player_spec
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game
from tammi_rl.rules.results import REASONS
from tammi_rl.store.checkpoint import CheckpointError, load_checkpoint
from tammi_rl.store.rundir import RunDirError
from tammi_rl.train.replay import ReplayBuffer
from tammi_rl.train.trainer import Trainer, resume_config, train

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "configs" / "smoke.yaml"


def smoke(tmp_path, *overrides):
    return load_config(SMOKE, [f"runs_dir={tmp_path / 'runs'}", f"checkpoints_dir={tmp_path / 'ck'}", *overrides])


def assert_paced(counters, learner_step: int, ratio: float = 1.0, batch: int = 32) -> None:
    """The learner trained the replay ratio's share of the samples played, to within one step."""
    c = counters if isinstance(counters, dict) else vars(counters)
    assert c["samples_trained"] == learner_step * batch
    assert 0 <= ratio * c["positions"] - c["samples_trained"] < batch, c


def test_smoke_train_checkpoint_resume_eval(tmp_path):
    out = io.StringIO()
    summary = train(smoke(tmp_path), out=out)
    run = tmp_path / "runs" / "smoke"
    assert summary.run_dir == run and summary.counters.iteration == 2
    assert summary.counters.games == 8 and summary.learner_step > 0
    assert_paced(summary.counters, summary.learner_step)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("[smoke] iter 1/2") and "pos/s" in lines[0] and "loss" in lines[0]
    assert "eval d1" in lines[1]
    assert " run " in lines[0] and " eta " in lines[0]  # the run's wall time, and what is left
    assert " run " in lines[1] and " eta " not in lines[1]  # nothing is left after the last
    for rel in ("config.yaml", "checkpoints/latest.pt", "checkpoints/ckpt_000002.pt", "games/iter_000002.pdn"):
        assert (run / rel).is_file(), rel
    assert (tmp_path / "ck" / "smoke-latest.pt").is_file()
    assert list((run / "tb").glob("events.*"))
    assert "[Result" in (run / "games" / "iter_000002.pdn").read_text()
    assert load_config(run / "config.yaml") == smoke(tmp_path)  # the resolved config

    ckpt = load_checkpoint(run / "checkpoints" / "latest.pt", variant="russian")
    assert ckpt["counters"]["iteration"] == 2 and ckpt["learner"]["step"] == summary.learner_step
    assert set(ckpt["counters"]["eval_scores"]) == {1}
    first_seconds = ckpt["counters"]["seconds"]
    assert first_seconds == summary.counters.seconds > 0
    assert len(list((run / "replay").glob("chunk_*.npz"))) == 2  # one chunk per checkpoint
    assert ReplayBuffer.load_chunks(run / "replay", 5000).total_added == ckpt["counters"]["replay_total_added"]

    with pytest.raises(RunDirError, match="--resume"):  # a fresh run never overwrites one
        train(smoke(tmp_path), out=io.StringIO())

    out = io.StringIO()
    summary = train(resume_config(run, ["train.iterations=3"]), resume_dir=run, out=out)
    assert "resuming" in out.getvalue() and "iter 3/3" in out.getvalue()
    assert summary.counters.iteration == 3 and summary.counters.games == 12
    assert_paced(summary.counters, summary.learner_step)
    assert load_config(run / "config.yaml").train.iterations == 3
    assert scalar_steps(run / "tb", "loss/total") == [1, 2, 3]
    assert scalar_steps(run / "tb", "eval/score_vs_ab_d1") == [2, 3]  # every 2, and after the last
    assert summary.counters.seconds > first_seconds  # the resume carries the first session's time on
    hours = scalar_values(run / "tb", "train/wall_hours")
    assert len(hours) == 3 and hours == sorted(hours) and hours[-1] * 3600 == pytest.approx(summary.counters.seconds)
    ends = [scalar_values(run / "tb", f"selfplay/end/{reason}") for reason in REASONS]
    assert [sum(shares) for shares in zip(*ends, strict=True)] == pytest.approx([1.0] * 3)  # every game, once
    assert sorted(p.name for p in (run / "checkpoints").iterdir()) == [
        "ckpt_000002.pt",
        "ckpt_000003.pt",
        "latest.pt",
    ]  # keep: 2

    with pytest.raises(CheckpointError, match=re.escape("network.channels: checkpoint 16, config 32")):
        train(resume_config(run, ["network.channels=32", "train.iterations=4"]), resume_dir=run, out=io.StringIO())


@pytest.mark.parametrize("ema", [0, 2000], ids=["plain", "every-option-of-issue-30"])
def test_resume_continues_exactly(tmp_path, ema):
    """Two iterations then a resume give the same weights as three in one go (with a weight
    average: the same average and the same trained weights; the surprise weights come back
    with the replay window, and so do the ownership, short-horizon value and opponent-reply
    targets; the auxiliary outputs and the pooling block are saved and trained like the rest;
    with the attack planes the samples, the replay and the stem carry 13 planes, and the
    network plays from its checkpoint)."""
    common = [
        "eval.every=0",
        f"train.ema_samples={ema}",
        f"train.surprise_weight={0.5 if ema else 0.0}",
        f"network.soft_policy={'true' if ema else 'false'}",
        f"network.global_pooling={'true' if ema else 'false'}",
        f"network.ownership={'true' if ema else 'false'}",
        f"network.short_value={'true' if ema else 'false'}",
        f"network.opponent_policy={'true' if ema else 'false'}",
        f"network.attack_planes={'true' if ema else 'false'}",
    ]
    straight = train(smoke(tmp_path, "name=straight", "train.iterations=3", *common), out=io.StringIO())
    train(smoke(tmp_path, "name=split", "train.iterations=2", *common), out=io.StringIO())
    run = tmp_path / "runs" / "split"
    split = train(resume_config(run, ["train.iterations=3"]), resume_dir=run, out=io.StringIO())
    assert split.counters == straight.counters
    a = load_checkpoint(straight.run_dir / "checkpoints" / "latest.pt")
    b = load_checkpoint(split.run_dir / "checkpoints" / "latest.pt")
    for key in a["model"]:
        torch.testing.assert_close(a["model"][key], b["model"][key], msg=key)
    assert ("trained_weights" in a["learner"]) == (ema > 0) == ("trained_weights" in b["learner"])
    if ema:
        trained_a, trained_b = a["learner"]["trained_weights"], b["learner"]["trained_weights"]
        for key in trained_a:
            torch.testing.assert_close(trained_a[key], trained_b[key], msg=key)
        assert not torch.equal(a["model"]["stem.0.weight"], trained_a["stem.0.weight"])  # the average plays
    assert ("soft_policy_out.weight" in a["model"]) == (ema > 0) == ("tower.0.pool_fc.weight" in a["model"])
    for output in ("ownership", "short_value", "opponent_policy"):
        assert (f"{output}_out.weight" in a["model"]) == (ema > 0)
    planes = 13 if ema else 11
    assert a["model"]["stem.0.weight"].shape[1] == planes
    assert ReplayBuffer.load_chunks(split.run_dir / "replay", 5000).obs_shape[0] == planes
    rules = Rules.for_variant("russian")
    player = parse_player_spec(f"mcts:checkpoint={split.run_dir},sims=8", rules)
    game = Game(rules)
    assert player.choose(game) in game.legal_moves()


def test_sigkill_mid_run_resumes(tmp_path):
    """A run killed mid-iteration, past its last checkpoint, resumes and loses only the unsaved tail.

    Checkpoints every 2 iterations; the kill comes once iteration 3 is logged (its events are
    on disk, its state is not), so the resumed run redoes iteration 3 and TensorBoard must
    show each step once.
    """
    runs = tmp_path / "runs"
    cmd = [
        sys.executable,
        "-m",
        "tammi_rl.cli",
        "train",
        str(SMOKE),
        f"runs_dir={runs}",
        f"checkpoints_dir={tmp_path / 'ck'}",
        "train.iterations=6",
        "checkpoint.every=2",
        "eval.every=0",
    ]
    run = runs / "smoke"
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen = []
    try:
        for line in proc.stdout:  # status lines are flushed per iteration
            seen.append(line)
            if "iter 3/6" in line:
                os.kill(proc.pid, signal.SIGKILL)
                break
    finally:
        proc.wait(timeout=240)
    assert proc.returncode == -signal.SIGKILL, "".join(seen)
    assert load_checkpoint(run / "checkpoints" / "latest.pt")["counters"]["iteration"] == 2

    done = subprocess.run(
        [sys.executable, "-m", "tammi_rl.cli", "train", "--resume", str(run)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"resuming {run} from ckpt_000002.pt: iteration 2" in done.stdout
    assert "iter 3/6" in done.stdout
    ckpt = load_checkpoint(run / "checkpoints" / "latest.pt")
    counters = ckpt["counters"]
    assert counters["iteration"] == 6 and counters["games"] == 24
    assert_paced(counters, ckpt["learner"]["step"])
    replay = ReplayBuffer.load_chunks(run / "replay", 5000)
    assert replay.total_added == counters["replay_total_added"] == counters["positions"]
    assert scalar_steps(run / "tb", "loss/total") == [1, 2, 3, 4, 5, 6]


def test_replay_saved_ahead_of_checkpoint_is_trimmed(tmp_path):
    """A crash between the replay save and the checkpoint: resume drops the extra samples,
    and the next save replaces the orphan chunk."""
    from tammi_rl.train.trainer import Trainer

    summary = train(smoke(tmp_path, "eval.every=0"), out=io.StringIO())
    run = summary.run_dir
    buf = ReplayBuffer.load_chunks(run / "replay", 5000)
    before = buf.total_added
    buf.add(buf.contents())  # the next iteration's samples, saved before the crash
    buf.save_chunks(run / "replay")
    trainer = Trainer(resume_config(run), resume_dir=run, out=io.StringIO())
    assert trainer.replay.total_added == before == len(trainer.replay)
    trainer.replay.save_chunks(run / "replay")
    assert ReplayBuffer.load_chunks(run / "replay", 5000).total_added == before


def test_resume_reads_a_one_file_replay_snapshot(tmp_path):
    """Runs written before chunked replay saves (replay.npz) still resume with their buffer."""
    import shutil

    from tammi_rl.train.trainer import Trainer

    summary = train(smoke(tmp_path, "eval.every=0"), out=io.StringIO())
    run = summary.run_dir
    buf = ReplayBuffer.load_chunks(run / "replay", 5000)
    buf.snapshot(run / "replay.npz")
    shutil.rmtree(run / "replay")
    trainer = Trainer(resume_config(run), resume_dir=run, out=io.StringIO())
    assert trainer.replay.total_added == buf.total_added == len(trainer.replay) > 0


def test_cli_train_errors(tmp_path, capsys):
    from tammi_rl.cli import main

    assert main(["train"]) == 2
    assert "give a CONFIG file or --resume RUN_DIR" in capsys.readouterr().err
    assert main(["train", "--resume", str(tmp_path / "nope")]) == 2
    assert "nope: no run directory there" in capsys.readouterr().err
    assert main(["train", str(SMOKE), "train.nonsense=1"]) == 2
    assert "unknown key 'train.nonsense'" in capsys.readouterr().err


def test_resume_with_another_replay_ratio_paces_from_the_resume(tmp_path):
    run = tmp_path / "runs" / "smoke"
    first = train(smoke(tmp_path, "eval.every=0"), out=io.StringIO())
    out = io.StringIO()
    resumed = train(resume_config(run, ["train.iterations=3", "train.replay_ratio=3.0"]), resume_dir=run, out=out)
    assert "the replay ratio was 1 and is now 3; pacing counts from here" in out.getvalue()
    c, before = resumed.counters, first.counters
    assert c.pace_ratio == 3.0 and c.pace_positions == before.positions and c.pace_samples == before.samples_trained
    new_positions = c.positions - before.positions
    trained = c.samples_trained - before.samples_trained
    assert 0 <= 3.0 * new_positions - trained < 32  # the new ratio, from the resume on: no burst, no stall


def test_lr_schedule_follows_the_iterations(tmp_path):
    run = tmp_path / "runs" / "smoke"
    train(smoke(tmp_path, "eval.every=0", "train.lr_schedule=cosine", "train.iterations=4"), out=io.StringIO())
    lrs = scalar_values(run / "tb", "train/lr")
    assert lrs[0] == pytest.approx(1e-3 * 0.5 * (1 + math.cos(math.pi * 1 / 4)), rel=1e-6)
    assert lrs[-1] == pytest.approx(0.0, abs=1e-12)  # the last iteration trains at the end of the schedule
    assert all(a > b for a, b in itertools.pairwise(lrs))
    norms = scalar_values(run / "tb", "train/weight_norm")
    assert len(norms) == len(lrs) and all(n > 0 for n in norms)  # logged with the lr, every iteration that learned


def test_hours_budget_ends_the_run_and_drives_the_schedule(tmp_path, monkeypatch):
    """``train.hours``: every iteration here takes 1,000 s more (the run's clock is wound on) under
    a 3,500 s budget, so the run ends after iteration 3 of at most 10 (a fourth would overrun),
    with the cosine schedule following the time spent; a resume continues only when the
    budget is raised."""
    original = Trainer.iteration

    def slow_iteration(self, it, logger):
        self.clock.start -= 1000.0
        return original(self, it, logger)

    monkeypatch.setattr(Trainer, "iteration", slow_iteration)
    run = tmp_path / "runs" / "smoke"
    out = io.StringIO()
    overrides = ["eval.every=0", "train.lr_schedule=cosine", "train.iterations=10", f"train.hours={3500 / 3600}"]
    summary = train(smoke(tmp_path, *overrides), out=out)
    c = summary.counters
    assert c.iteration == 3 and c.budget_spent and 3000 < c.seconds < 3500
    assert "the 0.972222 h budget ends the run after iteration 3 of at most 10" in out.getvalue()
    assert " eta " in out.getvalue().splitlines()[0] and " eta " not in out.getvalue().splitlines()[2]
    lrs = scalar_values(run / "tb", "train/lr")
    hours = scalar_values(run / "tb", "train/wall_hours")

    def cosine(seconds: float) -> float:
        return 1e-3 * 0.5 * (1 + math.cos(math.pi * seconds / 3500))

    # the schedule follows time, further along than 1/10 and 2/10 of the iterations: the lr is
    # set after the clock is wound on and before the iteration's end is logged
    for lr, wound, logged in zip(lrs, (1000, 2000), hours, strict=False):
        assert cosine(logged * 3600) <= lr <= cosine(wound)
    assert lrs[2] == pytest.approx(0.0, abs=1e-12)  # the last iteration trains at the schedule's end
    ckpt = load_checkpoint(run / "checkpoints" / "latest.pt", variant="russian")
    assert ckpt["counters"]["iteration"] == 3 and ckpt["counters"]["budget_spent"]

    out = io.StringIO()
    again = train(resume_config(run, ["train.iterations=20"]), resume_dir=run, out=out)
    assert again.counters.iteration == 3
    said = out.getvalue()
    assert "iteration 3" in said and "leaves no room in the train.hours budget of 0.972222 h" in said

    resumed = train(resume_config(run, [f"train.hours={5500 / 3600}"]), resume_dir=run, out=io.StringIO())
    assert resumed.counters.iteration == 5 and resumed.counters.budget_spent  # 4,000 s, then 5,000 s: no room for 6,000

    unlimited = train(resume_config(run, ["train.hours=0", "train.iterations=6"]), resume_dir=run, out=io.StringIO())
    assert unlimited.counters.iteration == 6 and not unlimited.counters.budget_spent


def test_hours_budget_keeps_time_for_the_evaluations_due(tmp_path, monkeypatch):
    """Each iteration takes 1,000 s and each evaluation (every iteration) 400 s more, under a
    4,100 s budget: after iteration 2 (2,400 s, its evaluation still to come) a third
    iteration and the final evaluation would end at 4,200 s, so iteration 2 is the last and
    the run ends at 2,800 s, inside the budget."""
    original_iteration, original_evaluate = Trainer.iteration, Trainer.evaluate

    def slow_iteration(self, it, logger):
        self.clock.start -= 1000.0
        return original_iteration(self, it, logger)

    def slow_evaluate(self, it):
        self.clock.start -= 400.0
        return original_evaluate(self, it)

    monkeypatch.setattr(Trainer, "iteration", slow_iteration)
    monkeypatch.setattr(Trainer, "evaluate", slow_evaluate)
    overrides = ["eval.every=1", "eval.games=2", "train.iterations=10", f"train.hours={4100 / 3600}"]
    c = train(smoke(tmp_path, *overrides), out=io.StringIO()).counters
    assert c.iteration == 2 and c.budget_spent and 2800 < c.seconds < 4100
    assert c.eval_seconds >= 400


@pytest.mark.parametrize("variant", ["english", "italian", "turkish", "brazilian", "international"])
def test_every_variant_trains_stores_its_ownership_labels_and_resumes(tmp_path, variant):
    """The loop on every board: Turkish plays on all 64 squares, International on 50, so the
    ownership labels are not half the board's cells everywhere (a Turkish run once failed on
    its first samples). Its auxiliary ownership output trains on them, and the run resumes."""
    cfg = smoke(tmp_path, f"variant={variant}", "eval.every=0", "network.ownership=true", "train.iterations=1")
    summary = train(cfg, out=io.StringIO())
    assert summary.learner_step > 0
    squares = Rules.for_variant(variant).geometry.n_squares
    replay = ReplayBuffer.load_chunks(summary.run_dir / "replay", 5000)
    assert replay.squares == squares and len(replay) == summary.counters.positions
    labels = replay.contents().ownership
    assert labels.shape == (len(replay), squares) and labels.min() >= 0  # every sample labelled
    resumed = train(
        resume_config(summary.run_dir, ["train.iterations=2"]), resume_dir=summary.run_dir, out=io.StringIO()
    )
    assert resumed.counters.iteration == 2
