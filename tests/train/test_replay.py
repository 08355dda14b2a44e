"""Replay buffer: sliding window, uniform sampling, atomic snapshots."""

import re

import numpy as np
import pytest

from tammi_rl.selfplay.samples import MAX_LEGAL, SAMPLE_FIELDS, SampleBatch
from tammi_rl.train.replay import ReplayBuffer, ReplayError

SHAPE = (11, 8, 8)


def make_batch(start: int, n: int) -> SampleBatch:
    """Samples tagged by their index ``i``: obs filled with i, legal[0] = i, outcome i % 3."""
    ids = np.arange(start, start + n)
    obs = np.broadcast_to(ids[:, None, None, None] % 2048, (n, *SHAPE)).astype(np.float32)
    legal = np.full((n, MAX_LEGAL), -1, np.int32)
    legal[:, 0] = ids % 896
    legal[:, 1] = 895 - ids % 896
    policy = np.zeros((n, MAX_LEGAL), np.float32)
    policy[:, 0], policy[:, 1] = 0.75, 0.25
    value, surprise = (ids % 7 / 7).astype(np.float32), (ids % 5 / 4).astype(np.float32)
    ownership = ((ids[:, None] + np.arange(32)) % 4 - 1).astype(np.int8)  # -1 (not recorded) to 2
    short_value = np.where(ids % 4 == 3, np.nan, ids % 9 / 8 - 0.5).astype(np.float32)  # NaN: not recorded
    reply_legal = np.where(ids[:, None] % 2 == 0, np.roll(legal, 1, axis=1), -1).astype(np.int32)
    reply_policy = np.where(reply_legal >= 0, 0.5, 0.0).astype(np.float32)
    return SampleBatch(
        obs,
        legal,
        policy,
        (ids % 3).astype(np.int64),
        value,
        surprise,
        ownership,
        short_value,
        reply_legal,
        reply_policy,
    )


def ids_of(batch: SampleBatch) -> list[int]:
    return batch.obs[:, 0, 0, 0].astype(int).tolist()


def test_add_and_window():
    buf = ReplayBuffer(10, SHAPE, 32)
    buf.add(make_batch(0, 4))
    assert len(buf) == 4 and buf.total_added == 4
    assert ids_of(buf.contents()) == [0, 1, 2, 3]
    buf.add(make_batch(4, 9))  # wraps: the oldest three fall out
    assert len(buf) == 10 and buf.total_added == 13
    assert ids_of(buf.contents()) == list(range(3, 13))
    buf.add(make_batch(13, 25))  # more than capacity at once: only the newest fit
    assert ids_of(buf.contents()) == list(range(28, 38))
    assert buf.total_added == 38


def test_sample_dtypes_and_contract():
    buf = ReplayBuffer(100, SHAPE, 32)
    buf.add(make_batch(0, 50))
    batch = buf.sample(32, np.random.default_rng(0))
    assert batch.obs.dtype == np.float32 and batch.obs.shape == (32, *SHAPE)
    assert batch.legal.dtype == np.int32 and batch.policy.dtype == np.float32
    assert batch.outcome.dtype == np.int64
    ids = np.array(ids_of(batch))
    np.testing.assert_array_equal(batch.legal[:, 0], ids % 896)
    np.testing.assert_array_equal(batch.outcome, ids % 3)
    assert batch.value.dtype == np.float32
    np.testing.assert_allclose(batch.value, ids % 7 / 7, atol=1e-3)  # stored as float16
    np.testing.assert_allclose(batch.policy.sum(1), 1.0)
    assert (batch.legal[:, 2:] == -1).all()
    assert batch.ownership.dtype == np.int8 and batch.ownership.shape == (32, 32)
    np.testing.assert_array_equal(batch.ownership, (ids[:, None] + np.arange(32)) % 4 - 1)
    assert batch.short_value.dtype == np.float32
    np.testing.assert_allclose(batch.short_value, np.where(ids % 4 == 3, np.nan, ids % 9 / 8 - 0.5), atol=1e-3)
    assert batch.reply_legal.dtype == np.int32 and batch.reply_policy.dtype == np.float32
    np.testing.assert_array_equal((batch.reply_legal >= 0).any(axis=1), ids % 2 == 0)
    np.testing.assert_array_equal(batch.reply_legal[ids % 2 == 0, 1], ids[ids % 2 == 0] % 896)


