"""A tiny Russian self-play worker, quick to build and to play (the self-play tests')."""

import torch

from tammi_rl.config import load_config
from tammi_rl.rules.engine import Rules
from tammi_rl.selfplay.worker import SelfPlayWorker

OVERRIDES = [
    "network.blocks=1",
    "network.channels=8",
    "network.value_hidden=8",
    "mcts.simulations=4",
    "mcts.gumbel_max_actions=4",
    "selfplay.parallel_games=4",
    "selfplay.games_per_iteration=4",
    "selfplay.max_plies=30",
    "selfplay.resign_threshold=-1",
    "runtime=auto",  # float32: the 8-bit runtime calibrates on what it searched, so a resumed copy plays apart
]


def make_worker(seed: int = 0) -> SelfPlayWorker:
    torch.manual_seed(0)
    return SelfPlayWorker(Rules.for_variant("russian"), load_config(None, OVERRIDES), torch.device("cpu"), seed)
