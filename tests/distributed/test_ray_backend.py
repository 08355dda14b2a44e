"""Self-play on Ray actors: `RayPool` (the Ray tests are skipped when Ray is not installed).

The first tests need no Ray: the trainer must not import it, the config keys are
checked, and a missing Ray is a clear error. On a local Ray instance the smoke config
trains, checkpoints and resumes through two actors; a killed actor is replaced without
any delivery being counted twice; an actor that keeps dying, or fails in Python, stops
the pool with an error naming it. On a simulated two-node cluster the worker node is
removed mid-run and its actor comes back on the head node.
"""

import io
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from tammi_rl.config import ConfigError, load_config
from tammi_rl.distributed.pool import Delivery, WorkerDiedError
from tammi_rl.distributed.processes import ProcessPool
from tammi_rl.env.observation import ObservationEncoder
from tammi_rl.nn.model import build_model
from tammi_rl.store.checkpoint import load_checkpoint
from tammi_rl.train.replay import ReplayBuffer
from tammi_rl.train.trainer import default_pool, resume_config, train, worker_count

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "configs" / "smoke.yaml"
RAY_SKIP = "Ray is not installed (pip install 'tammi-rl[ray]'); the Ray pool tests need it"
DEADLINE_S = 180.0
"""The most any wait on actors in these tests may take: a few seconds on an idle machine, over
a minute on a busy one (every actor imports torch and loads compiled kernels as it starts)."""


def smoke(tmp_path, *overrides):
    return load_config(
        SMOKE,
        [
            f"runs_dir={tmp_path / 'runs'}",
            f"checkpoints_dir={tmp_path / 'ck'}",
            "distributed.backend=ray",
            "distributed.num_actors=2",
            *overrides,
        ],
    )


