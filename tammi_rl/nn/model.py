"""Policy-value network: a residual CNN over the observation planes.

Input ``[B, C, H, W]`` planes (`tammi_rl.env.observation`), output policy logits over
the hop action space ``[B, A]`` and win/draw/loss logits ``[B, 3]`` for the side to move.

The policy head is convolutional: a 1x1 convolution gives ``4 * max_distance`` channels
per cell (one per direction and distance), and the action logits are read off at the
playable cells in canonical square order, so ``action = (square * 4 + direction) *
max_distance + distance - 1`` (`tammi_rl.rules.actions`) maps onto the board's own
geometry with no large dense layer.

With ``network.global_pooling`` every second residual block (`GlobalPoolingBlock`) also
sees a summary of the whole board; without it a block sees a 5x5 window of its input.

Two auxiliary outputs are trained but never play (`tammi_rl.train.learner`): with
``network.soft_policy`` a second 1x1 convolution on the policy head's hidden layer gives
logits of the policy's layout, trained on a softened policy target; with
``network.ownership`` a 1x1 convolution on the tower's output gives, per playable square,
logits over who holds it when the game ends (own piece, empty, opponent's piece); with
``network.short_value`` a linear layer on the value head's hidden layer gives a value in
[-1, 1] about a few moves ahead rather than at the game's end; with
``network.opponent_policy`` a third 1x1 convolution on the policy head's hidden layer,
turned 180 degrees into the opponent's frame, gives logits over the opponent's hops in
answer to the move being chosen. Only
`PolicyValueNet.forward_heads` returns them, so search, players and exported networks see
the same two outputs as without them.
"""

from __future__ import annotations

from typing import NamedTuple, cast

import torch
from torch import nn
from torch.nn import functional as F

from tammi_rl.config import NetworkConfig
from tammi_rl.env.observation import N_PLANES, ObservationEncoder
from tammi_rl.rules.actions import ActionCodec
from tammi_rl.rules.engine import Rules


