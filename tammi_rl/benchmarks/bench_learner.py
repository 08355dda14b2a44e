"""The learner's own speed: samples/s of `Learner.step` for arms side by side.

    python -m tammi_rl.benchmarks.bench_learner                      # the shipped Russian config
    python -m tammi_rl.benchmarks.bench_learner --arm "" --arm threads=2 \\
        --arm batch_size=512 --arm precision=bf16 --arm compile --arm channels_last=0

An arm is a space-separated list of ``key=value`` changes to the config's learner:
``threads`` (torch intra-op threads), ``batch_size``, ``precision`` (fp32/bf16/auto),
``channels_last`` (0/1), ``compile`` (``torch.compile`` of the training copy) and
``network.blocks``/``network.channels`` and the switches ``network.attack_planes``,
``network.global_pooling``, ``network.soft_policy``, ``network.ownership``,
``network.short_value`` and ``network.opponent_policy`` (1 or 0). Each
arm trains a fresh network of the config on the same synthetic batches
(`bench_gpu.random_batch`: random board planes, a few legal actions a position and a random
target over them): the work of a step depends on the shapes, not on the numbers. Arms
alternate round by round so they see the same machine load; per arm it prints the median
milliseconds a step and samples a second, and the ratio to the first arm.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from tammi_rl.benchmarks.bench_gpu import random_batch
from tammi_rl.config import Config, load_config
from tammi_rl.config.cores import split_cores
from tammi_rl.env.observation import ObservationEncoder
from tammi_rl.nn.model import build_model
from tammi_rl.rules.engine import Rules
from tammi_rl.train.learner import Learner

SWITCHES = ("attack_planes", "global_pooling", "soft_policy", "ownership", "short_value", "opponent_policy")
"""The network's on/off options an arm may switch (``network.<name>=1`` or ``0``)."""
NETWORK_KEYS = ("network.blocks", "network.channels", *(f"network.{name}" for name in SWITCHES))
"""The network keys an arm may change."""


@dataclass
class Arm:
    """One learner set-up and the step times measured for it."""

    label: str
    threads: int
    batch_size: int
    precision: str
    channels_last: bool
    compile: bool
    blocks: int
    channels: int
    attack_planes: bool = False
    global_pooling: bool = False
    soft_policy: bool = False
    ownership: bool = False
    short_value: bool = False
    opponent_policy: bool = False
    step_ms: list[float] = field(default_factory=list)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.step_ms)

    @property
    def samples_per_s(self) -> float:
        return self.batch_size / (self.median_ms / 1000.0)


def parse_arm(text: str, cfg: Config) -> Arm:
    """An `Arm` from ``key=value`` words (``compile`` alone means compile=1)."""
    values: dict[str, str] = {}
    for word in text.split():
        key, _, value = word.partition("=")
        values[key] = value or "1"
    known = {"threads", "batch_size", "precision", "channels_last", "compile", *NETWORK_KEYS}
    unknown = set(values) - known
    if unknown:
        raise SystemExit(f"--arm {text!r}: unknown key(s) {sorted(unknown)}; known: {sorted(known)}")

    def switch(name: str) -> bool:
        return values.get(f"network.{name}", str(int(getattr(cfg.network, name)))) == "1"

    return Arm(
        label=text or "config",
        threads=int(values.get("threads", split_cores(cfg).learner_threads or 1)),
        batch_size=int(values.get("batch_size", cfg.train.batch_size)),
        precision=values.get("precision", cfg.train.precision),
        channels_last=values.get("channels_last", "1") == "1",
        compile=values.get("compile", "0") == "1",
        blocks=int(values.get("network.blocks", cfg.network.blocks)),
        channels=int(values.get("network.channels", cfg.network.channels)),
        attack_planes=switch("attack_planes"),
        global_pooling=switch("global_pooling"),
        soft_policy=switch("soft_policy"),
        ownership=switch("ownership"),
        short_value=switch("short_value"),
        opponent_policy=switch("opponent_policy"),
    )


class ArmRunner:
    """A learner built for one arm; `time_steps` measures its steps."""

    def __init__(self, arm: Arm, cfg: Config, rules: Rules, seed: int) -> None:
        torch.manual_seed(seed)
        net_cfg = replace(
            cfg.network,
            blocks=arm.blocks,
            channels=arm.channels,
            attack_planes=arm.attack_planes,
            global_pooling=arm.global_pooling,
            soft_policy=arm.soft_policy,
            ownership=arm.ownership,
            short_value=arm.short_value,
            opponent_policy=arm.opponent_policy,
        )
        train_cfg = replace(cfg.train, batch_size=arm.batch_size, precision=arm.precision)
        self.arm = arm
        model = build_model(rules, net_cfg)
        self.learner = Learner(model, train_cfg)
        if not arm.channels_last:
            self.learner.channels_last = False
            self.learner.model.to(memory_format=torch.contiguous_format)  # type: ignore[call-overload]
        if arm.compile:
            self.learner.model = torch.compile(self.learner.model)  # type: ignore[assignment]
        obs_shape = ObservationEncoder.for_rules(rules, net_cfg.attack_planes).shape
        rng = np.random.default_rng(seed)
        self.batches = [
            random_batch(arm.batch_size, obs_shape, model.n_actions, rules.geometry.n_squares, rng) for _ in range(4)
        ]

    def time_steps(self, steps: int) -> list[float]:
        torch.set_num_threads(self.arm.threads)
        times = []
        for i in range(steps):
            tic = time.perf_counter()
            self.learner.step(self.batches[i % len(self.batches)])
            times.append((time.perf_counter() - tic) * 1000.0)
        return times


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/russian.yaml")
    parser.add_argument("--arm", action="append", default=None, help="key=value changes (repeatable; '' = the config)")
    parser.add_argument("--steps", type=int, default=20, help="timed steps per arm per round")
    parser.add_argument("--warmup", type=int, default=5, help="untimed steps per arm before the first round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    cfg = load_config(args.config)
    rules = Rules.for_variant(cfg.variant)
    arms = [parse_arm(text, cfg) for text in (args.arm or ["", "threads=2"])]
    runners = [ArmRunner(arm, cfg, rules, args.seed) for arm in arms]
    for runner in runners:
        runner.time_steps(args.warmup)
    for _ in range(args.rounds):
        for runner in runners:
            runner.arm.step_ms += runner.time_steps(args.steps)
    print(f"learner steps, {cfg.variant}, {args.rounds} rounds x {args.steps} steps, torch {torch.__version__}")
    print(f"{'arm':<36} {'net':>6} {'batch':>5} {'thr':>3} {'ms/step':>8} {'samples/s':>10} {'ratio':>6}")
    base = arms[0].samples_per_s
    for arm in arms:
        print(
            f"{arm.label:<36} {arm.blocks}x{arm.channels:<4} {arm.batch_size:>5} {arm.threads:>3} "
            f"{arm.median_ms:>8.1f} {arm.samples_per_s:>10.0f} {arm.samples_per_s / base:>6.2f}"
        )


if __name__ == "__main__":
    main()
