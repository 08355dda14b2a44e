"""Helpers for tests that start processes: is a pid alive, wait for pids to end (Linux /proc)."""

import time
from pathlib import Path


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except FileNotFoundError:
        return False
    return state != "Z"


def wait_dead(pids, seconds=10.0) -> set[int]:
    """Wait up to ``seconds`` for every pid to end; the ones still alive."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.1)
    return {p for p in pids if alive(p)}
