"""The network as the search's leaf callback: numpy planes in, numpy logits and values out.

``evaluate(obs float32 [L, C, H, W]) -> (logits float32 [L, A], values float32 [L])``, where
each value is the expected score for the side to move in that leaf, in [-1, 1]. This is
the `tammi_rl.mcts.search.Evaluator` interface, through which every search (self-play,
the MCTS player) calls the network.
"""

from __future__ import annotations

import numpy as np
import torch

from tammi_rl.mcts.search import Evaluator
from tammi_rl.nn.model import wdl_to_value


def model_evaluator(model: torch.nn.Module, device: torch.device) -> Evaluator:
    """Wrap ``model`` (in eval mode, on ``device``) as an `Evaluator` run under inference mode."""

    def evaluate(obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        with torch.inference_mode():
            x = torch.from_numpy(obs).to(device, non_blocking=True)
            logits, wdl = model(x)
            return logits.float().cpu().numpy(), wdl_to_value(wdl).float().cpu().numpy()

    return evaluate
