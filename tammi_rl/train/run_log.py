"""TensorBoard logging for a training run, under fixed tags.

Every scalar is written at ``step = iteration`` (1-based, the iteration just finished),
the one clock every part of the loop shares (learning may not have started yet, so the
learner step would stall). On resume the writer is opened with
``purge_step = checkpoint iteration + 1``: TensorBoard then drops events an interrupted
run wrote after its last checkpoint, and the curves continue without a jump or a fold.

Tags: ``loss/policy|value|total``, ``policy/entropy``, ``value/accuracy``, ``train/lr``,
``train/grad_norm``, ``train/weight_norm`` (of the decayed parameters, after the
iteration's last step), ``train/learner_step``, ``train/wall_hours`` (the run's wall time
over all its sessions), ``replay/size``, ``selfplay/*`` (games_per_s, positions_per_s,
game_length, white_win, draw, black_win, resigned, resign_false_positive_rate,
mean_nn_batch, nn_time_share; ``selfplay/end/<reason>``: the share of the iteration's games
that ended by each `GameResult.reason`), ``eval/score_vs_ab_d<N>``;
text: ``config`` (resolved YAML) and ``selfplay/sample_game`` (PDN); the config also
as hparams.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from tammi_rl.selfplay.worker import END_KEYS

# self-play stats key -> TensorBoard tag
SELFPLAY_TAGS = {
    "games_per_s": "selfplay/games_per_s",
    "positions_per_s": "selfplay/positions_per_s",
    "mean_game_length": "selfplay/game_length",
    "white_win": "selfplay/white_win",
    "draw": "selfplay/draw",
    "black_win": "selfplay/black_win",
    "resigned": "selfplay/resigned",
    "resign_false_positive_rate": "selfplay/resign_false_positive_rate",
    "mean_nn_batch": "selfplay/mean_nn_batch",
    "nn_time_share": "selfplay/nn_time_share",
    "simulations_per_decision": "selfplay/simulations",
}
LEARNER_TAGS = (
    "loss/policy",
    "loss/value",
    "loss/total",
    "policy/entropy",
    "value/accuracy",
    "train/lr",
    "train/grad_norm",
    "train/weight_norm",
)


def end_shares(stats: Mapping[str, float]) -> dict[str, float]:
    """``selfplay/end/<reason>`` tag -> the share of the games in ``stats`` that ended so, from the
    counts the workers keep (``ends_<reason>``); empty when no game finished."""
    games = stats.get("games", 0.0)
    if not games:
        return {}
    return {f"selfplay/end/{reason}": stats[key] / games for reason, key in END_KEYS.items() if key in stats}


def eval_tag(depth: int) -> str:
    return f"eval/score_vs_ab_d{depth}"


def _flat(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, Mapping):
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value if isinstance(value, (int, float, str, bool)) else str(value)
    return out


def event_file_second(name: str) -> int | None:
    """The whole second in an event file's name (``events.out.tfevents.SECOND.HOST.PID.N``)."""
    parts = name.split(".")
    return int(parts[3]) if len(parts) > 3 and parts[3].isdigit() else None


MAX_SORT_WAIT_S = 2.0
"""The longest `wait_to_sort_last` sleeps: a clock set back further is not waited out."""


def wait_to_sort_last(log_dir: Path) -> None:
    """Sleep until a new event file's name sorts after every file in ``log_dir``.

    Usually under a second, never more than `MAX_SORT_WAIT_S`.

    TensorBoard reads a directory's event files in name order, and a resumed session's
    ``purge_step`` only drops the events read before it. The names start with the whole
    second, then a per-process counter that sorts as text (``.10`` before ``.9``), so a
    session resumed within the same second as the last one began could be read first."""
    seconds = [s for p in log_dir.glob("events.*") if (s := event_file_second(p.name)) is not None]
    if seconds:
        time.sleep(min(MAX_SORT_WAIT_S, max(0.0, max(seconds) + 1 - time.time())))


class RunLogger:
    """A `SummaryWriter` with the run's tags; ``purge_step`` as described in the module docstring."""

    def __init__(self, log_dir: str | Path, purge_step: int | None = None) -> None:
        # Lazy: torch.utils.tensorboard imports TensorBoard (slow); only a training run that logs needs it.
        from torch.utils.tensorboard import SummaryWriter

        wait_to_sort_last(Path(log_dir))
        self.writer = SummaryWriter(log_dir=str(log_dir), purge_step=purge_step)

    def scalars(self, values: Mapping[str, float], step: int) -> None:
        for tag, value in values.items():
            if value is not None:
                self.writer.add_scalar(tag, float(value), step)

    def selfplay(self, stats: Mapping[str, float], step: int) -> None:
        self.scalars({tag: stats[key] for key, tag in SELFPLAY_TAGS.items() if key in stats}, step)
        self.scalars(end_shares(stats), step)

    def learner(self, metrics: Mapping[str, float], step: int) -> None:
        self.scalars({k: v for k, v in metrics.items() if k in LEARNER_TAGS}, step)

    def evaluation(self, scores: Mapping[int, float], step: int) -> None:
        self.scalars({eval_tag(d): s for d, s in scores.items()}, step)

    def config(self, config: Mapping[str, Any], eval_depths: list[int]) -> None:
        """The resolved config as text and as hparams (with the eval scores as their metrics)."""
        from torch.utils.tensorboard.summary import hparams  # lazy: TensorBoard, as in __init__

        text = yaml.safe_dump(dict(config), sort_keys=False)
        self.writer.add_text("config", "\n".join("    " + line for line in text.splitlines()), 0)
        metrics = {eval_tag(d): 0.0 for d in eval_depths} or {"loss/total": 0.0}
        exp, ssi, sei = hparams(_flat(config), metrics)
        fw = self.writer._get_file_writer()
        for summary in (exp, ssi, sei):
            fw.add_summary(summary)

    def game(self, pdn: str, step: int) -> None:
        """A sample self-play game (PDN) as text."""
        self.writer.add_text("selfplay/sample_game", "\n".join("    " + line for line in pdn.splitlines()), step)

    def flush(self) -> None:
        self.writer.flush()

    def close(self) -> None:
        self.writer.close()
