"""Single-agent play against a fixed opponent, for ordinary RL libraries (e.g. MaskablePPO).

    env = OpponentWrapper(gymnasium.make("tammi/Russian-v0").unwrapped, opponent="random", agent_color="white")

The wrapped env only ever returns observations where the agent is to move; the
opponent's hops are played inside `step`. Rewards are from the agent's point of view.

An opponent is one of:

- ``"random"``: a uniformly random legal hop each time;
- a `tammi_rl.players.Player` (anything with ``choose(game) -> Move``, e.g.
  ``AlphaBetaPlayer``); its ``new_game(seed)`` is called on reset;
- a callable ``f(rules, position)`` or ``f(env)`` returning a whole `Move` or one hop
  action (called again for each further hop of a chain when it returns actions).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from tammi_rl.env.draughts_env import DraughtsEnv
from tammi_rl.rules.errors import MoveError
from tammi_rl.rules.position import COLOR_NAMES, Move

AGENT_COLORS = ("white", "black", "random")


def _arity(fn: Callable) -> int:
    """Number of positional parameters ``fn`` takes (1 or 2 supported here)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 1
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty for p in params)


class OpponentWrapper(gym.Wrapper):
    """Turns the two-player `DraughtsEnv` into a single-agent env against ``opponent``.

    ``agent_color``: "white", "black", or "random" (drawn at each reset from its seed).
    """

    def __init__(self, env: gym.Env, opponent: Any = "random", agent_color: str = "white") -> None:
        super().__init__(env)
        if not isinstance(env.unwrapped, DraughtsEnv):
            raise TypeError(f"OpponentWrapper needs a DraughtsEnv, got {type(env.unwrapped).__name__}")
        if agent_color not in AGENT_COLORS:
            raise ValueError(f"agent_color must be one of {AGENT_COLORS}, got {agent_color!r}")
        if not (opponent == "random" or hasattr(opponent, "choose") or callable(opponent)):
            raise TypeError("opponent must be 'random', a Player (with choose(game)) or a callable")
        self.opponent = opponent
        self.agent_color = agent_color
        self.agent = 0
        self._arity = _arity(opponent) if callable(opponent) and not hasattr(opponent, "choose") else 0

    @property
    def core(self) -> DraughtsEnv:
        return self.env.unwrapped  # type: ignore[return-value]

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        rng = self.core.np_random
        self.agent = int(rng.integers(2)) if self.agent_color == "random" else COLOR_NAMES.index(self.agent_color)
        if hasattr(self.opponent, "new_game"):
            self.opponent.new_game(None if seed is None else seed + 1)
        info["agent"] = COLOR_NAMES[self.agent]
        if info["to_play"] != COLOR_NAMES[self.agent] and "result" not in info:
            obs, _reward, _terminated, _truncated, info = self._opponent_turn()
            info["agent"] = COLOR_NAMES[self.agent]
        return obs, info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        if not (terminated or truncated) and self.core.to_play != self.agent:
            obs, opp_reward, terminated, truncated, info = self._opponent_turn()
            reward = -opp_reward
        info["agent"] = COLOR_NAMES[self.agent]
        return obs, reward, terminated, truncated, info

    def _opponent_turn(self):
        """Play the opponent's whole turn; return the last step's results (reward from its view)."""
        core = self.core
        side = core.to_play
        out = None
        while core.to_play == side and core.result is None:
            for action in self._opponent_actions():
                out = self.env.step(action)
                if out[2] or out[3]:
                    return out
        return out

    def _opponent_actions(self) -> list[int]:
        core = self.core
        opp = self.opponent
        if isinstance(opp, str):  # "random" (checked in __init__)
            legal = np.flatnonzero(core.action_masks())
            return [int(legal[core.np_random.integers(len(legal))])]
        if hasattr(opp, "choose"):
            choice = opp.choose(core.game)
        elif self._arity >= 2:
            choice = opp(core.rules, core.position)
        else:
            choice = opp(core)
        if isinstance(choice, Move):
            if core.chain_path():
                raise MoveError("the opponent returned a whole Move in the middle of a capture chain")
            return core.codec.move_actions(core.to_play, choice)
        return [int(choice)]

    def action_masks(self) -> np.ndarray:
        """The agent's legal hops (the sb3-contrib convention)."""
        return self.core.action_masks()
