"""The MCTS agent as a player (`tammi_rl.players` protocol): search each hop, return the move.

    agent = MCTSPlayer(rules, model, simulations=64, device=torch.device("cpu"))
    move = agent.choose(game)

Player spec: ``mcts:checkpoint=PATH`` or ``mcts:model=VARIANT`` (a shipped model), then
``[,sims=N,time=SECONDS,batch=K,cache=SLOTS,algorithm=gumbel|puct,device=auto,``
``runtime=auto|torch|onnx|onnx-int8,threads=T,mirror=on|off,name=...]`` and the search constants
``c_puct=F`` (PUCT), ``c_visit=F``, ``c_scale=F``, ``max_actions=N`` (Gumbel),
``forced=on|off``, ``fpu=F``, ``repetition=on|off`` (a repeated position is a draw in the
tree), which replace the checkpoint's own settings; the network runs on `tammi_rl.nn.runtime`, one thread by
default (a player's ``auto`` is 8-bit ONNX Runtime on the CPU, `PLAYER_CPU_RUNTIME`, and
torch on a GPU). ``mirror=on`` averages each leaf's evaluation with its mirror image's, on a
board with a left-right symmetry (`tammi_rl.nn.symmetry`).

``sims`` counts simulations per searched hop (default 64); ``time`` searches each move until
its deadline instead (``sims``, when given too, caps each hop). ``batch`` leaves of the one
tree go to the network together, spread by virtual visits (`tammi_rl.mcts.tree`); ``cache``
keeps that many evaluations (positions seen again, in this search or a later one, cost no
network call). A turn of several hops (a capture chain) is searched hop by hop: on the clock,
a hop that leaves later choices gets half of the move's remaining time; forced hops are
played without search. Evaluation play is deterministic: no root noise, greedy choice.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from tammi_rl.config import SEARCH_ALGORITHMS, MCTSConfig
from tammi_rl.mcts.search import BatchedSearch, Evaluator, MCTSResult, RootState
from tammi_rl.nn.model import input_planes, resolve_device
from tammi_rl.nn.runtime import RUNTIMES, make_runtime, resolve_runtime
from tammi_rl.nn.saved import load_network
from tammi_rl.nn.symmetry import MirrorAveraged, mirror_for
from tammi_rl.players.analysis_common import continuing_moves
from tammi_rl.players.spec import (
    PlayerSpecError,
    float_option,
    int_option,
    nonnegative_option,
    positive_option,
    reject_unknown,
    switch_option,
)
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game
from tammi_rl.rules.position import Move
from tammi_rl.store.shipped import ShippedModelError, shipped_model

PLAYER_CPU_RUNTIME = "onnx-int8"
"""What ``runtime=auto`` runs a player's network with on the CPU: at play, with 16 leaves a
call and the cache, 8 bits made 4.1x the simulations per second of the one-leaf float32
player; in one 800-simulation search (no earlier moves in the cache) 8 bits made 2.8x and
float32 1.8x (`tammi_rl.benchmarks.bench_player`, docs/benchmarks.md)."""
LEAVES_PER_CALL = 16
"""Leaves of the one tree per network call: measured in `tammi_rl.benchmarks.bench_player`
(docs/benchmarks.md); 1 is the strictly sequential search."""
CACHE_SLOTS = 1 << 16
"""Evaluations a player keeps (about 25 MB): a game of 800-simulation searches fits."""
TIMED_SIMULATIONS = 400_000
"""Most simulations of one hop's search on the clock (its tree's memory, about 0.5 GB)."""
WARM_UP_SIMULATIONS = 40
"""Simulations of `MCTSPlayer.warm_up` per position: over its 10 positions, more network
positions than the 8-bit runtime calibrates on (256)."""
WARM_UP_POSITIONS = 10
TIMED_POOL = 4096
"""Simulations the tree storage of a timed player starts with; it grows on demand."""


def calibration_positions(rules: Rules, count: int = WARM_UP_POSITIONS, seed: int = 0) -> list[Game]:
    """``count`` positions across the phases of a game: the start, then every tenth ply of
    seeded random games (kings appear by their middle), for `MCTSPlayer.warm_up`."""
    rng = np.random.default_rng(seed)
    positions = [Game(rules)]
    while len(positions) < count:
        game = Game(rules)
        while not game.is_over and len(positions) < count:
            for _ in range(10):
                moves = game.legal_moves()
                game.play(moves[int(rng.integers(len(moves)))])
                if game.is_over:
                    break
            if not game.is_over:
                positions.append(game.copy())
    return positions


def hop_share(game: Game) -> float:
    """The share of a move's remaining time for the next searched hop of ``game``: all of it
    when no later hop of this turn can be a choice, else half (the rest is for those)."""
    done = max(0, len(game.chain_path()) - 1)  # hops played this turn
    later: dict[int, set[tuple[int, ...]]] = {}
    for move in continuing_moves(game):
        later.setdefault(move.path[done + 1], set()).add(tuple(move.path[done + 1 :]))
    return 0.5 if any(len(rest) > 1 for rest in later.values()) else 1.0


class MCTSPlayer:
    """Chooses moves by batched MCTS (one tree) guided by a policy-value network.

    ``simulations`` per searched hop, or ``time_s`` seconds per move (``simulations`` then
    caps each hop only when ``simulations_cap`` is set); ``leaves_per_call`` leaves of the
    tree per network call; ``cache_slots`` evaluations remembered (0: none); ``mirror``: each
    leaf's evaluation averaged with its mirror image's (`tammi_rl.nn.symmetry`; a board without
    a left-right symmetry is a ValueError)."""

    def __init__(
        self,
        rules: Rules,
        model: torch.nn.Module,
        simulations: int = 64,
        device: torch.device | str = "cpu",
        mcts: MCTSConfig | None = None,
        name: str | None = None,
        seed: int | None = None,
        runtime: str = "auto",
        threads: int = 1,
        time_s: float | None = None,
        leaves_per_call: int = LEAVES_PER_CALL,
        cache_slots: int = CACHE_SLOTS,
        simulations_cap: int | None = None,
        mirror: bool = False,
    ) -> None:
        if time_s is not None and not time_s > 0:
            raise ValueError(f"time_s must be > 0 seconds, got {time_s}")
        self.rules = rules
        self.device = torch.device(device)
        self.model = model.to(self.device).eval()
        self.cfg = dataclasses.replace(mcts or MCTSConfig(), simulations=simulations)
        self.simulations = simulations
        self.time_s = time_s
        self.simulations_cap = simulations_cap
        pool = TIMED_POOL if time_s is not None else simulations
        self.planes = input_planes(self.model)
        """Planes of the observations its network reads (with or without the attack planes)."""
        self.search = BatchedSearch(
            rules, self.cfg, 1, pool, leaves_per_call=leaves_per_call, cache_slots=cache_slots, planes=self.planes
        )
        if runtime == "auto" and self.device.type == "cpu":
            runtime = PLAYER_CPU_RUNTIME
        self.runtime = make_runtime(self.model, self.device, runtime, threads)
        self.evaluate: Evaluator = self.runtime.evaluate
        if mirror:
            board_mirror = mirror_for(rules)
            if board_mirror is None:
                raise ValueError(f"mirror: the {rules.variant.name} board has no left-right symmetry")
            self.evaluate = MirrorAveraged(self.evaluate, board_mirror)
        self.rng = np.random.default_rng(seed)
        self.warm_up()
        if name is None:
            name = f"mcts:time={time_s:g}" if time_s is not None else f"mcts:sims={simulations}"
        self.name = name
        self.last_results: list[MCTSResult] = []
        """The searches of the last `choose` call, one per searched hop (for inspection)."""

    def new_game(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def warm_up(self) -> None:
        """Search a few positions with a throwaway tree, so that no move pays for the first
        calls: the search kernels load, the runtime builds its session and, in 8 bits,
        calibrates and quantizes (which costs about 0.3 s and would otherwise land inside a
        move on the clock). The positions span a game (`calibration_positions`): calibrated on
        the start position's search alone, 8 bits misjudged positions with kings by 0.10 on
        average (0.56 at most) against 0.007 (0.06). The player's own tree, cache and random
        generator are untouched."""
        search = BatchedSearch(
            self.rules, self.cfg, 1, WARM_UP_SIMULATIONS, leaves_per_call=LEAVES_PER_CALL, planes=self.planes
        )
        rng = np.random.default_rng(0)
        for game in calibration_positions(self.rules):
            search.run([RootState.of_game(game)], self.evaluate, WARM_UP_SIMULATIONS, explore=False, rng=rng)
        search.run([RootState.of_game(Game(self.rules))], self.evaluate, 2, explore=False, rng=rng)  # 8-bit now

    def budget(self) -> int:
        """Simulations one hop's search may make: the count, or on the clock the cap."""
        if self.time_s is None:
            return self.simulations
        return self.simulations_cap or TIMED_SIMULATIONS

    def analyse(
        self,
        game: Game,
        simulations: int | None = None,
        deadline: float | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> MCTSResult:
        """Search the current state (mid-chain: after the hops played) without playing anything:
        ``simulations`` (default: the player's) until ``deadline`` (`time.perf_counter` seconds)
        or ``should_stop()``."""
        results = self.search.run(
            [RootState.of_game(game, self.cfg.repetition_draws)],
            self.evaluate,
            simulations or self.budget(),
            explore=False,
            rng=self.rng,
            deadline=deadline,
            should_stop=should_stop,
        )
        return results[0]

    def choose(self, game: Game) -> Move:
        """Search each hop of the turn on a copy of ``game``; return the whole move."""
        if game.is_over:
            raise ValueError("MCTSPlayer.choose called on a finished game")
        move_deadline = None if self.time_s is None else time.perf_counter() + self.time_s
        turn = game.copy()
        self.last_results = []
        while True:
            legal = turn.legal_hops()
            if len(legal) == 1:
                action = legal[0]
            else:
                deadline = None
                if move_deadline is not None:
                    now = time.perf_counter()
                    deadline = now + hop_share(turn) * max(0.0, move_deadline - now)
                result = self.analyse(turn, deadline=deadline)
                self.last_results.append(result)
                action = result.action
            move = turn.play_hop(action)
            if move is not None:
                return move


def load_agent(
    rules: Rules,
    checkpoint: str,
    simulations: int = 64,
    device: str = "auto",
    algorithm: str | None = None,
    name: str | None = None,
    runtime: str = "auto",
    threads: int = 1,
    search: dict[str, Any] | None = None,
    time_s: float | None = None,
    leaves_per_call: int = LEAVES_PER_CALL,
    cache_slots: int = CACHE_SLOTS,
    simulations_cap: int | None = None,
    mirror: bool = False,
) -> MCTSPlayer:
    """An `MCTSPlayer` with the network of a checkpoint file or run directory.

    The search settings are the checkpoint's (its run's ``mcts`` section, searching with its
    ``eval`` play settings: PUCT, and forced hops searched like any hop, unless the run said
    otherwise); ``algorithm`` and ``search`` (`MCTSConfig` field -> value, e.g.
    ``{"c_puct": 2.5}``) replace some of them. The rest are `MCTSPlayer`'s.
    """
    saved = load_network(checkpoint, rules)
    mcts = dataclasses.replace(saved.mcts, algorithm=algorithm) if algorithm else saved.mcts
    if search:
        mcts = dataclasses.replace(mcts, **search)
    model, path = saved.model, saved.path
    return MCTSPlayer(
        rules,
        model,
        simulations,
        resolve_device(device),
        mcts,
        name=name or f"mcts:{path.name}",
        runtime=runtime,
        threads=threads,
        time_s=time_s,
        leaves_per_call=leaves_per_call,
        cache_slots=cache_slots,
        simulations_cap=simulations_cap,
        mirror=mirror,
    )


MAX_BATCH = 256
"""Largest ``batch`` a spec may ask for."""
MAX_CACHE = 1 << 22
"""Largest ``cache`` a spec may ask for (about 1.6 GB)."""


def _at_least_one(spec: str, key: str, value: str) -> int:
    return int_option(spec, key, value, 1)


SEARCH_OPTIONS: dict[str, tuple[str, Callable[[str, str, str], Any]]] = {
    "c_puct": ("c_puct", positive_option),
    "c_visit": ("gumbel_c_visit", positive_option),
    "c_scale": ("gumbel_c_scale", positive_option),
    "max_actions": ("gumbel_max_actions", _at_least_one),
    "forced": ("play_forced_hops", switch_option),
    "fpu": ("fpu_reduction", nonnegative_option),
    "repetition": ("repetition_draws", switch_option),
}
"""Spec options that set a search constant: spec key -> (`MCTSConfig` field, parser of the
value, called as ``parser(spec, key, value)``)."""


def check_device(spec: str, device: str) -> None:
    """`PlayerSpecError` when ``device`` names a GPU this torch cannot use (no CUDA build, no
    GPU, or an index past the last one), instead of torch's error deep in loading."""
    if not device.startswith("cuda"):
        return
    if not torch.cuda.is_available():
        why = "this torch is built without CUDA" if torch.version.cuda is None else "torch sees no GPU"
        raise PlayerSpecError(
            f"player spec {spec!r}: device={device} but CUDA is not available here ({why}); "
            "use device=cpu, or device=auto (the GPU when there is one)"
        )
    suffix = device.partition(":")[2] or "0"
    if device.partition(":")[0] != "cuda" or not suffix.isdigit():
        raise PlayerSpecError(f"player spec {spec!r}: device must be cpu, auto, cuda or cuda:N, got {device!r}")
    index = int(suffix)
    count = torch.cuda.device_count()
    if index >= count:
        raise PlayerSpecError(
            f"player spec {spec!r}: device={device} but this machine has {count} GPU(s), "
            f"cuda:0 to cuda:{count - 1}; use one of those or device=auto"
        )


def make_mcts_player(rules: Rules, options: dict[str, str], spec: str) -> MCTSPlayer:
    """Factory behind the ``mcts:...`` player spec (registered in `tammi_rl.players`)."""
    reject_unknown(
        spec,
        options,
        {
            "checkpoint",
            "model",
            "sims",
            "time",
            "batch",
            "cache",
            "algorithm",
            "device",
            "runtime",
            "threads",
            "mirror",
            "name",
        }
        | set(SEARCH_OPTIONS),
    )
    if ("checkpoint" in options) == ("model" in options):
        raise PlayerSpecError(
            f"player spec {spec!r}: mcts needs either checkpoint=PATH (a .pt file or a run directory) "
            "or model=NAME (a shipped model, e.g. model=russian)"
        )
    if "model" in options:
        try:
            checkpoint = str(shipped_model(options["model"]))
        except ShippedModelError as exc:
            raise PlayerSpecError(f"player spec {spec!r}: {exc}") from None
    else:
        checkpoint = options["checkpoint"]
    sims = int_option(spec, "sims", options["sims"], 1) if "sims" in options else 64
    time_s = float_option(spec, "time", options["time"]) if "time" in options else None
    batch = int_option(spec, "batch", options["batch"], 1) if "batch" in options else LEAVES_PER_CALL
    if batch > MAX_BATCH:
        raise PlayerSpecError(f"player spec {spec!r}: batch must be <= {MAX_BATCH}, got {batch}")
    cache = int_option(spec, "cache", options["cache"], 0) if "cache" in options else CACHE_SLOTS
    if cache & (cache - 1) or cache > MAX_CACHE:
        raise PlayerSpecError(f"player spec {spec!r}: cache must be 0 or a power of two up to {MAX_CACHE}, got {cache}")
    algorithm = options.get("algorithm")
    if algorithm is not None and algorithm not in SEARCH_ALGORITHMS:
        raise PlayerSpecError(
            f"player spec {spec!r}: algorithm must be one of {', '.join(SEARCH_ALGORITHMS)}, got {algorithm!r}"
        )
    runtime = options.get("runtime", "auto")
    if runtime not in RUNTIMES:
        raise PlayerSpecError(f"player spec {spec!r}: runtime must be one of {', '.join(RUNTIMES)}, got {runtime!r}")
    threads = int_option(spec, "threads", options["threads"], 0) if "threads" in options else 1
    device = options.get("device", "auto")
    if not re.fullmatch(r"auto|cpu|cuda(:\d+)?", device):
        raise PlayerSpecError(f"player spec {spec!r}: device must be auto, cpu, cuda or cuda:N, got {device!r}")
    check_device(spec, device)
    try:
        resolve_runtime(runtime, resolve_device(device))
    except ValueError as exc:  # e.g. runtime=onnx with device=cuda
        raise PlayerSpecError(f"player spec {spec!r}: {exc}") from None
    search: dict[str, Any] = {
        field: parse(spec, key, options[key]) for key, (field, parse) in SEARCH_OPTIONS.items() if key in options
    }
    name = options.get("name") or (f"mcts:model={options['model']}" if "model" in options else None)
    if "name" not in options and time_s is not None:
        name = f"{name or 'mcts:' + Path(checkpoint).name},time={time_s:g}"
    cap = sims if "sims" in options and time_s is not None else None
    mirror = switch_option(spec, "mirror", options["mirror"]) if "mirror" in options else False
    if mirror and mirror_for(rules) is None:
        raise PlayerSpecError(
            f"player spec {spec!r}: mirror=on, but the {rules.variant.name} board has no mirror symmetry"
        )
    return load_agent(
        rules, checkpoint, sims, device, algorithm, name, runtime, threads, search, time_s, batch, cache, cap, mirror
    )
