"""Run directory layout: where one training run keeps everything it writes.

    runs/<name>/
        config.yaml              resolved config (rewritten on resume, with its overrides)
        tb/                      TensorBoard event files
        checkpoints/ckpt_<iteration>.pt   the last ``checkpoint.keep`` of them
        checkpoints/latest.pt    copy of the newest checkpoint (what --resume reads)
        replay/chunk_<first>_<end>.npz   the replay buffer in chunks, one per checkpoint
                                 (written before the checkpoint)
        games/iter_<n>.pdn       sample self-play games of checkpointed iterations

and a copy of the newest checkpoint in ``<checkpoints_dir>/<name>-latest.pt``. Every
file is written atomically (temp file + rename).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tammi_rl.atomic import atomic_copy, atomic_write_text
from tammi_rl.config import Config, save_config
from tammi_rl.rules.errors import TammiError
from tammi_rl.store.checkpoint import save_checkpoint

CONFIG_FILE = "config.yaml"
_CKPT_RE = re.compile(r"^ckpt_(\d+)\.pt$")


class RunDirError(TammiError):
    """A run directory is missing, incomplete, or would be overwritten."""


@dataclass(frozen=True)
class RunDir:
    """Paths of one run directory (nothing is created until `prepare`)."""

    root: Path

    @classmethod
    def for_config(cls, cfg: Config) -> RunDir:
        return cls(Path(cfg.runs_dir) / cfg.run_name)

    @property
    def config_path(self) -> Path:
        return self.root / CONFIG_FILE

    @property
    def tb_dir(self) -> Path:
        return self.root / "tb"

    @property
    def checkpoints_dir(self) -> Path:
        return self.root / "checkpoints"

    @property
    def latest_path(self) -> Path:
        return self.checkpoints_dir / "latest.pt"

    @property
    def replay_dir(self) -> Path:
        return self.root / "replay"

    @property
    def games_dir(self) -> Path:
        return self.root / "games"

    def checkpoint_path(self, iteration: int) -> Path:
        return self.checkpoints_dir / f"ckpt_{iteration:06d}.pt"

    def games_path(self, iteration: int) -> Path:
        return self.games_dir / f"iter_{iteration:06d}.pdn"

    # --- state ----------------------------------------------------------------------
    def checkpoints(self) -> list[tuple[int, Path]]:
        """(iteration, path) of the numbered checkpoints, oldest first."""
        if not self.checkpoints_dir.is_dir():
            return []
        found = [(int(m.group(1)), p) for p in self.checkpoints_dir.iterdir() if (m := _CKPT_RE.match(p.name))]
        return sorted(found)

    def has_checkpoint(self) -> bool:
        return self.latest_path.is_file() or bool(self.checkpoints())

    def resume_checkpoint(self) -> Path | None:
        """The checkpoint to resume from: the newest numbered one (written before latest.pt is
        copied from it, so it is never older), else latest.pt."""
        found = self.checkpoints()
        if found:
            return found[-1][1]
        return self.latest_path if self.latest_path.is_file() else None

    # --- writing --------------------------------------------------------------------
    def prepare(self, cfg: Config, resume: bool) -> None:
        """Create the layout and save the resolved config; a fresh run refuses to reuse a run with checkpoints."""
        if not resume and self.has_checkpoint():
            raise RunDirError(
                f"{self.root}: a run with checkpoints is already there; resume it with --resume {self.root} "
                f"or choose another run name (name=...)"
            )
        for d in (self.root, self.tb_dir, self.checkpoints_dir, self.games_dir):
            d.mkdir(parents=True, exist_ok=True)
        save_config(cfg, self.config_path)

    def save_checkpoint(self, ckpt: dict[str, Any], iteration: int, keep: int, export: Path | None = None) -> Path:
        """Write ``ckpt_<iteration>.pt`` and ``latest.pt``, prune to ``keep``, copy to ``export``."""
        path = self.checkpoint_path(iteration)
        save_checkpoint(path, ckpt)
        atomic_copy(path, self.latest_path)
        for _, old in self.checkpoints()[:-keep] if keep > 0 else []:
            old.unlink(missing_ok=True)
        if export is not None:
            atomic_copy(path, export)
        return path

    def write_games(self, iteration: int, pdn: str) -> Path:
        path = self.games_path(iteration)
        atomic_write_text(path, pdn)
        return path


def open_run(path: str | Path) -> RunDir:
    """An existing run directory (for --resume); it must hold a config.yaml."""
    run = RunDir(Path(path))
    if not run.root.is_dir():
        raise RunDirError(f"{run.root}: no run directory there")
    if not run.config_path.is_file():
        raise RunDirError(f"{run.root}: not a run directory (no {CONFIG_FILE})")
    return run
