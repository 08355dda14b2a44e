"""Reading a run's TensorBoard scalars back, as TensorBoard itself reads them."""

from __future__ import annotations

from pathlib import Path


def _scalars(tb_dir: Path, tag: str) -> list:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # slow import

    acc = EventAccumulator(str(tb_dir))
    acc.Reload()  # applies the purge_step a resumed session wrote
    return acc.Scalars(tag)


def scalar_steps(tb_dir: Path, tag: str) -> list[int]:
    """The steps of ``tag``'s events, in the order TensorBoard shows them."""
    return [e.step for e in _scalars(tb_dir, tag)]


def scalar_values(tb_dir: Path, tag: str) -> list[float]:
    """The values of ``tag``'s events, in the order TensorBoard shows them."""
    return [e.value for e in _scalars(tb_dir, tag)]
