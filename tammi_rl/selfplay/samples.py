"""Training samples: what self-play produces and the replay buffer stores.

Policy targets are stored sparsely over the legal hops (at most ``MAX_LEGAL`` per
position; the rare position with more keeps its ``MAX_LEGAL`` most likely hops), which
also gives the learner the legal-action mask.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

MAX_LEGAL = 128
WIN, DRAW, LOSS = 0, 1, 2
UNKNOWN_OWNER = -1
"""An ownership target not recorded (samples from before they were kept); the learner skips it."""


@dataclass
class SampleBatch:
    """N samples. Shapes: obs [N, C, H, W] float32; legal [N, MAX_LEGAL] int32 (action
    indices, -1 padded); policy [N, MAX_LEGAL] float32 (target probability of each
    listed action, sums to 1); outcome [N] int64 (WIN/DRAW/LOSS for the side to move);
    value [N] float32 (the root search value for the side to move, in [-1, 1]; the
    learner can blend it into the value target); surprise [N] float32 (how much the search
    changed the network's mind, `policy_surprise`; NaN where unknown, as in samples from
    before it was kept; the learner can weight samples by it); ownership [N, S] int8 (who held
    each of the S playable squares, in the side to move's canonical square order, when the
    game ended: `tammi_rl.env.observation` OWN/EMPTY/OPPONENT; `UNKNOWN_OWNER` where not
    recorded; the auxiliary ownership target); short_value [N] float32 (the short-horizon value
    for the side to move, `short_horizon_values`; NaN where not recorded); reply_legal [N,
    MAX_LEGAL] int32 and reply_policy [N, MAX_LEGAL] float32 (the opponent's answer: the legal
    hops and search policy of the first hop of the next move, in the opponent's frame; all -1
    where it was not stored; the opponent-reply policy target)."""

    obs: np.ndarray
    legal: np.ndarray
    policy: np.ndarray
    outcome: np.ndarray
    value: np.ndarray
    surprise: np.ndarray
    ownership: np.ndarray
    short_value: np.ndarray
    reply_legal: np.ndarray
    reply_policy: np.ndarray

    def __len__(self) -> int:
        return int(self.obs.shape[0])

    def select(self, rows: np.ndarray | slice) -> SampleBatch:
        """The samples at ``rows`` (an index array or a slice)."""
        return SampleBatch(**{name: getattr(self, name)[rows] for name in SAMPLE_FIELDS})

    @staticmethod
    def empty(obs_shape: tuple[int, ...], squares: int) -> SampleBatch:
        """No samples, shaped for observations of ``obs_shape`` on a board of ``squares`` squares."""
        shapes = row_shapes(obs_shape, squares)
        return SampleBatch(**{name: np.zeros((0, *shape), SAMPLE_DTYPES[name]) for name, shape in shapes.items()})

    @staticmethod
    def concat(batches: list[SampleBatch]) -> SampleBatch:
        return SampleBatch(**{name: np.concatenate([getattr(b, name) for b in batches]) for name in SAMPLE_FIELDS})


SAMPLE_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(SampleBatch))
"""The arrays of a `SampleBatch`, in order (also the names a replay file stores them under)."""

SAMPLE_DTYPES: dict[str, type[np.generic]] = {
    "obs": np.float32,
    "legal": np.int32,
    "policy": np.float32,
    "outcome": np.int64,
    "value": np.float32,
    "surprise": np.float32,
    "ownership": np.int8,
    "short_value": np.float32,
    "reply_legal": np.int32,
    "reply_policy": np.float32,
}
"""The dtype of each array of a `SampleBatch`."""


def row_shapes(obs_shape: tuple[int, ...], squares: int) -> dict[str, tuple[int, ...]]:
    """The shape of one sample's row of each array of a `SampleBatch`, for observations of
    ``obs_shape`` on a board of ``squares`` playable squares (`Geometry.n_squares`: the dark
    half of an 8x8 board in most variants, all 64 in Turkish, so not a function of the shape)."""
    return {
        "obs": tuple(obs_shape),
        "legal": (MAX_LEGAL,),
        "policy": (MAX_LEGAL,),
        "outcome": (),
        "value": (),
        "surprise": (),
        "ownership": (int(squares),),
        "short_value": (),
        "reply_legal": (MAX_LEGAL,),
        "reply_policy": (MAX_LEGAL,),
    }


def sparse_policy(actions: np.ndarray, probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pad (or trim to the most likely) legal actions and their target probabilities."""
    legal = np.full(MAX_LEGAL, -1, np.int32)
    policy = np.zeros(MAX_LEGAL, np.float32)
    if len(actions) > MAX_LEGAL:
        keep = np.argsort(-probs, kind="stable")[:MAX_LEGAL]
        actions, probs = actions[keep], probs[keep]
    n = len(actions)
    legal[:n] = actions
    total = float(probs.sum())
    policy[:n] = probs / total if total > 0 else 1.0 / n
    return legal, policy


def outcome_values(outcome: np.ndarray) -> np.ndarray:
    """The game outcome as a value for the side to move: WIN +1, DRAW 0, LOSS -1 (float32)."""
    return np.select([outcome == WIN, outcome == LOSS], [1.0, -1.0], 0.0).astype(np.float32)


def short_horizon_values(values: np.ndarray, sides: np.ndarray, winner: int | None, horizon: float) -> np.ndarray:
    """The short-horizon value target of each of a game's stored decisions, for its side to move.

    ``values [n]`` are the root search values of the decisions in order (each for its own
    side to move; NaN: not known, read as the outcome), ``sides [n]`` who was to move (0 White,
    1 Black), ``winner`` the game's (None: a draw). The target of decision i mixes the search
    values from i on with exponentially falling weights, ``(1 - a) * sum_k a**k * v[i + k]``,
    ``a = 1 - 1 / horizon``, and gives the weight left past the last decision to the outcome:
    the value about ``horizon`` decisions ahead, less noisy than the outcome of a whole game
    and less biased than one search (KataGo's short-term value targets). float32 [n]."""
    outcome = 0.0 if winner is None else (1.0 if winner == 0 else -1.0)  # White's view
    white = np.where(np.asarray(sides) == 0, 1.0, -1.0)
    seen = np.where(np.isnan(values), outcome * white, values) * white  # each value in White's view
    keep = 1.0 - 1.0 / horizon
    target = np.empty(len(seen), np.float64)
    ahead = outcome
    for i in range(len(seen) - 1, -1, -1):
        ahead = (1.0 - keep) * seen[i] + keep * ahead
        target[i] = ahead
    return (target * white).astype(np.float32)


def policy_surprise(target: np.ndarray, prior: np.ndarray) -> float:
    """KL(target || prior) in nats over one root's legal hops: how far the search policy
    moved from the network's prior (the prior the root search used; with PUCT's Dirichlet
    noise included). 0 when the search agreed; large where the network was wrong, which is
    where a sample teaches most (KataGo's policy-surprise weighting)."""
    if len(target) == 0 or len(prior) != len(target):
        return float("nan")
    t = np.asarray(target, np.float64)
    p = np.maximum(np.asarray(prior, np.float64), 1e-12)
    t = t / t.sum() if t.sum() > 0 else t
    p = p / p.sum()
    nz = t > 0
    return float(np.sum(t[nz] * np.log(t[nz] / p[nz])))
