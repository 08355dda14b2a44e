"""The MCTS agent as a player (`tammi_rl.players` protocol): search each hop, return the move.

    agent = MCTSPlayer(rules, model, simulations=64, device=torch.device("cpu"))
    move = agent.choose(game)

Player spec: ``mcts:checkpoint=PATH[,sims=N,algorithm=gumbel|puct,device=auto,name=...]``.
A turn of several hops (a capture chain) is searched hop by hop; forced hops are played
without search. Evaluation play is deterministic: no root noise, greedy choice.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import torch

from tammi_rl.config import MCTSConfig, NetworkConfig
from tammi_rl.mcts.search import BatchedSearch, MCTSResult, RootState
from tammi_rl.nn.evaluator import model_evaluator
from tammi_rl.nn.model import build_model, resolve_device
from tammi_rl.players.spec import PlayerSpecError, int_option, reject_unknown
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game
from tammi_rl.rules.position import Move
from tammi_rl.store.checkpoint import CheckpointError, load_checkpoint, load_model_weights


class MCTSPlayer:
    """Chooses moves by batched MCTS (one tree) guided by a policy-value network."""

    def __init__(
        self,
        rules: Rules,
        model: torch.nn.Module,
        simulations: int = 64,
        device: torch.device | str = "cpu",
        mcts: MCTSConfig | None = None,
        name: str | None = None,
        seed: int | None = None,
    ) -> None:
        self.rules = rules
        self.device = torch.device(device)
        self.model = model.to(self.device).eval()
        self.cfg = dataclasses.replace(mcts or MCTSConfig(), simulations=simulations)
        self.simulations = simulations
        self.search = BatchedSearch(rules, self.cfg, max_trees=1, max_simulations=simulations)
        self.evaluate = model_evaluator(self.model, self.device)
        self.rng = np.random.default_rng(seed)
        self.name = name or f"mcts:sims={simulations}"
        self.last_results: list[MCTSResult] = []
        """The searches of the last `choose` call, one per searched hop (for inspection)."""

    def new_game(self, seed: int | None = None) -> None:
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def analyse(self, game: Game) -> MCTSResult:
        """Search the current state (mid-chain: after the hops played) without playing anything."""
        results = self.search.run(
            [RootState.of_game(game)], self.evaluate, self.simulations, explore=False, rng=self.rng
        )
        return results[0]

    def choose(self, game: Game) -> Move:
        """Search each hop of the turn on a copy of ``game``; return the whole move."""
        if game.is_over:
            raise ValueError("MCTSPlayer.choose called on a finished game")
        turn = game.copy()
        self.last_results = []
        while True:
            legal = turn.legal_hops()
            if len(legal) == 1:
                action = legal[0]
            else:
                result = self.analyse(turn)
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
) -> MCTSPlayer:
    """An `MCTSPlayer` with the network of a checkpoint file or run directory."""
    path = Path(checkpoint)
    if path.is_dir():
        path = path / "checkpoints" / "latest.pt"
    ckpt = load_checkpoint(path, variant=rules.variant.name)
    saved_mcts = ckpt["config"].get("mcts", {}) if isinstance(ckpt.get("config"), dict) else {}
    try:
        net_cfg = NetworkConfig(**ckpt["network"])
        mcts = MCTSConfig(**saved_mcts)
    except TypeError as exc:  # a checkpoint written by another tammi-rl version
        raise CheckpointError(f"{path}: network or search settings this tammi-rl does not know ({exc})") from None
    model = build_model(rules, net_cfg)
    load_model_weights(model, ckpt, path)
    if algorithm:
        mcts = dataclasses.replace(mcts, algorithm=algorithm)
    return MCTSPlayer(rules, model, simulations, resolve_device(device), mcts, name=name or f"mcts:{path.name}")


def make_mcts_player(rules: Rules, options: dict[str, str], spec: str) -> MCTSPlayer:
    """Factory behind the ``mcts:...`` player spec (registered in `tammi_rl.players`)."""
    reject_unknown(spec, options, {"checkpoint", "sims", "algorithm", "device", "name"})
    if "checkpoint" not in options:
        raise PlayerSpecError(f"player spec {spec!r}: mcts needs checkpoint=PATH (a .pt file or a run directory)")
    sims = int_option(spec, "sims", options["sims"], 1) if "sims" in options else 64
    algorithm = options.get("algorithm")
    if algorithm not in (None, "gumbel", "puct"):
        raise PlayerSpecError(f"player spec {spec!r}: algorithm must be gumbel or puct, got {algorithm!r}")
    return load_agent(rules, options["checkpoint"], sims, options.get("device", "auto"), algorithm, options.get("name"))
