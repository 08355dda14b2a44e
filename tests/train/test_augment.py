"""Mirrored training samples (`train.mirror_samples`): a mirrored sample is the sample of the
mirrored position, the unmirrored rows and the source batch are left alone, and only a board
with a mirror accepts the setting."""

from __future__ import annotations

import io

import numpy as np
import pytest

from tammi_rl.config import ConfigError, load_config
from tammi_rl.env.draughts_env import DraughtsEnv
from tammi_rl.env.observation import ObservationEncoder
from tammi_rl.nn.symmetry import mirror_for
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game
from tammi_rl.rules.position import Position
from tammi_rl.selfplay.samples import MAX_LEGAL, SampleBatch
from tammi_rl.train.augment import MirroredSamples, mirror_samples
from tammi_rl.train.trainer import train

RULES = Rules.for_variant("turkish")
MIRROR = mirror_for(RULES)


def sample_of(env: DraughtsEnv, encoder: ObservationEncoder, position: Position, end: Position) -> dict:
    """One sample row, as self-play would store it: a policy that favours the lowest hop
    actions (so a wrong pairing of hops and weights shows), the reply hops of the first
    legal hop's position, and who holds each square at ``end``."""
    env.reset(options={"fen": RULES.fen(position)})
    obs, mask = env.observation_for(position.side)
    hops = np.flatnonzero(mask)
    weights = np.linspace(2.0, 1.0, len(hops))
    legal = np.full(MAX_LEGAL, -1, np.int32)
    legal[: len(hops)] = hops
    policy = np.zeros(MAX_LEGAL, np.float32)
    policy[: len(hops)] = weights / weights.sum()
    return {
        "obs": obs,
        "legal": legal,
        "policy": policy,
        "ownership": encoder.square_owners(end)[position.side],
        "reply_legal": legal[::-1].copy(),  # any list of hops: only the mapping is checked
    }


def batch_of(rows: list[dict]) -> SampleBatch:
    n = len(rows)
    return SampleBatch(
        obs=np.stack([r["obs"] for r in rows]),
        legal=np.stack([r["legal"] for r in rows]),
        policy=np.stack([r["policy"] for r in rows]),
        outcome=np.arange(n, dtype=np.int64) % 3,
        value=np.linspace(-1, 1, n, dtype=np.float32),
        surprise=np.ones(n, np.float32),
        ownership=np.stack([r["ownership"] for r in rows]).astype(np.int8),
        short_value=np.zeros(n, np.float32),
        reply_legal=np.stack([r["reply_legal"] for r in rows]),
        reply_policy=np.stack([r["policy"] for r in rows]),
    )


def positions(games: int, seed: int) -> list[Position]:
    rng = np.random.default_rng(seed)
    found = []
    for _ in range(games):
        game = Game(RULES)
        while not game.is_over and len(game.moves) < 100:
            found.append(game.position)
            moves = game.legal_moves()
            game.play(moves[rng.integers(len(moves))])
    return found[::7]


def hop_weights(legal: np.ndarray, policy: np.ndarray) -> dict[int, float]:
    return {int(a): float(p) for a, p in zip(legal, policy, strict=True) if a >= 0}


def test_a_mirrored_sample_is_the_sample_of_the_mirrored_position() -> None:
    assert MIRROR is not None
    env, encoder = DraughtsEnv("turkish"), ObservationEncoder.for_rules(RULES)
    found = positions(games=3, seed=3)
    end = found[-1]
    originals = batch_of([sample_of(env, encoder, p, end) for p in found])
    kept = {name: getattr(originals, name).copy() for name in ("obs", "legal", "ownership", "reply_legal")}
    rows = np.arange(len(found)) % 2 == 0
    mirrored = mirror_samples(originals, MIRROR, rows)
    for name, before in kept.items():  # the source batch is untouched
        np.testing.assert_array_equal(getattr(originals, name), before)
    for i, position in enumerate(found):
        if not rows[i]:
            np.testing.assert_array_equal(mirrored.obs[i], originals.obs[i])
            np.testing.assert_array_equal(mirrored.legal[i], originals.legal[i])
            continue
        expected = sample_of(env, encoder, MIRROR.position(position), MIRROR.position(end))
        np.testing.assert_array_equal(mirrored.obs[i], expected["obs"])
        np.testing.assert_array_equal(mirrored.ownership[i], expected["ownership"])
        assert set(mirrored.legal[i][mirrored.legal[i] >= 0]) == set(expected["legal"][expected["legal"] >= 0])
        # Each weight goes with the mirror of its hop.
        original_weights = hop_weights(originals.legal[i], originals.policy[i])
        assert hop_weights(mirrored.legal[i], mirrored.policy[i]) == {
            int(MIRROR.actions[a]): p for a, p in original_weights.items()
        }
        reply = originals.reply_legal[i]
        np.testing.assert_array_equal(mirrored.reply_legal[i], np.where(reply >= 0, MIRROR.actions[reply], -1))
    np.testing.assert_array_equal(mirrored.outcome, originals.outcome)
    np.testing.assert_array_equal(mirrored.value, originals.value)


class FixedSource:
    def __init__(self, batch: SampleBatch) -> None:
        self.batch = batch

    def sample(self, n: int, rng: np.random.Generator) -> SampleBatch:
        return self.batch.select(rng.integers(len(self.batch), size=n))

    def __len__(self) -> int:
        return len(self.batch)


def test_mirrored_source_mirrors_about_half_of_what_it_draws() -> None:
    assert MIRROR is not None
    env, encoder = DraughtsEnv("turkish"), ObservationEncoder.for_rules(RULES)
    start = RULES.start_position()
    men = start.white_men & (start.white_men - 1)  # one man off the left end of White's first row of men
    lopsided = Position(men, start.white_kings, start.black_men, start.black_kings)
    one = batch_of([sample_of(env, encoder, lopsided, lopsided)])
    drawn = MirroredSamples(FixedSource(one), MIRROR).sample(1000, np.random.default_rng(0))
    flipped = np.array([not np.array_equal(obs, one.obs[0]) for obs in drawn.obs])
    assert 400 < flipped.sum() < 600
    assert len(MirroredSamples(FixedSource(one), MIRROR)) == 1


def smoke(tmp_path, *overrides):
    return load_config(
        "configs/smoke.yaml", [f"runs_dir={tmp_path / 'runs'}", f"checkpoints_dir={tmp_path / 'ck'}", *overrides]
    )


def test_mirror_samples_needs_a_board_with_a_mirror(tmp_path) -> None:
    with pytest.raises(ConfigError, match=r"train.mirror_samples: the russian board has no left-right symmetry"):
        train(smoke(tmp_path, "train.mirror_samples=true"), out=io.StringIO())


@pytest.mark.slow
def test_turkish_trains_on_mirrored_samples(tmp_path) -> None:
    cfg = smoke(tmp_path, "variant=turkish", "eval.every=0", "network.ownership=true", "train.mirror_samples=true")
    summary = train(cfg, out=io.StringIO())
    assert summary.learner_step > 0 and summary.counters.iteration == cfg.train.iterations
