"""Batched search driver: B roots searched together, one network call per simulation step.

    search = BatchedSearch(rules, mcts_cfg, max_trees=64, max_simulations=64)
    results = search.run(roots, evaluator, simulations=64, explore=True, rng=rng)

    player = BatchedSearch(rules, mcts_cfg, max_trees=1, max_simulations=800,
                           leaves_per_call=16, cache_slots=1 << 16)
    result = player.run([root], evaluator, 10**6, explore=False, rng=rng, deadline=t + 0.2)[0]

``evaluator(obs [L, C, H, W] float32) -> (logits [L, A] float32, values [L] float32)``
where ``values`` are for each leaf's side to move. Tree work (selection, expansion,
backup, observation encoding) is compiled (`tammi_rl.mcts.tree`); Python only loops
over simulation steps and calls the evaluator once per step on every leaf that needs it.

Self-play fills the network's batch with many games, one leaf each (``leaves_per_call=1``);
a player searching one game fills it with several leaves of its one tree, spread by virtual
loss, and skips the network for positions it has evaluated before (``cache_slots``). A
search ends after its simulations, at ``deadline`` or when ``should_stop()`` says so (checked
between network calls); its tree storage grows when a search asks for more simulations
than it was built for.

The algorithm (`ALGORITHMS`: `tammi_rl.mcts.puct` or `tammi_rl.mcts.gumbel`) is picked once,
when a search is built: its compiled selection step, and its root hooks (noise before the
simulations, policy target and move after them).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from tammi_rl.config import MCTSConfig
from tammi_rl.env.observation import N_PLANES
from tammi_rl.mcts import gumbel, puct
from tammi_rl.mcts import tree as tr
from tammi_rl.mcts.gumbel import considered_visit_schedule
from tammi_rl.rules import movegen as mg
from tammi_rl.rules import turn as tm
from tammi_rl.rules.actions import ActionCodec, codec_for
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game

__all__ = [
    "ALGORITHMS",
    "FORCED_NODES_PER_SIMULATION",
    "BatchedSearch",
    "Evaluator",
    "MCTSResult",
    "RootState",
    "considered_visit_schedule",
    "uniform_evaluator",
]

Evaluator = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
"""``evaluate(obs float32 [L, C, H, W]) -> (logits float32 [L, A], values float32 [L])``;
each value is for the leaf's side to move."""


@dataclass
class RootState:
    """Where a search starts: the board at the start of the turn, the hops already
    played in this turn (path prefix, starting square first), and the draw counters."""

    board: tuple[int, int, int, int, int]
    """White men, white kings, black men, black kings (int64 bitboards), side to move."""
    path: tuple[int, ...] = ()
    """Squares visited so far in this turn: the start square, then each landing square."""
    no_progress: int = 0
    kings_only: int = 0
    three_kings: int = 0
    repetition: int = 1
    """Occurrences of this position so far, this one included."""
    history: tuple[tuple[int, int, int, int, int], ...] = ()
    """The game's positions before this one since its last irreversible move, oldest first, as
    ``board``: what the search needs to score a repetition as a draw (``mcts.repetition_draws``)."""

    @classmethod
    def of_game(cls, game: Game, history: bool = True) -> RootState:
        """The search root of ``game`` now (mid-chain: after the hops played); without
        ``history`` (a search that ignores repetition) the game's earlier positions are left out."""
        c = game.counters()
        return cls(
            board=game.position.as_int64(),
            path=game.chain_path(),
            no_progress=c.no_progress_plies,
            kings_only=c.kings_only_plies,
            three_kings=c.three_kings_plies,
            repetition=c.repetitions,
            history=tuple(p.as_int64() for p in game.reversible_history()) if history else (),
        )


@dataclass
class MCTSResult:
    """One root's outcome. ``actions``: legal hops; ``policy``: the search policy over them
    (Gumbel: improved policy; PUCT: visit shares); ``action``: the chosen hop; ``value``:
    the searched value for the side to move; ``obs``: the root's planes."""

    actions: np.ndarray
    visits: np.ndarray
    policy: np.ndarray
    action: int
    value: float
    obs: np.ndarray
    prior: np.ndarray = field(default_factory=lambda: np.zeros(0))
    simulations: int = 0
    """Simulations made, the root's own evaluation included (its visit count)."""


FORCED_NODES_PER_SIMULATION = 3
"""Room for forced-hop nodes (`MCTSConfig.play_forced_hops`) per simulation; when it runs out,
forced hops are evaluated like any other node (the search stays correct, just shallower)."""


