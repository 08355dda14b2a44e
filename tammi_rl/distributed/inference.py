"""An inference server: one process owns the network on the device and evaluates the
leaves of every self-play worker, batched across them (``selfplay.inference: server``).

    server = InferenceServer(ctx, cfg, board.spec, clients=14)     # the pool starts it
    client = InferenceClient(server.client_spec(3))                # in worker 3
    logits, values = client.evaluate(obs)                          # an `Evaluator`
    server.stats()                                                 # mean batch, forward seconds, ...
    server.close()

Why: on a GPU a worker's own batch (``selfplay.parallel_games`` leaves) is far too small
to fill the device, and 14 processes each holding a CUDA context would waste memory and
time-slice the GPU. One server gathers the requests of all workers into one forward.

Transport, per worker: a shared-memory slot (observations in, logits and values out,
``parallel_games`` rows each) and one duplex `Pipe` that carries only small signals:
``("eval", token, rows)`` from the worker, ``("done", token, weights_version)`` back. The
server `wait`s on every worker's pipe, takes each request that is ready, waits up to
``GATHER_S`` for the others (it stops waiting once every worker has asked), copies the rows
into one batch padded to the next size of a short ladder (powers of two up to workers x
parallel_games, so cuDNN and CUDA graphs see few shapes), runs the network under
`torch.inference_mode` with autocast (bf16 where the GPU supports it, else fp16; none on
the CPU), copies each worker's rows back and answers. On CUDA the forward of every ladder
size is captured once as a CUDA graph (checked against eager mode; eager is kept if they
disagree or capture fails). Between batches the server takes newer weights from the
`WeightBoard`, in place, so captured graphs stay valid.

Faults: a worker's pipe stays open in the pool, so a replacement worker reuses its slot
and pipe; replies carry the request's token so a replacement drops an answer meant for
its predecessor. If the server dies the workers' pipes end: `InferenceClient.evaluate`
raises `InferenceServerError` and the pool stops the run naming the server. The server
exits on ``close``, when its control pipe ends and (Linux) when the trainer dies.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import sys
import time
import traceback
from dataclasses import dataclass
from multiprocessing import shared_memory
from multiprocessing.connection import Connection, wait
from typing import Any

import numpy as np
import torch

from tammi_rl.config import Config
from tammi_rl.config.cores import worker_threads
from tammi_rl.distributed.children import STOP_GRACE_S, describe_exit, die_with_parent
from tammi_rl.distributed.weights import BoardSpec, WeightBoard
from tammi_rl.env.observation import plane_count
from tammi_rl.nn.model import build_model, input_planes, resolve_device, wdl_to_value
from tammi_rl.rules.actions import ActionCodec
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.errors import TammiError

GATHER_S = 0.001
"""How long the server waits, after the first request of a batch, for the other workers'."""

IDLE_POLL_S = 0.05
"""How often an idle server looks for newer weights and for a stop."""

CLIENT_TIMEOUT_S = 300.0
"""How long a worker waits for one answer before it gives up (startup included: CUDA, graphs)."""

_STATS = ("batches", "rows", "padded_rows", "forward_seconds", "gather_seconds", "weights_version", "ready", "graphs")
_HEADER_WORDS = 16
"""float64 words of statistics at the start of the shared block (the server writes, anyone reads)."""


class InferenceServerError(TammiError):
    """The inference server died, failed, or stopped answering."""


def inference_mode(cfg: Config) -> str:
    """``selfplay.inference`` resolved: ``auto`` is ``server`` when ``device`` resolves to CUDA, else ``local``."""
    setting = cfg.selfplay.inference
    if setting == "auto":
        return "server" if resolve_device(cfg.device).type == "cuda" else "local"
    return setting


def inference_dtype(device: torch.device) -> torch.dtype | None:
    """The autocast dtype for inference on ``device``: bf16 on CUDA where supported, else fp16; None on the CPU."""
    if device.type != "cuda":
        return None
    return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


def batch_ladder(largest: int, smallest: int = 8) -> list[int]:
    """Padded batch sizes: powers of two from ``smallest`` below ``largest``, then ``largest``."""
    sizes, size = [], max(1, smallest)
    while size < largest:
        sizes.append(size)
        size *= 2
    return [*sizes, largest]


