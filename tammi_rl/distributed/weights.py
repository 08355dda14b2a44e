"""A weight board: the learner publishes network weights into shared memory, workers read them.

    board = WeightBoard.create(model.state_dict())          # trainer: owns the block
    board.publish(learner.weights(), version=7)             # a memcpy of ~0.3 MB, no pickling
    reader = WeightBoard.attach(board.spec)                 # a worker process
    newer = reader.read_newer(than=6)                       # (7, state_dict) or None

Why shared memory and not a queue: a queue pickles the weights once per worker and the
trainer blocks while a busy worker's pipe is full; the board is one copy whatever the
number of workers, and a reader takes the newest version whenever it looks, skipping
the ones it missed. Consistency is a sequence lock: the writer makes the sequence odd,
copies, then makes it even; a reader copies and retries if the sequence moved or was
odd. There is one writer (the trainer), so the writer never waits.

The block is laid out by the first state dict: every tensor's name, dtype and shape is
in `BoardSpec`, which is small and picklable (what a worker receives at start).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from multiprocessing import shared_memory

import numpy as np
import torch

_HEADER = 2
"""int64 words before the data: the sequence counter and the published version."""


@dataclass(frozen=True)
class BoardEntry:
    name: str
    dtype: str
    shape: tuple[int, ...]
    offset: int
    nbytes: int


@dataclass(frozen=True)
class BoardSpec:
    """Where the board lives and how its bytes map to a state dict (picklable)."""

    shm_name: str
    entries: tuple[BoardEntry, ...]
    nbytes: int


def _layout(state_dict: dict[str, torch.Tensor]) -> tuple[tuple[BoardEntry, ...], int]:
    entries, offset = [], _HEADER * 8
    for name, tensor in state_dict.items():
        array = tensor.detach().cpu().numpy()
        offset = (offset + 7) // 8 * 8  # keep every tensor 8-byte aligned
        entries.append(BoardEntry(name, array.dtype.str, tuple(array.shape), offset, array.nbytes))
        offset += array.nbytes
    return tuple(entries), offset


class WeightBoard:
    """One shared-memory block holding the newest published weights (see the module docstring)."""

    def __init__(self, shm: shared_memory.SharedMemory, spec: BoardSpec, owner: bool) -> None:
        self._shm = shm
        self.spec = spec
        self.owner = owner
        self._header = np.ndarray((_HEADER,), np.int64, buffer=shm.buf)
        self._views = {
            e.name: np.ndarray(e.shape, np.dtype(e.dtype), buffer=shm.buf, offset=e.offset) for e in spec.entries
        }

    @classmethod
    def create(cls, state_dict: dict[str, torch.Tensor]) -> WeightBoard:
        """A new board shaped like ``state_dict``, holding no version yet (version -1)."""
        entries, nbytes = _layout(state_dict)
        shm = shared_memory.SharedMemory(create=True, size=max(nbytes, 8 * _HEADER))
        board = cls(shm, BoardSpec(shm.name, entries, nbytes), owner=True)
        board._header[:] = (0, -1)
        return board

    @classmethod
    def attach(cls, spec: BoardSpec) -> WeightBoard:
        """The board ``spec`` names, opened in another process (read side)."""
        # A process the pool spawned shares the creator's resource tracker, which frees the block
        # once; an unrelated process attaching on Python < 3.13 would free it at its own exit.
        shm = shared_memory.SharedMemory(name=spec.shm_name)
        return cls(shm, spec, owner=False)

    @property
    def version(self) -> int:
        """The version last published (-1: none yet)."""
        return int(self._header[1])

    def publish(self, state_dict: dict[str, torch.Tensor], version: int) -> None:
        """Copy ``state_dict`` (same names, shapes, dtypes as at creation) in as ``version``."""
        if set(state_dict) != set(self._views):
            raise ValueError("weights do not match the board's layout (a different network?)")
        self._header[0] += 1  # odd: a write is in progress
        for name, view in self._views.items():
            view[...] = state_dict[name].detach().cpu().numpy()
        self._header[1] = version
        self._header[0] += 1  # even: consistent again

    def read_newer(self, than: int, retries: int = 1000) -> tuple[int, dict[str, torch.Tensor]] | None:
        """``(version, state_dict)`` if a version newer than ``than`` is published, else None."""
        for _ in range(retries):
            seq = int(self._header[0])
            version = int(self._header[1])
            if seq % 2 == 0 and version <= than:
                return None
            if seq % 2 == 0:
                copies = {name: view.copy() for name, view in self._views.items()}
                if int(self._header[0]) == seq:
                    return version, {name: torch.from_numpy(a) for name, a in copies.items()}
            time.sleep(0.0005)  # a write is in progress: it takes well under a millisecond
        raise TimeoutError("the weight board stayed busy; is the trainer stuck mid-publish?")

    def close(self) -> None:
        """Detach; the owner also frees the block."""
        self._views.clear()
        del self._header
        self._shm.close()
        if self.owner:
            self._shm.unlink()
