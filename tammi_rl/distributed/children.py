"""Child processes of the trainer (self-play workers, the inference server): their shared rules.

A child must not outlive the trainer (`die_with_parent`), leaves Ctrl-C to the trainer,
gets `STOP_GRACE_S` to exit when stopped before it is killed, and its end is described
in words for error messages (`describe_exit`).
"""

from __future__ import annotations

import contextlib
import ctypes
import signal
import sys

STOP_GRACE_S = 5.0
"""How long a pool waits for a stopped child to exit before killing it."""

_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent dies (elsewhere the broken pipe ends
    it), and leave Ctrl-C to the parent, which stops its children itself."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def describe_exit(exitcode: int | None) -> str:
    """How a child ended, as a phrase: ``was killed by SIGKILL``, ``exited with status 1``."""
    if exitcode is None:
        return "stopped answering"
    if exitcode < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-exitcode).name}"
        return f"was killed by signal {-exitcode}"
    return f"exited with status {exitcode}"
