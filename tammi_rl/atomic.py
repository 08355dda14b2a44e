"""Atomic file writes: a killed process leaves the old file or the new one, never half of one.

Everything a run directory holds (checkpoints, replay snapshot, config, games) is
written through `atomic_write`: a temporary file in the same directory, flushed and
fsynced, then renamed over the target (``os.replace`` is atomic on POSIX).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def atomic_write(path: str | Path, write: Callable[[BinaryIO], object]) -> None:
    """Create or replace ``path`` with what ``write(binary_file)`` writes (its return value is ignored)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write(path, lambda fh: fh.write(text.encode("utf-8")))


def atomic_copy(src: str | Path, dst: str | Path) -> None:
    """Copy ``src`` to ``dst`` atomically."""
    with open(src, "rb") as inp:
        atomic_write(dst, lambda out: shutil.copyfileobj(inp, out))