def test_sampling_is_uniform_and_seeded():
    buf = ReplayBuffer(20, SHAPE, 32)
    buf.add(make_batch(0, 20))
    a = ids_of(buf.sample(4000, np.random.default_rng(3)))
    b = ids_of(buf.sample(4000, np.random.default_rng(3)))
    assert a == b
    counts = np.bincount(a, minlength=20)
    assert counts.min() > 120 and counts.max() < 280  # expected 200 each


def test_empty_sample_raises():
    with pytest.raises(ValueError):
        ReplayBuffer(5, SHAPE, 32).sample(1, np.random.default_rng())


def test_snapshot_round_trip(tmp_path):
    buf = ReplayBuffer(10, SHAPE, 32)
    buf.add(make_batch(0, 14))
    path = tmp_path / "replay.npz"
    buf.snapshot(path)
    assert not [p for p in tmp_path.iterdir() if p.name != "replay.npz"]  # no temp file left
    back = ReplayBuffer.load(path, 10, SHAPE)
    assert back.total_added == 14 and ids_of(back.contents()) == list(range(4, 14))
    np.testing.assert_array_equal(back.contents().legal, buf.contents().legal)
    np.testing.assert_array_equal(back.contents().value, buf.contents().value)
    np.testing.assert_array_equal(back.contents().ownership, buf.contents().ownership)
    np.testing.assert_array_equal(back.contents().short_value, buf.contents().short_value)
    np.testing.assert_array_equal(back.contents().reply_legal, buf.contents().reply_legal)
    np.testing.assert_array_equal(back.contents().reply_policy, buf.contents().reply_policy)
    small = ReplayBuffer.load(path, 3)  # a smaller window keeps the newest
    assert ids_of(small.contents()) == [11, 12, 13]
    # adding after a load continues the ring in order
    back.add(make_batch(14, 2))
    assert ids_of(back.contents()) == list(range(6, 16))


def test_drop_newest():
    buf = ReplayBuffer(10, SHAPE, 32)
    buf.add(make_batch(0, 12))
    buf.drop_newest(3)
    assert ids_of(buf.contents()) == list(range(2, 9)) and buf.total_added == 9


def test_bad_snapshots(tmp_path):
    with pytest.raises(ReplayError, match="no replay snapshot"):
        ReplayBuffer.load(tmp_path / "missing.npz", 10)
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"garbage")
    with pytest.raises(ReplayError, match=re.escape("bad.npz")):
        ReplayBuffer.load(bad, 10)
    buf = ReplayBuffer(10, SHAPE, 32)
    buf.add(make_batch(0, 3))
    buf.snapshot(tmp_path / "ok.npz")
    with pytest.raises(ReplayError, match="observation shape"):
        ReplayBuffer.load(tmp_path / "ok.npz", 10, (11, 10, 10))


def chunk_names(directory):
    return sorted(p.name for p in directory.glob("chunk_*.npz"))


def test_chunks_append_only_what_is_new_and_prune_the_window(tmp_path):
    d = tmp_path / "replay"
    buf = ReplayBuffer(10, SHAPE, 32)
    buf.add(make_batch(0, 4))
    buf.save_chunks(d)
    buf.save_chunks(d)  # nothing new: nothing written
    assert chunk_names(d) == ["chunk_000000000000_000000000004.npz"]
    buf.add(make_batch(4, 5))
    buf.save_chunks(d)
    assert chunk_names(d)[-1] == "chunk_000000000004_000000000009.npz"
    buf.add(make_batch(9, 8))  # 17 added: the window holds 7..16
    buf.save_chunks(d)
    buf.add(make_batch(17, 4))  # 21 added: the first chunk is out of the previous save's window too
    buf.save_chunks(d)
    assert chunk_names(d) == [
        "chunk_000000000004_000000000009.npz",
        "chunk_000000000009_000000000017.npz",
        "chunk_000000000017_000000000021.npz",
    ]
    back = ReplayBuffer.load_chunks(d, 10, SHAPE)
    assert back.total_added == 21 and ids_of(back.contents()) == list(range(11, 21))
    # A resume lined up with the checkpoint before the last save still finds a full window.
    resumed = ReplayBuffer.load_chunks(d, 10, SHAPE, until=17)
    assert resumed.total_added == 17 and ids_of(resumed.contents()) == list(range(7, 17))
    mid = ReplayBuffer.load_chunks(d, 10, SHAPE, until=12)  # inside a chunk
    assert mid.total_added == 12 and ids_of(mid.contents()) == list(range(4, 12))
    np.testing.assert_array_equal(back.contents().policy, buf.contents().policy)
    np.testing.assert_array_equal(back.contents().value, buf.contents().value)
    np.testing.assert_array_equal(back.contents().ownership, buf.contents().ownership)
    np.testing.assert_array_equal(back.contents().short_value, buf.contents().short_value)
    np.testing.assert_array_equal(back.contents().reply_legal, buf.contents().reply_legal)
    small = ReplayBuffer.load_chunks(d, 3)
    assert ids_of(small.contents()) == [18, 19, 20] and small.total_added == 21


