"""The run config: one dataclass per section, every key documented and bounded where declared.

A key's limits (``min``/``max``, ``choices``) are enforced by `tammi_rl.config.fields.check`;
rules that involve more than one key, or a value no limit can express, live in `validate`.
`describe_fields` lists every key for a reference (type, default, documentation).

The defaults are the shipped CPU recipe, a Russian run sized for 2 cores (``configs/russian.yaml``
names only the variant), so a config file states only what differs from it.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from tammi_rl.config.fields import ConfigError, check, describe, section, setting, show
from tammi_rl.rules.variant import load_variant

RUNTIMES = ("auto", "torch", "onnx", "onnx-int8")
"""Inference runtimes of the network in search (`tammi_rl.nn.runtime`)."""


@dataclass
class NetworkConfig:
    """Residual policy-value network (`tammi_rl.nn.model`): a convolutional stem, a tower of
    residual blocks, a policy head and a win/draw/loss value head."""

    blocks: int = setting(4, "Residual blocks in the tower; more blocks give a stronger but slower network.", min=1)
    channels: int = setting(48, "Convolution channels (filters) of the stem and of every residual block.", min=1)
    value_hidden: int = setting(64, "Hidden units of the fully connected layer in the win/draw/loss value head.", min=1)
    attack_planes: bool = setting(
        False,
        "Two more input planes: the opponent's pieces the side to move could jump with its next "
        "hop, and its own pieces the opponent could jump (rules facts, as Go networks are given "
        "liberties); a network trained with them reads only observations that carry them.",
    )
    global_pooling: bool = setting(
        False,
        "Global pooling in every second residual block, counted from the last: a third of its "
        "channels are averaged and maxed over the board and give the other channels a bias, so one "
        "block sees the whole board (material, tempo, a far king) rather than a 5x5 window "
        "(KataGo's global pooling bias).",
    )
    soft_policy: bool = setting(
        False,
        "An auxiliary policy output trained on the softened search policy (train.soft_policy_weight); "
        "it shares the policy head's hidden layer, never plays and is left out of exported networks.",
    )
    ownership: bool = setting(
        False,
        "An auxiliary output that predicts, for every playable square, whether it ends the game "
        "with a piece of the side to move, empty, or with an opponent's piece (train.ownership_weight; "
        "draughts' counterpart of KataGo's ownership target); it never plays and is left out of "
        "exported networks.",
    )
    short_value: bool = setting(
        False,
        "An auxiliary value output, beside the win/draw/loss head on its hidden layer, trained on "
        "the short-horizon value (train.short_value_weight, train.short_value_horizon); it never "
        "plays and is left out of exported networks.",
    )
    opponent_policy: bool = setting(
        False,
        "An auxiliary policy output for the opponent's reply to the move being chosen "
        "(train.opponent_policy_weight; KataGo's opponent-reply target); it shares the policy "
        "head's hidden layer, never plays and is left out of exported networks.",
    )


SEARCH_ALGORITHMS = ("gumbel", "puct")
"""The tree searches `tammi_rl.mcts` implements (``mcts.algorithm``, ``eval.algorithm``, specs)."""


@dataclass
class MCTSConfig:
    """Batched tree search used for every self-play, evaluation and gating move. A multi-capture
    move is searched hop by hop; a position with one legal hop is played without a search."""

    algorithm: str = setting(
        "gumbel",
        'Search algorithm: "gumbel" (Gumbel root sampling with sequential halving, useful targets '
        'even at few simulations) or "puct" (AlphaZero\'s PUCT with Dirichlet noise at the root).',
        choices=SEARCH_ALGORITHMS,
    )
    simulations: int = setting(32, "Simulations per searched hop, the root's own evaluation included.", min=1)
    progressive_from: int = setting(
        0,
        "Progressive simulations: self-play starts the run searching this many simulations a hop and "
        "grows them geometrically to mcts.simulations as the run goes along its schedule (the "
        "fraction the learning rate follows), so a young network spends little on search "
        "(MiniZero's progressive simulation); 0 keeps mcts.simulations throughout. Evaluation "
        "and the trained agent's play are not affected.",
        min=0,
    )
    c_puct: float = setting(
        1.5,
        "PUCT exploration constant: larger values follow the network's prior more and "
        "the search values less (puct only).",
    )
    fpu_reduction: float = setting(
        0.0,
        "PUCT first-play urgency: an unvisited move's value is the position's network value minus "
        "this times the square root of the prior already visited, 0 meaning the network value "
        "(puct only).",
        min=0.0,
    )
    dirichlet_alpha: float = setting(
        0.3,
        "Concentration of the Dirichlet noise added to the root prior in "
        "self-play; smaller values put the noise on fewer moves (puct only).",
        min=0.0,
        min_exclusive=True,
    )
    dirichlet_fraction: float = setting(
        0.25,
        "Share of the root prior replaced by Dirichlet noise in self-play, 0 meaning no noise (puct only).",
        min=0.0,
        max=1.0,
    )
    gumbel_max_actions: int = setting(
        16,
        "Root actions sampled (Gumbel top-k) and then narrowed down by "
        "sequential halving; a root with fewer legal hops considers all of "
        "them (gumbel only).",
        min=1,
    )
    gumbel_c_visit: float = setting(
        50.0,
        "c_visit of the transform sigma(q) = (c_visit + most visits of a "
        "root child) * c_scale * q that weighs search values against the "
        "prior logits (gumbel only).",
    )
    gumbel_c_scale: float = setting(
        0.1,
        "c_scale of that transform: smaller values keep noisy search values "
        "out of the policy targets; 0.1 is mctx's default (gumbel only).",
    )
    temperature: float = setting(
        1.0,
        "Exploration temperature: moves are sampled with probability proportional "
        "to visits^(1/temperature), 0 meaning always the most visited (puct only; "
        "gumbel samples through its Gumbel noise).",
        min=0.0,
    )
    temperature_plies: int = setting(
        16,
        "Plies (per game, both sides counted) played by sampling from the "
        "search policy; later plies play the best move.",
        min=0,
    )
    playout_cap_fraction: float = setting(
        1.0,
        "Share of searches that use the full mcts.simulations and are stored as policy targets; the rest "
        "use cheap_simulations and are not stored (1 disables this playout cap; under "
        "mcts.progressive_from both counts grow together). The games searched "
        "together draw one lot per step, so a batch is all full or all cheap and stays whole.",
        min=0.0,
        max=1.0,
    )
    cheap_simulations: int = setting(
        16, "Simulations per hop of a cheap search (playout cap, when playout_cap_fraction is below 1).", min=1
    )
    play_forced_hops: bool = setting(
        True,
        "In self-play trees, play a hop that has no alternative (the rest of a capture chain, the only "
        "legal capture) without a network call, so every simulation's evaluation lands on a position "
        "with a real choice. The agent's own search outside self-play follows eval.play_forced_hops.",
    )
    repetition_draws: bool = setting(
        False,
        "In self-play trees, score a position that repeats one on its path, or one the game has "
        "already seen since its last capture or man move, as a draw (one cycle before the threefold "
        "rule, as alpha-beta does), instead of searching on as if the game went on. The agent's own "
        "search outside self-play follows eval.repetition_draws.",
    )


@dataclass
class SelfPlayConfig:
    """Self-play games that produce the training samples."""

    games_per_iteration: int = setting(32, "Self-play games finished per training iteration.", min=1)
    parallel_games: int = setting(
        32,
        "Games played at once and searched as one batch, so each simulation step "
        "is one network call over up to this many positions.",
        min=1,
    )
    max_plies: int = setting(
        200,
        "Length cap in plies (a whole move, captures included, is one ply) of "
        "self-play, evaluation and gating games; a game reaching it is decided by "
        "the variant's adjudication rule.",
        min=1,
    )
    random_opening_plies: int = setting(
        0,
        "Uniformly random plies played at the start of every self-play game to vary the openings, 0 meaning none.",
        min=0,
    )
    resign_threshold: float = setting(
        -0.95,
        "Resign when the searched value of the side to move (from -1, "
        "lost, to +1, won) falls below this; -1 or less disables "
        "resignation.",
    )
    resign_min_plies: int = setting(20, "Plies a game must have reached before a side may resign.", min=0)
    workers: int | str = setting(
        "auto",
        'Self-play worker processes beside the trainer: "auto" (the cores this process may use that the '
        "learner's threads do not, plus one; every core on CUDA), "
        "a number, or 0 (self-play and learning take turns in the trainer process, exactly reproducible).",
        min=0,
        choices=("auto",),
    )
    max_restarts: int = setting(
        3,
        "Times one self-play worker (a process, or a Ray actor) may die and be replaced before the run "
        "stops with an error naming it.",
        min=0,
    )
    inference: str = setting(
        "auto",
        '"local" (each worker runs its own copy of the network), "server" (the workers\' positions go to '
        'one inference process that batches across them, the GPU path) or "auto" (server on CUDA, else local).',
        choices=("auto", "local", "server"),
    )
    resign_playout_fraction: float = setting(
        0.2,
        "Share of would-be-resigned games played out to the end instead, to measure how often resigning was wrong.",
        min=0.0,
        max=1.0,
    )


@dataclass
class ReplayConfig:
    """Replay buffer: a sliding window of the newest self-play samples."""

    capacity: int = setting(
        100_000, "Samples (positions) the buffer holds; once full, each new sample replaces the oldest.", min=1
    )
    min_samples: int = setting(
        2_000, "Learning starts once the buffer holds this many samples; at most replay.capacity."
    )


@dataclass
class TrainConfig:
    """The learner: optimiser, learning-rate schedule and loss weights."""

    iterations: int = setting(
        2000,
        "Iterations in the whole run: the unit of logging, evaluation and checkpoints; one ends each "
        "time selfplay.games_per_iteration more games have finished.",
        min=1,
    )
    hours: float = setting(
        2.0,
        "Wall-clock budget of the whole run in hours, resumed sessions included (0: none). With a "
        "budget the run ends after the iteration that leaves too little time for one more and the "
        "final evaluation, train.iterations is only a cap, and the lr schedule follows whichever of "
        "iterations and time is further along. Sizes a run to the machine it runs on; the games it "
        "plays then depend on that machine's speed, so such a run is not exactly reproducible.",
        min=0.0,
        max=1e4,
    )
    batch_size: int = setting(256, "Samples per learning step.", min=1)
    replay_ratio: float = setting(
        4.0,
        "Samples trained per new self-play sample (learner steps x batch_size over positions played), "
        "held by pacing the learner and, if it falls behind, self-play; counted from the run's start, "
        "once the buffer holds replay.min_samples.",
        min=0.0,
        min_exclusive=True,
        max=1e6,
    )
    publish_every: int = setting(
        20,
        "Learner steps between publications of the weights to the self-play workers (workers > 0); "
        "each publication costs a worker about 35 ms (the 3x32 net's ONNX export; with runtime onnx-int8 "
        "about 0.25 s more for the 4x48 net, to quantize).",
        min=1,
    )
    optimizer: str = setting("adamw", '"adamw" (AdamW) or "sgd" (SGD with train.momentum).', choices=("adamw", "sgd"))
    lr: float = setting(2e-3, "Learning rate at the start of the schedule.", min=0.0, min_exclusive=True)
    lr_schedule: str = setting(
        "cosine",
        '"cosine": the learning rate falls from train.lr to 0 as the run goes from its first to its '
        "last game (iterations x selfplay.games_per_iteration), or through its train.hours budget when "
        'that is further along; "constant": it stays at train.lr.',
        choices=("cosine", "constant"),
    )
    weight_decay: float = setting(
        1e-4,
        "Weight decay of the weight matrices and convolution kernels (biases and "
        "normalisation scales have none), 0 meaning none.",
        min=0.0,
    )
    momentum: float = setting(0.9, "SGD momentum, Nesterov when above 0 and plain SGD at 0 (sgd only).")
    value_loss_weight: float = setting(1.0, "Weight of the value (win/draw/loss) loss; the policy loss has weight 1.")
    value_target_search_weight: float = setting(
        0.5,
        "Share of the root search value in the value target: 0 trains on the game outcome alone "
        "(AlphaZero), 0.5 on the average of outcome and search value, which is less noisy early in "
        "training.",
        min=0.0,
        max=1.0,
    )
    precision: str = setting(
        "auto",
        'Arithmetic of the learner\'s forward pass: "auto" (bf16 autocast where the hardware runs it '
        'natively: CUDA, or a CPU with AVX512-BF16/AMX; else fp32), "fp32" or "bf16". Weights, '
        "optimizer and loss stay fp32.",
        choices=("auto", "fp32", "bf16"),
    )
    grad_clip: float = setting(
        5.0, "Largest gradient norm; a larger gradient is scaled down to it (0 or less disables clipping)."
    )
    surprise_weight: float = setting(
        0.0,
        "Share of each sample's loss weight given in proportion to its policy surprise (how far "
        "the search moved from the network's prior, KL in nats) instead of evenly, so positions "
        "where the network was wrong teach more; a batch's mean weight stays 1 (0: every sample "
        "weighs the same; KataGo uses 0.5).",
        min=0.0,
        max=1.0,
    )
    mirror_samples: bool = setting(
        False,
        "Train each sample mirrored left to right with probability 1/2 (planes, hops and "
        "ownership), as AlphaGo Zero trained on Go's symmetries; only for a board with that "
        "symmetry (Turkish), an error on any other.",
    )
    soft_policy_weight: float = setting(
        8.0,
        "Weight of the soft-policy loss when network.soft_policy is on: the cross-entropy of the "
        "auxiliary output to the search policy raised to the power 1/4 and renormalised, which "
        "teaches the order of the moves the search rated low (KataGo's weight is 8).",
        min=0.0,
    )
    ownership_weight: float = setting(
        1.0,
        "Weight of the ownership loss when network.ownership is on: the cross-entropy of the "
        "ownership output to who held each square at the game's end, averaged over the squares.",
        min=0.0,
    )
    short_value_weight: float = setting(
        1.0,
        "Weight of the short-horizon value loss when network.short_value is on: the squared error "
        "of the auxiliary value output to the short-horizon value target.",
        min=0.0,
    )
    short_value_horizon: float = setting(
        6.0,
        "Horizon, in searched decisions, of the short-horizon value target: an exponentially "
        "weighted average of the search values of the decisions that follow a sample, each a "
        "share 1/horizon of what is left, the rest going to the game's outcome (KataGo's "
        "short-term value target).",
        min=1.0,
    )
    opponent_policy_weight: float = setting(
        0.15,
        "Weight of the opponent-reply loss when network.opponent_policy is on: the cross-entropy of "
        "the auxiliary output to the search policy of the opponent's next decision (KataGo's "
        "weight is 0.15).",
        min=0.0,
    )
    ema_samples: int = setting(
        0,
        "Time constant, in samples trained, of an exponential moving average of the weights that "
        "self-play, evaluation and checkpoints play with while the learner trains its own copy "
        "(0: no average, the network that plays is the one trained).",
        min=0,
    )


@dataclass
class CheckpointConfig:
    """Checkpoints in the run directory (weights, optimiser, counters, RNGs), from which a run resumes."""

    every: int = setting(
        1,
        "Write a checkpoint every this many iterations (and after the last), so a killed run loses at most this many.",
        min=1,
    )
    keep: int = setting(5, "Checkpoints kept in the run directory; older ones are deleted.", min=1)
    buffer_snapshot: bool = setting(
        True,
        "Save the replay buffer with each checkpoint, so a resumed run keeps "
        "its samples (false: a resumed run starts with an empty buffer).",
    )


@dataclass
class GatingConfig:
    """Optional SPRT gating (`tammi_rl.eval.sprt`): a new network replaces the self-play
    network only when it beats it (H1: ``elo1`` stronger vs H0: ``elo0``). Off by default."""

    enabled: bool = setting(
        False,
        "Gate new networks: self-play keeps its network until the learner's network "
        "beats it in an SPRT test (false: every update goes to self-play at once).",
    )
    elo0: float = setting(0.0, "Elo advantage of the candidate under the SPRT's null hypothesis H0 (not stronger).")
    elo1: float = setting(
        30.0,
        "Elo advantage of the candidate under the alternative hypothesis H1 "
        "(stronger); must be above eval.gating.elo0.",
    )
    alpha: float = setting(
        0.05,
        "Chance of accepting a candidate that is only elo0 stronger (false positives).",
        min=0.0,
        max=0.5,
        min_exclusive=True,
    )
    beta: float = setting(
        0.05,
        "Chance of rejecting a candidate that is elo1 stronger (false negatives).",
        min=0.0,
        max=0.5,
        min_exclusive=True,
    )
    max_games: int = setting(
        200, "Games at most per gating test; undecided keeps the current self-play network.", min=2
    )
    simulations: int = setting(32, "Simulations per searched hop of both networks in gating games.", min=1)
    every: int = setting(
        1, "Gate every this many learning iterations (between gates the candidate just keeps learning).", min=1
    )


@dataclass
class EvalConfig:
    """Matches of the learner's network against alpha-beta during training (and optional gating)."""

    every: int = setting(
        200,
        "Evaluate against alpha-beta every this many iterations and after the last one, so the curve "
        "ends at the final network (0 disables).",
        min=0,
    )
    games: int = setting(20, "Games per alpha-beta depth, colours alternating, from the shipped openings.", min=1)
    alphabeta_depths: list[int] = setting(
        doc="Alpha-beta search depths to play, one match each, 0 meaning the random player; the first "
        "depth is the Elo anchor (rating 0).",
        factory=lambda: [2, 4, 6],
        min=0,
    )
    simulations: int = setting(64, "Simulations per searched hop of the network in evaluation games.", min=1)
    algorithm: str = setting(
        "puct",
        "Search the trained agent plays with outside self-play: these matches, `tammi-rl eval` and "
        "every mcts player spec of the run's checkpoints. Self-play keeps mcts.algorithm: Gumbel's "
        "targets are better at few simulations, PUCT plays stronger at many.",
        choices=SEARCH_ALGORITHMS,
    )
    play_forced_hops: bool = setting(
        True,
        "The agent's search outside self-play (as eval.algorithm) plays hops that have no alternative "
        "without a network call, so each of its simulations is spent on a position with a choice: "
        "self-play stores no position with one legal hop, so the network never learned to value one "
        "(the shipped models at 800 simulations, 100 paired games each: +0.065 a game over Russian, "
        "Turkish, Italian and English against alpha-beta).",
    )
    repetition_draws: bool = setting(
        True,
        "The agent's search outside self-play (as eval.algorithm) scores a position that repeats one "
        "on its path, or one the game has already seen since its last capture or man move, as a draw "
        "(russian.pt at 800 simulations: +0.015 against alpha-beta depths 6 and 8, 100 paired games each).",
    )
    gating: GatingConfig = section(GatingConfig, "SPRT gating of the self-play network (off by default).")

    def play_search(self, mcts: MCTSConfig) -> MCTSConfig:
        """``mcts`` (the self-play search) with this section's play settings: the search the
        trained agent uses in matches, `tammi-rl eval` and player specs."""
        return dataclasses.replace(
            mcts,
            algorithm=self.algorithm,
            play_forced_hops=self.play_forced_hops,
            repetition_draws=self.repetition_draws,
        )


