"""Learner: optimises the policy-value network on replay samples.

    learner = Learner(model, cfg.train, total_steps=cfg.train.iterations * cfg.train.steps_per_iteration)
    metrics = learner.train(replay, n_steps, rng)      # averaged loss/*, policy/entropy, ...
    worker.set_weights(learner.weights())

Loss per sample: cross-entropy between the search policy target and the network's
policy restricted to the legal actions (illegal logits set to -inf before the
log-softmax, so the prediction never puts mass on them), plus ``value_loss_weight``
times the cross-entropy of the win/draw/loss head against the value target: the game
outcome, blended (``value_target_search_weight``) with the root search value, read as
the win/draw/loss distribution with that expectation and the most draw mass
(``[max(q, 0), 1 - |q|, max(-q, 0)]``). The sparse
``legal``/``policy`` arrays of a `SampleBatch` are scattered into dense ``[B, A]`` mask
and target tensors. A sample whose ``legal`` row is all -1 (a value-only sample) adds
no policy loss.
"""

from __future__ import annotations

import math
from typing import Any, Protocol, cast

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from tammi_rl.config import TrainConfig
from tammi_rl.selfplay.samples import SampleBatch


class SampleSource(Protocol):
    """Anything batches can be drawn from (the local `ReplayBuffer`, a remote one later)."""

    def sample(self, n: int, rng: np.random.Generator) -> SampleBatch: ...

    def __len__(self) -> int: ...


