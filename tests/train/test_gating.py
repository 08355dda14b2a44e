"""SPRT gating in the training loop: self-play keeps its network until a candidate passes."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import torch
from support.tensorboard_log import scalar_steps, scalar_values

from tammi_rl.config import load_config
from tammi_rl.store.checkpoint import load_checkpoint
from tammi_rl.train.trainer import Trainer, train

SMOKE = Path(__file__).resolve().parents[2] / "configs" / "smoke.yaml"
GATED = ["eval.every=0", "eval.gating.enabled=true", "eval.gating.max_games=4", "eval.gating.simulations=2"]


def smoke(tmp_path, *overrides):
    return load_config(SMOKE, [f"runs_dir={tmp_path / 'runs'}", f"checkpoints_dir={tmp_path / 'ck'}", *overrides])


@pytest.mark.slow
def test_gated_run_logs_the_gate_and_keeps_selfplay_weights(tmp_path):
    summary = train(smoke(tmp_path, *GATED), out=io.StringIO())
    assert scalar_steps(summary.run_dir / "tb", "gate/accepted") == [1, 2]
    ckpt = load_checkpoint(summary.run_dir / "checkpoints" / "latest.pt")
    selfplay, learner = ckpt["selfplay_model"], ckpt["model"]
    # Four games at 2 simulations cannot prove 30 Elo: the incumbent (initial weights) stays.
    assert not all(torch.equal(selfplay[k], learner[k]) for k in learner)
    # A resumed run hands self-play the gated weights, not the learner's.
    resumed = Trainer(smoke(tmp_path, *GATED, "train.iterations=3"), resume_dir=summary.run_dir, out=io.StringIO())
    worker_weights = resumed.worker.model.state_dict()
    assert all(torch.equal(worker_weights[k], selfplay[k]) for k in selfplay)


def test_ungated_run_publishes_every_update(tmp_path):
    summary = train(smoke(tmp_path, "eval.every=0"), out=io.StringIO())
    ckpt = load_checkpoint(summary.run_dir / "checkpoints" / "latest.pt")
    assert ckpt.get("selfplay_model") is None


@pytest.mark.slow
def test_gating_in_the_asynchronous_loop_publishes_only_accepted_networks(tmp_path):
    from tammi_rl.distributed.processes import ProcessPool

    published = []

    class Recording(ProcessPool):
        def publish(self, weights, version):
            published.append(version)
            super().publish(weights, version)

    cfg = smoke(tmp_path, *GATED, "selfplay.workers=2")
    summary = train(cfg, out=io.StringIO(), pool_factory=lambda c, e: Recording(c, 2, c.seed, epoch=e))
    gated = scalar_steps(summary.run_dir / "tb", "gate/accepted")
    assert gated and set(gated) <= {1, 2}  # once per iteration that had learner steps
    accepted = sum(scalar_values(summary.run_dir / "tb", "gate/accepted"))
    assert published == list(range(int(accepted) + 1))  # the start weights, then one per accepted gate
    ckpt = load_checkpoint(summary.run_dir / "checkpoints" / "latest.pt")
    assert ckpt.get("selfplay_model") is not None
