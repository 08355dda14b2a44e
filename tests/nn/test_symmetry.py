"""The board mirror: found exactly where the rules are symmetric, it maps legal hops to legal
hops and planes to planes, and the averaged evaluation reads a position and its mirror alike."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tammi_rl.config import NetworkConfig
from tammi_rl.env.draughts_env import DraughtsEnv
from tammi_rl.nn.model import build_model
from tammi_rl.nn.runtime import TorchRuntime
from tammi_rl.nn.symmetry import Mirror, MirrorAveraged, mirror_for
from tammi_rl.players import PlayerSpecError, parse_player_spec
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game


@pytest.mark.parametrize("variant", ["russian", "english", "italian", "international"])
def test_diagonal_boards_have_no_mirror(variant: str) -> None:
    assert mirror_for(Rules.for_variant(variant)) is None


def test_turkish_mirror_is_an_involution_that_fixes_the_start() -> None:
    rules = Rules.for_variant("turkish")
    mirror = mirror_for(rules)
    assert mirror is not None
    np.testing.assert_array_equal(mirror.squares[mirror.squares], np.arange(64))
    np.testing.assert_array_equal(mirror.actions[mirror.actions], np.arange(len(mirror.actions)))
    assert mirror.position(rules.start_position()) == rules.start_position()
    a1, h1 = rules.square("a1"), rules.square("h1")
    assert mirror.squares[a1] == h1


def turn_starts(rules: Rules, games: int, seed: int) -> list[Game]:
    """Positions at the start of a turn from random games (both sides to move, captures and kings)."""
    rng = np.random.default_rng(seed)
    found = []
    for _ in range(games):
        game = Game(rules)
        while not game.is_over and len(game.moves) < 120:
            found.append(game.copy())
            moves = game.legal_moves()
            game.play(moves[rng.integers(len(moves))])
    return found


def test_mirror_maps_legal_hops_and_planes() -> None:
    """For every position of random games: the mirrored position's legal hops are the mirrored
    hops, and its planes (the attack planes too) are the planes with the columns reversed, for
    either side to move."""
    rules = Rules.for_variant("turkish")
    mirror = mirror_for(rules)
    assert mirror is not None
    env = DraughtsEnv("turkish", attack_planes=True)
    checked_black = checked_capture = 0
    for game in turn_starts(rules, games=6, seed=1):
        flipped = Game(rules, start=mirror.position(game.position))
        assert sorted(mirror.actions[game.legal_hops()]) == sorted(flipped.legal_hops())
        env.reset(options={"fen": rules.fen(game.position)})
        planes, mask = env.observation_for(game.side)
        env.reset(options={"fen": rules.fen(flipped.position)})
        flipped_planes, flipped_mask = env.observation_for(game.side)
        np.testing.assert_array_equal(Mirror.planes(planes), flipped_planes)
        np.testing.assert_array_equal(mask[mirror.actions], flipped_mask)
        checked_black += game.side == 1
        checked_capture += game.legal_moves()[0].is_capture
    assert checked_black > 50 and checked_capture > 10


class Lopsided:
    """An evaluator that breaks the mirror on purpose: it likes the left half of the board."""

    def __init__(self, n_actions: int) -> None:
        self.weights = np.linspace(-1.0, 1.0, n_actions, dtype=np.float32)

    def __call__(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        left = obs[:, 0, :, :4].sum(axis=(1, 2)) - obs[:, 0, :, 4:].sum(axis=(1, 2))
        logits = np.outer(1.0 + left, self.weights).astype(np.float32)
        return logits, np.tanh(0.1 * left).astype(np.float32)


@pytest.mark.parametrize("network", ["lopsided", "untrained"])
def test_averaged_evaluation_reads_a_position_and_its_mirror_alike(network: str) -> None:
    rules = Rules.for_variant("turkish")
    mirror = mirror_for(rules)
    assert mirror is not None
    env = DraughtsEnv("turkish")
    obs = []
    for game in turn_starts(rules, games=1, seed=2)[10:40:5]:
        env.reset(options={"fen": rules.fen(game.position)})
        obs.append(env.observation_for(game.side)[0])
    planes = np.stack(obs)
    if network == "lopsided":
        inner = Lopsided(len(mirror.actions))
    else:
        torch.manual_seed(0)
        inner = TorchRuntime(build_model(rules, NetworkConfig(blocks=1, channels=8)), torch.device("cpu")).evaluate
    plain_logits, plain_values = inner(planes)
    _, plain_mirrored_values = inner(Mirror.planes(planes))
    assert np.abs(plain_values - plain_mirrored_values).max() > 1e-4  # the mirror is broken before averaging
    averaged = MirrorAveraged(inner, mirror)
    logits, values = averaged(planes)
    mirrored_logits, mirrored_values = averaged(Mirror.planes(planes))
    np.testing.assert_allclose(values, mirrored_values, atol=1e-6)
    np.testing.assert_allclose(logits, mirrored_logits[:, mirror.actions], atol=1e-5)
    assert logits.shape == plain_logits.shape and logits.dtype == np.float32


def test_player_spec_mirror_on_a_board_without_one_is_refused() -> None:
    with pytest.raises(PlayerSpecError, match="russian board has no mirror symmetry"):
        parse_player_spec("mcts:model=russian,sims=8,mirror=on", Rules.for_variant("russian"))
    with pytest.raises(PlayerSpecError, match="mirror"):
        parse_player_spec("mcts:model=turkish,sims=8,mirror=maybe", Rules.for_variant("turkish"))