@pytest.mark.parametrize("redo", [3, 4, 5])
def test_chunks_of_a_lost_checkpoint_are_replaced(tmp_path, redo):
    """A chunk saved before a checkpoint that never landed is replaced by the resumed run's
    samples, whether it adds fewer, as many or more samples than the lost iteration."""
    d = tmp_path / "replay"
    buf = ReplayBuffer(100, SHAPE, 32)
    buf.add(make_batch(0, 6))
    buf.save_chunks(d)
    buf.add(make_batch(6, 4))
    buf.save_chunks(d)  # saved, but the checkpoint never landed
    resumed = ReplayBuffer.load_chunks(d, 100, SHAPE, until=6)  # lined up with the checkpoint
    resumed.add(make_batch(50, redo))  # the resumed run plays on differently
    resumed.save_chunks(d)
    assert chunk_names(d) == ["chunk_000000000000_000000000006.npz", f"chunk_000000000006_{6 + redo:012d}.npz"]
    assert ids_of(ReplayBuffer.load_chunks(d, 100).contents()) == list(range(6)) + list(range(50, 50 + redo))


def test_bad_chunk_directories(tmp_path):
    d = tmp_path / "replay"
    with pytest.raises(ReplayError, match="no replay chunks"):
        ReplayBuffer.load_chunks(d, 10)
    buf = ReplayBuffer(100, SHAPE, 32)
    buf.add(make_batch(0, 3))
    buf.save_chunks(d)
    buf.add(make_batch(3, 3))
    buf.save_chunks(d)
    buf.add(make_batch(6, 3))
    buf.save_chunks(d)
    (d / "chunk_000000000003_000000000006.npz").unlink()
    with pytest.raises(ReplayError, match="do not join"):
        ReplayBuffer.load_chunks(d, 100)
    with pytest.raises(ReplayError, match="do not join"):
        ReplayBuffer.load_chunks(d, 100)
    (d / "chunk_000000000000_000000000003.npz").write_bytes(b"garbage")
    (d / "chunk_000000000006_000000000009.npz").unlink()
    with pytest.raises(ReplayError, match="not a readable replay chunk"):
        ReplayBuffer.load_chunks(d, 100)


def test_a_board_of_64_squares_keeps_64_ownership_labels_and_a_mismatch_is_named(tmp_path):
    """Turkish plays on every square of its 8x8 board: the labels are as wide as the board's
    squares, which the observation's shape does not tell."""
    n, squares = 6, 64
    base = make_batch(0, n)
    wide = SampleBatch(
        **{name: getattr(base, name) for name in SAMPLE_FIELDS if name != "ownership"},
        ownership=np.tile(np.arange(squares) % 3, (n, 1)).astype(np.int8),
    )
    buf = ReplayBuffer(10, SHAPE, squares)
    buf.add(wide)
    np.testing.assert_array_equal(buf.contents().ownership, wide.ownership)
    with pytest.raises(ValueError, match=r"ownership of \(32,\) squares != the buffer's 64"):
        buf.add(base)
    path = tmp_path / "turkish.npz"
    buf.snapshot(path)
    assert ReplayBuffer.load(path, 10).squares == 64
    with pytest.raises(ReplayError, match="ownership labels of 64 squares do not match this run's board of 32"):
        ReplayBuffer.load(path, 10, SHAPE, 32)