class _Puct:
    """PUCT's root hooks: Dirichlet noise on the root priors; visit shares as the policy, the
    move sampled from them (or the most visited)."""

    select_leaves = staticmethod(puct.select_leaves)

    def __init__(self, cfg: MCTSConfig) -> None:
        self.cfg = cfg

    def prepare_root(
        self, search: BatchedSearch, t: int, explore: bool, rng: np.random.Generator, schedule: np.ndarray
    ) -> None:
        edges = search.edges_f[t, tr.root_edge_slice(search.nodes_i, t)]
        if explore and len(edges) > 1:
            cfg = self.cfg
            edges[:, tr.EF_PRIOR] = puct.root_noise(
                edges[:, tr.EF_PRIOR], cfg.dirichlet_alpha, cfg.dirichlet_fraction, rng
            )

    def decide(
        self,
        search: BatchedSearch,
        t: int,
        visits: np.ndarray,
        prior: np.ndarray,
        sample: bool,
        rng: np.random.Generator,
    ) -> tuple[np.ndarray, int]:
        policy = puct.policy_target(visits, prior)
        return policy, puct.choose(policy, visits, self.cfg.temperature, sample, rng)


class _Gumbel:
    """Gumbel's root hooks: Gumbel noise, the considered set and its sequential-halving schedule;
    the improved policy as the target, the move from the most visited considered edges."""

    select_leaves = staticmethod(gumbel.select_leaves)

    def __init__(self, cfg: MCTSConfig) -> None:
        self.cfg = cfg

    def prepare_root(
        self, search: BatchedSearch, t: int, explore: bool, rng: np.random.Generator, schedule: np.ndarray
    ) -> None:
        edges = search.edges_f[t, tr.root_edge_slice(search.nodes_i, t)]
        noise, considered = gumbel.root_noise(edges[:, tr.EF_LOGIT], self.cfg.gumbel_max_actions, explore, rng)
        edges[:, tr.EF_GUMBEL] = noise
        schedule[:] = gumbel.considered_visit_schedule(considered, len(schedule))

    def decide(
        self,
        search: BatchedSearch,
        t: int,
        visits: np.ndarray,
        prior: np.ndarray,
        sample: bool,
        rng: np.random.Generator,
    ) -> tuple[np.ndarray, int]:
        ne = len(visits)
        q, improved, score = np.zeros(ne), np.zeros(ne), np.zeros(ne)
        gumbel.root_targets(
            search.nodes_i, search.nodes_f, search.edges_i, search.edges_f, t, search.params, q, improved, score
        )
        noise = search.edges_f[t, tr.root_edge_slice(search.nodes_i, t), tr.EF_GUMBEL]
        return improved, gumbel.choose(visits, noise, score)


ALGORITHMS: dict[str, type[_Puct] | type[_Gumbel]] = {"puct": _Puct, "gumbel": _Gumbel}
"""``MCTSConfig.algorithm`` -> its root hooks and compiled selection step."""


