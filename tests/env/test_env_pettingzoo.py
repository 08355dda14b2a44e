"""The PettingZoo AEC wrapper: PettingZoo's api_test and a full game through agent_iter."""

import numpy as np
import pytest
from pettingzoo.test import api_test

from tammi_rl.env.pettingzoo_env import DraughtsAECEnv, env

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.mark.parametrize("variant", ["russian", "english", "italian", "turkish", "brazilian"])
def test_api_test(variant):
    api_test(env(variant), num_cycles=500, verbose_progress=False)


def test_a_game_through_agent_iter():
    aec = DraughtsAECEnv("russian", max_plies=300)
    aec.reset(seed=0)
    rng = np.random.default_rng(0)
    totals = {a: 0.0 for a in aec.possible_agents}
    same_agent_twice = False
    previous = None
    for agent in aec.agent_iter():
        obs, reward, terminated, truncated, _info = aec.last()
        totals[agent] += reward
        if terminated or truncated:
            action = None
        else:
            assert obs["action_mask"].any()
            assert not aec.observe(next(a for a in aec.agents if a != agent))["action_mask"].any()
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            same_agent_twice |= previous == agent
            previous = agent
        aec.step(action)
    assert sum(totals.values()) == 0.0
    result = aec.game_env.result
    assert result is not None
    if result.winner is not None and result.reason != "adjudication":
        assert totals[aec.possible_agents[result.winner]] == 1.0
