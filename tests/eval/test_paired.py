"""Paired comparison of two agents' matches: the statistic, its errors, and the command on real
`tammi-rl eval` outputs."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import pytest
from support.tiny_checkpoint import tiny_checkpoint

from tammi_rl.cli import main as cli
from tammi_rl.config import NetworkConfig
from tammi_rl.eval.paired import (
    AgentGames,
    PairingError,
    compare,
    main,
    mean_interval,
    paired_difference,
    shared_opponents,
)
from tammi_rl.rules.engine import Rules
from tammi_rl.store.checkpoint import save_checkpoint

TINY = NetworkConfig(blocks=1, channels=8, value_hidden=8)


def test_the_difference_is_over_opening_pairs_with_the_t_style_normal_interval():
    base = [1, 0, 0.5, 0.5, 0, 0, 1, 1, 0.5, 0]
    new = [1, 0.5, 1, 0.5, 0, 0, 1, 1, 1, 0.5]
    diff = paired_difference(base, new)
    pairs = [(new[i] + new[i + 1] - base[i] - base[i + 1]) / 2 for i in range(0, 10, 2)]
    half = 1.96 * statistics.stdev(pairs) / len(pairs) ** 0.5
    assert diff.pairs == 5
    assert diff.mean == pytest.approx(statistics.mean(new) - statistics.mean(base))
    assert (diff.low, diff.high) == pytest.approx((diff.mean - half, diff.mean + half))
    assert str(diff) == f"{diff.mean:+.3f} (95% CI {diff.low:+.3f}..{diff.high:+.3f}, 5 opening pairs)"


def test_the_interval_of_a_mean_is_not_clipped_and_unknown_for_one_value():
    mean, low, high = mean_interval([0.0, 1.0, 1.0, 1.0])
    half = 1.96 * statistics.stdev([0.0, 1.0, 1.0, 1.0]) / 2
    assert (mean, low, high) == pytest.approx((0.75, 0.75 - half, 0.75 + half))
    assert high > 1.0  # a score's interval is clipped by its caller, not here
    assert mean_interval([0.25]) == (0.25, -math.inf, math.inf)
    with pytest.raises(ValueError, match="the mean of no values"):
        mean_interval([])
    assert paired_difference([0, 1], [1, 1]).low == -1.0  # one opening pair: the whole range


def test_pairing_cancels_what_the_openings_share():
    """Both agents win the same openings and lose the same others; the new one converts one more
    draw: each score's own interval is wide, the paired one is not."""
    base = [1, 1, 0, 0] * 10 + [0.5, 0.5] * 5
    new = [1, 1, 0, 0] * 10 + [1, 0.5] + [0.5, 0.5] * 4
    diff = paired_difference(base, new)
    own_width = 2 * 1.96 * statistics.stdev(base) / len(base) ** 0.5
    assert diff.mean == pytest.approx(0.01)
    assert diff.high - diff.low < own_width / 5
    same = paired_difference(base, base)
    assert (same.mean, same.low, same.high) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize(
    ("base", "new", "message"),
    [
        ([1, 0], [1, 0, 1, 0], "have 2 and 4 games"),
        ([1, 0, 1], [1, 0, 0], "3 games"),
        ([], [], "0 games"),
    ],
)
def test_unequal_or_unpaired_matches_are_refused(base, new, message):
    with pytest.raises(PairingError, match=message):
        paired_difference(base, new)


def test_different_openings_are_refused_naming_the_game():
    with pytest.raises(PairingError, match=r"game 3 opened with 'c3-d4' in one match and 'c3-b4'"):
        paired_difference([1, 0, 1, 0], [1, 0, 1, 0], ["a", "a", "c3-d4", "c3-d4"], ["a", "a", "c3-b4", "c3-b4"])


def _summary(agent: str, games: list[tuple[str, str, float]], mode: str = "single") -> dict:
    """A ``summary.json`` in the shape `tammi-rl eval` writes: (first, second, first_score)."""
    return {
        "mode": mode,
        "agent": agent,
        "opponents": ["ab"],
        "games": [
            {"first": f, "second": s, "first_score": x, "opening": f"o{i // 2}"} for i, (f, s, x) in enumerate(games)
        ],
    }


def test_an_agents_scores_are_read_from_either_colour():
    games = AgentGames.from_summary(
        _summary("net", [("net", "ab", 1.0), ("ab", "net", 1.0), ("net", "ab", 0.5), ("ab", "net", 0.0)]), "ab"
    )
    assert games.scores == (1.0, 0.0, 0.5, 1.0) and games.openings == ("o0", "o0", "o1", "o1")
    other = AgentGames("x", "alphabeta(depth=6)", games.scores, games.openings)
    with pytest.raises(PairingError, match="different opponents"):
        compare(games, other)
    with pytest.raises(PairingError, match="not a single-agent evaluation"):
        AgentGames.from_summary(_summary("net", [], mode="gauntlet"), "ab")
    with pytest.raises(PairingError, match="no games of net against 'ab'"):
        AgentGames.from_summary(_summary("net", [("x", "ab", 1.0)]), "ab")


def test_the_command_pairs_two_eval_outputs(tmp_path: Path, russian: Rules, capsys) -> None:
    fast = ["--games", "6", "--sims", "2", "--max-plies", "30", "--quiet"]
    for name, seed, opponents in (("base", 1, ["alphabeta:depth=1", "random"]), ("new", 2, ["alphabeta:depth=1"])):
        ckpt = tmp_path / f"{name}.pt"
        save_checkpoint(ckpt, tiny_checkpoint(russian, seed))
        vs = [arg for opponent in opponents for arg in ("--vs", opponent)]
        assert cli(["eval", str(ckpt), *vs, *fast, "--out", str(tmp_path / name)]) == 0
    capsys.readouterr()
    main([str(tmp_path / "base"), str(tmp_path / "new" / "summary.json")])
    lines = capsys.readouterr().out.splitlines()
    scores = [
        next(
            m["score"]
            for m in json.loads((tmp_path / n / "summary.json").read_text())["matches"]
            if "alphabeta" in m["opponent"]
        )
        for n in ("base", "new")
    ]
    assert len(lines) == 1  # the one opponent both met; the base's random games have no partner
    assert lines[0].startswith("new minus base against alphabeta(depth=1): ")
    assert f"{scores[1] - scores[0]:+.3f} (95% CI " in lines[0] and "3 opening pairs" in lines[0]
    main([str(tmp_path / "base"), str(tmp_path / "base"), "--vs", "random"])
    assert capsys.readouterr().out.startswith("base minus base against random: +0.000")
    for args, message in (
        ([str(tmp_path / "base"), str(tmp_path / "missing")], "no summary.json"),
        ([str(tmp_path / "new"), str(tmp_path / "base"), "--vs", "random"], "no games of new against 'random'"),
    ):
        with pytest.raises(SystemExit) as exit_info:
            main(args)
        assert exit_info.value.code == 2
        assert message in capsys.readouterr().err


def test_opponents_are_paired_by_name_and_none_shared_is_refused():
    ab, rnd = AgentGames("a", "ab", (1.0, 0.0), ("o1", "o1")), AgentGames("a", "random", (1.0, 1.0), ("o1", "o1"))
    other = AgentGames("b", "ab", (0.5, 0.5), ("o1", "o1"))
    assert shared_opponents([rnd, ab], [other]) == [(ab, other)]
    with pytest.raises(PairingError, match=r"share no opponent \(base: random; new: ab\)"):
        shared_opponents([rnd], [other])
