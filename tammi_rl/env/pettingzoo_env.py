"""A PettingZoo AEC wrapper: two agents, "white" and "black", around `DraughtsEnv`.

Follows the PettingZoo classic-games conventions: each agent observes
``{"observation": planes from its own point of view, "action_mask": int8 hops}`` (the
mask is empty for the agent not to move), the agent to move stays selected for every hop
of a capture chain, and rewards are +1/-1/0 to the winner/loser/both at the end.

    from tammi_rl.env.pettingzoo_env import env
    aec = env("russian")
    aec.reset(seed=0)
    for agent in aec.agent_iter():
        obs, reward, terminated, truncated, info = aec.last()
        action = None if terminated or truncated else aec.action_space(agent).sample(obs["action_mask"])
        aec.step(action)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from tammi_rl.env.draughts_env import RESET_OPTIONS, DraughtsEnv
from tammi_rl.rules.position import COLOR_NAMES


class DraughtsAECEnv(AECEnv):
    """Two-agent draughts; keyword arguments are those of `DraughtsEnv`."""

    # PettingZoo reads metadata from the class; AECEnv declares it as a plain attribute, not a ClassVar.
    metadata = {  # noqa: RUF012
        "name": "tammi_draughts_v0",
        "render_modes": ["ansi", "rgb_array", "svg"],
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(self, variant: str = "russian", render_mode: str | None = None, **kwargs: Any) -> None:
        super().__init__()
        self.game_env = DraughtsEnv(variant, render_mode=render_mode, **kwargs)
        self.render_mode = render_mode
        self.possible_agents = list(COLOR_NAMES)
        self.agents = self.possible_agents[:]
        n = self.game_env.action_space.n
        self._action_spaces = {a: spaces.Discrete(n) for a in self.possible_agents}
        self._observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": self.game_env.observation_space,
                    "action_mask": spaces.Box(0, 1, (n,), dtype=np.int8),
                }
            )
            for a in self.possible_agents
        }

    def observation_space(self, agent: str) -> spaces.Space:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self._action_spaces[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        obs, mask = self.game_env.observation_for(COLOR_NAMES.index(agent))
        return {"observation": obs, "action_mask": mask}

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        # PettingZoo passes arbitrary options through (its api_test does): keep the env's own.
        known = {k: v for k, v in (options or {}).items() if k in RESET_OPTIONS}
        _, info = self.game_env.reset(seed=seed, options=known)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.agent_selection = info["to_play"]
        if self.game_env.result is not None:  # a start position that is already decided
            self._finish(self.game_env.result.reason == "adjudication", self.game_env.result.winner)

    def _finish(self, truncated: bool, winner: int | None) -> None:
        for i, a in enumerate(self.possible_agents):
            if truncated:
                self.truncations[a] = True
            else:
                self.terminations[a] = True
                self.rewards[a] = 0.0 if winner is None else (1.0 if winner == i else -1.0)
            self.infos[a] = {"result": self.game_env.result}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in self.agents}
        _, _, terminated, truncated, info = self.game_env.step(action)
        if terminated or truncated:
            self._finish(truncated, info["result"].winner)
        self.agent_selection = info["to_play"]
        self._accumulate_rewards()

    def render(self):
        return self.game_env.render()

    def close(self) -> None:
        self.game_env.close()


def env(variant: str = "russian", **kwargs: Any) -> DraughtsAECEnv:
    """A two-agent draughts environment (see `DraughtsAECEnv`)."""
    return DraughtsAECEnv(variant, **kwargs)
