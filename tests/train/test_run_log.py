"""The run's TensorBoard log: a resumed session's events are read after the earlier ones; self-play
stats become fixed tags."""

import time
from pathlib import Path

from support.tensorboard_log import scalar_steps, scalar_values

from tammi_rl.train.run_log import RunLogger, end_shares, event_file_second


def log_session(tb_dir: Path, steps: range, purge_step: int | None) -> None:
    logger = RunLogger(tb_dir, purge_step=purge_step)
    for step in steps:
        logger.scalars({"loss/total": float(step)}, step)
    logger.writer.close()


def test_event_file_second_reads_the_name() -> None:
    assert event_file_second("events.out.tfevents.1796437885.vm.32208.10") == 1796437885
    assert event_file_second("events.out") is None


def test_a_session_resumed_within_the_same_second_sorts_after_the_last(tmp_path: Path) -> None:
    from torch.utils.tensorboard import SummaryWriter  # noqa: F401  imported before the clock is read

    # A file of the next second (a session that began just now, on a clock a little ahead)
    # whose per-process counter sorts late as text ("9" > "10").
    planted = tmp_path / f"events.out.tfevents.{int(time.time()) + 1:010d}.host.1.9"
    planted.write_bytes(b"")
    RunLogger(tmp_path).writer.close()
    names = sorted(p.name for p in tmp_path.glob("events.*"))
    assert names[0] == planted.name and len(names) == 2


def test_quick_resumes_keep_the_curve_in_order(tmp_path: Path) -> None:
    log_session(tmp_path, range(1, 4), purge_step=None)  # 1, 2, 3; the checkpoint was at 2
    log_session(tmp_path, range(3, 5), purge_step=3)  # resumed: 3 again, then 4
    log_session(tmp_path, range(5, 6), purge_step=5)
    assert scalar_steps(tmp_path, "loss/total") == [1, 2, 3, 4, 5]


def test_a_clock_set_back_is_not_waited_out(tmp_path: Path) -> None:
    (tmp_path / f"events.out.tfevents.{int(time.time()) + 3600:010d}.host.1.0").write_bytes(b"")
    start = time.monotonic()
    RunLogger(tmp_path).writer.close()
    assert time.monotonic() - start < 10  # the cap (2 s) and TensorBoard's import, not an hour


def test_self_play_ends_are_logged_as_shares_of_the_games(tmp_path: Path) -> None:
    stats = {"games": 8.0, "draw": 0.25, "ends_no_moves": 5.0, "ends_repetition": 2.0, "ends_adjudication": 1.0}
    shares = end_shares(stats)
    assert shares == {
        "selfplay/end/no_moves": 0.625,
        "selfplay/end/repetition": 0.25,
        "selfplay/end/adjudication": 0.125,
    }
    assert end_shares({"games": 0.0, "ends_no_moves": 0.0}) == {}  # no game finished: nothing to share
    logger = RunLogger(tmp_path, purge_step=None)
    logger.selfplay(stats, 3)
    logger.writer.close()
    assert scalar_steps(tmp_path, "selfplay/end/repetition") == [3]
    assert scalar_values(tmp_path, "selfplay/end/repetition") == [0.25]
    assert scalar_steps(tmp_path, "selfplay/draw") == [3]