@dataclass
class DistributedConfig:
    """Where self-play runs; the learner always stays in the driver process."""

    backend: str = setting(
        "local",
        '"local" (self-play in this process) or "ray" (Ray actors; needs pip install \'tammi-rl[ray]\').',
        choices=("local", "ray"),
    )
    address: str = setting(
        "",
        'Ray cluster to join: "" (Ray\'s default: RAY_ADDRESS, else the cluster last started on this '
        'machine, else a new local instance), "auto" (an existing cluster only, e.g. the one `ray start '
        '--head` started), "local" (always a new local instance), "host:port" or "ray://host:10001" '
        "(Ray Client).",
    )
    num_actors: int = setting(2, "Self-play actors (ray only).", min=1)
    cpus_per_actor: float = setting(
        1.0,
        "CPUs Ray reserves for each actor, which also sets the actor's torch threads (rounded down, at least 1).",
        min=0.0,
    )
    gpus_per_actor: float = setting(
        0.0,
        "GPUs (a fraction allowed) Ray reserves for each actor; above 0 the actor runs its network on CUDA.",
        min=0.0,
    )


@dataclass
class Config:
    """A whole training run."""

    variant: str = setting(
        "russian", 'Draughts variant: a shipped variant name such as "russian", or the path of a variant .toml file.'
    )
    name: str = setting(
        "", "Run name; the run directory is <runs_dir>/<name>, and an empty name means the variant's name."
    )
    runs_dir: str = setting("runs", "Directory that holds the run directories.")
    checkpoints_dir: str = setting(
        "checkpoints", "Directory that receives a copy of the newest checkpoint, as <name>-latest.pt."
    )
    seed: int = setting(
        0, "Seed of the run's random number generators (self-play, sampling, network initialisation).", min=0
    )
    device: str = setting(
        "auto", 'Torch device of the network: "auto" (CUDA when present, else the CPU), "cpu", "cuda" or "cuda:N".'
    )
    threads: int | str = setting(
        "auto",
        'The learner\'s torch threads: "auto" (its share of the cores at the replay ratio, with '
        "selfplay.workers: auto taking the rest; one thread on CUDA), a number (also the threads of "
        "each worker's torch and ONNX Runtime), or 0 (the library's default).",
        min=0,
        choices=("auto",),
    )
    runtime: str = setting(
        "onnx-int8",
        'Inference runtime of the network in search: "auto" (ONNX Runtime on the CPU, where it measures '
        'about twice as fast as torch at batch 32; torch on CUDA), "torch", "onnx", or "onnx-int8" (8-bit '
        "ONNX Runtime calibrated on the positions just searched: 1.8x float32 on an AVX2 CPU, 2.6x with "
        "AVX-512 VNNI). Self-play only: players take their spec's runtime, and the in-training ladder stays "
        "float32.",
        choices=RUNTIMES,
    )
    network: NetworkConfig = section(NetworkConfig, "The policy-value network.")
    mcts: MCTSConfig = section(MCTSConfig, "The tree search.")
    selfplay: SelfPlayConfig = section(SelfPlayConfig, "Self-play games.")
    replay: ReplayConfig = section(ReplayConfig, "The replay buffer.")
    train: TrainConfig = section(TrainConfig, "The learner.")
    checkpoint: CheckpointConfig = section(CheckpointConfig, "Checkpoints.")
    eval: EvalConfig = section(EvalConfig, "Evaluation against alpha-beta, and gating.")
    distributed: DistributedConfig = section(DistributedConfig, "Where self-play runs.")

    @property
    def run_name(self) -> str:
        return self.name or self.variant

    @property
    def play_search(self) -> MCTSConfig:
        """The search settings the trained agent plays matches with (`EvalConfig.play_search`)."""
        return self.eval.play_search(self.mcts)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


