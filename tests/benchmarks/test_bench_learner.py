"""`tammi_rl.benchmarks.bench_learner` builds its arms, trains real steps and prints one row each."""

from __future__ import annotations

import pytest

from tammi_rl.benchmarks.bench_learner import main, parse_arm
from tammi_rl.config import load_config


def test_an_arm_reads_its_changes_over_the_config() -> None:
    cfg = load_config("configs/russian.yaml")
    arm = parse_arm("threads=2 batch_size=64 compile network.blocks=1", cfg)
    assert (arm.threads, arm.batch_size, arm.compile, arm.blocks) == (2, 64, True, 1)
    assert arm.channels == cfg.network.channels and arm.channels_last and arm.label.startswith("threads=2")
    assert parse_arm("", cfg).label == "config"
    switches = ("attack_planes", "global_pooling", "soft_policy", "ownership", "short_value", "opponent_policy")
    pooled = parse_arm(" ".join(f"network.{name}=1" for name in switches), cfg)
    assert all(getattr(pooled, name) for name in switches)
    assert not parse_arm("", cfg).global_pooling and not parse_arm("network.ownership=0", cfg).ownership
    with pytest.raises(SystemExit, match=r"unknown key\(s\) \['bogus'\]"):
        parse_arm("bogus=1", cfg)


def test_bench_learner_prints_a_row_per_arm(capsys: pytest.CaptureFixture[str]) -> None:
    tiny = "network.blocks=1 network.channels=8 batch_size=16"
    arms = ["--arm", tiny, "--arm", f"{tiny} channels_last=0", "--arm", f"{tiny} network.global_pooling=1"]
    arms += ["--arm", f"{tiny} network.attack_planes=1"]  # 13 planes in the network and in its batches
    main([*arms, "--steps", "2", "--rounds", "1", "--warmup", "1"])
    rows = capsys.readouterr().out.splitlines()[-4:]
    assert rows[0].split()[-1] == "1.00"  # the first arm is the reference
    assert all(" 1x8 " in row and float(row.split()[-2]) > 0 for row in rows)
