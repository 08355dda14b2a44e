"""selfplay_ends: how a network's self-play games end under each arm's settings, and its CLI."""

import math

import pytest
from support.tiny_checkpoint import TINY_NETWORK, write_tiny_checkpoint

from tammi_rl.benchmarks import selfplay_ends as se
from tammi_rl.benchmarks.recipe_ab import ArmSpec
from tammi_rl.nn.model import build_model
from tammi_rl.rules.engine import Rules
from tammi_rl.selfplay.worker import END_KEYS

FAST = ("mcts.simulations=4", "selfplay.parallel_games=2", "selfplay.max_plies=24", "runtime=torch")


@pytest.fixture(scope="module")
def turkish_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "turkish.pt"
    return write_tiny_checkpoint(path, "turkish", build_model(Rules.for_variant("turkish"), TINY_NETWORK))


def test_every_game_ends_once_and_the_shares_add_up(turkish_model):
    arms = [ArmSpec("blind", FAST), ArmSpec("sees", (*FAST, "mcts.repetition_draws=true"))]
    results = [se.play_arm("configs/turkish.yaml", str(turkish_model), arm, games=3, seed=5) for arm in arms]
    for arm in results:
        assert arm.games >= 3  # a batch may finish a game more than asked
        assert math.isclose(sum(arm.ends.values()), 1.0)
        assert set(arm.ends) <= set(END_KEYS)
        assert math.isclose(arm.white_win + arm.draw + arm.black_win, 1.0)
        assert 0 < arm.mean_plies <= 24 and arm.positions_per_s > 0
    # A 24-ply cap on Turkish with a random network: some game reaches it.
    assert any("adjudication" in arm.ends for arm in results)
    text = se.table(results)
    assert text.splitlines()[0].startswith("| arm | games |") and "| blind |" in text and "| sees |" in text
    for reason in set().union(*(arm.ends for arm in results)):
        assert f" {reason} " in text.splitlines()[0]


def test_a_model_of_another_variant_is_refused(turkish_model):
    with pytest.raises(ValueError, match=r"turkish\.pt plays turkish, but configs/russian\.yaml is russian"):
        se.play_arm("configs/russian.yaml", str(turkish_model), ArmSpec("x", FAST), games=1, seed=1)


def test_cli_prints_a_row_per_arm_and_refuses_a_bad_arm(turkish_model, capsys):
    se.main(["configs/turkish.yaml", "--model", str(turkish_model), "--games", "2", "--arm", "a " + " ".join(FAST)])
    out = capsys.readouterr().out
    assert "a: " in out and "| a | " in out
    with pytest.raises(SystemExit):
        se.main(["configs/turkish.yaml", "--model", str(turkish_model), "--arm", "mcts.simulations=4"])
    assert "start with the arm's name" in capsys.readouterr().err