# --- the forward pass ----------------------------------------------------------------------
class BatchForward:
    """The network as a batch evaluator on its device at a few fixed batch sizes.

    Write ``n`` observation rows into ``inputs[:n]`` and call ``run(n)``: the batch is padded
    to the next of ``sizes`` (``pad``; otherwise it runs at ``n``), and the returned logits
    ``[n, A]`` and values ``[n]`` (float32, side to move's view) are views that the next call
    overwrites. ``amp`` is the autocast dtype (None: fp32); ``graphs`` captures one CUDA graph
    per size (CUDA only).
    """

    def __init__(
        self,
        model: Any,
        device: torch.device,
        sizes: list[int],
        *,
        amp: torch.dtype | None = None,
        graphs: bool = False,
        pad: bool = True,
    ) -> None:
        if device.type == "cuda" and device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
        self.model = model.to(device).eval()
        self.device = device
        self.sizes = sorted(set(sizes))
        self.amp = amp if device.type == "cuda" else None
        self.pad = pad
        self.cuda = device.type == "cuda"
        in_planes = input_planes(model)
        obs_shape = (in_planes, int(model.board_size), int(model.board_size))
        most = self.sizes[-1]
        self._host_in = torch.zeros((most, *obs_shape), dtype=torch.float32, pin_memory=self.cuda)
        self.inputs: np.ndarray = self._host_in.numpy()
        if self.cuda:
            self._host_logits = torch.zeros((most, int(model.n_actions)), dtype=torch.float32, pin_memory=True)
            self._host_values = torch.zeros((most,), dtype=torch.float32, pin_memory=True)
        self._graphs: dict[int, tuple[Any, torch.Tensor, torch.Tensor, torch.Tensor]] = {}
        self.graph_note = ""
        if graphs and self.cuda:
            try:
                self._capture()
            except Exception as exc:  # an op that cannot be captured: eager mode still works
                self._graphs.clear()
                self.graph_note = f"CUDA graph capture failed ({type(exc).__name__}: {exc}); running eagerly"

    @property
    def graphs(self) -> bool:
        return bool(self._graphs)

    def size_for(self, n: int) -> int:
        if n > self.sizes[-1]:
            raise ValueError(f"{n} rows but the largest batch is {self.sizes[-1]}")
        if not self.pad:
            return n
        return next(s for s in self.sizes if s >= n)

    def _forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        ctx = (
            torch.autocast("cuda", dtype=self.amp, cache_enabled=False)
            if self.amp is not None
            else contextlib.nullcontext()
        )
        with ctx:
            logits, wdl = self.model(x)
        return logits.float(), wdl_to_value(wdl.float())

    def _capture(self) -> None:
        pool = torch.cuda.graph_pool_handle()
        with torch.inference_mode():
            for size in reversed(self.sizes):  # the largest first: the smaller ones reuse its memory
                static = torch.zeros((size, *self._host_in.shape[1:]), device=self.device)
                side = torch.cuda.Stream(self.device)
                side.wait_stream(torch.cuda.current_stream(self.device))
                with torch.cuda.stream(side):
                    for _ in range(3):  # warm-up: cuDNN picks its kernels outside the capture
                        self._forward(static)
                torch.cuda.current_stream(self.device).wait_stream(side)
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph, pool=pool):
                    logits, values = self._forward(static)
                self._graphs[size] = (graph, static, logits, values)
            # The graphs must give eager mode's answers (same kernels; a loose bound for bf16).
            rng = np.random.default_rng(0)
            for size, (graph, static, logits, values) in self._graphs.items():
                x = torch.from_numpy((rng.random((size, *static.shape[1:])) < 0.3).astype(np.float32))
                static.copy_(x.to(self.device))
                graph.replay()
                ref_logits, ref_values = self._forward(static)
                diff = max(float((logits - ref_logits).abs().max()), float((values - ref_values).abs().max()))
                if not diff <= 1e-2:
                    self._graphs.clear()
                    self.graph_note = f"CUDA graph at batch {size} differs from eager mode by {diff:.3g}; eager"
                    return
        torch.cuda.synchronize(self.device)

    def run(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Evaluate ``inputs[:n]``; returns views ``(logits [n, A], values [n])``."""
        size = self.size_for(n)
        with torch.inference_mode():
            if not self.cuda:
                logits, values = self._forward(self._host_in[:size])
                return logits.numpy()[:n], values.numpy()[:n]
            captured = self._graphs.get(size)
            if captured is not None:
                graph, static, logits, values = captured
                static.copy_(self._host_in[:size], non_blocking=True)
                graph.replay()
            else:
                x = self._host_in[:size].to(self.device, non_blocking=True)
                logits, values = self._forward(x)
            self._host_logits[:n].copy_(logits[:n], non_blocking=True)
            self._host_values[:n].copy_(values[:n], non_blocking=True)
            torch.cuda.current_stream(self.device).synchronize()
        return self._host_logits.numpy()[:n], self._host_values.numpy()[:n]

    def load_weights(self, state_dict: dict[str, torch.Tensor]) -> None:
        """Copy ``state_dict`` into the network in place (captured graphs stay valid)."""
        self.model.load_state_dict(state_dict)
        self.model.eval()


# --- shared-memory slots -------------------------------------------------------------------
@dataclass(frozen=True)
class SlotLayout:
    """One shared block: statistics, then per client observations, logits and values (picklable)."""

    shm_name: str
    clients: int
    rows: int
    obs_shape: tuple[int, int, int]
    n_actions: int

    @property
    def slot_floats(self) -> int:
        c, h, w = self.obs_shape
        return self.rows * (c * h * w + self.n_actions + 1)

    @property
    def nbytes(self) -> int:
        return _HEADER_WORDS * 8 + self.clients * self.slot_floats * 4

    def views(self, buf: Any, index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(obs [rows, C, H, W], logits [rows, A], values [rows])`` of client ``index`` over ``buf``."""
        c, h, w = self.obs_shape
        offset = _HEADER_WORDS * 8 + index * self.slot_floats * 4
        obs = np.ndarray((self.rows, c, h, w), np.float32, buffer=buf, offset=offset)
        offset += obs.nbytes
        logits = np.ndarray((self.rows, self.n_actions), np.float32, buffer=buf, offset=offset)
        offset += logits.nbytes
        values = np.ndarray((self.rows,), np.float32, buffer=buf, offset=offset)
        return obs, logits, values

    def header(self, buf: Any) -> np.ndarray:
        return np.ndarray((_HEADER_WORDS,), np.float64, buffer=buf)


def _read_stats(header: np.ndarray) -> dict[str, float]:
    raw = {name: float(header[i]) for i, name in enumerate(_STATS)}
    batches, rows = raw["batches"], raw["rows"]
    raw["mean_batch"] = rows / batches if batches else 0.0
    raw["mean_padded_batch"] = raw["padded_rows"] / batches if batches else 0.0
    raw["forward_ms"] = 1e3 * raw["forward_seconds"] / batches if batches else 0.0
    return raw


@dataclass(frozen=True)
class ClientSpec:
    """What one worker needs to reach the server: the layout, its slot and its pipe end."""

    layout: SlotLayout
    index: int
    conn: Connection


class InferenceClient:
    """A worker's side: `evaluate` is an `Evaluator` answered by the server."""

    def __init__(self, spec: ClientSpec, timeout: float = CLIENT_TIMEOUT_S) -> None:
        self.spec = spec
        self.timeout = timeout
        self._shm = shared_memory.SharedMemory(name=spec.layout.shm_name)  # the creator frees it
        self._obs, self._logits, self._values = spec.layout.views(self._shm.buf, spec.index)
        self._header = spec.layout.header(self._shm.buf)
        self._conn = spec.conn
        self._nonce = (os.getpid() << 20) ^ int(time.monotonic_ns() & 0xFFFFF)
        self._count = 0
        self.version = -1
        """The weights version the server used for the latest answer."""

    def evaluate(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """obs float32 [L, C, H, W] -> (logits float32 [L, A], values float32 [L], side to move's view)."""
        n, rows = len(obs), self.spec.layout.rows
        if n <= rows:
            return self._ask(obs)
        parts = [self._ask(obs[i : i + rows]) for i in range(0, n, rows)]
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def _ask(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = len(obs)
        if n == 0:
            return np.zeros((0, self.spec.layout.n_actions), np.float32), np.zeros(0, np.float32)
        self._obs[:n] = obs
        self._count += 1
        token = (self._nonce, self._count)
        try:
            self._conn.send(("eval", token, n))
            deadline = time.monotonic() + self.timeout
            while True:
                if not self._conn.poll(max(0.0, deadline - time.monotonic())):
                    raise InferenceServerError(f"the inference server gave no answer in {self.timeout:.0f} s")
                message = self._conn.recv()
                if message[0] == "done" and message[1] == token:  # anything else was meant for a predecessor
                    self.version = int(message[2])
                    break
        except (EOFError, OSError) as exc:
            raise InferenceServerError(f"the inference server is gone ({type(exc).__name__})") from None
        return self._logits[:n].copy(), self._values[:n].copy()

    def stats(self) -> dict[str, float]:
        return _read_stats(self._header)

    def close(self) -> None:
        del self._obs, self._logits, self._values, self._header
        self._shm.close()


# --- the server process --------------------------------------------------------------------
@dataclass(frozen=True)
class ServerOptions:
    gather_s: float = GATHER_S
    pad: bool | None = None
    """Pad batches to the ladder (None: on CUDA only; on the CPU padding is pure extra work)."""
    graphs: bool | None = None
    """Capture CUDA graphs (None: on CUDA)."""
    threads: int = 0
    """torch intra-op threads of the server (0: torch's default)."""


def server_main(
    layout: SlotLayout,
    cfg: Config,
    board_spec: BoardSpec,
    conns: list[Connection],
    control: Connection,
    options: ServerOptions,
) -> None:
    """The body of the server process (see the module docstring)."""
    die_with_parent()
    shm: shared_memory.SharedMemory | None = None
    board: WeightBoard | None = None
    try:
        if options.threads > 0:
            torch.set_num_threads(options.threads)
        device = resolve_device(cfg.device)
        if device.type == "cuda":
            if device.index is not None:
                torch.cuda.set_device(device)
            torch.backends.cudnn.benchmark = True  # a few fixed shapes: worth the search
        shm = shared_memory.SharedMemory(name=layout.shm_name)
        board = WeightBoard.attach(board_spec)
        _serve(layout, cfg, device, board, shm, conns, control, options)
    except BaseException:
        with contextlib.suppress(Exception):
            control.send(("error", traceback.format_exc()))
        raise SystemExit(1) from None
    finally:
        if board is not None:
            board.close()
        if shm is not None:
            shm.close()


def _serve(
    layout: SlotLayout,
    cfg: Config,
    device: torch.device,
    board: WeightBoard,
    shm: shared_memory.SharedMemory,
    conns: list[Connection],
    control: Connection,
    options: ServerOptions,
) -> None:
    header = layout.header(shm.buf)
    slots = [layout.views(shm.buf, i) for i in range(layout.clients)]
    model = build_model(Rules.for_variant(cfg.variant), cfg.network)
    version = -1
    while version < 0:  # the pool publishes before it starts the server; be patient anyway
        newer = board.read_newer(version)
        if newer is None:
            if control.poll(0.01):
                return
            continue
        version, weights = newer
        model.load_state_dict(weights)
    cuda = device.type == "cuda"
    forward = BatchForward(
        model,
        device,
        batch_ladder(layout.clients * layout.rows),
        amp=inference_dtype(device),
        graphs=cuda if options.graphs is None else options.graphs,
        pad=cuda if options.pad is None else options.pad,
    )
    if forward.graph_note:
        print(f"inference server: {forward.graph_note}", file=sys.stderr, flush=True)
    header[_STATS.index("weights_version")] = version
    header[_STATS.index("graphs")] = float(forward.graphs)
    header[_STATS.index("ready")] = 1.0
    index = {conn: i for i, conn in enumerate(conns)}
    live = list(conns)
    pending: dict[int, tuple[Any, int]] = {}

    def take(ready: list[Any]) -> bool:
        """Read the requests on ``ready``; False when the control pipe says stop."""
        for conn in ready:
            if conn is control:
                return False
            try:
                while conn.poll():
                    message = conn.recv()
                    if message[0] == "eval":  # only the newest request of a slot counts (see Faults)
                        pending[index[conn]] = (message[1], int(message[2]))
            except (EOFError, OSError):
                live.remove(conn)  # the pool closed this slot's pipe: it is shutting down
                pending.pop(index[conn], None)
        return True

    while True:
        if not take(wait([*live, control], 0.0 if pending else IDLE_POLL_S)):
            return
        if pending and len(pending) < len(live) and options.gather_s > 0:
            start = time.perf_counter()
            deadline = start + options.gather_s
            while len(pending) < len(live):
                left = deadline - time.perf_counter()
                waiting = [c for c in live if index[c] not in pending]
                ready = wait([*waiting, control], left) if left > 0 else []
                if not ready:
                    break
                if not take(ready):
                    return
            header[_STATS.index("gather_seconds")] += time.perf_counter() - start
        newer = board.read_newer(version)  # between batches
        if newer is not None:
            version, weights = newer
            forward.load_weights(weights)
            header[_STATS.index("weights_version")] = version
        if not pending:
            continue
        order = sorted(pending)
        total = 0
        for i in order:
            n = pending[i][1]
            forward.inputs[total : total + n] = slots[i][0][:n]
            total += n
        start = time.perf_counter()
        logits, values = forward.run(total)
        header[_STATS.index("forward_seconds")] += time.perf_counter() - start
        header[_STATS.index("batches")] += 1
        header[_STATS.index("rows")] += total
        header[_STATS.index("padded_rows")] += forward.size_for(total)
        row = 0
        for i in order:
            token, n = pending[i]
            slots[i][1][:n] = logits[row : row + n]
            slots[i][2][:n] = values[row : row + n]
            row += n
            with contextlib.suppress(OSError):
                conns[i].send(("done", token, version))
        pending.clear()


class InferenceServer:
    """The pool's handle on the server process: it owns the shared slots and the pipes."""

    def __init__(
        self,
        ctx: Any,
        cfg: Config,
        board_spec: BoardSpec,
        clients: int,
        options: ServerOptions | None = None,
    ) -> None:
        ctx = ctx or mp.get_context("spawn")
        options = options or ServerOptions(threads=worker_threads(cfg))
        rules = Rules.for_variant(cfg.variant)
        size = rules.geometry.size
        n_actions = ActionCodec.for_rules(rules).n_actions
        planes = plane_count(cfg.network.attack_planes)
        probe = SlotLayout("", clients, cfg.selfplay.parallel_games, (planes, size, size), n_actions)
        self._shm = shared_memory.SharedMemory(create=True, size=probe.nbytes)
        self.layout = SlotLayout(self._shm.name, clients, probe.rows, probe.obs_shape, n_actions)
        self._header = self.layout.header(self._shm.buf)
        self._header[:] = 0.0
        self._header[_STATS.index("weights_version")] = -1.0
        pipes = [ctx.Pipe(duplex=True) for _ in range(clients)]
        self._client_conns = [worker_end for _, worker_end in pipes]
        self._control, control_child = ctx.Pipe(duplex=True)
        server_ends = [server_end for server_end, _ in pipes]
        self.process = ctx.Process(
            target=server_main,
            args=(self.layout, cfg, board_spec, server_ends, control_child, options),
            name="tammi-inference",
            daemon=True,
        )
        self.process.start()
        for conn in (*server_ends, control_child):
            conn.close()  # the server holds them now: its death ends the workers' pipes
        self.pid = int(self.process.pid or 0)
        self._error = ""
        self._closed = False

    def client_spec(self, index: int) -> ClientSpec:
        """What worker ``index`` passes to `InferenceClient` (the same for its replacements)."""
        return ClientSpec(self.layout, index, self._client_conns[index])

    @property
    def sentinel(self) -> int:
        return int(self.process.sentinel)

    def alive(self) -> bool:
        return bool(self.process.is_alive())

    def stats(self) -> dict[str, float]:
        """Batches, rows, mean batch, forward seconds and ms, gather seconds, weights version so far."""
        if self._closed:
            return {}
        return _read_stats(self._header)

    def failure(self, grace: float = 0.0) -> str | None:
        """None while the server runs (waiting up to ``grace`` seconds for it to end); else how it ended."""
        self.process.join(timeout=grace)
        if self.process.is_alive():
            return None
        with contextlib.suppress(EOFError, OSError):
            while self._control.poll():
                message = self._control.recv()
                if message[0] == "error":
                    self._error = message[1]
        how = f"the inference server (pid {self.pid}) {describe_exit(self.process.exitcode)}"
        return f"{how}:\n{self._error}" if self._error else how

    def close(self) -> None:
        """Stop the server (killing it after ``STOP_GRACE_S``) and free the slots."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(OSError):
            self._control.send("stop")
        self.process.join(timeout=STOP_GRACE_S)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=STOP_GRACE_S)
        self._control.close()
        for conn in self._client_conns:
            conn.close()
        del self._header
        self._shm.close()
        self._shm.unlink()
