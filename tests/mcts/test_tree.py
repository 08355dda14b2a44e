"""The tree on its own: named record layouts, root records, pool sizes, and a tree module that
knows nothing of the algorithms built on it."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from tammi_rl.config import SEARCH_ALGORITHMS, MCTSConfig
from tammi_rl.jit_cache import compiled_dependencies
from tammi_rl.mcts import gumbel, puct
from tammi_rl.mcts import tree as tr
from tammi_rl.mcts.search import ALGORITHMS, FORCED_NODES_PER_SIMULATION, BatchedSearch, RootState, uniform_evaluator
from tammi_rl.rules import movegen as mg
from tammi_rl.rules.game import Game

MCTS = Path(tr.__file__).parent


def fields(module, prefix: str) -> dict[str, range]:
    """Each named field of a record: ``X`` spans [X, X_END) when X_END exists, else [X, X + 1)."""
    names = {n: v for n, v in vars(module).items() if n.startswith(prefix) and n != f"{prefix}COUNT"}
    return {n: range(v, names.get(f"{n}_END", v + 1)) for n, v in names.items() if not n.endswith("_END")}


@pytest.mark.parametrize("prefix", ["NI_", "NF_", "EI_", "EF_", "TI_", "SP_", "R_"])
def test_named_fields_tile_their_record(prefix):
    """Every slot of each record belongs to exactly one named field: no overlap, no gap."""
    count = getattr(tr, f"{prefix}COUNT")
    slots = sorted(i for r in fields(tr, prefix).values() for i in r)
    assert slots == list(range(count)), fields(tr, prefix)


def test_multi_field_widths():
    assert (tr.NI_BOARD_END - tr.NI_BOARD, tr.R_BOARD_END - tr.R_BOARD) == (4, 4)
    assert tr.NI_COUNTERS_END - tr.NI_COUNTERS == tr.R_COUNTERS_END - tr.R_COUNTERS == tr.N_COUNTERS
    assert tr.NI_PATH_END - tr.NI_PATH == tr.R_PATH_END - tr.R_PATH == mg.MAX_PATH
    assert len(tr.workspace()[3]) == tr.W_REPETITION + 1  # the encoder's four counters


def test_root_record_becomes_the_root_node(russian):
    """`write_root` then `init_roots`: the root node holds the record's board, side, chain and counters."""
    game = Game(russian, start=russian.parse_fen("W:WKc1:Bd2,f4,b6"))
    game.play_hop(game.legal_hops()[0])  # c1:e3, the chain goes on
    root = RootState.of_game(game)
    nodes_i, nodes_f, edges_i, _, trees_i = tr.allocate(2, 4, 4)
    roots = np.full((2, tr.R_COUNT), -1, np.int64)
    tr.write_root(roots[1], root.board[:4], root.board[4], root.path, (5, 6, 7), 3)
    trees_i[1, tr.TI_ACTIVE] = 1
    tr.init_roots(nodes_i, nodes_f, edges_i, trees_i, roots)
    node = nodes_i[1, 0]
    assert tuple(node[tr.NI_BOARD : tr.NI_BOARD_END]) == root.board[:4]
    assert node[tr.NI_SIDE] == root.board[4] == 0
    assert node[tr.NI_HOPS] == 1 and len(root.path) == 2
    assert tuple(node[tr.NI_PATH : tr.NI_PATH + 2]) == root.path and np.all(node[tr.NI_PATH + 2 : tr.NI_PATH_END] == -1)
    assert tuple(node[tr.NI_COUNTERS : tr.NI_COUNTERS_END]) == (5, 6, 7)
    assert (node[tr.NI_PARENT], node[tr.NI_N_EDGES], node[tr.NI_VISITS]) == (-1, -1, 0)
    assert trees_i[1, tr.TI_REPETITION] == 3 and trees_i[1, tr.TI_N_NODES] == 1
    assert trees_i[0, tr.TI_N_NODES] == 0  # inactive trees are left alone


def test_pool_sizes():
    assert tr.pool_sizes(10, 64, 0) == (12, 12 * 64)
    assert tr.pool_sizes(10, 64, 3) == (12 + 36, 12 * 64 + 36)


def test_a_full_node_pool_raises(russian):
    """A search bigger than its pool stops with an error instead of writing past the arrays."""
    search = BatchedSearch(russian, MCTSConfig(play_forced_hops=False), max_trees=1, max_simulations=8)
    search.max_simulations = 64  # pretend the pool was sized for more
    evaluator = uniform_evaluator(search.codec.n_actions)
    with pytest.raises(IndexError, match="node pool"):
        search.run([RootState.of_game(Game(russian))], evaluator, 64, False, np.random.default_rng(0))


def test_each_search_picks_its_algorithm_once(russian):
    assert set(ALGORITHMS) == set(SEARCH_ALGORITHMS)
    for name, module in (("puct", puct), ("gumbel", gumbel)):
        search = BatchedSearch(russian, MCTSConfig(algorithm=name), max_trees=1, max_simulations=2)
        assert search.algorithm.select_leaves is module.select_leaves
    with pytest.raises(ValueError, match="unknown search algorithm 'mcts'"):
        BatchedSearch(russian, MCTSConfig(algorithm="mcts"), max_trees=1, max_simulations=2)
    assert FORCED_NODES_PER_SIMULATION >= 1


def mcts_imports(name: str) -> set[str]:
    tree = ast.parse((MCTS / f"{name}.py").read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found |= {f"{node.module}.{a.name}" for a in node.names} | {node.module}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return {m.split(".")[2] for m in found if m.startswith("tammi_rl.mcts.")}


def test_modules_point_down():
    """tree <- puct, gumbel <- search: the tree knows no algorithm, no algorithm knows another."""
    assert mcts_imports("tree") == set()
    assert mcts_imports("puct") == {"tree"}
    assert mcts_imports("gumbel") == {"tree"}
    assert mcts_imports("search") == {"tree", "puct", "gumbel"}


def test_jit_cache_sees_the_inlined_tree():
    """The algorithms inline `tree.select_leaves`: their numba caches must depend on tree.py."""
    deps = compiled_dependencies()
    for name in ("puct", "gumbel"):
        assert "tammi_rl.mcts.tree" in deps[f"tammi_rl.mcts.{name}"]
    assert not [d for d in deps["tammi_rl.mcts.tree"] if d.startswith("tammi_rl.mcts")]
