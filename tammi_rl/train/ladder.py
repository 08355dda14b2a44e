"""In-training matches: the current network (MCTS) against the alpha-beta ladder, and the SPRT gate.

Kept small on purpose: `evaluate_vs_alphabeta` plays one match per depth with the
shipped match runner and returns the MCTS agent's score per depth, and its Elo fitted
over all those games (`tammi_rl.eval.elo`) with alpha-beta at the first depth of
``eval.alphabeta_depths`` as the anchor (rating 0). `gate_vs_incumbent` runs the
optional SPRT gating (`tammi_rl.eval.sprt`) between two networks.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from tammi_rl.config import EvalConfig, GatingConfig, MCTSConfig
from tammi_rl.eval.arena import record_of
from tammi_rl.eval.elo import EloFitError, fit_elo
from tammi_rl.eval.match import run_match
from tammi_rl.eval.sprt import GateResult, gate
from tammi_rl.players import parse_player_spec
from tammi_rl.players.mcts import MCTSPlayer
from tammi_rl.rules.engine import Rules


@dataclass
class EvalResult:
    """Score (0..1, draws 1/2) of the network per alpha-beta depth, and W/D/L."""

    scores: dict[int, float]
    wdl: dict[int, tuple[int, int, int]]
    seconds: float
    elo: float | None = None
    """The network's Elo relative to the anchor (None when it could not be fitted)."""
    elo_error: float | None = None
    anchor: str = ""

    def summary(self) -> str:
        text = " ".join(f"d{d} {s:.2f}" for d, s in self.scores.items())
        return text if self.elo is None else f"{text} Elo {self.elo:+.0f}±{self.elo_error:.0f}"


def ladder_search(device: torch.device) -> dict[str, Any]:
    """How in-training matches search: one leaf per network call in float32 (ONNX Runtime on
    the CPU), as every ladder before 8-bit batched play did, so ladders of old and new runs
    compare (the evaluation cache changes no result of a one-leaf search; it only saves time)."""
    return {"leaves_per_call": 1, "runtime": "onnx" if device.type == "cpu" else "auto"}


def evaluate_vs_alphabeta(
    rules: Rules,
    model: nn.Module,
    cfg: EvalConfig,
    device: torch.device,
    max_plies: int,
    seed: int = 0,
    mcts: MCTSConfig | None = None,
) -> EvalResult:
    """Play ``cfg.games`` games (colours alternating, shipped openings) per depth in ``cfg.alphabeta_depths``.

    The agent searches ``cfg.simulations`` per hop with the run's ``mcts`` settings; depth 0
    means the random player (a sanity floor), any other depth alpha-beta at that depth.
    """
    net = copy.deepcopy(model).to(device).eval()
    agent = MCTSPlayer(
        rules, net, cfg.simulations, device, mcts=mcts, name="network", seed=seed, **ladder_search(device)
    )
    scores: dict[int, float] = {}
    wdl: dict[int, tuple[int, int, int]] = {}
    records = []
    anchor = ""
    t0 = time.perf_counter()
    for depth in cfg.alphabeta_depths:
        baseline = parse_player_spec(f"alphabeta:depth={depth}" if depth > 0 else "random", rules)
        result = run_match(rules, agent, baseline, games=cfg.games, max_plies=max_plies, seed=seed + depth)
        scores[depth] = result.score
        wdl[depth] = (result.wins, result.draws, result.losses)
        records += [record_of(rules, g).elo_game() for g in result.games]
        anchor = anchor or baseline.name
    elo = elo_error = None
    if records:
        try:
            fit = fit_elo(records, anchor=anchor)
            elo, elo_error = fit.ratings[agent.name], fit.errors[agent.name]
        except EloFitError:
            pass
    return EvalResult(scores, wdl, time.perf_counter() - t0, elo, elo_error, anchor)


def gate_vs_incumbent(
    rules: Rules,
    candidate: nn.Module,
    incumbent: nn.Module,
    cfg: GatingConfig,
    device: torch.device,
    max_plies: int,
    seed: int = 0,
    mcts: MCTSConfig | None = None,
) -> GateResult:
    """SPRT gating (``eval.gating``): should ``candidate`` replace ``incumbent`` for self-play?

    Both networks search ``cfg.simulations`` per hop; colour-paired games until the SPRT
    decides or ``cfg.max_games`` are played. ``result.accepted`` is the answer.
    """
    players = [
        MCTSPlayer(
            rules,
            copy.deepcopy(net).to(device).eval(),
            cfg.simulations,
            device,
            mcts=mcts,
            name=name,
            seed=seed,
            **ladder_search(device),
        )
        for net, name in ((candidate, "candidate"), (incumbent, "incumbent"))
    ]
    return gate(
        rules,
        players[0],
        players[1],
        cfg.elo0,
        cfg.elo1,
        cfg.alpha,
        cfg.beta,
        cfg.max_games,
        max_plies=max_plies,
        seed=seed,
    )