_DEVICE = re.compile(r"auto|cpu|cuda|cuda:\d+")


def validate(cfg: Config, source: str = "<config>") -> Config:
    """Check every key's type, limits and choices, then the rules that span keys; return ``cfg``.

    Raises `ConfigError` naming ``source`` and the dotted key. Values are normalised in
    place (an int in a float key becomes a float).
    """
    check(cfg, source)
    try:
        load_variant(cfg.variant)
    except (ValueError, OSError) as exc:  # VariantError, or a path the OS cannot even look up
        raise ConfigError(f"{source}: key 'variant': {exc}") from None
    if not _DEVICE.fullmatch(cfg.device):
        raise ConfigError(f"{source}: key 'device': got {show(cfg.device)}, allowed: auto, cpu, cuda, cuda:N")
    if cfg.replay.min_samples > cfg.replay.capacity:
        raise ConfigError(
            f"{source}: key 'replay.min_samples': {cfg.replay.min_samples} is more than "
            f"replay.capacity ({cfg.replay.capacity}), so learning would never start"
        )
    if cfg.mcts.progressive_from > cfg.mcts.simulations:
        raise ConfigError(
            f"{source}: key 'mcts.progressive_from': {cfg.mcts.progressive_from} is more than "
            f"mcts.simulations ({cfg.mcts.simulations}), the count it grows to"
        )
    gating = cfg.eval.gating
    if not gating.elo1 > gating.elo0:
        raise ConfigError(
            f"{source}: key 'eval.gating.elo1': must be > eval.gating.elo0 ({gating.elo0!r}), got {gating.elo1!r}"
        )
    return cfg


def describe_fields() -> list[tuple[str, str, str, str]]:
    """Every config key as ``(dotted key, type, default, doc with limits)``, in file order.

    The default is written in YAML syntax (``"gumbel"``, ``0.001``, ``[1, 2]``, ``true``).
    """
    return describe(Config)