# --- without Ray ------------------------------------------------------------------------
@pytest.mark.slow
def test_trainer_does_not_import_ray():
    code = (
        "import sys, tammi_rl, tammi_rl.train.trainer, tammi_rl.distributed.ray_backend, tammi_rl.cli; "
        "from tammi_rl.config import load_config; "
        "from tammi_rl.train.trainer import default_pool, worker_count; "
        "assert worker_count(load_config(None, ['distributed.backend=ray', 'distributed.num_actors=3'])) == 3; "
        "default_pool(load_config(None, ['selfplay.workers=1']), 0).close(); "
        "assert 'ray' not in sys.modules, 'ray was imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_pool_choice_and_config_checks(tmp_path):
    local = default_pool(load_config(None, ["selfplay.workers=2"]), 0)
    try:
        assert isinstance(local, ProcessPool) and local.size == 2
    finally:
        local.close()
    cfg = smoke(tmp_path, "distributed.address=auto", "distributed.cpus_per_actor=0.5")
    assert cfg.distributed.backend == "ray" and cfg.distributed.address == "auto"
    assert worker_count(cfg) == 2  # the asynchronous loop, even with selfplay.workers: 0
    assert set(cfg.to_dict()["distributed"]) == {
        "backend",
        "address",
        "num_actors",
        "cpus_per_actor",
        "gpus_per_actor",
    }
    for bad, needle in [
        ("distributed.backend=spark", "allowed values: local, ray"),
        ("distributed.num_actors=0", "must be >= 1"),
        ("distributed.gpus_per_actor=-1", "must be >= 0"),
        ("distributed.actors=2", "unknown key 'distributed.actors'"),
    ]:
        with pytest.raises(ConfigError, match=needle):
            load_config(None, [bad])


def test_missing_ray_is_a_clear_error(monkeypatch, tmp_path):
    from tammi_rl.distributed.ray_backend import DistributedError, RayPool, import_ray

    monkeypatch.setitem(sys.modules, "ray", None)  # makes `import ray` fail
    with pytest.raises(DistributedError, match=r"pip install 'tammi-rl\[ray\]'"):
        import_ray()
    with pytest.raises(DistributedError, match=r"distributed\.backend=ray needs Ray"):
        RayPool(smoke(tmp_path), seed=0)


# --- Ray: one local instance, then a simulated cluster ----------------------------------
class RaySwitch:
    """Ray in this process: a local instance or a simulated cluster, never both at once."""

    def __init__(self, ray):
        self.ray = ray
        self.mode = None
        self.cluster = None

    def local(self):
        if self.mode != "local":
            self.stop()
            self.ray.init(
                address="local",
                num_cpus=3,
                include_dashboard=False,
                logging_level="ERROR",
                object_store_memory=200 * 1024**2,
            )
            self.mode = "local"
        return self.ray

    def two_nodes(self):
        """A fresh cluster: a head and a worker node of 1 CPU each; returns (cluster, worker node)."""
        from ray.cluster_utils import Cluster

        self.stop()
        fast_death = {"health_check_initial_delay_ms": 0, "health_check_period_ms": 500}
        self.cluster = Cluster(
            initialize_head=True,
            head_node_args={"num_cpus": 1, "include_dashboard": False, "_system_config": fast_death},
        )
        worker = self.cluster.add_node(num_cpus=1)
        self.cluster.wait_for_nodes()
        self.ray.init(address=self.cluster.address, logging_level="ERROR")
        self.mode = "cluster"
        return self.cluster, worker

    def stop(self):
        if self.ray.is_initialized():
            self.ray.shutdown()
        if self.cluster is not None:
            self.cluster.shutdown()
            self.cluster = None
        self.mode = None


@pytest.fixture(scope="module")
def ray_switch():
    ray = pytest.importorskip("ray", reason=RAY_SKIP)
    switch = RaySwitch(ray)
    yield switch
    switch.stop()


@pytest.fixture
def ray_local(ray_switch):
    return ray_switch.local()


def weights(rules, cfg):
    return build_model(rules, cfg.network).state_dict()


def poll_until(pool, done, deliveries, what, timeout=DEADLINE_S):
    """Poll ``pool`` (collecting into ``deliveries``) until ``done()``; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        deliveries.extend(pool.poll(0.2))


def check_counted_once(deliveries: list[Delivery]) -> None:
    """Every (worker, generation, sequence) once, each life's sequence numbers 0, 1, 2, ..."""
    keys = [(d.worker, d.generation, d.sequence) for d in deliveries]
    assert len(keys) == len(set(keys))
    lives: dict[tuple[int, int], list[int]] = {}
    for worker, generation, sequence in keys:
        lives.setdefault((worker, generation), []).append(sequence)
    for sequences in lives.values():
        assert sorted(sequences) == list(range(len(sequences)))


@pytest.mark.slow
def test_smoke_trains_checkpoints_and_resumes_through_ray(ray_local, tmp_path):
    out = io.StringIO()
    summary = train(smoke(tmp_path), out=out)
    run = tmp_path / "runs" / "smoke"
    c = summary.counters
    assert c.iteration == 2 and c.games >= 8 and c.worker_restarts == 0
    assert summary.learner_step > 0 and c.positions == c.replay_total_added
    assert "eval d1" in out.getvalue().strip().splitlines()[-1]
    ckpt = load_checkpoint(run / "checkpoints" / "latest.pt", variant="russian")
    assert ckpt["counters"]["iteration"] == 2 and ckpt["worker"] == {"pool": {"workers": 2}}
    assert ReplayBuffer.load_chunks(run / "replay", 5000).total_added == c.replay_total_added
    assert ray_local.is_initialized()  # the pool joined this instance, so it left it running

    resumed = train(resume_config(run, ["train.iterations=3"]), resume_dir=run, out=out)
    assert resumed.resumed_from is not None
    assert resumed.counters.iteration == 3 and resumed.counters.games >= c.games + 4
    assert resumed.learner_step > summary.learner_step
    assert resumed.counters.positions == resumed.counters.replay_total_added


@pytest.mark.slow
def test_killed_actor_is_replaced_and_nothing_is_counted_twice(ray_local, tmp_path, russian):
    from tammi_rl.distributed.ray_backend import RayPool

    cfg = smoke(tmp_path, "selfplay.max_restarts=1")
    logs: list[str] = []
    pool = RayPool(cfg, seed=0, log=logs.append)
    replay = ReplayBuffer(cfg.replay.capacity, ObservationEncoder.for_rules(russian).shape, russian.geometry.n_squares)
    deliveries: list[Delivery] = []
    try:
        pool.publish(weights(russian, cfg), version=0)
        poll_until(pool, lambda: {d.worker for d in deliveries} == {0, 1}, deliveries, "both actors")
        ray_local.kill(pool.actors[0], no_restart=True)  # its next reply is in flight: it never comes
        pool.publish(weights(russian, cfg), version=1)
        pool.set_simulations(3)  # progressive simulations: every later call carries the count
        poll_until(
            pool,
            lambda: sum(d.worker == 0 and d.generation == 1 for d in deliveries) >= 2,
            deliveries,
            "the replacement of actor 0",
        )
        for d in deliveries:
            replay.add(d.result.samples)
    finally:
        pool.close()
        pool.close()  # idempotent
    assert pool.restarts == 1 and pool.actors == [None, None]
    assert any("self-play actor 0" in line and "starting a new one" in line for line in logs)
    check_counted_once(deliveries)
    assert {(d.worker, d.generation) for d in deliveries} == {(0, 0), (0, 1), (1, 0)}
    assert replay.total_added == sum(len(d.result.samples) for d in deliveries)
    assert all(d.weights_version == 1 for d in deliveries if d.generation == 1)  # a new actor: the newest
    assert any(d.worker == 1 and d.weights_version == 1 for d in deliveries)  # a running one takes them too
    searched = {d.result.stats["simulations_per_decision"] for d in deliveries if d.generation == 1}
    assert searched == {3.0}  # the new actor plays at the latest count
    assert {d.result.stats["simulations_per_decision"] for d in deliveries} <= {3.0, 8.0}  # smoke: 8


@pytest.mark.slow
def test_training_goes_on_through_a_killed_actor(ray_local, tmp_path):
    from tammi_rl.distributed.ray_backend import RayPool

    class KillsOnce(RayPool):
        """Kills its only actor after the first delivery: the run can only finish on its replacement."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.deliveries: list[Delivery] = []

        def poll(self, timeout):
            got = super().poll(timeout)
            if got and not self.deliveries:
                self.ray.kill(self.actors[0], no_restart=True)
            self.deliveries.extend(got)
            return got

    pools: list[KillsOnce] = []

    def pool_factory(cfg, epoch):
        pools.append(KillsOnce(cfg, seed=cfg.seed, epoch=epoch, log=lambda text: None))
        return pools[-1]

    cfg = smoke(tmp_path, "distributed.num_actors=1", "selfplay.max_restarts=1", "eval.every=0")
    summary = train(cfg, pool_factory=pool_factory, out=io.StringIO())
    c, pool = summary.counters, pools[0]
    assert c.iteration == 2 and c.worker_restarts == 1 == pool.restarts
    check_counted_once(pool.deliveries)
    assert {d.generation for d in pool.deliveries} == {0, 1}
    assert c.positions == c.replay_total_added == sum(len(d.result.samples) for d in pool.deliveries)
    assert c.games == sum(int(d.result.stats["games"]) for d in pool.deliveries)


@pytest.mark.slow
def test_actor_that_keeps_dying_stops_the_pool(ray_local, tmp_path, russian):
    from tammi_rl.distributed.ray_backend import RayPool

    cfg = smoke(tmp_path, "distributed.num_actors=1", "selfplay.max_restarts=1")
    pool = RayPool(cfg, seed=0, log=lambda text: None)
    deliveries: list[Delivery] = []
    try:
        with pytest.raises(RuntimeError, match="publish weights before polling"):
            pool.poll(0)
        pool.publish(weights(russian, cfg), version=0)
        poll_until(pool, lambda: bool(deliveries), deliveries, "the actor")
        ray_local.kill(pool.actors[0], no_restart=True)
        poll_until(pool, lambda: any(d.generation == 1 for d in deliveries), deliveries, "its replacement")
        ray_local.kill(pool.actors[0], no_restart=True)
        with pytest.raises(WorkerDiedError, match=r"self-play actor 0 .*died 2 times.*max_restarts=1"):
            poll_until(pool, lambda: False, deliveries, "the error")
    finally:
        pool.close()
    assert pool.restarts == 1


@pytest.mark.slow
def test_python_error_in_an_actor_stops_the_pool_at_once(ray_local, tmp_path):
    from tammi_rl.distributed.ray_backend import RayPool

    cfg = smoke(tmp_path, "distributed.num_actors=1", "selfplay.max_restarts=3")
    pool = RayPool(cfg, seed=0, log=lambda text: None)
    try:
        pool.publish({"not_a_layer": torch.zeros(1)}, version=0)  # load_state_dict fails in the actor
        with pytest.raises(WorkerDiedError, match=r"(?s)self-play actor 0 failed:.*not_a_layer"):
            poll_until(pool, lambda: False, [], "the error")
    finally:
        pool.close()
    assert pool.restarts == 0


@pytest.mark.slow
def test_lost_node_its_actor_comes_back_on_the_other(ray_switch, tmp_path, russian):
    """Two simulated nodes (1 CPU each), one actor of 0.5 CPU on each; the worker node dies."""
    from tammi_rl.distributed.ray_backend import RayPool

    cluster, worker_node = ray_switch.two_nodes()
    head = cluster.head_node.node_id
    cfg = smoke(tmp_path, "distributed.cpus_per_actor=0.5", "selfplay.max_restarts=1")
    logs: list[str] = []
    pool = RayPool(cfg, seed=0, log=logs.append)
    deliveries: list[Delivery] = []
    try:
        pool.publish(weights(russian, cfg), version=0)
        poll_until(
            pool, lambda: all(pool.nodes) and {d.worker for d in deliveries} == {0, 1}, deliveries, "both actors"
        )
        assert sorted(pool.nodes) == sorted([head, worker_node.node_id])  # spread over the two nodes
        lost = pool.nodes.index(worker_node.node_id)
        cluster.remove_node(worker_node)
        before = len(deliveries)
        poll_until(
            pool,
            lambda: any(d.worker == lost and d.generation == 1 for d in deliveries[before:]),
            deliveries,
            "the lost actor's replacement",
        )
        assert pool.nodes == [head, head]
        # The actor on the head node went on delivering all along.
        assert any(d.worker == 1 - lost for d in deliveries[before:])
    finally:
        pool.close()
    assert pool.restarts == 1
    assert any(f"self-play actor {lost} on node {worker_node.node_id[:12]}" in line for line in logs)
    check_counted_once(deliveries)