def dense_targets(legal: torch.Tensor, policy: torch.Tensor, n_actions: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Sparse (action index, probability) rows -> dense legal mask ``[B, A]`` and target ``[B, A]``.

    Padding (-1) is routed to a spare column ``A`` that is dropped afterwards, so it can
    never overwrite a real action.
    """
    idx = torch.where(legal >= 0, legal.long(), torch.full_like(legal, n_actions, dtype=torch.long))
    b = legal.shape[0]
    mask = torch.zeros(b, n_actions + 1, dtype=torch.bool, device=legal.device)
    mask.scatter_(1, idx, True)
    target = torch.zeros(b, n_actions + 1, dtype=torch.float32, device=legal.device)
    target.scatter_add_(1, idx, policy.float())
    return mask[:, :n_actions], target[:, :n_actions]


def masked_log_softmax(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """log-softmax over the legal actions; illegal entries are -inf (rows with none: all 0)."""
    has_any = mask.any(dim=1, keepdim=True)
    safe_mask = mask | ~has_any  # a row with no legal action would be all -inf: keep it finite
    return torch.log_softmax(logits.masked_fill(~safe_mask, float("-inf")), dim=1)


def value_targets(outcome: torch.Tensor, search_value: torch.Tensor | None, search_weight: float) -> torch.Tensor:
    """Win/draw/loss target distributions ``[B, 3]``: one-hot ``outcome [B]`` blended with
    the searched value ``search_value [B]`` (side to move's view, in [-1, 1])."""
    target = F.one_hot(outcome, 3).float()
    if search_weight > 0:
        if search_value is None:
            raise ValueError("a search-weighted value target needs the samples' search values")
        q = search_value.float().clamp(-1.0, 1.0)
        from_search = torch.stack([q.clamp(min=0.0), 1.0 - q.abs(), (-q).clamp(min=0.0)], dim=1)
        target = (1.0 - search_weight) * target + search_weight * from_search
    return target


def policy_value_loss(
    policy_logits: torch.Tensor,
    wdl_logits: torch.Tensor,
    batch: dict[str, torch.Tensor],
    value_loss_weight: float,
    value_search_weight: float = 0.0,
) -> tuple[torch.Tensor, dict[str, float]]:
    """Total loss and its parts (plus policy entropy and value accuracy) for one batch."""
    mask, target = dense_targets(batch["legal"], batch["policy"], policy_logits.shape[1])
    logp = masked_log_softmax(policy_logits, mask)
    logp_legal = torch.where(mask, logp, torch.zeros_like(logp))  # 0 * -inf would be nan
    has_policy = mask.any(dim=1)
    n_policy = has_policy.sum().clamp(min=1)
    policy_loss = -(target * logp_legal).sum(1)[has_policy].sum() / n_policy
    value_target = value_targets(batch["outcome"], batch.get("value"), value_search_weight)
    value_loss = -(value_target * torch.log_softmax(wdl_logits, dim=1)).sum(1).mean()
    total = policy_loss + value_loss_weight * value_loss
    with torch.no_grad():
        entropy = -(logp_legal.exp() * logp_legal).sum(1)[has_policy].sum() / n_policy
        accuracy = (wdl_logits.argmax(1) == batch["outcome"]).float().mean()
    metrics = {
        "loss/policy": float(policy_loss.detach()),
        "loss/value": float(value_loss.detach()),
        "loss/total": float(total.detach()),
        "policy/entropy": float(entropy),
        "value/accuracy": float(accuracy),
    }
    return total, metrics


def make_optimizer(model: nn.Module, cfg: TrainConfig) -> torch.optim.Optimizer:
    """AdamW, or SGD with (Nesterov) momentum; weight decay skips biases and norm scales."""
    decay: list[nn.Parameter] = []
    no_decay: list[nn.Parameter] = []
    for p in model.parameters():
        if p.requires_grad:
            (decay if p.ndim > 1 else no_decay).append(p)
    groups = [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    if cfg.optimizer == "adamw":
        return torch.optim.AdamW(groups, lr=cfg.lr)
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(groups, lr=cfg.lr, momentum=cfg.momentum, nesterov=cfg.momentum > 0)
    raise ValueError(f"train.optimizer: unknown optimizer {cfg.optimizer!r}")


def make_scheduler(
    optimizer: torch.optim.Optimizer, cfg: TrainConfig, total_steps: int
) -> torch.optim.lr_scheduler.LambdaLR:
    """``cosine``: lr decays from ``train.lr`` to 0 over ``total_steps``; ``constant``: fixed."""
    total = max(1, total_steps)
    if cfg.lr_schedule == "cosine":

        def factor(step: int) -> float:
            return 0.5 * (1.0 + math.cos(math.pi * min(step, total) / total))
    elif cfg.lr_schedule == "constant":

        def factor(step: int) -> float:
            return 1.0
    else:
        raise ValueError(f"train.lr_schedule: unknown schedule {cfg.lr_schedule!r}")
    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


class Learner:
    """Owns the training copy of the network, its optimizer and lr schedule, and the step count."""

    def __init__(
        self, model: nn.Module, cfg: TrainConfig, total_steps: int, device: torch.device | str = "cpu"
    ) -> None:
        self.device = torch.device(device)
        self.model = model.to(self.device)
        self.cfg = cfg
        self.optimizer = make_optimizer(self.model, cfg)
        self.scheduler = make_scheduler(self.optimizer, cfg, total_steps)
        self.step_count = 0

    @property
    def lr(self) -> float:
        return float(self.optimizer.param_groups[0]["lr"])

    def _to_device(self, batch: SampleBatch) -> dict[str, torch.Tensor]:
        return {
            "obs": torch.as_tensor(batch.obs, dtype=torch.float32, device=self.device),
            "legal": torch.as_tensor(batch.legal, device=self.device),
            "policy": torch.as_tensor(batch.policy, dtype=torch.float32, device=self.device),
            "outcome": torch.as_tensor(batch.outcome, dtype=torch.long, device=self.device),
            "value": torch.as_tensor(batch.value, dtype=torch.float32, device=self.device),
        }

    def step(self, batch: SampleBatch) -> dict[str, float]:
        """One optimisation step on ``batch``; returns its metrics (incl. ``train/lr``, ``train/grad_norm``)."""
        self.model.train()
        tensors = self._to_device(batch)
        policy_logits, wdl_logits = self.model(tensors["obs"])
        loss, metrics = policy_value_loss(
            policy_logits, wdl_logits, tensors, self.cfg.value_loss_weight, self.cfg.value_target_search_weight
        )
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if self.cfg.grad_clip > 0:
            norm = nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.grad_clip)
        else:
            # A Tensor: after backward() every trainable parameter has a gradient, so the sum is never the bare 0.
            squares = cast(
                torch.Tensor, sum((p.grad.detach() ** 2).sum() for p in self.model.parameters() if p.grad is not None)
            )
            norm = torch.sqrt(squares)
        metrics["train/lr"] = self.lr
        self.optimizer.step()
        self.scheduler.step()
        self.step_count += 1
        metrics["train/grad_norm"] = float(norm)
        return metrics

    def train(self, source: SampleSource, n_steps: int, rng: np.random.Generator) -> dict[str, float]:
        """``n_steps`` steps on batches drawn from ``source``; metrics averaged over the steps."""
        totals: dict[str, float] = {}
        for _ in range(n_steps):
            for key, value in self.step(source.sample(self.cfg.batch_size, rng)).items():
                totals[key] = totals.get(key, 0.0) + value
        return {key: value / n_steps for key, value in totals.items()} if n_steps else {}

    def weights(self) -> dict[str, torch.Tensor]:
        """A CPU copy of the network weights, to publish to self-play workers."""
        return {k: v.detach().to("cpu", copy=True) for k, v in self.model.state_dict().items()}

    def state_dict(self) -> dict[str, Any]:
        """Optimizer, schedule and step count (the weights are saved separately)."""
        return {
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "step": self.step_count,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.step_count = int(state["step"])
