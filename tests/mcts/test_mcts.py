"""Batched MCTS: shots found, player-indexed backup over same-player hops, valid targets."""

from __future__ import annotations

import numpy as np
import pytest

from tammi_rl.config import MCTSConfig
from tammi_rl.env.observation import JUMPED, OPP_KINGS, OPP_MEN, OWN_KINGS, OWN_MEN
from tammi_rl.mcts import tree as tr
from tammi_rl.mcts.search import BatchedSearch, RootState, considered_visit_schedule, uniform_evaluator
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game
from tammi_rl.rules.notation import format_move

ALGORITHMS = ["gumbel", "puct"]


def material_evaluator(n_actions: int, king_value: float = 3.0):
    """Value = tanh(material balance / 2) for the side to move, read off the planes.

    Mid-chain, pieces already jumped count as gone. Exact for positions decided by material.
    """

    def evaluate(obs: np.ndarray):
        own = obs[:, OWN_MEN].sum((1, 2)) + king_value * obs[:, OWN_KINGS].sum((1, 2))
        opp_alive_men = np.clip(obs[:, OPP_MEN] - obs[:, JUMPED], 0, 1).sum((1, 2))
        opp_alive_kings = np.clip(obs[:, OPP_KINGS] - obs[:, JUMPED], 0, 1).sum((1, 2))
        opp = opp_alive_men + king_value * opp_alive_kings
        return np.zeros((obs.shape[0], n_actions), np.float32), np.tanh((own - opp) / 2.0).astype(np.float32)

    return evaluate


def best_move(rules: Rules, fen: str, algorithm: str, evaluator_kind: str, sims: int) -> tuple[str, float]:
    """Search the position hop by hop (as the agent does) and return the chosen move in notation."""
    game = Game(rules, start=rules.parse_fen(fen))
    search = BatchedSearch(rules, MCTSConfig(algorithm=algorithm), max_trees=1, max_simulations=sims)
    n = search.codec.n_actions
    evaluator = material_evaluator(n) if evaluator_kind == "material" else uniform_evaluator(n)
    rng = np.random.default_rng(0)
    value = None
    while True:
        legal = game.legal_hops()
        if len(legal) == 1:
            action = legal[0]
        else:
            res = search.run([RootState.of_game(game)], evaluator, sims, explore=False, rng=rng)[0]
            assert sorted(res.actions.tolist()) == legal  # edges are exactly the legal hops
            value = res.value if value is None else value
            action = res.action
        move = game.play_hop(action)
        if move is not None:
            return format_move(rules, move), value


def winning_moves(rules: Rules, fen: str, plies: int) -> set[str]:
    """The moves that win by force within ``plies`` plies: exact minimax over the rules."""

    def score(position, depth: int) -> int:  # +1 win, 0 unknown, -1 loss for the side to move
        moves = rules.legal_moves(position)
        if not moves:
            return -1
        if depth == 0:
            return 0
        return max(-score(rules.play(position, m), depth - 1) for m in moves)

    start = rules.parse_fen(fen)
    return {format_move(rules, m) for m in rules.legal_moves(start) if -score(rules.play(start, m), plies - 1) == 1}


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_finds_king_trap_from_exact_terminal_values(algorithm):
    """Russian d2-c3! (Ka1xc3 is forced, then Kh8 takes the king) or d2-e3 (zugzwang: every
    black king move stays on the long diagonal): only terminal values are informative."""
    rules = Rules.for_variant("russian")
    fen = "W:WKh8,d2:BKa1"
    winning = winning_moves(rules, fen, 3)
    assert winning == {"d2-c3", "d2-e3"}  # the exact solver agrees with the comment above
    move, value = best_move(rules, fen, algorithm, "uniform", 200)
    assert move in winning
    assert value > 0.3


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_finds_sacrifice_shot_with_material_values(algorithm):
    """e3-d4! c5xe3 f2xd4xf6xh8: one man given, three taken; a 1-ply look says it loses a man."""
    rules = Rules.for_variant("russian")
    move, value = best_move(rules, "W:Wa1,c3,e3,f2,g1:Bc5,e5,g7,a7,b8", algorithm, "material", 300)
    assert move == "e3-d4"
    assert value > 0


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_same_player_hops_back_up_for_the_mover(algorithm):
    """Mid-chain choice: the white king may end after 2 captures or go on to take 3.

    Russian allows either route (free choice), so only a correct player-indexed backup
    over consecutive white hops prefers the longer chain; a per-ply sign flip would
    prefer the shorter one.
    """
    rules = Rules.for_variant("russian")
    fen = "W:WKa1:Bb2,d4,f6,d6,b6"  # a1:c3:e5 then :g7 (3 taken) or :c7:a5 (4 taken)
    moves = {format_move(rules, m) for m in rules.legal_moves(rules.parse_fen(fen))}
    assert len(moves) > 1  # a real choice exists
    move, value = best_move(rules, fen, algorithm, "material", 200)
    captured = move.count(":")
    longest = max(m.count(":") for m in moves)
    assert captured == longest, (move, sorted(moves))
    assert value > 0


