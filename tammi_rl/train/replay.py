"""Replay buffer: a sliding window over the most recent self-play samples.

    buf = ReplayBuffer(capacity=100_000, obs_shape=(11, 8, 8), squares=32)
    buf.add(result.samples)                    # oldest samples fall out past capacity
    batch = buf.sample(256, rng)               # uniform, with replacement
    buf.save_chunks("runs/x/replay")            # appends only what is new since the last save
    buf = ReplayBuffer.load_chunks("runs/x/replay", 100_000)

Storage is compact (observations float16: the planes hold 0/1 and counter fractions;
action indices int16; outcomes and ownership classes int8; search values, policy
surprises, short-horizon values and policy targets float16) and
grows on demand up to ``capacity``, so a big window costs memory only once it is filled.
`sample` returns float32/int32/int64 arrays, the `SampleBatch` contract. Snapshots are
written atomically (temp file + rename) and keep the samples oldest first together with
``total_added``, the count of samples ever added, which lets a resumed run drop samples
a checkpoint does not know about.

A training run saves the buffer as CHUNKS (`save_chunks`): each save writes only the
samples added since the previous one, as ``chunk_<first>_<end>.npz`` (global sample
indices), and deletes chunks that fell out of the window. Rewriting the whole buffer
every iteration (`snapshot`, one file) cost 0.84 s per checkpoint at 88k samples, about
5% of a Russian CPU run; a chunk of one iteration's samples takes milliseconds.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np

from tammi_rl.atomic import atomic_write
from tammi_rl.legacy import upgrade_replay_snapshot
from tammi_rl.rules.errors import TammiError
from tammi_rl.selfplay.samples import SAMPLE_DTYPES, SAMPLE_FIELDS, UNKNOWN_OWNER, SampleBatch, row_shapes

SNAPSHOT_VERSION = 4
"""2 added the search values, 3 the policy surprises, 4 the ownership, short-horizon value and
opponent-reply targets
(`tammi_rl.legacy.upgrade_replay_snapshot` reads versions 1 to 3)."""


_STORAGE: dict[str, tuple[type[np.generic], float]] = {
    "obs": (np.float16, 0),
    "legal": (np.int16, -1),
    "policy": (np.float16, 0),
    "outcome": (np.int8, 0),
    "value": (np.float16, 0),
    "surprise": (np.float16, 0),
    "ownership": (np.int8, UNKNOWN_OWNER),
    "short_value": (np.float16, np.nan),
    "reply_legal": (np.int16, -1),
    "reply_policy": (np.float16, 0),
}
"""How the buffer stores each `SampleBatch` array: dtype, and what an unfilled row holds."""

_CHUNK_RE = re.compile(r"^chunk_(\d{12})_(\d{12})\.npz$")


def _ownership_width(path: Path, batch: SampleBatch, squares: int | None) -> int:
    """The squares of ``batch``'s ownership labels, checked against the run's ``squares`` if given."""
    width = int(batch.ownership.shape[1])
    if squares is not None and width != squares:
        raise ReplayError(f"{path}: ownership labels of {width} squares do not match this run's board of {squares}")
    return width


def _chunks(directory: Path) -> list[tuple[int, int, Path]]:
    """The chunk files of ``directory`` as (first, end, path), oldest first."""
    found = []
    for path in directory.glob("chunk_*.npz"):
        m = _CHUNK_RE.match(path.name)
        if m:
            found.append((int(m.group(1)), int(m.group(2)), path))
    return sorted(found)


class ReplayError(TammiError):
    """A replay snapshot cannot be read or does not fit this run (the message names the file)."""


class ReplayBuffer:
    """Ring buffer of the last ``capacity`` samples with uniform sampling."""

    def __init__(self, capacity: int, obs_shape: tuple[int, ...], squares: int) -> None:
        if capacity < 1:
            raise ValueError(f"replay capacity must be >= 1, got {capacity}")
        self.capacity = int(capacity)
        self.obs_shape = tuple(int(d) for d in obs_shape)
        self.squares = int(squares)
        """Playable squares of the board (`Geometry.n_squares`), the width of the ownership labels."""
        self.total_added = 0
        """Samples ever added (not capped by capacity)."""
        self._size = 0
        self._next = 0  # write head: the next row to fill (ring)
        self._trimmed_to: int | None = None
        """Lowest ``total_added`` since the last `save_chunks` after `drop_newest`: chunks saved
        beyond it hold samples this buffer forgot (a checkpoint that never landed)."""
        self._alloc(0)

    # --- storage --------------------------------------------------------------------
    def _alloc(self, n: int) -> None:
        shapes = row_shapes(self.obs_shape, self.squares)
        self._cols = {name: np.full((n, *shapes[name]), fill, dtype) for name, (dtype, fill) in _STORAGE.items()}

    def _columns(self) -> tuple[np.ndarray, ...]:
        return tuple(self._cols.values())

    def _grow(self, needed: int) -> None:
        """Make room for ``needed`` rows (geometric growth, capped at capacity)."""
        have = self._cols["obs"].shape[0]
        if needed <= have:
            return
        n = min(self.capacity, max(needed, 2 * have, 1024))
        old = self._columns()
        self._alloc(n)
        for new, arr in zip(self._columns(), old, strict=True):
            new[: arr.shape[0]] = arr

    def __len__(self) -> int:
        return self._size

    def add(self, batch: SampleBatch) -> None:
        """Append samples; past capacity the oldest are overwritten."""
        n = len(batch)
        if n == 0:
            return
        if tuple(batch.obs.shape[1:]) != self.obs_shape:
            raise ValueError(f"sample observation shape {batch.obs.shape[1:]} != buffer shape {self.obs_shape}")
        if batch.ownership.shape[1:] != (self.squares,):
            raise ValueError(f"sample ownership of {batch.ownership.shape[1:]} squares != the buffer's {self.squares}")
        if n > self.capacity:  # only the newest fit
            batch = batch.select(slice(-self.capacity, None))
            self.total_added += n - self.capacity
            n = self.capacity
        self._grow(min(self.capacity, self._size + n))
        rows = (self._next + np.arange(n)) % self.capacity  # the write head wraps around
        self._write(rows, batch, slice(0, n))
        self._next = (self._next + n) % self.capacity
        self._size = min(self.capacity, self._size + n)
        self.total_added += n

    def _write(self, rows: np.ndarray, batch: SampleBatch, part: slice) -> None:
        for name, column in self._cols.items():
            values = getattr(batch, name)[part]
            column[rows] = np.minimum(values, np.finfo(np.float16).max) if name == "surprise" else values

    def _ordered_rows(self) -> np.ndarray:
        """Row indices oldest first."""
        if self._size < self.capacity:
            return np.arange(self._size)
        return (self._next + np.arange(self.capacity)) % self.capacity

    def _take(self, rows: np.ndarray) -> SampleBatch:
        return SampleBatch(**{name: column[rows].astype(SAMPLE_DTYPES[name]) for name, column in self._cols.items()})

    # --- reading --------------------------------------------------------------------
    def sample(self, n: int, rng: np.random.Generator) -> SampleBatch:
        """``n`` samples drawn uniformly with replacement."""
        if self._size == 0:
            raise ValueError("cannot sample from an empty replay buffer")
        return self._take(rng.integers(0, self._size, size=n))

    def contents(self) -> SampleBatch:
        """Every stored sample, oldest first (a copy)."""
        return self._take(self._ordered_rows())

    def drop_newest(self, n: int) -> None:
        """Forget the ``n`` newest samples (used to line the buffer up with a checkpoint)."""
        if n <= 0:
            return
        keep = self.contents()
        m = max(0, len(keep) - n)
        total = self.total_added - n
        self._size, self._next, self.total_added = 0, 0, 0
        self._alloc(0)
        self.add(keep.select(slice(0, m)))
        self.total_added = max(total, self._size)
        self._trimmed_to = min(self.total_added, self._trimmed_to if self._trimmed_to is not None else total)

    # --- persistence ----------------------------------------------------------------
    def snapshot(self, path: str | Path) -> None:
        """Write every sample (oldest first) to an ``.npz`` file atomically."""
        path = Path(path)
        rows = self._ordered_rows()
        arrays = {
            "version": np.array(SNAPSHOT_VERSION),
            "total_added": np.array(self.total_added, np.int64),
            **{name: column[rows] for name, column in self._cols.items()},
        }
        atomic_write(path, lambda fh: np.savez(fh, **arrays))

    @classmethod
    def load(
        cls, path: str | Path, capacity: int, obs_shape: tuple[int, ...] | None = None, squares: int | None = None
    ) -> ReplayBuffer:
        """Read a snapshot; with a smaller ``capacity`` only the newest samples are kept. ``obs_shape``
        and ``squares`` (the run's) are checked when given; old formats get unrecorded ownership
        labels ``squares`` wide."""
        path = Path(path)
        if not path.is_file():
            raise ReplayError(f"{path}: no replay snapshot there")
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = upgrade_replay_snapshot(data, squares)
            version = int(arrays["version"])
            if version != SNAPSHOT_VERSION:
                raise ReplayError(f"{path}: snapshot format {version}, this version reads 1 to {SNAPSHOT_VERSION}")
            total = int(arrays["total_added"])
            batch = SampleBatch(**{name: arrays[name] for name in SAMPLE_FIELDS})
        except ReplayError:
            raise
        except Exception as exc:  # zip/format errors of a corrupt file
            raise ReplayError(f"{path}: not a readable replay snapshot ({type(exc).__name__}: {exc})") from None
        shape = tuple(batch.obs.shape[1:])
        if obs_shape is not None and shape != tuple(obs_shape):
            raise ReplayError(f"{path}: observation shape {shape} does not match this run's {tuple(obs_shape)}")
        width = _ownership_width(path, batch, squares)
        buf = cls(capacity, shape, width)
        buf.add(batch)
        buf.total_added = max(total, len(buf))
        return buf

    # --- chunked persistence (what a training run uses) ------------------------------
    def save_chunks(self, directory: str | Path) -> None:
        """Bring ``directory`` up to date with the buffer: write the samples added since the
        last save as one chunk file, then drop chunks that fell out of the window.

        Chunks holding samples the buffer no longer has (saved before a checkpoint that
        never landed, then trimmed away by `drop_newest` on resume) are replaced. A new
        chunk is always written before old ones are deleted, so a kill at any point leaves
        a loadable directory."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        valid_to = self.total_added if self._trimmed_to is None else min(self.total_added, self._trimmed_to)
        oldest = self.total_added - self._size  # global index of the oldest sample held
        disk_first: int | None = None
        saved = 0
        stale: list[Path] = []
        for first, end, path in _chunks(directory):
            if end > valid_to or (disk_first is not None and first != saved):
                stale.append(path)  # samples this buffer does not have, or after a gap
                continue
            if disk_first is None:
                disk_first = first
            saved = end
        fresh = disk_first is None or disk_first > oldest or saved < oldest
        if fresh:  # the files do not cover the buffer from its oldest sample on: write it all
            saved = oldest
        written: Path | None = None
        if self.total_added > saved:
            rows = self._ordered_rows()[saved - oldest :]
            arrays = {
                "version": np.array(SNAPSHOT_VERSION),
                **{name: column[rows] for name, column in self._cols.items()},
            }
            written = directory / f"chunk_{saved:012d}_{self.total_added:012d}.npz"
            atomic_write(written, lambda fh: np.savez(fh, **arrays))
        for _, end, path in _chunks(directory):
            if path == written:
                continue
            # Out of the window of the previous save (one extra chunk is kept, so a resume
            # that trims the newest samples still finds a full window), stale, or replaced.
            if fresh or path in stale or end <= saved - self.capacity:
                path.unlink(missing_ok=True)
        self._trimmed_to = None

    @classmethod
    def load_chunks(
        cls,
        directory: str | Path,
        capacity: int,
        obs_shape: tuple[int, ...] | None = None,
        until: int | None = None,
        squares: int | None = None,
    ) -> ReplayBuffer:
        """Read a chunk directory written by `save_chunks`: the newest ``capacity`` samples,
        or with ``until`` the newest before global sample ``until`` (a resume lines the
        buffer up with its checkpoint this way, and the next save replaces what lies after).
        ``obs_shape`` and ``squares`` (the run's) are checked when given; old formats get
        unrecorded ownership labels ``squares`` wide."""
        directory = Path(directory)
        chunks = _chunks(directory) if directory.is_dir() else []
        if not chunks:
            raise ReplayError(f"{directory}: no replay chunks there")
        for (_, end, path), (first, _, nxt) in itertools.pairwise(chunks):
            if first != end:
                raise ReplayError(
                    f"{directory}: chunks do not join ({path.name} ends at sample {end}, {nxt.name} starts at {first})"
                )
        total = chunks[-1][1] if until is None else max(chunks[0][0], min(chunks[-1][1], until))
        needed = [c for c in chunks if c[1] > total - capacity and c[0] < total]
        buf = cls(capacity, obs_shape, squares) if obs_shape is not None and squares is not None else None
        if buf is not None:
            buf.total_added = needed[0][0] if needed else total
        for first, end, path in needed:
            try:
                with np.load(path, allow_pickle=False) as data:
                    version = int(data["version"])
                    if not 2 <= version <= SNAPSHOT_VERSION:
                        raise ReplayError(f"{path}: chunk format {version}, this version reads 2 to {SNAPSHOT_VERSION}")
                    arrays = upgrade_replay_snapshot(data, squares)
                    batch = SampleBatch(**{name: arrays[name] for name in SAMPLE_FIELDS})
            except ReplayError:
                raise
            except Exception as exc:  # zip/format errors of a corrupt file
                raise ReplayError(f"{path}: not a readable replay chunk ({type(exc).__name__}: {exc})") from None
            if len(batch) != end - first:
                raise ReplayError(f"{path}: holds {len(batch)} samples, its name says {end - first}")
            shape = tuple(batch.obs.shape[1:])
            if obs_shape is not None and shape != tuple(obs_shape):
                raise ReplayError(f"{path}: observation shape {shape} does not match this run's {tuple(obs_shape)}")
            width = _ownership_width(path, batch, squares)
            if buf is None:
                buf = cls(capacity, shape, width)
                buf.total_added = first
            buf.add(batch.select(slice(0, min(end, total) - first)))
        if buf is None:
            raise ReplayError(f"{directory}: no samples before sample {total}")
        if total < chunks[-1][1]:
            buf._trimmed_to = total
        return buf
