"""The Ray self-play backend on a local Ray instance (skipped when Ray is not installed).

The smoke config trains and checkpoints through Ray actors; a killed actor is replaced
and its games re-sent without counting any batch twice; resume restores every actor's
RNG. The first tests need no Ray: the trainer must not import it.
"""

import io
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tammi_rl.store.checkpoint import load_checkpoint
from tammi_rl.config import ConfigError, load_config
from tammi_rl.train.replay import ReplayBuffer
from tammi_rl.train.trainer import Trainer, backend_factory, local_worker, resume_config, train

ROOT = Path(__file__).resolve().parent.parent
SMOKE = ROOT / "configs" / "smoke.yaml"
RAY_SKIP = "Ray is not installed (pip install 'tammi-rl[ray]'); the Ray backend tests need it"


def smoke(tmp_path, *overrides):
    return load_config(SMOKE, [f"runs_dir={tmp_path / 'runs'}", f"checkpoints_dir={tmp_path / 'ck'}",
                               "distributed.backend=ray", "distributed.num_actors=2", *overrides])


# --- without Ray ------------------------------------------------------------------------
def test_trainer_does_not_import_ray():
    code = ("import sys, tammi_rl, tammi_rl.train.trainer, tammi_rl.distributed, tammi_rl.cli; "
            "from tammi_rl.config import load_config; "
            "from tammi_rl.train.trainer import backend_factory; "
            "backend_factory(load_config(None)); "
            "assert 'ray' not in sys.modules, 'ray was imported'")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_backend_choice_and_config_checks(tmp_path):
    assert backend_factory(load_config(None)) is local_worker
    cfg = smoke(tmp_path, "distributed.address=auto", "distributed.cpus_per_actor=0.5")
    assert cfg.distributed.backend == "ray" and cfg.distributed.address == "auto"
    for bad, needle in [("distributed.backend=spark", "allowed values: local, ray"),
                        ("distributed.num_actors=0", "must be >= 1"),
                        ("distributed.gpus_per_actor=-1", "must be >= 0"),
                        ("distributed.actors=2", "unknown key 'distributed.actors'")]:
        with pytest.raises(ConfigError, match=needle):
            load_config(None, [bad])


def test_missing_ray_is_a_clear_error(monkeypatch):
    from tammi_rl.distributed.ray_backend import DistributedError, import_ray

    monkeypatch.setitem(sys.modules, "ray", None)  # makes `import ray` fail
    with pytest.raises(DistributedError, match=r"pip install 'tammi-rl\[ray\]'"):
        import_ray()


def test_merge_stats_weights_by_games():
    from tammi_rl.distributed.ray_backend import merge_stats

    a = {"games": 2, "positions": 30, "plies": 40, "decisions": 10, "draw": 1.0, "mean_nn_batch": 2.0}
    b = {"games": 6, "positions": 90, "plies": 80, "decisions": 30, "draw": 0.0, "mean_nn_batch": 6.0}
    m = merge_stats([a, b], seconds=2.0)
    assert m["games"] == 8 and m["positions"] == 120 and m["positions_per_s"] == 60.0
    assert m["draw"] == 0.25 and m["mean_nn_batch"] == 5.0 and m["mean_game_length"] == 15.0


# --- on a local Ray instance ---------------------------------------------------------------
@pytest.fixture(scope="module")
def ray_local():
    ray = pytest.importorskip("ray", reason=RAY_SKIP)
    started = not ray.is_initialized()
    if started:
        ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level="ERROR")
    yield ray
    if started:
        ray.shutdown()


