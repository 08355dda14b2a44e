"""The two attack planes (``network.attack_planes``): where they mark pieces, in which frame,
mid-chain, and that the other planes stay as they were."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from tammi_rl.env import observation as ob
from tammi_rl.env.draughts_env import DraughtsEnv
from tammi_rl.rules import movegen as mg

VARIANTS = ["russian", "english", "italian", "turkish", "brazilian", "international"]


def marked(env: DraughtsEnv, plane: np.ndarray, side: int) -> set[str]:
    """Names of the squares set in ``plane`` of an observation seen by ``side``."""
    rows, cols = env.encoder.cell_row[side], env.encoder.cell_col[side]
    return {env.rules.square_name(sq) for sq in range(len(rows)) if plane[rows[sq], cols[sq]]}


def jumpable_names(env: DraughtsEnv, color: int) -> set[str]:
    mw, kw, mb, kb, _side = env.position.as_int64()
    men, kings, opp_men, opp_kings = (mw, kw, mb, kb) if color == 0 else (mb, kb, mw, kw)
    rays, params = env.rules.rays, env.rules.params
    bits = int(mg.jumpable(men, kings, opp_men, opp_kings, color, 0, mw | kw | mb | kb, rays, params))
    return {env.rules.square_name(sq) for sq in range(env.rules.geometry.n_squares) if (bits >> sq) & 1}


@pytest.mark.parametrize("variant", VARIANTS)
def test_attack_planes_mark_the_jumpable_pieces_and_leave_the_rest_alone(variant):
    plain = DraughtsEnv(variant, max_plies=150)
    env = DraughtsEnv(variant, max_plies=150, attack_planes=True)
    assert env.observation_space.shape == (ob.N_PLANES + ob.N_ATTACK_PLANES, *plain.observation_space.shape[1:])
    rng = np.random.default_rng(2)
    seen = 0
    for game in range(6):
        obs, _ = env.reset(seed=game)
        base, _ = plain.reset(seed=game)
        done = False
        while not done:
            np.testing.assert_array_equal(obs[: ob.N_PLANES], base)
            side = env.to_play
            if not env.chain_path():  # mid-chain planes: the test below
                assert marked(env, obs[ob.OPP_ATTACKED], side) == jumpable_names(env, side)
                assert marked(env, obs[ob.OWN_ATTACKED], side) == jumpable_names(env, 1 - side)
                seen += obs[ob.OPP_ATTACKED].any() + obs[ob.OWN_ATTACKED].any()
            action = int(rng.choice(env.legal_actions()))
            obs, _r, terminated, truncated, _ = env.step(action)
            base, _r, _t, _u, _ = plain.step(action)
            done = terminated or truncated
    assert seen > 50


def test_attack_planes_in_a_set_position_seen_by_either_side():
    env = DraughtsEnv("russian", attack_planes=True)
    obs, _ = env.reset(options={"fen": "W:Wc3:Bd4,f6,g7"})
    assert marked(env, obs[ob.OPP_ATTACKED], 0) == {"d4"}
    assert marked(env, obs[ob.OWN_ATTACKED], 0) == {"c3"}
    assert obs[ob.OPP_ATTACKED].sum() == 1 and obs[ob.OWN_ATTACKED].sum() == 1
    # the own frame: c3 is two rows up from White's back row and two columns in
    assert obs[ob.OWN_ATTACKED, 2, 2] == 1.0
    other, _mask = env.observation_for(1)
    assert marked(env, other[ob.OPP_ATTACKED], 1) == {"c3"}
    assert marked(env, other[ob.OWN_ATTACKED], 1) == {"d4"}


def test_attack_planes_mid_chain_follow_the_moving_piece():
    env = DraughtsEnv("russian", attack_planes=True)
    env.reset(options={"fen": "W:Wc3,h2:Bd4,f6,b6"})
    first = next(a for a in env.legal_actions() if env.action_text(a) == "c3:e5")
    obs, *_ = env.step(first)
    assert env.chain_path()
    # only the piece on e5 hops on: f6 is under attack, b6 (out of its reach) and d4 (jumped) are not
    assert marked(env, obs[ob.OPP_ATTACKED], 0) == {"f6"}
    # f6 could take e5 only by landing on d4, where the jumped man still stands
    assert marked(env, obs[ob.OWN_ATTACKED], 0) == set()


def test_env_with_attack_planes_passes_the_gymnasium_checker():
    check_env(DraughtsEnv("turkish", attack_planes=True, illegal_action="lose"), skip_render_check=True)


def test_plane_names_and_counts():
    assert ob.plane_count(False) == len(ob.plane_names(ob.N_PLANES)) == ob.N_PLANES
    assert ob.plane_names(ob.plane_count(True))[ob.OPP_ATTACKED :] == ob.ATTACK_PLANE_NAMES
    with pytest.raises(ValueError, match="11 or 13 planes, not 12"):
        ob.plane_names(12)
