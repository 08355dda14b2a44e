"""Guard for the kernels compiled without numba's runtime (``_nrt=False``).

Such a function must not allocate and must not return an array: nothing counts the
references of what it hands back, so a returned view could outlive its base. numba
refuses to compile an allocation there; this test checks the other half, the return
types of every compiled signature, after exercising the kernels once. It runs in a fresh
process with an empty numba cache: kernels loaded from the cache inside their callers'
machine code never register their signatures with their own dispatchers.
"""

import os
import subprocess
import sys

import numpy as np
import pytest
from numba import types
from numba.core.registry import CPUDispatcher

from tammi_rl.alphabeta import core, heuristic, zobrist
from tammi_rl.alphabeta.driver import AlphaBeta, AlphaBetaConfig
from tammi_rl.config import MCTSConfig
from tammi_rl.env import observation
from tammi_rl.env.draughts_env import DraughtsEnv
from tammi_rl.mcts import gumbel, puct, tree
from tammi_rl.mcts.search import BatchedSearch, RootState, uniform_evaluator
from tammi_rl.rules import draw_rules, movegen, turn
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game

pytestmark = pytest.mark.slow

MODULES = [movegen, draw_rules, turn, observation, tree, puct, gumbel, core, heuristic, zobrist]


def no_runtime_dispatchers():
    for module in MODULES:
        for name, obj in vars(module).items():
            if isinstance(obj, CPUDispatcher) and obj.targetoptions.get("_nrt") is False:
                yield f"{module.__name__}.{name}", obj


def contains_array(ty) -> bool:
    if isinstance(ty, types.Array):
        return True
    if isinstance(ty, (types.BaseTuple,)):
        return any(contains_array(t) for t in ty.types)
    return False


def check_no_runtime_kernels() -> int:
    """Exercise the kernels, check every signature; returns how many were checked."""
    rules = Rules.for_variant("turkish")
    rules.perft(rules.start_position(), 3)
    env = DraughtsEnv("russian")
    _, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(200):
        _, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if term or trunc:
            _, info = env.reset()
    env.chain_state()
    AlphaBeta(rules, AlphaBetaConfig(depth=3)).search(rules.start_position())
    russian = Rules.for_variant("russian")
    game = Game(russian)
    for _ in range(6):
        game.play(game.legal_moves()[0])
    game.play_hop(game.legal_hops()[0])
    for algorithm in ("gumbel", "puct"):  # each compiles its own selection step
        search = BatchedSearch(russian, MCTSConfig(algorithm=algorithm), max_trees=2, max_simulations=16)
        search.run(
            [RootState.of_game(game)] * 2,
            uniform_evaluator(search.codec.n_actions),
            16,
            explore=True,
            rng=np.random.default_rng(0),
        )

    checked = 0
    for name, dispatcher in no_runtime_dispatchers():
        for sig in dispatcher.nopython_signatures:
            assert not contains_array(sig.return_type), f"{name}{sig} returns an array without the runtime"
            checked += 1
    return checked


def test_no_runtime_kernels_return_no_arrays(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), OMP_NUM_THREADS="1")
    code = "import test_no_runtime_kernels as t; print('checked', t.check_no_runtime_kernels())"
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=os.path.dirname(__file__),
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    checked = int(done.stdout.split("checked")[-1])
    assert checked >= 20, done.stdout  # the kernels were exercised and found