@pytest.mark.slow
def test_smoke_trains_checkpoints_and_resumes_through_ray(ray_local, tmp_path):
    out = io.StringIO()
    summary = train(smoke(tmp_path), out=out)
    run = tmp_path / "runs" / "smoke"
    c = summary.counters
    assert c.iteration == 2 and c.games == 8 and summary.learner_step == 8
    assert "eval d1" in out.getvalue().splitlines()[1]
    ckpt = load_checkpoint(run / "checkpoints" / "latest.pt", variant="russian")
    actors = ckpt["worker"]["ray"]["actors"]
    assert len(actors) == 2 and actors[0]["worker"]["rng"] != actors[1]["worker"]["rng"]
    assert ckpt["worker"]["rng"] == actors[0]["worker"]["rng"]  # the local backend can resume it
    assert ReplayBuffer.load_chunks(run / "replay", 5000).total_added == c.positions == c.replay_total_added

    trainer = Trainer(resume_config(run, ["train.iterations=3"]), resume_dir=run, out=out)
    try:
        assert trainer.resumed_from is not None and trainer.counters.iteration == 2
        restored = trainer.worker.state_dict()["ray"]["actors"]
        assert [a["worker"]["rng"] for a in restored] == [a["worker"]["rng"] for a in actors]
        assert [len(a["worker"]["games"]) for a in restored] == [len(a["worker"]["games"]) for a in actors]
        resumed = trainer.run_loop()  # closes the actors
    finally:
        trainer.worker.close()
    assert resumed.counters.iteration == 3 and resumed.counters.games == 12 and resumed.learner_step == 12
    assert trainer.worker.slots[0].actor is None

    # The same run directory goes on with the local backend (it reads actor 0's RNG).
    local = train(resume_config(run, ["train.iterations=4", "distributed.backend=local"]), resume_dir=run, out=out)
    assert local.counters.iteration == 4 and local.counters.games == 16


@pytest.mark.slow
def test_killed_actor_does_not_stop_the_run_or_double_count(ray_local, tmp_path):
    from tammi_rl.distributed.ray_backend import RayBackend

    class KillsOnce(RayBackend):
        """Kills actor 0 right after the second play request reaches it."""

        plays = 0
        killed = False
        restarts_per_play: list[float] = []

        def play(self, n_games):
            self.plays += 1
            result = super().play(n_games)
            self.restarts_per_play.append(result.stats["actor_restarts"])
            return result

        def _submit(self, slot, method, args):
            ref = super()._submit(slot, method, args)
            if method == "play" and self.plays == 2 and slot == 0 and not self.killed:
                self.killed = True
                self.ray.kill(self.slots[0].actor, no_restart=True)
            return ref

    backends = []

    def factory(rules, cfg, device, seed):
        backends.append(KillsOnce(rules, cfg, device, seed, log=lambda text: None))
        return backends[0]

    cfg = smoke(tmp_path, "eval.every=0", "distributed.max_restarts=1")
    summary = train(cfg, worker_factory=factory, out=io.StringIO())
    backend = backends[0]
    c = summary.counters
    assert backend.killed and backend.restarts == 1 and backend.slots[0].generation == 1
    assert backend.restarts_per_play == [0.0, 1.0]  # replaced while its request was in flight
    # The killed share was played again, once (play(n) returns at least n finished games).
    assert c.iteration == 2 and 8 <= c.games <= 8 + 2 * cfg.selfplay.parallel_games
    assert c.positions == c.replay_total_added
    ids = backend.last_batch_ids
    assert len(ids) == len(set(ids)) == 2 and [i.actor for i in ids] == [0, 1]
    assert ids[0].generation == 1 and ids[1].generation == 0
    ckpt = load_checkpoint(tmp_path / "runs" / "smoke" / "checkpoints" / "latest.pt", variant="russian")
    assert ckpt["counters"]["games"] == c.games
    assert [a["generation"] for a in ckpt["worker"]["ray"]["actors"]] == [1, 0]


@pytest.mark.slow
def test_actor_that_keeps_dying_stops_the_run(ray_local, tmp_path, russian):
    from tammi_rl.distributed.ray_backend import DistributedError, RayBackend

    cfg = smoke(tmp_path, "distributed.num_actors=1", "distributed.max_restarts=0")
    backend = RayBackend(russian, cfg, torch.device("cpu"), 0, log=lambda text: None)
    try:
        ray_local.kill(backend.slots[0].actor, no_restart=True)
        with pytest.raises(DistributedError, match="max_restarts=0"):
            backend.play(1)
    finally:
        backend.close()
