"""Self-play: B games advanced together, every decision searched in one batched search.

The worker owns a copy of the network and the search; the learner publishes weights
to it with `set_weights`. It knows nothing about replay buffers, checkpoints or logs,
so a distributed backend can run it as a remote actor unchanged.

Per decision (one hop): a position with a single legal hop is played without search
and stored nowhere; otherwise the position is searched, fully (and stored as a policy
target) or, under playout-cap randomisation, cheaply (not stored).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import torch

from tammi_rl.mcts.cursor import HopCursor
from tammi_rl.mcts.search import BatchedSearch, Evaluator
from tammi_rl.nn.model import build_model, wdl_to_value
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game
from tammi_rl.selfplay.samples import DRAW, LOSS, WIN, SampleBatch, sparse_policy
from tammi_rl.train.config import Config


def model_evaluator(model: torch.nn.Module, device: torch.device) -> Evaluator:
    """Wrap a policy-value network as a search evaluator (numpy in, numpy out)."""

    def evaluate(obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        with torch.inference_mode():
            x = torch.from_numpy(obs).to(device, non_blocking=True)
            logits, wdl = model(x)
            return logits.float().cpu().numpy(), wdl_to_value(wdl).float().cpu().numpy()

    return evaluate


@dataclass
class _Slot:
    game: Game
    cursor: HopCursor
    records: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]] = field(default_factory=list)
    play_out: bool = False
    """Resignation disabled in this game, to measure false positives."""
    would_resign: int | None = None


@dataclass
class SelfPlayResult:
    samples: SampleBatch
    games: list[Game]
    stats: dict[str, float]


class SelfPlayWorker:
    """Plays batches of self-play games with its own copy of the network."""

    def __init__(self, rules: Rules, cfg: Config, device: torch.device, seed: int) -> None:
        self.rules = rules
        self.cfg = cfg
        self.device = device
        self.model = build_model(rules, cfg.network).to(device).eval()
        sims = max(cfg.mcts.simulations, cfg.mcts.cheap_simulations)
        self.search = BatchedSearch(rules, cfg.mcts, max_trees=cfg.selfplay.parallel_games, max_simulations=sims)
        self.codec = self.search.codec
        self.rng = np.random.default_rng(seed)
        self.evaluate = model_evaluator(self.model, device)

    # --- weights and state -----------------------------------------------------------
    def set_weights(self, state_dict: dict) -> None:
        self.model.load_state_dict(state_dict)
        self.model.eval()

    def state_dict(self) -> dict:
        return {"rng": self.rng.bit_generator.state}

    def load_state_dict(self, state: dict) -> None:
        self.rng.bit_generator.state = state["rng"]

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
        return _Slot(game, HopCursor(game, self.codec), play_out=play_out)

    def play(self, n_games: int) -> SelfPlayResult:
        """Play ``n_games`` games to the end; return their samples, the games and statistics."""
        cfg, sp = self.cfg.mcts, self.cfg.selfplay
        start = time.perf_counter()
        self.search.nn_seconds, self.search.nn_calls, self.search.nn_positions = 0.0, 0, 0
        started = 0
        active: list[_Slot] = []
        finished: list[_Slot] = []
        resigned = 0
        decisions = 0
        while started < n_games or active:
            while started < n_games and len(active) < sp.parallel_games:
                active.append(self._new_slot())
                started += 1
            # Forced hops need no search.
            for slot in active:
                while not slot.game.is_over:
                    legal = slot.cursor.legal_actions()
                    if len(legal) != 1:
                        break
                    self._play_hop(slot, legal[0])
            searching = [s for s in active if not s.game.is_over]
            if searching:
                full = self.rng.random(len(searching)) < cfg.playout_cap_fraction
                sims = np.where(full, cfg.simulations, cfg.cheap_simulations)
                greedy = np.array([len(s.game.moves) >= cfg.temperature_plies for s in searching])
                results = self.search.run([s.cursor.root() for s in searching], self.evaluate, sims,
                                          explore=True, rng=self.rng, greedy=greedy)
                decisions += len(searching)
                for slot, res, is_full in zip(searching, results, full):
                    side = slot.game.position.side
                    if is_full:
                        legal, policy = sparse_policy(res.actions, res.policy)
                        slot.records.append((res.obs, legal, policy, side))
                    if (sp.resign_threshold > -1 and len(slot.game.moves) >= sp.resign_min_plies
                            and res.value < sp.resign_threshold):
                        if slot.play_out:
                            if slot.would_resign is None:
                                slot.would_resign = side
                        else:
                            slot.game.resign(side)
                            resigned += 1
                            continue
                    self._play_hop(slot, res.action)
            still = []
            for slot in active:
                (finished if slot.game.is_over else still).append(slot)
            active = still
        return self._collect(finished, time.perf_counter() - start, resigned, decisions)

    def _play_hop(self, slot: _Slot, action: int) -> None:
        move = slot.cursor.advance(action)
        if move is not None:
            slot.game.play(move)

    def _collect(self, slots: list[_Slot], seconds: float, resigned: int, decisions: int) -> SelfPlayResult:
        obs, legal, policy, outcome = [], [], [], []
        white = draw = black = 0
        false_pos = playouts = 0
        for slot in slots:
            winner = slot.game.result.winner
            white += winner == 0
            black += winner == 1
            draw += winner is None
            if slot.would_resign is not None:
                playouts += 1
                false_pos += winner != 1 - slot.would_resign
            for o, lg, p, side in slot.records:
                obs.append(o)
                legal.append(lg)
                policy.append(p)
                outcome.append(DRAW if winner is None else (WIN if winner == side else LOSS))
        n = len(slots)
        plies = sum(len(s.game.moves) for s in slots)
        if obs:
            samples = SampleBatch(np.stack(obs), np.stack(legal), np.stack(policy), np.asarray(outcome, np.int64))
        else:
            samples = SampleBatch.empty(self.search.obs_shape)
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
            "mean_nn_batch": search.nn_positions / search.nn_calls if search.nn_calls else 0.0,
            "nn_time_share": search.nn_seconds / seconds if seconds > 0 else 0.0,
        }
        return SelfPlayResult(samples, [s.game for s in slots], stats)