class ResidualBlock(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(x + y)


class GlobalPoolingBlock(nn.Module):
    """A residual block whose first convolution's last ``pooled`` channels are batch-normed,
    averaged and maxed over the board, and turned by a linear layer into a bias for its other
    channels, which the second convolution then reads (KataGo's global pooling bias)."""

    def __init__(self, channels: int, pooled: int) -> None:
        super().__init__()
        self.local = channels - pooled
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(self.local)
        self.bn_pool = nn.BatchNorm2d(pooled)
        self.pool_fc = nn.Linear(2 * pooled, self.local)
        self.conv2 = nn.Conv2d(self.local, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv1(x)
        local, pooled = y[:, : self.local], F.relu(self.bn_pool(y[:, self.local :]))
        summary = torch.cat([pooled.mean(dim=(2, 3)), pooled.amax(dim=(2, 3))], dim=1)  # [B, 2P]
        y = F.relu(self.bn1(local) + self.pool_fc(summary)[:, :, None, None])
        y = self.bn2(self.conv2(y))
        return F.relu(x + y)


def tower(cfg: NetworkConfig) -> nn.Sequential:
    """The residual blocks; with ``global_pooling`` every second one counted from the last (the
    2nd and 4th of 4, the only one of 1) pools a third of its channels."""
    blocks: list[nn.Module] = []
    for i in range(cfg.blocks):
        if cfg.global_pooling and (cfg.blocks - 1 - i) % 2 == 0:
            blocks.append(GlobalPoolingBlock(cfg.channels, max(1, cfg.channels // 3)))
        else:
            blocks.append(ResidualBlock(cfg.channels))
    return nn.Sequential(*blocks)


class Heads(NamedTuple):
    """Every output of the network for a batch of B positions (`PolicyValueNet.forward_heads`)."""

    policy: torch.Tensor
    """[B, A] policy logits."""
    wdl: torch.Tensor
    """[B, 3] win/draw/loss logits for the side to move."""
    soft_policy: torch.Tensor | None
    """[B, A] soft-policy logits (``network.soft_policy``), else None."""
    ownership: torch.Tensor | None
    """[B, 3, S] logits of own/empty/opponent at the game's end for each of the S playable
    squares in canonical order (``network.ownership``), else None."""
    short_value: torch.Tensor | None
    """[B] short-horizon value in [-1, 1] for the side to move (``network.short_value``), else None."""
    opponent_policy: torch.Tensor | None
    """[B, A] logits of the opponent's reply, in the opponent's action frame
    (``network.opponent_policy``), else None."""


class PolicyValueNet(nn.Module):
    """Residual tower with a convolutional policy head and a WDL value head."""

    def __init__(
        self, board_size: int, cells: list[int], max_distance: int, cfg: NetworkConfig, in_planes: int = N_PLANES
    ) -> None:
        super().__init__()
        self.board_size = board_size
        self.max_distance = max_distance
        self.n_actions = len(cells) * 4 * max_distance
        self.stem = nn.Sequential(
            nn.Conv2d(in_planes, cfg.channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(cfg.channels),
            nn.ReLU(inplace=True),
        )
        self.tower = tower(cfg)
        self.policy_conv = nn.Sequential(
            nn.Conv2d(cfg.channels, cfg.channels, 1, bias=False),
            nn.BatchNorm2d(cfg.channels),
            nn.ReLU(inplace=True),
            nn.Conv2d(cfg.channels, 4 * max_distance, 1),
        )
        self.value_conv = nn.Sequential(
            nn.Conv2d(cfg.channels, 4, 1, bias=False), nn.BatchNorm2d(4), nn.ReLU(inplace=True)
        )
        self.value_fc = nn.Sequential(
            nn.Linear(4 * board_size * board_size, cfg.value_hidden),
            nn.ReLU(inplace=True),
            nn.Linear(cfg.value_hidden, 3),
        )
        self.soft_policy_out = nn.Conv2d(cfg.channels, 4 * max_distance, 1) if cfg.soft_policy else None
        self.ownership_out = nn.Conv2d(cfg.channels, 3, 1) if cfg.ownership else None
        self.short_value_out = nn.Linear(cfg.value_hidden, 1) if cfg.short_value else None
        self.opponent_policy_out = nn.Conv2d(cfg.channels, 4 * max_distance, 1) if cfg.opponent_policy else None
        self.register_buffer("cells", torch.tensor(cells, dtype=torch.long), persistent=False)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x: [B, C, H, W] -> (policy logits [B, A], WDL logits [B, 3])."""
        h = self.tower(self.stem(x))
        return self._actions(self.policy_conv(h)), self.value_fc(self.value_conv(h).flatten(1))

    def forward_heads(self, x: torch.Tensor) -> Heads:
        """x: [B, C, H, W] -> every output, the auxiliary ones the learner trains included."""
        h = self.tower(self.stem(x))
        hidden = self.policy_conv[:-1](h)
        policy = self._actions(self.policy_conv[-1](hidden))
        soft = self._actions(self.soft_policy_out(hidden)) if self.soft_policy_out is not None else None
        ownership = None
        if self.ownership_out is not None:
            cells = cast(torch.Tensor, self.cells)
            ownership = self.ownership_out(h).flatten(2).index_select(2, cells)  # [B, 3, S]
        value_hidden = self.value_fc[:-1](self.value_conv(h).flatten(1))
        short = None
        if self.short_value_out is not None:
            short = torch.tanh(self.short_value_out(value_hidden)).squeeze(1)
        reply = None
        if self.opponent_policy_out is not None:  # the opponent's frame is this one turned 180 degrees
            reply = self._actions(torch.flip(self.opponent_policy_out(hidden), dims=(2, 3)))
        return Heads(policy, self.value_fc[-1](value_hidden), soft, ownership, short, reply)

    def _actions(self, planes: torch.Tensor) -> torch.Tensor:
        """Per-cell head output [B, 4*D, H, W] -> action logits [B, A] in (square, direction,
        distance) order."""
        cells = cast(torch.Tensor, self.cells)  # a registered buffer
        p = planes.flatten(2).index_select(2, cells)  # [B, 4*D, S] in canonical square order
        b, _, s = p.shape
        return p.view(b, 4, self.max_distance, s).permute(0, 3, 1, 2).reshape(b, -1)


def build_model(rules: Rules, cfg: NetworkConfig) -> PolicyValueNet:
    """The network for one variant: board size, playable cells and action space from its rules."""
    codec = ActionCodec.for_rules(rules)
    encoder = ObservationEncoder.for_rules(rules, cfg.attack_planes)
    return PolicyValueNet(encoder.size, encoder.cells.tolist(), codec.max_distance, cfg, encoder.planes)


def input_planes(model: nn.Module) -> int:
    """Planes of the observations ``model`` reads (its stem's input channels): 11, or 13 with
    the attack planes (`tammi_rl.env.observation.plane_count`)."""
    stem = cast(nn.Sequential, model.stem)
    return int(cast(nn.Conv2d, stem[0]).in_channels)


def wdl_to_value(wdl_logits: torch.Tensor) -> torch.Tensor:
    """Scalar value in [-1, 1] for the side to move: P(win) - P(loss)."""
    probs = wdl_logits.softmax(-1)
    return probs[..., 0] - probs[..., 2]


def resolve_device(name: str) -> torch.device:
    """``auto`` picks CUDA when present, else the CPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)
