"""Self-play: B games advanced together, every decision searched in one batched search.

The worker owns a copy of the network and the search; the learner publishes weights
to it with `set_weights`. It knows nothing about replay buffers, checkpoints or logs,
so a distributed backend can run it as a remote actor unchanged.

Per decision (one hop): a position with a single legal hop is played without search
and stored nowhere; otherwise the position is searched, fully (and stored as a policy
target) or, under playout-cap randomisation, cheaply (not stored).

The worker always keeps ``selfplay.parallel_games`` games in play, so every network
call sees a full batch: `play(n)` returns once at least ``n`` games have finished, and
games still running carry over to the next call (they go on with whatever weights are
published meanwhile, as in asynchronous AlphaZero). Measured on the Russian config
(32 parallel games): 103 positions/s when every call started and finished its own 32
games (mean network batch 14), against 149 positions/s with the batch kept full.
In-progress games are part of `state_dict`, so a resumed run continues them exactly.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

import numpy as np
import torch

from tammi_rl.config import Config
from tammi_rl.config.cores import worker_threads
from tammi_rl.env.observation import ObservationEncoder, plane_count
from tammi_rl.mcts.search import BatchedSearch, RootState
from tammi_rl.nn.model import build_model
from tammi_rl.nn.runtime import make_runtime
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game
from tammi_rl.rules.position import Move, Position
from tammi_rl.rules.results import REASONS, GameResult
from tammi_rl.selfplay.samples import (
    DRAW,
    LOSS,
    MAX_LEGAL,
    WIN,
    SampleBatch,
    policy_surprise,
    short_horizon_values,
    sparse_policy,
)

END_KEYS = {reason: f"ends_{reason}" for reason in REASONS}
"""The stats key that counts the finished games ended by each `GameResult.reason` (the ply cap
is ``adjudication``); TensorBoard shows each as a share of the games (``selfplay/end/REASON``)."""


class StoredDecision(NamedTuple):
    """One stored decision of a game in progress."""

    obs: np.ndarray
    legal: np.ndarray
    policy: np.ndarray
    side: int
    value: float
    """The root search value (NaN: not known, from an old checkpoint)."""
    surprise: float
    move: int
    """Whole moves played before this decision (-1: not known, from an old checkpoint)."""
    first_hop: bool
    """The decision is the first hop of its move (the opponent's reply to the move before)."""


@dataclass
class _Slot:
    game: Game
    records: list[StoredDecision] = field(default_factory=list)
    """The game's stored decisions, in order."""
    play_out: bool = False
    """Resignation disabled in this game, to measure false positives."""
    would_resign: int | None = None


def opponent_replies(records: list[StoredDecision]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The opponent-reply policy target of each record: the legal hops and search policy of
    the first hop of the next move (the opponent's answer), or an empty target (legal all -1)
    where that decision was not stored (forced, searched cheaply, or the game ended)."""
    first_of_move = {r.move: r for r in records if r.first_hop and r.move >= 0}
    none = (np.full(MAX_LEGAL, -1, np.int32), np.zeros(MAX_LEGAL, np.float32))
    replies = []
    for r in records:
        reply = first_of_move.get(r.move + 1) if r.move >= 0 else None
        replies.append((reply.legal, reply.policy) if reply is not None else none)
    return replies


class GameRecord(Protocol):
    """What a self-play result keeps of a finished game: a `Game`, or a distributed backend's
    copy of one without its `Rules` (what the trainer needs for PDN)."""

    @property
    def moves(self) -> list[Move]: ...
    @property
    def positions(self) -> list[Position]: ...
    @property
    def result(self) -> GameResult | None: ...


@dataclass
class SelfPlayResult:
    samples: SampleBatch
    games: list[GameRecord]
    stats: dict[str, float]


class SelfPlayWorker:
    """Plays batches of self-play games with its own copy of the network."""

    def __init__(self, rules: Rules, cfg: Config, device: torch.device, seed: int) -> None:
        self.rules = rules
        self.cfg = cfg
        self.device = device
        self.model = build_model(rules, cfg.network).to(device).eval()
        sims = max(cfg.mcts.simulations, cfg.mcts.cheap_simulations)
        self.search = BatchedSearch(
            rules,
            cfg.mcts,
            max_trees=cfg.selfplay.parallel_games,
            max_simulations=sims,
            planes=plane_count(cfg.network.attack_planes),
        )
        self.simulations = cfg.mcts.simulations
        """Simulations of a full search; the trainer moves it under progressive simulations
        (`set_simulations`)."""
        self.codec = self.search.codec
        self.encoder = ObservationEncoder.for_rules(rules)
        self.rng = np.random.default_rng(seed)
        self.runtime = make_runtime(self.model, device, cfg.runtime, worker_threads(cfg))
        self.evaluate = self.runtime.evaluate
        self._active: list[_Slot] = []
        """Games in progress; they carry over from one `play` call to the next."""

    # --- weights and state -----------------------------------------------------------
    def set_weights(self, state_dict: dict) -> None:
        self.model.load_state_dict(state_dict)
        self.model.eval()
        self.runtime.update(self.model)

    def set_simulations(self, simulations: int) -> None:
        """Search the next decisions with ``simulations`` a full search; a cheap search of the
        playout cap keeps its share of the full count (``cheap_simulations`` at mcts.simulations)."""
        if simulations < 1:
            raise ValueError(f"simulations must be at least 1, got {simulations}")
        self.simulations = int(simulations)

    def state_dict(self) -> dict:
        """RNG state and the games in progress (plain data: numpy arrays, numbers, strings)."""
        return {"rng": self.rng.bit_generator.state, "games": [self._slot_state(s) for s in self._active]}

    def load_state_dict(self, state: dict) -> None:
        self.rng.bit_generator.state = state["rng"]
        games = state.get("games", [])[: self.cfg.selfplay.parallel_games]  # a resume may lower it
        self._active = [self._slot_from_state(i, g) for i, g in enumerate(games)]

    def _slot_state(self, slot: _Slot) -> dict:
        records = slot.records
        shape = self.search.obs_shape
        return {
            "start": self.rules.fen(slot.game.positions[0]),
            "moves": [np.asarray(m.path, np.int64) for m in slot.game.moves],
            "prefix": np.asarray(slot.game.chain_path(), np.int64),
            "play_out": slot.play_out,
            "would_resign": -1 if slot.would_resign is None else slot.would_resign,
            "obs": np.stack([r.obs for r in records]) if records else np.zeros((0, *shape), np.float32),
            "legal": np.stack([r.legal for r in records]) if records else np.zeros((0, MAX_LEGAL), np.int32),
            "policy": np.stack([r.policy for r in records]) if records else np.zeros((0, MAX_LEGAL), np.float32),
            "sides": np.asarray([r.side for r in records], np.int64),
            "values": np.asarray([r.value for r in records], np.float32),
            "surprise": np.asarray([r.surprise for r in records], np.float32),
            "record_move": np.asarray([r.move for r in records], np.int64),
            "record_first_hop": np.asarray([r.first_hop for r in records], bool),
        }

    def _slot_from_state(self, index: int, state: dict) -> _Slot:
        game = Game(self.rules, start=self.rules.parse_fen(state["start"]), max_plies=self.cfg.selfplay.max_plies)
        for ply, path in enumerate(state["moves"]):
            path = tuple(int(s) for s in path)
            move = next((m for m in game.legal_moves() if m.path == path), None)
            if move is None:
                names = "-".join(self.rules.square_name(s) for s in path)
                raise ValueError(
                    f"saved self-play game {index}: move {ply + 1} ({names}) is not legal in "
                    f"{self.rules.fen(game.position)}; was the variant changed since the checkpoint?"
                )
            game.play(move)
        prefix = [int(s) for s in state["prefix"]]
        for frm, to in itertools.pairwise(prefix):  # the hops of an unfinished capture chain
            game.play_hop(self.codec.hop(game.side, frm, to))
        values = state["values"]  # NaN: no search value (`tammi_rl.legacy.upgrade_selfplay_state`), read as the outcome
        surprise = state["surprise"]  # NaN: not measured (the same upgrade)
        records = [
            StoredDecision(o, lg, p, int(side), float(v), float(u), int(m), bool(f))
            for o, lg, p, side, v, u, m, f in zip(
                state["obs"],
                state["legal"],
                state["policy"],
                state["sides"],
                values,
                surprise,
                state["record_move"],  # -1: not known (the same upgrade)
                state["record_first_hop"],
                strict=False,
            )
        ]
        would = int(state["would_resign"])
        return _Slot(game, records, bool(state["play_out"]), None if would < 0 else would)

    # --- playing -----------------------------------------------------------------------
    def _new_slot(self) -> _Slot:
        sp = self.cfg.selfplay
        game = Game(self.rules, max_plies=sp.max_plies)
        for _ in range(sp.random_opening_plies):
            moves = game.legal_moves()
            if not moves:
                break
            game.play(moves[int(self.rng.integers(len(moves)))])
        play_out = bool(self.rng.random() < sp.resign_playout_fraction)
        return _Slot(game, play_out=play_out)

    def play(self, n_games: int) -> SelfPlayResult:
        """Play until at least ``n_games`` games have finished; return those games, their samples
        and statistics (games still running carry over to the next call)."""
        cfg, sp = self.cfg.mcts, self.cfg.selfplay
        start = time.perf_counter()
        self.search.nn_seconds, self.search.nn_calls, self.search.nn_positions = 0.0, 0, 0
        self.search.simulations = 0
        finished: list[_Slot] = []
        resigned = 0
        decisions = 0
        while len(finished) < n_games:
            while len(self._active) < sp.parallel_games:
                self._active.append(self._new_slot())
            active = self._active
            # Forced hops need no search.
            for slot in active:
                while not slot.game.is_over:
                    hops = slot.game.legal_hops()
                    if len(hops) != 1:
                        break
                    slot.game.play_hop(hops[0])
            searching = [s for s in active if not s.game.is_over]
            if searching:
                # Playout cap: the whole batch searches full or cheap together, so the batch
                # stays full (mixed, the cheap trees drop out and leave the full ones alone).
                full_step = cfg.playout_cap_fraction >= 1.0 or self.rng.random() < cfg.playout_cap_fraction
                full = np.full(len(searching), full_step)
                sims = self.simulations if full_step else self._cheap_simulations()
                greedy = np.array([len(s.game.moves) >= cfg.temperature_plies for s in searching])
                results = self.search.run(
                    [RootState.of_game(s.game, self.cfg.mcts.repetition_draws) for s in searching],
                    self.evaluate,
                    sims,
                    explore=True,
                    rng=self.rng,
                    greedy=greedy,
                )
                decisions += len(searching)
                for slot, res, is_full in zip(searching, results, full, strict=True):
                    side = slot.game.position.side
                    if is_full:
                        legal, policy = sparse_policy(res.actions, res.policy)
                        surprise = policy_surprise(res.policy, res.prior)
                        first_hop = not slot.game.chain_path()
                        move = len(slot.game.moves)
                        slot.records.append(
                            StoredDecision(res.obs, legal, policy, side, res.value, surprise, move, first_hop)
                        )
                    if (
                        sp.resign_threshold > -1
                        and len(slot.game.moves) >= sp.resign_min_plies
                        and res.value < sp.resign_threshold
                    ):
                        if slot.play_out:
                            if slot.would_resign is None:
                                slot.would_resign = side
                        else:
                            slot.game.resign(side)
                            resigned += 1
                            continue
                    slot.game.play_hop(res.action)
            still: list[_Slot] = []
            for slot in active:
                (finished if slot.game.is_over else still).append(slot)
            self._active = still
        return self._collect(finished, time.perf_counter() - start, resigned, decisions)

    def _cheap_simulations(self) -> int:
        """A cheap search's simulations: ``cheap_simulations``, scaled by the full count's share
        of mcts.simulations under progressive simulations (so the cap saves what it did)."""
        cfg = self.cfg.mcts
        if self.simulations == cfg.simulations:
            return cfg.cheap_simulations
        return max(1, round(cfg.cheap_simulations * self.simulations / cfg.simulations))

    def _collect(self, slots: list[_Slot], seconds: float, resigned: int, decisions: int) -> SelfPlayResult:
        obs, legal, policy, outcome, value, surprise, ownership, short = [], [], [], [], [], [], [], []
        reply_legal, reply_policy = [], []
        white = draw = black = 0
        false_pos = playouts = 0
        ends = dict.fromkeys(END_KEYS.values(), 0.0)
        for slot in slots:
            result = slot.game.result
            assert result is not None  # only finished games are collected
            ends[END_KEYS[result.reason]] += 1
            winner = result.winner
            white += winner == 0
            black += winner == 1
            draw += winner is None
            if slot.would_resign is not None:
                playouts += 1
                false_pos += winner != 1 - slot.would_resign
            owners = self.encoder.square_owners(slot.game.position)  # the last position: ownership targets
            searched = np.asarray([r.value for r in slot.records], np.float64)
            sides = np.asarray([r.side for r in slot.records], np.int64)
            short.append(short_horizon_values(searched, sides, winner, self.cfg.train.short_value_horizon))
            replies = opponent_replies(slot.records)
            for (o, lg, p, side, v, u, _, _), (rl, rp) in zip(slot.records, replies, strict=True):
                reply_legal.append(rl)
                reply_policy.append(rp)
                obs.append(o)
                legal.append(lg)
                policy.append(p)
                surprise.append(u)
                ownership.append(owners[side])
                z = 0.0 if winner is None else (1.0 if winner == side else -1.0)
                value.append(z if np.isnan(v) else v)
                outcome.append(DRAW if winner is None else (WIN if winner == side else LOSS))
        n = len(slots)
        plies = sum(len(s.game.moves) for s in slots)
        if obs:
            samples = SampleBatch(
                np.stack(obs),
                np.stack(legal),
                np.stack(policy),
                np.asarray(outcome, np.int64),
                np.asarray(value, np.float32),
                np.asarray(surprise, np.float32),
                np.stack(ownership),
                np.concatenate(short),
                np.stack(reply_legal),
                np.stack(reply_policy),
            )
        else:
            samples = SampleBatch.empty(self.search.obs_shape, self.rules.geometry.n_squares)
        search = self.search
        stats = {
            "games": float(n),
            "positions": float(len(samples)),
            "plies": float(plies),
            "decisions": float(decisions),
            "seconds": seconds,
            "games_per_s": n / seconds if seconds > 0 else 0.0,
            "positions_per_s": len(samples) / seconds if seconds > 0 else 0.0,
            "mean_game_length": plies / n if n else 0.0,
            "white_win": white / n if n else 0.0,
            "draw": draw / n if n else 0.0,
            "black_win": black / n if n else 0.0,
            "resigned": float(resigned),
            "resign_false_positive_rate": false_pos / playouts if playouts else 0.0,
            "resign_playouts": float(playouts),
            "resign_false_positives": float(false_pos),
            **ends,
            "mean_nn_batch": search.nn_positions / search.nn_calls if search.nn_calls else 0.0,
            "nn_time_share": search.nn_seconds / seconds if seconds > 0 else 0.0,
            "nn_seconds": search.nn_seconds,
            "nn_calls": float(search.nn_calls),
            "nn_positions": float(search.nn_positions),
            "simulations": float(search.simulations),
            "simulations_per_decision": search.simulations / decisions if decisions else 0.0,
        }
        return SelfPlayResult(samples, [s.game for s in slots], stats)
