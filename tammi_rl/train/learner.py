"""Learner: optimises the policy-value network on replay samples.

    learner = Learner(model, cfg.train)
    learner.set_progress(games_done / games_in_run)    # the lr schedule follows the run's games
    metrics = learner.train(replay, n_steps, rng)      # averaged loss/*, policy/entropy, ...
    worker.set_weights(learner.weights())              # the playing network's weights

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

With ``network.soft_policy`` the network's auxiliary output adds ``train.soft_policy_weight``
times the cross-entropy to the search policy raised to the power `SOFT_POLICY_POWER` and
renormalised (KataGo's auxiliary soft policy target): the flattened target puts weight on the
order of the moves the search rated low, which the sharp target hardly trains.

With ``network.ownership`` the network's ownership output adds ``train.ownership_weight`` times
the cross-entropy to who held each playable square when the sample's game ended (own piece,
empty, opponent's piece; `ownership_loss`), averaged over the squares: hundreds of labels per
position where the value has one, about the part of the board that decided the game
(KataGo's ownership target, in draughts' terms).

With ``network.short_value`` its short-horizon value output adds ``train.short_value_weight``
times the squared error to the sample's short-horizon value
(`tammi_rl.selfplay.samples.short_horizon_values`): the search values of the next few
decisions, a target with less noise than a whole game's outcome.

With ``network.opponent_policy`` its opponent-reply output adds ``train.opponent_policy_weight``
times the cross-entropy to the search policy of the opponent's answer (the first hop of the
next move, where self-play stored it), which makes the shared layers learn what the move
being chosen allows.

With ``train.ema_samples`` the network that plays (self-play, evaluation, gating,
checkpoints) is an exponential moving average of the trained weights, `WeightAverage`,
while the optimiser keeps stepping its own copy: averaging removes the noise of the last
steps without slowing learning.
"""

from __future__ import annotations

import contextlib
import copy
import math
from typing import Any, Protocol, cast

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from tammi_rl.config import TrainConfig
from tammi_rl.nn.model import Heads, PolicyValueNet
from tammi_rl.selfplay.samples import SampleBatch

SOFT_POLICY_POWER = 0.25
"""The soft-policy target is the search policy to this power, renormalised (temperature 4)."""


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


def surprise_weights(surprise: torch.Tensor, share: float) -> torch.Tensor:
    """Per-sample loss weights ``[B]`` from the policy surprises ``surprise [B]`` (NaN: not
    measured): ``1 - share`` for every sample plus ``share`` spread in proportion to its
    surprise, so the batch's mean weight stays 1 (KataGo gives half the weight this way).
    Samples without a measured surprise, and a batch with no surprise at all, weigh 1."""
    weights = torch.ones_like(surprise, dtype=torch.float32)
    known = torch.isfinite(surprise)
    if share <= 0 or not bool(known.any()):
        return weights
    s = surprise[known].float().clamp(min=0.0)
    mean = s.mean()
    if float(mean) <= 0:
        return weights
    weights[known] = (1.0 - share) + share * s / mean
    return weights


def soft_policy_target(target: torch.Tensor) -> torch.Tensor:
    """The search policy ``target [B, A]`` raised to the power `SOFT_POLICY_POWER` and
    renormalised; an action the search gave 0 stays 0."""
    soft = target.clamp(min=0.0).pow(SOFT_POLICY_POWER)
    return soft / soft.sum(1, keepdim=True).clamp(min=1e-12)