def test_gumbel_policy_target_is_a_distribution_that_improves_on_the_prior():
    """d4-c5 blocks Black's last man (no legal move: White wins), and b6-c7 wins too once
    Black's only reply a7-b6 is played; the prior knows nothing."""
    rules = Rules.for_variant("russian")
    fen = "W:Wb6,d4:Ba7"
    assert winning_moves(rules, fen, 3) == {"d4-c5", "b6-c7"}
    game = Game(rules, start=rules.parse_fen(fen))
    search = BatchedSearch(rules, MCTSConfig(algorithm="gumbel"), max_trees=1, max_simulations=16)
    res = search.run(
        [RootState.of_game(game)],
        uniform_evaluator(search.codec.n_actions),
        16,
        explore=True,
        rng=np.random.default_rng(1),
    )[0]
    assert np.all(res.policy >= 0) and res.policy.sum() == pytest.approx(1.0)
    assert sorted(res.actions.tolist()) == game.legal_hops()
    hop = search.codec.hop_action[0]
    wins = [hop[rules.square("d4"), rules.square("c5")], hop[rules.square("b6"), rules.square("c7")]]
    rows = [int(np.flatnonzero(res.actions == a)[0]) for a in wins]
    assert res.prior[rows] == pytest.approx([1.0 / 3, 1.0 / 3])
    assert res.policy[rows].sum() > 0.9
    assert res.action in wins


def test_batched_roots_are_searched_independently():
    """Several different roots in one batch give the same answers as one root at a time."""
    rules = Rules.for_variant("russian")
    fens = ["W:WKh8,d2:BKa1", "W:Wa1,c3,e3,f2,g1:Bc5,e5,g7,a7,b8", "B:WKh8,c3:BKa1"]
    search = BatchedSearch(rules, MCTSConfig(algorithm="puct"), max_trees=3, max_simulations=64)
    evaluator = material_evaluator(search.codec.n_actions)
    roots = [RootState.of_game(Game(rules, start=rules.parse_fen(f))) for f in fens]
    together = search.run(roots, evaluator, 64, explore=False, rng=np.random.default_rng(0))
    for root, res in zip(roots, together, strict=False):
        alone = search.run([root], evaluator, 64, explore=False, rng=np.random.default_rng(0))[0]
        assert res.action == alone.action
        assert np.array_equal(res.visits, alone.visits)


def test_mid_chain_root_offers_only_continuations():
    """A root in the middle of a capture chain has the chain's next hops as its only edges."""
    rules = Rules.for_variant("russian")
    game = Game(rules, start=rules.parse_fen("W:WKc1:Bd2,f4,b6"))
    search = BatchedSearch(rules, MCTSConfig(), max_trees=1, max_simulations=16)
    first = game.legal_hops()
    assert len(first) == 1
    assert game.play_hop(first[0]) is None  # c1:e3, the chain goes on
    res = search.run(
        [RootState.of_game(game)],
        uniform_evaluator(search.codec.n_actions),
        16,
        explore=False,
        rng=np.random.default_rng(0),
    )[0]
    assert sorted(res.actions.tolist()) == game.legal_hops()
    assert len(res.actions) == 3  # e3:g5, e3:h6 over f4 and e3:a7 over b6


def test_considered_visit_schedule_halves():
    schedule = considered_visit_schedule(4, 16)
    assert len(schedule) == 16
    assert list(schedule[:4]) == [0, 0, 0, 0]
    assert considered_visit_schedule(1, 5).tolist() == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("attack_planes", [False, True])
