"""How a run shares the cores (`tammi_rl.config.cores`): ``selfplay.workers: auto`` and
``threads: auto`` split them by what a sample learned and a position played cost."""

from __future__ import annotations

from pathlib import Path

import pytest

from tammi_rl.config import load_config
from tammi_rl.config.cores import CoreSplit, learner_share, split_cores, usable_cores, worker_threads

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
RUSSIAN = CONFIGS / "russian.yaml"


@pytest.mark.parametrize(
    ("cores", "workers", "threads"),
    [(1, 1, 1), (2, 2, 1), (4, 4, 1), (8, 6, 3), (16, 12, 5)],
)
def test_the_recipe_splits_the_cores_as_documented(cores: int, workers: int, threads: int) -> None:
    """The module docstring's table (the recipe: replay ratio 4, 32 simulations, 8 bits)."""
    cfg = load_config(RUSSIAN, ["device=cpu"])
    assert split_cores(cfg, cores) == CoreSplit(workers=workers, learner_threads=threads, cores=cores)


def test_the_learners_share_follows_what_each_side_costs() -> None:
    base = load_config(RUSSIAN, ["device=cpu"])
    assert learner_share(base) == pytest.approx(4 / (4 + 8))  # 1 ms a sample learned, 8 ms a position
    assert learner_share(load_config(RUSSIAN, ["train.replay_ratio=1"])) < learner_share(base)
    assert learner_share(load_config(RUSSIAN, ["mcts.simulations=128"])) < learner_share(base)  # dearer positions
    assert learner_share(load_config(RUSSIAN, ["runtime=onnx"])) < learner_share(base)  # float32 self-play
    many = load_config(RUSSIAN, ["device=cpu", "train.replay_ratio=1"])
    assert split_cores(many, 16).learner_threads < split_cores(base, 16).learner_threads


def test_numbers_are_taken_as_they_are() -> None:
    cfg = load_config(RUSSIAN, ["device=cpu", "threads=3", "selfplay.workers=5"])
    assert split_cores(cfg, 2) == CoreSplit(workers=5, learner_threads=3, cores=2)
    assert worker_threads(cfg) == 3
    zero = load_config(RUSSIAN, ["device=cpu", "threads=0", "selfplay.workers=0"])
    assert split_cores(zero, 8) == CoreSplit(workers=0, learner_threads=0, cores=8)  # torch's default threads
    assert "torch's default" in split_cores(zero, 8).describe()


def test_auto_gives_each_worker_one_thread_and_keeps_the_other_key() -> None:
    cfg = load_config(RUSSIAN, ["device=cpu", "selfplay.workers=3"])
    assert worker_threads(cfg) == 1
    assert split_cores(cfg, 16) == CoreSplit(workers=3, learner_threads=5, cores=16)
    threads = load_config(RUSSIAN, ["device=cpu", "threads=2"])
    assert split_cores(threads, 8).workers == 7  # the cores the learner does not take, plus one


def test_on_cuda_every_core_plays_and_the_learner_keeps_one_thread() -> None:
    cfg = load_config(RUSSIAN, ["device=cuda"])
    assert split_cores(cfg, 16, on_cuda=True) == CoreSplit(workers=16, learner_threads=1, cores=16)


def test_usable_cores_is_this_process_s() -> None:
    assert usable_cores() >= 1
    assert split_cores(load_config(RUSSIAN)).cores == usable_cores()


def test_a_bad_threads_value_names_the_key() -> None:
    with pytest.raises(Exception, match="threads"):
        load_config(RUSSIAN, ["threads=many"])