class BatchedSearch:
    """Reusable tree storage and the simulation loop for up to ``max_trees`` roots.

    ``leaves_per_call``: walks per tree between network calls (virtual loss keeps them
    apart; 1 keeps the search strictly sequential); ``cache_slots``: entries of the
    evaluation cache (a power of two, 0: none), valid for one set of weights (`clear_cache`);
    ``planes``: planes of the observations the network reads (`tammi_rl.nn.model.input_planes`).
    """

    def __init__(
        self,
        rules: Rules,
        cfg: MCTSConfig,
        max_trees: int,
        max_simulations: int,
        edges_per_node: int = 64,
        leaves_per_call: int = 1,
        cache_slots: int = 0,
        virtual_value: float = tr.VIRTUAL_VALUE,
        planes: int = N_PLANES,
    ) -> None:
        self.rules = rules
        self.cfg = cfg
        if cfg.algorithm not in ALGORITHMS:
            raise ValueError(f"unknown search algorithm {cfg.algorithm!r}; known: {', '.join(ALGORITHMS)}")
        if leaves_per_call < 1:
            raise ValueError(f"leaves_per_call must be at least 1, got {leaves_per_call}")
        self.algorithm = ALGORITHMS[cfg.algorithm](cfg)
        self.codec: ActionCodec = codec_for(rules)
        g = rules.geometry
        self.obs_shape = (planes, g.size, g.size)
        self.max_trees = max_trees
        self.max_simulations = max_simulations
        self.leaves_per_call = leaves_per_call
        self.edges_per_node = edges_per_node
        self.tables = tm.build_tables(rules, max_plies=None)  # the length cap is not applied in the tree
        self.params = tr.search_params(
            cfg.c_puct,
            cfg.gumbel_c_visit,
            cfg.gumbel_c_scale,
            cfg.play_forced_hops,
            cfg.fpu_reduction,
            virtual_value,
            cfg.repetition_draws,
        )
        self.forced_per_simulation = FORCED_NODES_PER_SIMULATION if cfg.play_forced_hops else 0
        n_nodes, n_edges = tr.pool_sizes(max_simulations, edges_per_node, self.forced_per_simulation)
        self.nodes_i, self.nodes_f, self.edges_i, self.edges_f, self.trees_i = tr.allocate(max_trees, n_nodes, n_edges)
        rows = max_trees * leaves_per_call
        self.obs = np.zeros((rows, *self.obs_shape), np.float32)
        self.leaf_actions = np.zeros((rows, mg.MAX_MOVES), np.int64)
        self.leaves = np.zeros((max_trees, leaves_per_call, tr.LI_COUNT), np.int64)
        self.cache = tr.allocate_cache(cache_slots)
        self.work = tr.workspace()
        # statistics since the search was built, or since its owner last zeroed them (self-play
        # zeroes them at every play call; throughput, player benchmarks)
        self.nn_seconds = 0.0
        self.nn_calls = 0
        self.nn_positions = 0
        self.cache_hits = 0
        self.simulations = 0

    def clear_cache(self) -> None:
        """Forget the cached evaluations (call it when the network's weights change)."""
        tr.clear_cache(self.cache)

    # --- one search --------------------------------------------------------------------
    def run(
        self,
        roots: list[RootState],
        evaluator: Evaluator,
        simulations: int | np.ndarray,
        explore: bool,
        rng: np.random.Generator,
        greedy: np.ndarray | None = None,
        deadline: float | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> list[MCTSResult]:
        """Search every root; ``simulations`` (one count, or one per root) includes the root's
        own evaluation. ``explore`` adds root noise (Gumbel or Dirichlet); PUCT samples its
        move from the visit counts unless ``greedy[t]``. The search ends early, after the roots'
        own evaluation, once ``time.perf_counter()`` passes ``deadline`` or ``should_stop()``."""
        b = len(roots)
        if b > self.max_trees:
            raise ValueError(f"{b} roots but the search was built for {self.max_trees}")
        sims = np.maximum(np.broadcast_to(np.asarray(simulations, np.int64), (b,)), 1)
        most = int(sims.max())
        growing = most > self.max_simulations  # the pool grows on demand instead of holding all
        active = self.trees_i[:, tr.TI_ACTIVE]
        active[:] = 0
        active[:b] = 1
        self.trees_i[:b, tr.TI_BUDGET] = sims
        states = np.full((self.max_trees, tr.R_COUNT), -1, np.int64)
        for t, root in enumerate(roots):
            counters = (root.no_progress, root.kings_only, root.three_kings)
            tr.write_root(states[t], root.board[:4], root.board[4], root.path, counters, root.repetition, root.history)
        tr.init_roots(self.nodes_i, self.nodes_f, self.edges_i, self.trees_i, states)
        schedules = np.zeros((self.max_trees, min(most, self.max_simulations) + 1), np.int64)
        self.trees_i[:, tr.TI_HORIZON] = schedules.shape[1]
        # Simulation 0 evaluates and expands the roots.
        self._step(schedules, evaluator)
        root_obs = self.obs[:: self.leaves_per_call][:b].copy()
        for t in range(b):  # root exploration, tree by tree (the order the rng is drawn in)
            if self.nodes_i[t, 0, tr.NI_N_EDGES] > 0:
                self.algorithm.prepare_root(self, t, explore, rng, schedules[t, : min(sims[t], schedules.shape[1])])
        while True:
            if deadline is not None and time.perf_counter() >= deadline:
                break
            if should_stop is not None and should_stop():
                break
            if growing:
                self._ensure_room(b)
            if not self._step(schedules, evaluator):
                break
        greedy = np.zeros(b, np.bool_) if greedy is None else greedy
        return [self._result(t, root_obs[t], explore and not greedy[t], rng) for t in range(b)]

    def _ensure_room(self, b: int) -> None:
        """Before a step of a growing search: room for its walks (nodes, forced hops, edges),
        doubling the pool when short; the forced-hop reserve covers this step only."""
        k = self.leaves_per_call
        visits = self.nodes_i[:b, 0, tr.NI_VISITS]
        self.trees_i[:b, tr.TI_HORIZON] = visits + k + 1
        need_nodes = int(self.trees_i[:b, tr.TI_N_NODES].max()) + k * (2 + self.forced_per_simulation) + 2
        need_edges = int(self.trees_i[:b, tr.TI_N_EDGES].max()) + k * (mg.MAX_MOVES + self.forced_per_simulation)
        if need_nodes > self.nodes_i.shape[1]:
            size = max(need_nodes, 2 * self.nodes_i.shape[1])
            self.nodes_i = _grown(self.nodes_i, size)
            self.nodes_f = _grown(self.nodes_f, size)
        if need_edges > self.edges_i.shape[1]:
            size = max(need_edges, 2 * self.edges_i.shape[1])
            self.edges_i = _grown(self.edges_i, size)
            self.edges_f = _grown(self.edges_f, size)

    def _step(self, schedules: np.ndarray, evaluator: Evaluator) -> bool:
        """One selection, network call and backup; False when no tree had a simulation left."""
        self.algorithm.select_leaves(
            self.nodes_i,
            self.nodes_f,
            self.edges_i,
            self.edges_f,
            self.trees_i,
            schedules,
            self.params,
            self.tables,
            self.obs,
            self.leaf_actions,
            self.leaves,
            self.cache,
            self.work,
        )
        n_leaves = self.trees_i[:, tr.TI_N_LEAVES]
        made = int(n_leaves.sum())
        if made == 0:
            return False
        self.simulations += made
        leaves = self.leaves.reshape(-1, tr.LI_COUNT)
        taken = (np.arange(self.leaves_per_call)[None, :] < n_leaves[:, None]).reshape(-1)
        cached = taken & (leaves[:, tr.LI_CACHE_SLOT] >= 0)
        need = np.flatnonzero(taken & (leaves[:, tr.LI_N_ACTIONS] > 0) & ~cached)
        self.cache_hits += int(cached.sum())
        rows = len(leaves)
        logits = np.zeros((rows, self.codec.n_actions), np.float32)
        values = np.zeros(rows, np.float32)
        if len(need):
            start = time.perf_counter()
            out_logits, out_values = evaluator(self.obs[need])
            self.nn_seconds += time.perf_counter() - start
            self.nn_calls += 1
            self.nn_positions += len(need)
            logits[need] = out_logits
            values[need] = out_values
        tr.expand_and_backup(
            self.nodes_i,
            self.nodes_f,
            self.edges_i,
            self.edges_f,
            self.trees_i,
            self.leaves,
            self.leaf_actions,
            logits,
            values,
            self.cache,
            self.work,
        )
        return True

    def principal_hops(self, t: int, first: int, length: int = 64) -> list[int]:
        """After `run`: root hop ``first`` of tree ``t``, then the most-visited hop at each node
        below it (hops, not moves: a capture chain is several), at most ``length`` of them."""
        return tr.principal_hops(self.nodes_i, self.edges_i, t, first, length)

    def _result(self, t: int, obs: np.ndarray, sample: bool, rng: np.random.Generator) -> MCTSResult:
        """Tree ``t``'s outcome; ``sample``: PUCT draws its move from the visit shares."""
        sl = tr.root_edge_slice(self.nodes_i, t)
        ne = sl.stop - sl.start
        actions = np.zeros(ne, np.int64)
        visits = np.zeros(ne, np.int64)
        tr.root_edges(self.nodes_i, self.edges_i, t, actions, visits)
        prior = self.edges_f[t, sl, tr.EF_PRIOR].copy()
        value = tr.root_value(self.nodes_i, self.nodes_f, t)
        made = int(self.nodes_i[t, 0, tr.NI_VISITS])
        if ne == 0:
            return MCTSResult(actions, visits, np.zeros(0), -1, value, obs, prior, made)
        policy, choice = self.algorithm.decide(self, t, visits, prior, sample, rng)
        return MCTSResult(actions, visits, policy, int(actions[choice]), value, obs, prior, made)


def _grown(array: np.ndarray, size: int) -> np.ndarray:
    """``array`` ``[T, n, F]`` with its second axis grown to ``size`` (new rows zero)."""
    out = np.zeros((array.shape[0], size, array.shape[2]), array.dtype)
    out[:, : array.shape[1]] = array
    return out


def uniform_evaluator(n_actions: int) -> Evaluator:
    """Equal logits and a zero value: the search and rules overhead alone (benchmarks, tests)."""

    def evaluate(obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = obs.shape[0]
        return np.zeros((n, n_actions), np.float32), np.zeros(n, np.float32)

    return evaluate