@pytest.mark.parametrize("variant", ["russian", "english", "italian", "turkish", "brazilian"])
def test_search_sees_what_the_env_sees(variant, attack_planes):
    """Root planes and legal hops of the search equal the env's, mid-chain states included,
    with and without the attack planes."""
    from tammi_rl.env.draughts_env import DraughtsEnv

    env = DraughtsEnv(variant=variant, max_plies=120, attack_planes=attack_planes)
    rules = env.rules
    search = BatchedSearch(rules, MCTSConfig(), max_trees=1, max_simulations=1, planes=env.encoder.planes)
    evaluator = uniform_evaluator(search.codec.n_actions)
    rng = np.random.default_rng(0)
    obs, _info = env.reset(seed=3)
    mid_chain = 0
    for _ in range(400):
        c = env.game.counters()
        root = RootState(
            board=env.position.as_int64(),
            path=tuple(env.chain_path()),
            no_progress=c.no_progress_plies,
            kings_only=c.kings_only_plies,
            three_kings=c.three_kings_plies,
            repetition=c.repetitions,
        )
        mid_chain += len(root.path) > 0
        res = search.run([root], evaluator, 1, explore=False, rng=rng)[0]
        assert sorted(res.actions.tolist()) == env.legal_actions()
        np.testing.assert_array_equal(res.obs, obs)
        obs, _, terminated, truncated, _info = env.step(int(rng.choice(env.legal_actions())))
        if terminated or truncated:
            obs, _info = env.reset(seed=int(rng.integers(1 << 30)))
    if variant != "english":
        assert mid_chain > 0  # the walk went through capture chains


def counting(evaluator):
    """The evaluator, counting the positions it is asked about in ``counting.positions``."""

    def evaluate(obs: np.ndarray):
        evaluate.positions += obs.shape[0]
        return evaluator(obs)

    evaluate.positions = 0
    return evaluate


def node_kinds(search: BatchedSearch) -> tuple[int, int]:
    """After a one-root run: (non-root nodes with one edge, non-terminal nodes with more)."""
    n = int(search.trees_i[0, tr.TI_N_NODES])
    edges = search.nodes_i[0, :n, tr.NI_N_EDGES]
    terminal = search.nodes_i[0, :n, tr.NI_TERMINAL] == 1
    assert np.all(terminal | (edges >= 1))  # every node reached was expanded or is over
    return int(np.sum(edges[1:] == 1)), int(np.sum(~terminal & (edges >= 2)))


SHOT = "W:Wa1,c3,e3,f2,g1:Bc5,e5,g7,a7,b8"  # full of capture chains and forced recaptures


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_forced_hops_are_played_through_without_the_network(algorithm, monkeypatch):
    """With play_forced_hops, a node with one legal hop never reaches the evaluator; without it
    (or with no room left in the node pool) every non-terminal node does, once."""
    rules = Rules.for_variant("russian")
    root = RootState.of_game(Game(rules, start=rules.parse_fen(SHOT)))
    sims = 300
    seen = {}
    for forced in (True, False):
        search = BatchedSearch(
            rules, MCTSConfig(algorithm=algorithm, play_forced_hops=forced), max_trees=1, max_simulations=sims
        )
        evaluator = counting(material_evaluator(search.codec.n_actions))
        res = search.run([root], evaluator, sims, explore=False, rng=np.random.default_rng(0))[0]
        one_edge, choice = node_kinds(search)
        assert one_edge > 0
        if forced:
            assert evaluator.positions == choice
            assert search.trees_i[0, tr.TI_N_NODES] > sims  # more nodes than network calls
        else:
            assert evaluator.positions == choice + one_edge
        seen[forced] = res
        assert res.action == search.codec.hop_action[0, rules.square("e3"), rules.square("d4")]
    # Without room for forced nodes the search falls back to evaluating them, and stays legal.
    monkeypatch.setattr("tammi_rl.mcts.search.FORCED_NODES_PER_SIMULATION", 0)
    cfg = MCTSConfig(algorithm=algorithm, play_forced_hops=True)
    search = BatchedSearch(rules, cfg, max_trees=1, max_simulations=sims)
    evaluator = counting(material_evaluator(search.codec.n_actions))
    res = search.run([root], evaluator, sims, explore=False, rng=np.random.default_rng(0))[0]
    one_edge, choice = node_kinds(search)
    assert evaluator.positions == choice + one_edge
    assert search.trees_i[0, tr.TI_N_NODES] <= sims + 2
    assert sorted(res.actions.tolist()) == sorted(seen[True].actions.tolist())


def test_fpu_reduction_narrows_puct_to_the_moves_already_tried():
    """With equal priors and zero values, a reduced first-play value makes PUCT revisit the moves
    it has tried before trying new ones; at 0 it tries every move within a few simulations."""
    rules = Rules.for_variant("russian")
    root = RootState.of_game(Game(rules))  # seven legal moves
    tried = {}
    for fpu in (0.0, 1.0):
        search = BatchedSearch(rules, MCTSConfig(algorithm="puct", fpu_reduction=fpu), max_trees=1, max_simulations=16)
        res = search.run(
            [root], uniform_evaluator(search.codec.n_actions), 16, explore=False, rng=np.random.default_rng(0)
        )[0]
        tried[fpu] = int(np.sum(res.visits > 0))
    assert tried[0.0] == 7
    assert tried[1.0] < tried[0.0]
