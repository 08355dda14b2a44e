"""The recipe A/B tool: arms parsed, trained side by side, rated, reported; a rerun goes on."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import torch

from tammi_rl.benchmarks.recipe_ab import (
    ArmResult,
    ArmSpec,
    Job,
    Opponent,
    Rating,
    add_cpu_seconds,
    core_shares,
    main,
    rating_jobs,
    report,
    run_all,
    run_is_finished,
    seeded_rounds,
    start,
    stop,
)
from tammi_rl.eval.paired import AgentGames

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "configs" / "smoke.yaml"


def test_an_arm_is_a_name_then_overrides():
    assert ArmSpec.parse("base") == ArmSpec("base")
    assert ArmSpec.parse(" pool  network.global_pooling=true mcts.simulations=8 ") == ArmSpec(
        "pool", ("network.global_pooling=true", "mcts.simulations=8")
    )
    for bad, why in [("", "start with the arm's name"), ("a=1", "start with"), ("x oops", "'oops' is not")]:
        with pytest.raises(ValueError, match=why):
            ArmSpec.parse(bad)


def test_every_arm_meets_each_depth_and_every_arm_but_the_base_meets_the_base(tmp_path):
    jobs = rating_jobs([[ArmSpec("base"), ArmSpec("a"), ArmSpec("b")]], tmp_path, [6, 8], 800)
    assert [(arm, key) for arm, key, _ in jobs] == [
        ("base", "d6"),
        ("base", "d8"),
        ("a", "d6"),
        ("a", "d8"),
        ("b", "d6"),
        ("b", "d8"),
        ("a", "base"),
        ("b", "base"),
    ]
    assert jobs[-1][2] == f"mcts:checkpoint={tmp_path / 'runs' / 'base'},sims=800,name=base"


def test_an_opponent_is_a_name_then_a_player_spec_read_before_any_training():
    assert Opponent.parse("shipped=mcts:model=turkish,sims=800") == Opponent("shipped", "mcts:model=turkish,sims=800")
    for bad, why in [
        ("mcts:model=turkish", "give NAME=SPEC"),
        ("shipped=", "give NAME=SPEC"),
        ("two words=random", "give NAME=SPEC"),
        ("base=random", "the name 'base' is the base's or a depth's column"),
        ("d6=alphabeta:depth=6", "the name 'd6'"),
        ("old=mtcs:model=turkish", "unknown player kind 'mtcs'"),
        ("old=mcts:sims", "option 'sims' must look like key=value"),
    ]:
        with pytest.raises(ValueError, match=why):
            Opponent.parse(bad)


def test_every_arm_meets_each_extra_opponent_and_the_report_gives_it_a_column(tmp_path):
    shipped = Opponent("shipped", "mcts:model=turkish,sims=800")
    jobs = rating_jobs([[ArmSpec("base"), ArmSpec("a")]], tmp_path, [4], 800, (shipped,))
    assert [(arm, key) for arm, key, _ in jobs] == [
        ("base", "d4"),
        ("a", "d4"),
        ("base", "shipped"),
        ("a", "shipped"),
        ("a", "base"),
    ]
    assert jobs[2][2] == "mcts:model=turkish,sims=800"
    vs = Rating("shipped", 45, 41, 14, 0.655, 0.586, 0.724, 0.031, 0.032)
    text = report([[ArmResult("base", 10, 5, {}, {"shipped": vs}), ArmResult("a", 10, 5, {})]], [4], (shipped,))
    rows = text.splitlines()
    assert rows[0].endswith("| vs depth 4 | vs shipped |")
    assert rows[2] == "| base | 10 | 5 | - | - |  |  | 0.655 (45/41/14, CI 0.586-0.724) |"
    assert "- base: shipped 0.031/0.032" in text


def test_the_report_gives_each_rating_with_its_counts_ci_and_both_sides_time():
    rating = Rating("alphabeta(depth=6)", 20, 18, 62, 0.29, 0.211, 0.369, 0.054, 0.002)
    h2h = Rating("base", 30, 45, 25, 0.525, 0.452, 0.598, 0.06, 0.061)
    base = ArmResult("base", 3485, 1840, {2: 0.55, 4: 0.125}, {"d6": rating}, cpu_seconds=4500.0)
    arm = ArmResult("pool", 3460, 1784, {}, {"base": h2h})
    text = report([[base, arm]], [6])
    rows = text.splitlines()
    assert rows[0] == (
        "| arm | games | learner steps | training CPU h | ladder at the end | head to head vs base | vs depth 6 |"
    )
    assert rows[2] == "| base | 3,485 | 1,840 | 1.25 | d2 0.55 / d4 0.12 |  | 0.290 (20/18/62, CI 0.211-0.369) |"
    assert rows[3] == "| pool | 3,460 | 1,784 | - | - | 0.525 (30/45/25, CI 0.452-0.598) |  |"
    assert "- base: d6 0.054/0.002" in text and "- pool: base 0.060/0.061" in text
    assert "Paired" not in text  # no per-game records: nothing to pair


def test_the_report_pairs_each_arm_with_the_base_opponent_by_opponent():
    openings = ("a", "a", "b", "b")
    ab = "alphabeta(depth=6)"

    def rating(scores: tuple[float, ...], opening_texts: tuple[str, ...] = openings) -> Rating:
        mean = sum(scores) / len(scores)
        return Rating(ab, 0, 0, 0, mean, 0.0, 1.0, 0.05, 0.002, AgentGames("x", ab, scores, opening_texts))

    base = ArmResult("base", 10, 5, {}, {"d6": rating((1, 0, 0.5, 0)), "d8": rating((0, 0, 0, 0))})
    arm = ArmResult("new", 10, 5, {}, {"d6": rating((1, 0.5, 1, 0)), "d8": rating((0, 0, 0, 0), ("a", "a", "c", "c"))})
    lines = report([[base, arm]], [6, 8]).splitlines()
    at = lines.index("Paired with base (same openings, same opponent; the arm's score minus base's):")
    assert lines[at + 1].startswith("- new: d6 +0.250 (95% CI ")
    assert "d8 not paired: game 3 opened with 'b' in one match and 'c' in the other" in lines[at + 1]


def test_with_seeds_every_arm_trains_once_per_seed_a_round_per_seed():
    arms = [ArmSpec("base"), ArmSpec("planes", ("network.attack_planes=true",))]
    assert seeded_rounds(arms, None) == [arms]
    assert seeded_rounds(arms, [0, 1]) == [
        [ArmSpec("base-s0", ("seed=0",)), ArmSpec("planes-s0", ("seed=0", "network.attack_planes=true"))],
        [ArmSpec("base-s1", ("seed=1",)), ArmSpec("planes-s1", ("seed=1", "network.attack_planes=true"))],
    ]
    with pytest.raises(ValueError, match="--arm 'other' sets seed; with --seeds every arm trains from each seed"):
        seeded_rounds([*arms, ArmSpec("other", ("seed=3",))], [0, 1])
    with pytest.raises(ValueError, match=r"--seeds must differ, got \[0, 0\]"):
        seeded_rounds(arms, [0, 0])
    with pytest.raises(ValueError, match=r"a seed is a whole number >= 0, got \[0, -1\]"):
        seeded_rounds(arms, [0, -1])
    with pytest.raises(ValueError, match="--set sets seed"):
        seeded_rounds(arms, [0, 1], ("train.hours=1", "seed=5"))
    assert seeded_rounds(arms, None, ("seed=5",)) == [arms]  # without --seeds, --set may set it


def test_seeds_with_an_odd_number_of_games_or_a_seed_set_twice_are_refused_before_training(tmp_path, capsys):
    for extra, message in [
        (["--games", "3"], "--games 3: with --seeds the games pool by colour pair, so give an even number"),
        (["--set", "seed=2"], "--set sets seed; with --seeds every arm trains from each seed"),
    ]:
        with pytest.raises(SystemExit):
            main([str(SMOKE), "--out", str(tmp_path / "ab"), "--arm", "base", "--seeds", "0", "1", *extra])
        assert message in capsys.readouterr().err
    assert not (tmp_path / "ab").exists()


def test_each_seeds_runs_meet_that_seeds_base(tmp_path):
    rounds = seeded_rounds([ArmSpec("base"), ArmSpec("a")], [0, 1])
    jobs = rating_jobs(rounds, tmp_path, [6], 800)
    assert [(run, key) for run, key, _ in jobs] == [
        ("base-s0", "d6"),
        ("a-s0", "d6"),
        ("base-s1", "d6"),
        ("a-s1", "d6"),
        ("a-s0", "base"),
        ("a-s1", "base"),
    ]
    assert jobs[-1][2] == f"mcts:checkpoint={tmp_path / 'runs' / 'base-s1'},sims=800,name=base-s1"


def test_over_seeds_the_report_pools_each_arm_and_gives_each_seeds_figure():
    ab = "alphabeta(depth=6)"
    openings = ("a", "a", "b", "b")

    def rating(opponent: str, scores: tuple[float, ...]) -> Rating:
        wins, draws, losses = (sum(s == x for s in scores) for x in (1, 0.5, 0))
        mean = sum(scores) / len(scores)
        return Rating(
            opponent, wins, draws, losses, mean, 0.0, 1.0, 0.05, 0.05, AgentGames("x", opponent, scores, openings)
        )

    def run(name: str, **ratings: Rating) -> ArmResult:
        return ArmResult(name, 10, 5, {}, ratings)

    rounds = [
        [
            run("base-s0", d6=rating(ab, (1, 0, 0.5, 0))),
            run("new-s0", d6=rating(ab, (1, 1, 0.5, 0)), base=rating("base-s0", (1, 1, 1, 0.5))),
        ],
        [
            run("base-s1", d6=rating(ab, (0, 0, 0, 0))),
            run("new-s1", d6=rating(ab, (0, 0, 0, 0.5)), base=rating("base-s1", (0, 0, 0.5, 0.5))),
        ],
    ]
    lines = report(rounds, [6], arms=["base", "new"]).splitlines()
    assert lines[0].split(" | ")[5] == "head to head vs its seed's base"
    assert [line.split(" | ")[0] for line in lines[2:6]] == ["| base-s0", "| new-s0", "| base-s1", "| new-s1"]
    at = lines.index(
        "Paired with its seed's base (same openings, same opponent; the arm's score minus its seed's base's):"
    )
    assert lines[at + 1].startswith("- new-s0: d6 +0.250 (95% CI ")
    assert lines[at + 2].startswith("- new-s1: d6 +0.125 (95% CI ")
    pooled = lines[
        lines.index("Over the seeds (each seed's run against that seed's base, pooled; each seed's figure after it):")
        + 1
    ]
    # head to head: 3.5 + 1.0 points from 8 games; paired: (+0.25 + 0.125) / 2 over 4 opening pairs
    # head to head 4.5 points of 8 games, interval over the 4 colour pairs; paired (+0.25 + 0.125) / 2
    assert pooled == (
        "- new: base 0.562 (3/3/2, CI 0.144-0.981; 0.875, 0.250), "
        "d6 +0.188 (95% CI -0.047..+0.422, 4 opening pairs; +0.250, +0.125)"
    )
    del rounds[1][1].ratings["d6"]  # seed 1's arm never met depth 6
    rounds[0][1].ratings["base"] = rating("base-s0", (1, 1, 1))  # an odd match: its last game has no partner
    pooled = report(rounds, [6], arms=["base", "new"]).splitlines()[-1]
    assert pooled.startswith("- new: base ")  # the head to head is still pooled, pair by pair within each match
    assert pooled.endswith("d6 not pooled: new-s1 or its base has no rating with its games")


def test_pinned_arms_get_equal_disjoint_cores_and_too_few_cores_is_an_error():
    assert core_shares(2, [0, 1, 2, 3, 4]) == [frozenset({0, 1}), frozenset({2, 3})]
    assert core_shares(1, [3, 5]) == [frozenset({3, 5})]
    with pytest.raises(ValueError, match="3 arms need at least 3 cores, this process may use 2"):
        core_shares(3, [0, 1])


def test_cpu_seconds_add_up_over_the_sessions_of_a_run(tmp_path):
    path = tmp_path / "cpu-base.txt"
    assert add_cpu_seconds(path, 10.25) == 10.25
    assert add_cpu_seconds(path, 5.0) == 15.25
    assert float(path.read_text()) == 15.25


def test_a_run_is_finished_when_its_iterations_are_done_or_its_budget_spent(tmp_path):
    run = tmp_path / "run"
    assert not run_is_finished(run)  # no checkpoint yet: it trains
    ckpt = torch.load(ROOT / "checkpoints" / "russian.pt", weights_only=False)  # 1,331 of 2,000, budget spent
    (run / "checkpoints").mkdir(parents=True)
    for spent, iteration, finished in [(True, 1331, True), (False, 1331, False), (False, 2000, True)]:
        ckpt["counters"].update(budget_spent=spent, iteration=iteration)
        torch.save(ckpt, run / "checkpoints" / "latest.pt")
        assert run_is_finished(run) is finished, (spent, iteration)


BUSY_CHILD = """
import multiprocessing as mp, os, time
def spin():
    end = time.process_time() + 0.4
    while time.process_time() < end:
        pass
