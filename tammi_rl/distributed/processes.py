"""Embedded parallel self-play: worker processes on this machine, nothing to start by hand.

    pool = ProcessPool(cfg, workers=2, seed=cfg.seed)   # spawns 2 processes
    pool.publish(weights, version=0)
    deliveries = pool.poll(timeout=0.5)

Each worker is a spawned process running one `SelfPlayWorker` (its own network copy,
compiled search and RNG, torch and ONNX Runtime on one thread) that plays
``selfplay.parallel_games`` games at a time and sends every few finished games down its
own pipe. Weights come from a shared-memory `WeightBoard`; a worker takes the newest
version after each delivery (every ``GAMES_PER_MESSAGE`` finished games, a few seconds),
and with it the simulations a search, one shared integer the trainer moves under
progressive simulations (`ProcessPool.set_simulations`).

Transport, chosen by measurement (Russian shipped config, 2 workers): a worker sends
about 0.4 MB/s of samples, pickled through its own `multiprocessing.Pipe` in about
1 ms per message; the trainer spends well under 1% of its time receiving. One pipe per
worker rather than one shared queue: a worker killed while writing cannot corrupt
another worker's messages or die holding a shared lock (which deadlocks an
`mp.Queue`); a half-written message reads as the end of the pipe and is dropped with its
worker. The trainer's back-pressure is simply not reading: a worker whose pipe is full
waits in `send`.

With ``selfplay.inference: server`` (``auto`` on CUDA) the workers keep no network of their
own: one `tammi_rl.distributed.inference` server process, started with the first weights,
evaluates every worker's leaves in shared batches on the device and reads the weight board
itself. If it dies, `poll` stops the run with a `WorkerDiedError` naming it.

Faults: a worker that dies (killed, crashed, out of memory) is replaced with a fresh
seed; after ``selfplay.max_restarts`` deaths of one slot `poll` raises
`WorkerDiedError` naming the slot, its pid and how it died. A worker that stays alive
but delivers nothing for `STALL_S` seconds of the trainer's waiting counts as dead. A
Python error inside a worker stops the run at once with the worker's traceback (it
would recur). Workers
ignore Ctrl-C (the trainer stops them) and, on Linux, are killed by the kernel when the
trainer dies, so no process outlives the run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing as mp
import sys
import time
import traceback
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

import torch

from tammi_rl.config import Config
from tammi_rl.distributed.children import STOP_GRACE_S, describe_exit, die_with_parent
from tammi_rl.distributed.inference import ClientSpec, InferenceClient, InferenceServer, inference_mode
from tammi_rl.distributed.pool import Delivery, WorkerDiedError, portable_games, worker_seed
from tammi_rl.distributed.weights import BoardSpec, WeightBoard
from tammi_rl.rules.engine import Rules
from tammi_rl.selfplay.worker import SelfPlayResult, SelfPlayWorker

STALL_S = 600.0
"""A live worker that delivers nothing for this long while the trainer waits is replaced."""

GAMES_PER_MESSAGE = 2
"""A worker sends once at least this many games have finished (a few hundred samples)."""


def worker_main(
    seed: int,
    cfg: Config,
    board_spec: BoardSpec,
    conn: Connection,
    games_per_message: int,
    client_spec: ClientSpec | None = None,
    simulations: Any = None,
) -> None:
    """The body of one worker process (see the module docstring); with ``client_spec`` its
    leaves go to the inference server, which also holds the weights; ``simulations``: a shared
    integer (`multiprocessing.RawValue`) holding the simulations a full search (None: the config's)."""
    die_with_parent()
    board: WeightBoard | None = None
    client: InferenceClient | None = None
    try:
        torch.set_num_threads(1)
        if client_spec is not None:  # its own network is never run: skip the ONNX export
            cfg = dataclasses.replace(cfg, runtime="torch")
        worker = SelfPlayWorker(Rules.for_variant(cfg.variant), cfg, torch.device("cpu"), seed)
        if client_spec is not None:
            client = InferenceClient(client_spec)
            worker.evaluate = client.evaluate
        else:
            board = WeightBoard.attach(board_spec)
        version = -1
        while board is not None and version < 0:  # the trainer publishes before it starts the pool; be patient anyway
            newer = board.read_newer(version)
            if newer is None:
                time.sleep(0.01)
                continue
            version, weights = newer
            worker.set_weights(weights)
        sequence, send_seconds = 0, 0.0
        while not conn.poll():  # any message from the trainer means stop
            newer = board.read_newer(version) if board is not None else None
            if newer is not None:
                version, weights = newer
                worker.set_weights(weights)
            if simulations is not None and simulations.value != worker.simulations:
                worker.set_simulations(simulations.value)
            res = worker.play(games_per_message)
            if client is not None:
                version = client.version  # the server's weights, as of this batch's last answer
            stats = dict(res.stats, send_seconds=send_seconds)
            start = time.perf_counter()
            conn.send(("result", sequence, version, SelfPlayResult(res.samples, portable_games(res.games), stats)))
            send_seconds = time.perf_counter() - start
            sequence += 1
    except (BrokenPipeError, EOFError, ConnectionResetError):
        pass  # the trainer is gone or closed the pipe: stop quietly
    except BaseException:
        with contextlib.suppress(Exception):
            conn.send(("error", traceback.format_exc()))
        raise SystemExit(1) from None
    finally:
        if board is not None:
            board.close()
        if client is not None:
            client.close()


@dataclass
class _Slot:
    index: int
    process: Any = None
    conn: Connection | None = None
    generation: int = 0
    deaths: int = 0
    pids: list[int] = field(default_factory=list)
    silent: float = 0.0
    """Seconds of polling since this worker last delivered (see `ProcessPool._watch_stalls`)."""


class ProcessPool:
    """Self-play worker processes on this machine (a `tammi_rl.distributed.pool.WorkerPool`)."""

    def __init__(
        self,
        cfg: Config,
        workers: int,
        seed: int,
        *,
        epoch: int = 0,
        games_per_message: int = GAMES_PER_MESSAGE,
        log: Any = None,
        stall_s: float = STALL_S,
    ) -> None:
        if workers < 1:
            raise ValueError(f"a process pool needs at least one worker, got {workers}")
        self.cfg = cfg
        self.size = workers
        self.seed = seed
        self.epoch = epoch
        self.games_per_message = games_per_message
        self.max_restarts = cfg.selfplay.max_restarts
        self.stall_s = stall_s
        self.restarts = 0
        self.log = log or (lambda text: print(text, file=sys.stderr, flush=True))
        self._ctx = mp.get_context("spawn")  # fork would copy torch's and ONNX Runtime's threads
        self._board: WeightBoard | None = None
        self.inference = inference_mode(cfg)
        """``local`` or ``server`` (``selfplay.inference`` resolved)."""
        self._server: InferenceServer | None = None
        self._slots = [_Slot(i) for i in range(workers)]
        self._closed = False
        self._simulations = self._ctx.RawValue("q", cfg.mcts.simulations)
        """The simulations of a full search, shared with every worker (`set_simulations`)."""

    # --- workers -------------------------------------------------------------------------
    def _start(self, slot: _Slot) -> None:
        assert self._board is not None
        parent, child = self._ctx.Pipe(duplex=True)
        seed = worker_seed(self.seed, slot.index, slot.generation, self.epoch)
        client = self._server.client_spec(slot.index) if self._server is not None else None
        process = self._ctx.Process(
            target=worker_main,
            args=(seed, self.cfg, self._board.spec, child, self.games_per_message, client, self._simulations),
            name=f"tammi-selfplay-{slot.index}",
            daemon=True,
        )
        process.start()
        child.close()
        slot.process, slot.conn = process, parent
        slot.pids.append(int(process.pid or 0))

    def worker_pid(self, slot: int) -> int | None:
        """The pid of the worker in ``slot`` now (None while it is being replaced)."""
        process = self._slots[slot].process
        return process.pid if process is not None else None

    @property
    def pids(self) -> list[int]:
        """The pids of the workers now running."""
        return [s.process.pid for s in self._slots if s.process is not None and s.process.is_alive()]

    def publish(self, weights: dict[str, torch.Tensor], version: int) -> None:
        if self._closed:
            raise RuntimeError("the pool is closed")
        if self._board is None:
            self._board = WeightBoard.create(weights)
            self._board.publish(weights, version)
            if self.inference == "server":
                self._server = InferenceServer(self._ctx, self.cfg, self._board.spec, self.size)
            for slot in self._slots:
                self._start(slot)
            return
        self._board.publish(weights, version)

    def set_simulations(self, simulations: int) -> None:
        if simulations < 1:
            raise ValueError(f"simulations must be at least 1, got {simulations}")
        self._simulations.value = int(simulations)

    def inference_stats(self) -> dict[str, float]:
        """The inference server's figures (mean batch, forward seconds, ...); empty without one."""
        return self._server.stats() if self._server is not None else {}

    def _check_server(self, grace: float = 0.0) -> None:
        """Stop the pool and raise if the inference server has ended (waiting up to ``grace`` s)."""
        if self._server is None:
            return
        how = self._server.failure(grace)
        if how is not None:
            self.close()
            raise WorkerDiedError(f"{how}; self-play cannot go on without it")

    def _replace(self, slot: _Slot, how: str) -> None:
        pid = slot.pids[-1] if slot.pids else 0
        slot.deaths += 1
        self._discard(slot)
        if slot.deaths > self.max_restarts:
            self.close()
            raise WorkerDiedError(
                f"self-play worker {slot.index} (pid {pid}) {how}; it died {slot.deaths} times, more than "
                f"selfplay.max_restarts={self.max_restarts} allows"
            )
        slot.generation += 1
        self.restarts += 1
        self.log(
            f"warning: self-play worker {slot.index} (pid {pid}) {how}; starting a new one "
            f"(restart {slot.deaths}/{self.max_restarts}); its unsent games are played again"
        )
        self._start(slot)

    def _discard(self, slot: _Slot) -> None:
        if slot.conn is not None:
            slot.conn.close()
        if slot.process is not None:
            if slot.process.is_alive():
                slot.process.kill()
            slot.process.join(timeout=STOP_GRACE_S)
        slot.process, slot.conn = None, None

    def _receive(self, slot: _Slot, out: list[Delivery]) -> bool:
        """Read every complete message waiting on ``slot``'s pipe; False when the pipe ended."""
        assert slot.conn is not None
        try:
            while slot.conn.poll():
                message = slot.conn.recv()
                if message[0] == "error":
                    self._check_server(grace=1.0)  # a worker fails when the server it talks to died
                    self.close()
                    raise WorkerDiedError(f"self-play worker {slot.index} failed:\n{message[1]}")
                _, sequence, version, result = message
                out.append(Delivery(slot.index, slot.generation, sequence, version, result))
        except (EOFError, OSError):
            return False
        return True

    def poll(self, timeout: float) -> list[Delivery]:
        if self._board is None:
            raise RuntimeError("publish weights before polling the pool (the workers start then)")
        started = time.monotonic()
        out: list[Delivery] = []
        conns: dict[Any, _Slot] = {s.conn: s for s in self._slots if s.conn is not None}
        sentinels = {s.process.sentinel: s for s in self._slots if s.process is not None}
        server = [self._server.sentinel] if self._server is not None else []
        ready = wait([*conns, *sentinels, *server], timeout)
        self._check_server()
        dead: list[_Slot] = []
        for item in ready:
            slot = conns.get(item) or sentinels.get(item)
            if slot is None or slot in dead:
                continue
            ended = not self._receive(slot, out)  # drains complete messages even from a dead worker
            if ended or not slot.process.is_alive():
                dead.append(slot)
        if dead:
            self._check_server(grace=1.0)  # workers end when the server did
        for slot in dead:
            slot.process.join(timeout=1.0)
            self._replace(slot, describe_exit(slot.process.exitcode))
        self._watch_stalls(out, time.monotonic() - started, dead)
        return out

    def _watch_stalls(self, out: list[Delivery], waited: float, dead: list[_Slot]) -> None:
        """Replace a worker that stays alive but sends nothing for `STALL_S` seconds of polling
        (time the trainer spends elsewhere, in evaluation say, does not count)."""
        delivered = {d.worker for d in out}
        for slot in self._slots:
            if slot.index in delivered or slot in dead:
                slot.silent = 0.0
                continue
            slot.silent += waited
            if slot.silent > self.stall_s and slot.process is not None:
                slot.silent = 0.0
                self._replace(slot, f"sent nothing for {self.stall_s:g} s of waiting (stuck?)")

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for slot in self._slots:
            if slot.conn is not None:
                with contextlib.suppress(OSError):
                    slot.conn.send("stop")  # seen between batches; a worker blocked in send gets a broken pipe
                slot.conn.close()
                slot.conn = None
        if self._server is not None:
            self._server.close()  # a worker waiting for an answer gets a broken pipe and ends
            self._server = None
        deadline = time.monotonic() + STOP_GRACE_S
        for slot in self._slots:
            if slot.process is not None:
                slot.process.join(timeout=max(0.0, deadline - time.monotonic()))
            self._discard(slot)
        if self._board is not None:
            self._board.close()
            self._board = None
