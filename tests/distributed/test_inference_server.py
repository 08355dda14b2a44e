"""The inference server (selfplay.inference: server), on the CPU.

Its answers equal a local TorchRuntime's for two clients asking at once (batched together,
padded to the ladder); weights published to the board after start are picked up; a
ProcessPool in server mode delivers games and replaces a killed worker; a killed server stops the pool with an error
naming it, not a hang; close leaves no process behind.
"""

import multiprocessing as mp
import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from support.processes_util import alive, wait_dead

from tammi_rl.config import load_config
from tammi_rl.distributed.inference import (
    BatchForward,
    InferenceClient,
    InferenceServer,
    ServerOptions,
    batch_ladder,
    inference_mode,
)
from tammi_rl.distributed.pool import WorkerDiedError
from tammi_rl.distributed.processes import ProcessPool
from tammi_rl.distributed.weights import WeightBoard
from tammi_rl.nn.model import build_model
from tammi_rl.nn.runtime import TorchRuntime

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "configs" / "smoke.yaml"


def planes(rng, n):
    return (rng.random((n, 11, 8, 8)) < 0.3).astype(np.float32)


def net(russian, cfg, seed):
    torch.manual_seed(seed)
    return build_model(russian, cfg.network).eval()


def test_mode_ladder_and_padding(russian):
    assert inference_mode(load_config(SMOKE)) == "local"  # auto on the CPU
    assert inference_mode(load_config(SMOKE, ["selfplay.inference=server"])) == "server"
    assert batch_ladder(896) == [8, 16, 32, 64, 128, 256, 512, 896] and batch_ladder(4) == [4]
    model = net(russian, load_config(SMOKE), 0)
    fwd = BatchForward(model, torch.device("cpu"), [8, 16], pad=True)
    assert fwd.size_for(3) == 8 and fwd.size_for(9) == 16
    with pytest.raises(ValueError, match="largest"):
        fwd.size_for(17)


@pytest.mark.slow
def test_server_matches_local_runtime_and_takes_new_weights(russian):
    cfg = load_config(SMOKE, ["selfplay.parallel_games=16", "selfplay.inference=server"])
    a, b = net(russian, cfg, 0), net(russian, cfg, 1)
    board = WeightBoard.create(a.state_dict())
    board.publish(a.state_dict(), 0)
    # A long gather window: the two requests must meet in one batch (it ends once both asked).
    server = InferenceServer(
        mp.get_context("spawn"), cfg, board.spec, 2, ServerOptions(gather_s=2.0, pad=True, threads=1)
    )
    clients = [InferenceClient(server.client_spec(i), timeout=60) for i in range(2)]
    try:
        rng = np.random.default_rng(0)
        obs = [planes(rng, 5), planes(rng, 16)]
        out = {}

        def ask(i):
            out[i] = clients[i].evaluate(obs[i])

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        ref = TorchRuntime(a, torch.device("cpu"))
        for i in range(2):
            logits, values = out[i]
            ref_logits, ref_values = ref.evaluate(obs[i])
            assert logits.shape == ref_logits.shape and values.shape == ref_values.shape
            np.testing.assert_allclose(logits, ref_logits, rtol=0, atol=1e-5)
            np.testing.assert_allclose(values, ref_values, rtol=0, atol=1e-5)
        stats = server.stats()
        assert stats["batches"] == 1 and stats["rows"] == 21 and stats["padded_rows"] == 32  # ladder 8, 16, 32
        assert clients[0].version == clients[1].version == 0

        # More rows than a slot holds are sent in parts.
        big = planes(rng, 20)
        logits, values = clients[0].evaluate(big)
        np.testing.assert_allclose(logits, ref.evaluate(big)[0], rtol=0, atol=1e-5)

        # New weights on the board: the server takes them between batches.
        board.publish(b.state_dict(), 1)
        ref_b = TorchRuntime(b, torch.device("cpu"))
        deadline = time.monotonic() + 30
        while clients[1].version < 1 and time.monotonic() < deadline:
            logits, values = clients[1].evaluate(obs[1])
        assert clients[1].version == 1 and server.stats()["weights_version"] == 1
        np.testing.assert_allclose(logits, ref_b.evaluate(obs[1])[0], rtol=0, atol=1e-5)
        np.testing.assert_allclose(values, ref_b.evaluate(obs[1])[1], rtol=0, atol=1e-5)
        assert np.abs(logits - ref.evaluate(obs[1])[0]).max() > 1e-3  # they did change
    finally:
        for c in clients:
            c.close()
        pid = server.pid
        server.close()
        board.close()
    assert not alive(pid)


def smoke_pool(russian, tmp_path, *overrides):
    base = [f"runs_dir={tmp_path}", "selfplay.workers=2", "selfplay.inference=server", "device=cpu"]
    cfg = load_config(SMOKE, [*base, *overrides])
    pool = ProcessPool(cfg, 2, seed=0, log=lambda text: None)
    assert pool.inference == "server"
    pool.publish(net(russian, cfg, 0).state_dict(), 0)
    return pool


def deliveries(pool, count, seconds=90.0):
    got = []
    deadline = time.monotonic() + seconds
    while len(got) < count and time.monotonic() < deadline:
        got += pool.poll(0.5)
    return got


@pytest.mark.slow
def test_pool_with_server_delivers_games_and_closes_cleanly(russian, tmp_path):
    pool = smoke_pool(russian, tmp_path)
    pids: list[int] = []
    try:
        got = deliveries(pool, 3)
        assert len(got) >= 3 and {d.worker for d in got} <= {0, 1}
        assert all(len(d.result.samples) > 0 and d.result.stats["games"] >= 1 for d in got)
        assert all(d.weights_version == 0 for d in got)
        stats = pool.inference_stats()
        assert stats["batches"] > 0 and stats["mean_batch"] >= 1 and stats["forward_seconds"] > 0
        # A killed worker is replaced; the replacement reuses its slot and pipe to the server.
        victim = got[0].worker
        os.kill(pool.worker_pid(victim), signal.SIGKILL)
        deadline = time.monotonic() + 60
        while not any(d.generation == 1 for d in got) and time.monotonic() < deadline:
            got += pool.poll(0.5)
        assert pool.restarts == 1 and any(d.generation == 1 and len(d.result.samples) for d in got)
        pids = [*pool.pids, pool._server.pid]
        assert len(pids) == 3 and all(alive(p) for p in pids)
    finally:
        pool.close()
    assert not wait_dead(pids) and not mp.active_children()


@pytest.mark.slow
def test_pool_with_server_plays_a_network_with_attack_planes(russian, tmp_path):
    """The server's slots and the workers' trees take their plane count from the network."""
    pool = smoke_pool(russian, tmp_path, "network.attack_planes=true")
    try:
        got = deliveries(pool, 1)
        assert got and all(d.result.samples.obs.shape[1] == 13 for d in got)
        assert any(d.result.samples.obs[:, 11:].any() for d in got)  # something was under attack
    finally:
        pool.close()


@pytest.mark.slow
def test_killed_server_stops_the_pool_with_an_error_naming_it(russian, tmp_path):
    pool = smoke_pool(russian, tmp_path)
    pids: list[int] = []
    try:
        assert deliveries(pool, 1)
        pids = [*pool.pids, pool._server.pid]
        os.kill(pool._server.pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        with pytest.raises(WorkerDiedError, match=r"inference server .*killed by SIGKILL"):
            while time.monotonic() < deadline:
                pool.poll(0.5)
        assert time.monotonic() < deadline
    finally:
        pool.close()
    assert not wait_dead(pids) and not mp.active_children()
