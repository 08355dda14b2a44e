"""Periodic evaluation during training: the current network (MCTS) against alpha-beta.

Kept small on purpose: `evaluate_vs_alphabeta` plays one match per depth with the
shipped match runner and returns the MCTS agent's score per depth. The evaluation
issue (arena, Elo, older checkpoints) can grow this without touching the trainer.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch
from torch import nn

from tammi_rl.rules.engine import Rules
from tammi_rl.train.config import EvalConfig, MCTSConfig


@dataclass
class EvalResult:
    """Score (0..1, draws 1/2) of the network per alpha-beta depth, and W/D/L."""

    scores: dict[int, float]
    wdl: dict[int, tuple[int, int, int]]
    seconds: float

    def summary(self) -> str:
        return " ".join(f"d{d} {s:.2f}" for d, s in self.scores.items())


def evaluate_vs_alphabeta(rules: Rules, model: nn.Module, cfg: EvalConfig, device: torch.device,
                          max_plies: int, seed: int = 0, mcts: MCTSConfig | None = None) -> EvalResult:
    """Play ``cfg.games`` games (colours alternating, shipped openings) per depth in ``cfg.alphabeta_depths``.

    The agent searches ``cfg.simulations`` per hop with the run's ``mcts`` settings; depth 0
    means the random player (a sanity floor), any other depth alpha-beta at that depth.
    """
    import time

    from tammi_rl.match import run_match
    from tammi_rl.mcts.agent import MCTSPlayer
    from tammi_rl.players import parse_player_spec

    net = copy.deepcopy(model).to(device).eval()
    agent = MCTSPlayer(rules, net, cfg.simulations, device, mcts=mcts, name="network", seed=seed)
    scores: dict[int, float] = {}
    wdl: dict[int, tuple[int, int, int]] = {}
    t0 = time.perf_counter()
    for depth in cfg.alphabeta_depths:
        baseline = parse_player_spec(f"alphabeta:depth={depth}" if depth > 0 else "random", rules)
        result = run_match(rules, agent, baseline, games=cfg.games, max_plies=max_plies, seed=seed + depth)
        scores[depth] = result.score
        wdl[depth] = (result.wins, result.draws, result.losses)
    return EvalResult(scores, wdl, time.perf_counter() - t0)