if __name__ == "__main__":
    print(sorted(os.sched_getaffinity(0)), flush=True)
    child = mp.get_context("spawn").Process(target=spin)
    child.start()
    child.join()
"""


def test_a_job_runs_on_its_cores_and_counts_the_cpu_of_its_children(tmp_path):
    core = min(os.sched_getaffinity(0))
    script = tmp_path / "busy.py"
    script.write_text(BUSY_CHILD)
    job = Job([sys.executable, str(script)], tmp_path / "logs" / "busy.log", frozenset({core}), tmp_path / "cpu.txt")
    run_all([job], 1)
    assert job.log.read_text().splitlines()[0] == f"[{core}]"  # pinned, and its child with it
    assert float(job.cpu_file.read_text()) >= 0.4  # the spinning child's CPU is counted


def test_stopping_a_job_that_has_already_exited_still_counts_its_cpu(tmp_path):
    spin = "import time\nend = time.process_time() + 0.2\nwhile time.process_time() < end: pass"
    job = Job([sys.executable, "-c", spin], tmp_path / "spin.log", cpu_file=tmp_path / "cpu.txt")
    proc = start(job)
    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped: as when another job fails
    stop(proc, job)
    assert proc.returncode == 0 and float(job.cpu_file.read_text()) >= 0.2
    sleeper = Job([sys.executable, "-c", "import time; time.sleep(60)"], tmp_path / "sleep.log")
    running = start(sleeper)
    stop(running, sleeper)  # a running one is ended
    assert running.returncode == -15


def test_a_failed_job_is_named_with_its_log(tmp_path):
    job = Job([sys.executable, "-c", "raise SystemExit(3)"], tmp_path / "fail.log")
    with pytest.raises(RuntimeError, match=r"failed \(exit 3\); see .*fail.log"):
        run_all([job], 1)


@pytest.mark.slow
def test_two_smoke_arms_train_rate_and_a_rerun_plays_nothing_again(tmp_path, capsys):
    out = tmp_path / "ab"
    argv = [str(SMOKE), "--out", str(out), "--arm", "base", "--arm", "few mcts.simulations=4"]
    argv += ["--set", "eval.every=0", "--games", "2", "--sims", "4", "--depths", "1", "--jobs", "2"]
    pin = len(os.sched_getaffinity(0)) >= 2
    main(argv + ["--pin"] * pin)
    text = (out / "report.md").read_text()
    printed = capsys.readouterr().out
    assert printed.endswith(text)
    if pin:
        assert "each on cores [" in printed
    assert all(float((out / "logs" / f"cpu-{arm}.txt").read_text()) > 0 for arm in ["base", "few"])
    rows = {line.split(" | ")[0][2:]: line for line in text.splitlines() if line.startswith("| ")}
    assert set(rows) == {"arm", "base", "few"}
    assert "/2, CI" not in rows["base"].split(" | ")[4]  # no head to head for the base
    assert rows["few"].count("CI") == 2  # against the base and against depth 1
    assert "\n- few: d1 " in text and "2 games: a paired comparison" not in text
    config = (out / "runs" / "few" / "config.yaml").read_text()
    assert "simulations: 4" in config and "workers: 1" in config
    summaries = sorted((out / "rate").glob("*/summary.json"))
    assert [p.parent.name for p in summaries] == ["base-vs-d1", "few-vs-base", "few-vs-d1"]
    stamps = [p.stat().st_mtime_ns for p in summaries]

    main(argv)  # the runs are done and the ratings played: nothing is played again
    assert [p.stat().st_mtime_ns for p in summaries] == stamps
    printed = capsys.readouterr().out
    assert "2 of 2 runs already finished: not started again" in printed
    assert "0 of 3 matches to play" in printed
    assert (out / "report.md").read_text() == text  # the CPU column too: no training process ran


@pytest.mark.slow
def test_with_two_seeds_each_arm_trains_twice_and_the_report_pools_them(tmp_path, capsys):
    out = tmp_path / "ab"
    arms = ["--arm", "base", "--arm", "few mcts.simulations=4", "--seeds", "0", "1"]
    main(
        [str(SMOKE), "--out", str(out), *arms, "--set", "eval.every=0", "--games", "2", "--sims", "4", "--depths", "1"]
    )
    printed = capsys.readouterr().out
    assert "training 2 arms side by side: base-s0, few-s0" in printed
    assert "training 2 arms side by side: base-s1, few-s1" in printed
    for run, seed in [("base-s0", 0), ("few-s0", 0), ("base-s1", 1), ("few-s1", 1)]:
        assert f"\nseed: {seed}\n" in (out / "runs" / run / "config.yaml").read_text(), run
    summaries = sorted(p.parent.name for p in (out / "rate").glob("*/summary.json"))
    assert summaries == [
        "base-s0-vs-d1",
        "base-s1-vs-d1",
        "few-s0-vs-base",
        "few-s0-vs-d1",
        "few-s1-vs-base",
        "few-s1-vs-d1",
    ]
    text = (out / "report.md").read_text()
    pooled = text.split("Over the seeds")[1].splitlines()[1]
    assert pooled.startswith("- few: base ") and ", 2 opening pairs; " in pooled  # one pair a seed, pooled