def ownership_loss(logits: torch.Tensor, owners: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of the ownership ``logits [B, 3, S]`` to the classes ``owners [B, S]``
    (own/empty/opponent; -1 not recorded, left out), each sample's squares weighted by
    ``weight [B]``; 0 when nothing is recorded."""
    known = owners >= 0
    per_square = F.cross_entropy(logits, owners.long().clamp(min=0), reduction="none")  # [B, S]
    w = known.float() * weight[:, None]
    return (per_square * w).sum() / w.sum().clamp(min=1e-8)


def short_value_loss(predicted: torch.Tensor, target: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """Weighted mean squared error of ``predicted [B]`` to ``target [B]`` over the samples whose
    target is known (NaN: not recorded); 0 when none is."""
    known = torch.isfinite(target)
    w = known.float() * weight
    error = (predicted - torch.where(known, target, torch.zeros_like(target))) ** 2
    return (error * w).sum() / w.sum().clamp(min=1e-8)


def _cross_entropy(
    logits: torch.Tensor, mask: torch.Tensor, target: torch.Tensor, rows: torch.Tensor, weight: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Weighted mean over the ``rows`` of the cross-entropy of ``target`` to the policy of
    ``logits`` over the legal actions ``mask``; also the log-probabilities (0 where illegal)."""
    logp = masked_log_softmax(logits, mask)
    logp_legal = torch.where(mask, logp, torch.zeros_like(logp))  # 0 * -inf would be nan
    w = weight[rows]
    return -((target * logp_legal).sum(1)[rows] * w).sum() / w.sum().clamp(min=1e-8), logp_legal


AUXILIARY_OUTPUTS: dict[str, str] = {
    "soft_policy": "soft_policy_weight",
    "ownership": "ownership_weight",
    "short_value": "short_value_weight",
    "opponent_policy": "opponent_policy_weight",
}
"""The network's auxiliary outputs (`Heads` fields, each the module ``<name>_out`` of the network)
and the `TrainConfig` key of each one's loss weight."""


def policy_value_loss(
    policy_logits: torch.Tensor,
    wdl_logits: torch.Tensor,
    batch: dict[str, torch.Tensor],
    value_loss_weight: float,
    value_search_weight: float = 0.0,
    sample_weight: torch.Tensor | None = None,
    auxiliary: dict[str, tuple[torch.Tensor, float]] | None = None,
) -> tuple[torch.Tensor, dict[str, float]]:
    """Total loss and its parts (plus policy entropy and value accuracy) for one batch; with
    ``sample_weight [B]`` each sample's losses count in proportion to its weight.

    ``auxiliary`` maps the auxiliary outputs trained (`AUXILIARY_OUTPUTS`) to (prediction,
    loss weight); each adds its weight times its loss, logged as ``loss/<name>``:
    ``soft_policy [B, A]`` against the softened policy target, ``ownership [B, 3, S]``
    against ``batch["ownership"]``, ``short_value [B]`` against ``batch["short_value"]``,
    ``opponent_policy [B, A]`` against ``batch["reply_legal"]``/``["reply_policy"]`` (samples
    without a target add nothing to a loss)."""
    mask, target = dense_targets(batch["legal"], batch["policy"], policy_logits.shape[1])
    has_policy = mask.any(dim=1)
    w = sample_weight if sample_weight is not None else torch.ones(mask.shape[0], device=mask.device)
    policy_loss, logp_legal = _cross_entropy(policy_logits, mask, target, has_policy, w)
    value_target = value_targets(batch["outcome"], batch.get("value"), value_search_weight)
    value_loss = -((value_target * torch.log_softmax(wdl_logits, dim=1)).sum(1) * w).sum() / w.sum().clamp(min=1e-8)
    n_policy = has_policy.sum().clamp(min=1)
    total = policy_loss + value_loss_weight * value_loss
    metrics: dict[str, float] = {}
    for name, (predicted, weight) in (auxiliary or {}).items():
        if name == "soft_policy":
            loss, _ = _cross_entropy(predicted, mask, soft_policy_target(target), has_policy, w)
        elif name == "ownership":
            loss = ownership_loss(predicted, batch["ownership"], w)
        elif name == "short_value":
            loss = short_value_loss(predicted, batch["short_value"], w)
        elif name == "opponent_policy":
            reply_mask, reply_target = dense_targets(batch["reply_legal"], batch["reply_policy"], predicted.shape[1])
            loss, _ = _cross_entropy(predicted, reply_mask, reply_target, reply_mask.any(dim=1), w)
        else:
            raise ValueError(f"unknown auxiliary output {name!r}; known: {sorted(AUXILIARY_OUTPUTS)}")
        total = total + weight * loss
        metrics[f"loss/{name}"] = float(loss.detach())
    with torch.no_grad():
        entropy = -(logp_legal.exp() * logp_legal).sum(1)[has_policy].sum() / n_policy
        accuracy = (wdl_logits.argmax(1) == batch["outcome"]).float().mean()
    metrics |= {
        "loss/policy": float(policy_loss.detach()),
        "loss/value": float(value_loss.detach()),
        "loss/total": float(total.detach()),
        "policy/entropy": float(entropy),
        "value/accuracy": float(accuracy),
    }
    return total, metrics


def is_decayed(p: nn.Parameter) -> bool:
    """Weight decay applies to weight matrices and convolution kernels, not to biases and norm scales."""
    return p.ndim > 1


def weight_norm(model: nn.Module) -> float:
    """The L2 norm of all the decayed parameters together (``train/weight_norm``).

    A kernel followed by batch norm computes the same function at any scale, so Adam's steps,
    of a size set by the learning rate alone, turn it by less and less as it grows: the
    norm's growth is a learning-rate decay the schedule does not show. Weight decay holds it.
    """
    with torch.no_grad():  # one device-to-host read, not one a parameter
        squares = sum((p.float() ** 2).sum() for p in model.parameters() if is_decayed(p))
    return math.sqrt(float(squares))


def make_optimizer(model: nn.Module, cfg: TrainConfig) -> torch.optim.Optimizer:
    """AdamW, or SGD with (Nesterov) momentum; weight decay skips biases and norm scales."""
    decay: list[nn.Parameter] = []
    no_decay: list[nn.Parameter] = []
    for p in model.parameters():
        if p.requires_grad:
            (decay if is_decayed(p) else no_decay).append(p)
    groups = [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    if cfg.optimizer == "adamw":
        return torch.optim.AdamW(groups, lr=cfg.lr)
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(groups, lr=cfg.lr, momentum=cfg.momentum, nesterov=cfg.momentum > 0)
    raise ValueError(f"train.optimizer: unknown optimizer {cfg.optimizer!r}")


def lr_factor(schedule: str, progress: float) -> float:
    """The lr multiplier at ``progress`` (0 at the run's first game, 1 at its last):
    ``cosine`` falls from 1 to 0, ``constant`` stays 1.

    The schedule follows games rather than learner steps because an asynchronous learner's
    step count over a run is not known in advance (it follows self-play's speed).
    """
    if schedule == "cosine":
        return 0.5 * (1.0 + math.cos(math.pi * min(max(progress, 0.0), 1.0)))
    if schedule == "constant":
        return 1.0
    raise ValueError(f"train.lr_schedule: unknown schedule {schedule!r}")


def autocast_dtype(precision: str, device: torch.device) -> torch.dtype | None:
    """The autocast dtype of the learner's forward for ``train.precision`` on ``device`` (None: fp32).

    ``auto`` is bf16 where the hardware runs it natively: on CUDA (fp16 on a GPU without
    bf16), and on a CPU whose oneDNN has bf16 kernels (AVX512-BF16 or AMX), where the 3x32
    network's step at batch 256 measured 36 ms against 57 ms in fp32 (0.64x; 31 ms with
    channels-last) and held-out losses matched fp32's within run-to-run noise.
    """
    if precision == "fp32":
        return None
    if precision == "bf16":
        return torch.bfloat16
    if precision != "auto":
        raise ValueError(f"train.precision: unknown precision {precision!r}")
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if device.type == "cpu" and torch.ops.mkldnn._is_mkldnn_bf16_supported():
        return torch.bfloat16
    return None


class WeightAverage:
    """An exponential moving average of a network's weights, kept as a network of its own.

    After each optimiser step ``update`` moves every floating-point entry of the state (weights
    and batch-norm statistics) a share ``1 - decay`` of the way to the trained network's, with
    ``decay = exp(-batch_size / samples)``, so the average forgets on a time constant of
    ``samples`` samples trained whatever the batch size; the first steps use a smaller decay,
    ``(1 + n) / (10 + n)`` after n updates, so the average does not linger on the initial
    weights. Integer entries (batch norm's step counts) are copied.
    """

    def __init__(self, model: nn.Module, samples: int, batch_size: int) -> None:
        if samples <= 0:
            raise ValueError(f"train.ema_samples: a weight average needs a positive time constant, not {samples}")
        self.model = copy.deepcopy(model)
        self.model.requires_grad_(False)
        self.model.eval()
        self.decay = math.exp(-batch_size / samples)
        self.updates = 0

    @torch.no_grad()
    def update(self, trained: nn.Module) -> None:
        decay = min(self.decay, (1 + self.updates) / (10 + self.updates))
        averaged = self.model.state_dict()
        for key, value in trained.state_dict().items():
            if value.is_floating_point():
                averaged[key].lerp_(value.detach(), 1.0 - decay)
            else:
                averaged[key].copy_(value)
        self.updates += 1


class Learner:
    """Owns the training copy of the network, its optimizer and lr schedule, the step count, and
    (with ``train.ema_samples``) the weight average that plays."""

    def __init__(self, model: nn.Module, cfg: TrainConfig, device: torch.device | str = "cpu") -> None:
        self.device = torch.device(device)
        self.model = model.to(self.device)
        self.cfg = cfg
        self.optimizer = make_optimizer(self.model, cfg)
        self.amp_dtype = autocast_dtype(cfg.precision, self.device)
        self.scaler: torch.amp.GradScaler | None = None
        if self.amp_dtype == torch.float16:  # a GPU without bf16: fp16 needs a loss scaler
            self.scaler = torch.amp.GradScaler("cuda")
        self.channels_last = self.device.type == "cpu"
        if self.channels_last:  # oneDNN's convolutions run faster on NHWC: 0.90x fp32, 0.85x bf16 step time
            self.model.to(memory_format=torch.channels_last)  # type: ignore[call-overload]  # torch accepts it
        lr_factor(cfg.lr_schedule, 0.0)  # an unknown schedule fails here, not at the first step
        self.step_count = 0
        self.set_progress(0.0)
        self.average = WeightAverage(self.model, cfg.ema_samples, cfg.batch_size) if cfg.ema_samples > 0 else None

    def restart_average(self, updates: int = 0) -> None:
        """Start the weight average (if any) from the network's current weights, as after
        ``updates`` updates (a resume loads the playing weights into the network first)."""
        if self.average is not None:
            self.average.model.load_state_dict(self.model.state_dict())
            self.average.updates = updates

    @property
    def playing_model(self) -> nn.Module:
        """The network that plays: the weight average with ``train.ema_samples``, else the trained one."""
        return self.average.model if self.average is not None else self.model

    def set_progress(self, progress: float) -> None:
        """Set the learning rate for ``progress`` through the run (see `lr_factor`)."""
        lr = self.cfg.lr * lr_factor(self.cfg.lr_schedule, progress)
        for group in self.optimizer.param_groups:
            group["lr"] = lr

    def trains(self, output: str) -> bool:
        """Whether the network has the auxiliary ``output`` (an `AUXILIARY_OUTPUTS` name, such as
        ``"ownership"``, switched on by ``network.<output>``) and its loss a positive weight."""
        weight = getattr(self.cfg, AUXILIARY_OUTPUTS[output])
        return getattr(self.model, f"{output}_out", None) is not None and weight > 0

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
            "surprise": torch.as_tensor(batch.surprise, dtype=torch.float32, device=self.device),
            "ownership": torch.as_tensor(batch.ownership, device=self.device),
            "short_value": torch.as_tensor(batch.short_value, dtype=torch.float32, device=self.device),
            "reply_legal": torch.as_tensor(batch.reply_legal, device=self.device),
            "reply_policy": torch.as_tensor(batch.reply_policy, dtype=torch.float32, device=self.device),
        }

    def step(self, batch: SampleBatch) -> dict[str, float]:
        """One optimisation step on ``batch``; returns its metrics (incl. ``train/lr``, ``train/grad_norm``)."""
        self.model.train()
        tensors = self._to_device(batch)
        obs = tensors["obs"]
        if self.channels_last:
            obs = obs.contiguous(memory_format=torch.channels_last)
        amp = (
            torch.autocast(self.device.type, dtype=self.amp_dtype)
            if self.amp_dtype is not None
            else contextlib.nullcontext()
        )
        trained = [name for name in AUXILIARY_OUTPUTS if self.trains(name)]
        with amp:
            if trained:
                heads = cast(PolicyValueNet, self.model).forward_heads(obs)
            else:
                policy, wdl = self.model(obs)
                heads = Heads(policy, wdl, None, None, None, None)
        policy_logits, wdl_logits = heads.policy, heads.wdl
        auxiliary = {
            name: (cast(torch.Tensor, getattr(heads, name)).float(), float(getattr(self.cfg, AUXILIARY_OUTPUTS[name])))
            for name in trained
        }
        # The loss in fp32 (a no-op without autocast): log-softmax over a few hundred actions.
        share = self.cfg.surprise_weight
        loss, metrics = policy_value_loss(
            policy_logits.float(),
            wdl_logits.float(),
            tensors,
            self.cfg.value_loss_weight,
            self.cfg.value_target_search_weight,
            surprise_weights(tensors["surprise"], share) if share > 0 else None,
            auxiliary,
        )
        self.optimizer.zero_grad(set_to_none=True)
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.optimizer)  # clip and measure the true gradient
        else:
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
        if self.scaler is not None:
            self.scaler.step(self.optimizer)  # skipped when the fp16 gradient overflowed
            self.scaler.update()
        else:
            self.optimizer.step()
        if self.average is not None:
            self.average.update(self.model)
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
        """A CPU copy of the playing network's weights, to publish to self-play workers."""
        return {k: v.detach().to("cpu", copy=True) for k, v in self.playing_model.state_dict().items()}

    def state_dict(self) -> dict[str, Any]:
        """Optimizer state and step count (the learning rate follows from the run's progress).

        The checkpoint's ``model`` holds the playing network; with a weight average the
        trained weights differ from it and are saved here as ``trained_weights``."""
        state: dict[str, Any] = {"optimizer": self.optimizer.state_dict(), "step": self.step_count}
        if self.average is not None:
            state["trained_weights"] = {k: v.detach().to("cpu", copy=True) for k, v in self.model.state_dict().items()}
            state["average_updates"] = self.average.updates
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore `state_dict` into a learner whose network already holds the checkpoint's
        ``model`` (the playing weights). Older checkpoints' states go through
        `tammi_rl.legacy.upgrade_learner_state`.

        Turning the average on or off at a resume is allowed: a new average starts from the
        playing weights, and without one the trained weights become the network."""
        lrs = [group["lr"] for group in self.optimizer.param_groups]
        self.optimizer.load_state_dict(state["optimizer"])
        for group, lr in zip(self.optimizer.param_groups, lrs, strict=True):
            group["lr"] = lr
        self.step_count = int(state["step"])
        trained = state.get("trained_weights")
        self.restart_average(int(state.get("average_updates", self.step_count)))
        if trained is not None:
            self.model.load_state_dict(trained)
