"""`DraughtsEnv`: a Gymnasium environment for any variant, one hop per step.

    env = gymnasium.make("tammi/Russian-v0")
    obs, info = env.reset(seed=0)
    while True:
        action = env.np_random.choice(np.flatnonzero(info["action_mask"]))
        obs, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break

Actions: `tammi_rl.env.actions` (one hop, canonical frame of the side to move).
Observations: `tammi_rl.env.observation` (planes from the side to move's view).
``info`` on reset and every step: ``action_mask`` (int8, exact), ``to_play``
("white"/"black") and ``player`` (0/1) of the side to move now, and at the end
``result`` (a `GameResult`). Rewards are +1/-1/0 for the player who took the action;
a game ended by its rules is ``terminated``; a game stopped at ``max_plies`` is
``truncated`` with reward 0 and the variant's adjudication in ``info["result"]``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from tammi_rl.env import turn as tc
from tammi_rl.env.actions import ActionCodec, codec_for
from tammi_rl.env.env_game import EnvGame
from tammi_rl.env.observation import ObservationEncoder, observe
from tammi_rl.rules import movegen as mg
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.errors import MoveError
from tammi_rl.rules.game import GameResult
from tammi_rl.rules.position import COLOR_NAMES, Move, Position
from tammi_rl.rules.variant import Variant

ILLEGAL_ACTION_MODES = ("raise", "lose")
RESET_OPTIONS = ("fen", "random_opening_plies")
DEFAULT_MAX_PLIES = 400
"""Length cap when none is given: long enough for real games, short enough for random play."""


class IllegalActionError(MoveError):
    """An action that is not a legal hop now (the message names it and the legal ones)."""


_F_PATH, _F_CAPS = mg.F_PATH, mg.F_CAPS


def _row_move(row: list[int]) -> Move:
    """A whole-move row of the compiled core (as a list) as a `Move`."""
    plen, ncap = row[mg.F_PATH_LEN], row[mg.F_NCAP]
    return Move(tuple(row[_F_PATH : _F_PATH + plen]), tuple(row[_F_CAPS : _F_CAPS + ncap]), row[mg.F_PROMOTES] == 1)


def _as_int(action: Any) -> int:
    """An action as a Python int (numpy integers, 1-element integer arrays); -1 if it is not one."""
    if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
        return int(action)
    if isinstance(action, np.ndarray) and action.size == 1 and np.issubdtype(action.dtype, np.integer):
        return int(action.item())
    return -1


class DraughtsEnv(gym.Env):
    """Draughts of any variant as a two-player, hop-per-step Gymnasium environment.

    Options: ``variant`` (a shipped name, a path to a TOML file, or a `Variant`),
    ``max_plies`` (length cap in whole moves; None: `DEFAULT_MAX_PLIES`, 0: none),
    ``opening_fen`` or ``random_opening_plies`` (random whole moves played at reset,
    drawn from the reset seed), ``illegal_action`` ("raise" an `IllegalActionError`,
    or "lose": the mover loses at once) and ``render_mode`` (ansi, rgb_array, svg).
    ``reset(options={"fen": ..., "random_opening_plies": ...})`` overrides the opening once.
    """

    metadata = {"render_modes": ["ansi", "rgb_array", "svg"], "render_fps": 2}

    def __init__(
        self,
        variant: str | Path | Variant = "russian",
        max_plies: int | None = None,
        opening_fen: str | None = None,
        random_opening_plies: int = 0,
        illegal_action: str = "raise",
        render_mode: str | None = None,
    ) -> None:
        if illegal_action not in ILLEGAL_ACTION_MODES:
            raise ValueError(f"illegal_action must be one of {ILLEGAL_ACTION_MODES}, got {illegal_action!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        if opening_fen is not None and random_opening_plies:
            raise ValueError("give either opening_fen or random_opening_plies, not both")
        if random_opening_plies < 0:
            raise ValueError(f"random_opening_plies must be >= 0, got {random_opening_plies}")
        self.rules = Rules.for_variant(variant)
        self.variant = self.rules.variant
        self.codec: ActionCodec = codec_for(self.rules)
        self.encoder = ObservationEncoder.for_rules(self.rules)
        self.max_plies = DEFAULT_MAX_PLIES if max_plies is None else (max_plies or None)
        self.opening_fen = opening_fen
        self.random_opening_plies = random_opening_plies
        self.illegal_action = illegal_action
        self.render_mode = render_mode
        if opening_fen is not None:
            self.rules.parse_fen(opening_fen)  # fail at make time on a bad FEN
        self._n_actions = self.codec.n_actions
        self.action_space = spaces.Discrete(self.codec.n_actions)
        self.observation_space = spaces.Box(0.0, 1.0, self.encoder.shape, dtype=np.float32)
        self._state, self._buf = tc.new_state()
        e, c = self.encoder, self.codec
        self._tables = tc.build_tables(self.rules.params, self.rules.rays, c.hop_action, e.cell_row, e.cell_col,
                                       e.limits, e.size, c.n_actions)
        self._mask = np.zeros(self.codec.n_actions, dtype=np.int8)
        self._last_row = self._state[tc.S_LAST :]
        self._last_head = self._state[tc.S_LAST : tc.S_LAST + mg.F_PATH_LEN + 1]
        self._moves_cache: dict[tuple[int, int, int, int], Move] = {}
        self._counter_slots = [(tc.S_COUNTERS + i, i) for i in range(4) if self.encoder.limits[i] > 0]
        self._start_position = self.rules.start_position()
        self.game: EnvGame | None = None
        self.last_move: Move | None = None
        """The last whole move completed (None at the start)."""
        self._done = True

    # --- reset ---------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        options = options or {}
        unknown = set(options) - set(RESET_OPTIONS)
        if unknown:
            raise ValueError(f"unknown reset option(s) {sorted(unknown)}; known: fen, random_opening_plies")
        fen = options.get("fen", self.opening_fen)
        plies = options.get("random_opening_plies", 0 if "fen" in options else self.random_opening_plies)
        start = self.rules.parse_fen(fen) if fen is not None else None
        for _ in range(100):
            self._new_game(start)
            if self._random_opening(plies):
                break
        self.last_move = None
        return self._observe(), self._info()

    def _new_game(self, start: Position | None) -> None:
        if start is None:
            start = self._start_position
        self._state[tc.S_BOARD : tc.S_SIDE + 1] = start.as_int64()
        n = tc.start_turn(self._state, self._buf, self._tables)
        self.game = EnvGame(self.rules, start=start, max_plies=self.max_plies, legal_count=n)
        self._sync()

    def _random_opening(self, plies: int) -> bool:
        """Play ``plies`` random whole moves; False if the game ended meanwhile (retry)."""
        rng = self.np_random
        for _ in range(plies):
            if self._done:
                return False
            move = self.game.legal_moves()[int(rng.integers(self._state[tc.S_NLEGAL]))]
            for action in self.codec.move_actions(self.to_play, move):
                code = self._play(action)
            assert code == tc.HOP_COMPLETES, "a whole legal move did not complete"
        return not self._done

    # --- step ----------------------------------------------------------------------
    def step(self, action):
        if self._done:
            raise RuntimeError("the episode is over; call reset() before step()")
        side = int(self._state[tc.S_SIDE])
        a = action if type(action) is int else _as_int(action)
        if 0 <= a < self._n_actions:
            code = tc.play_hop(self._state, self._buf, self._tables, a)
            if code == tc.HOP_COMPLETES:
                self._complete()
        else:
            code = tc.HOP_ILLEGAL
        if code == tc.HOP_ILLEGAL:
            if self.illegal_action == "raise":
                raise IllegalActionError(self.illegal_action_message(action))
            self.game.resign(side)
            self._sync()
            obs = self._observe()
            info = self._info()
            info["illegal_action"] = True
            return obs, -1.0, True, False, info
        reward, terminated, truncated = 0.0, False, False
        if self._done:
            result = self.game.result
            if result.reason == "adjudication":
                truncated = True
            else:
                terminated = True
                if result.winner is not None:
                    reward = 1.0 if result.winner == side else -1.0
        return self._observe(), reward, terminated, truncated, self._info()

    def _play(self, action) -> int:
        """Apply one hop to the core and, when it completes a move, to the game."""
        a = action if type(action) is int else _as_int(action)
        if not 0 <= a < self._n_actions:
            return tc.HOP_ILLEGAL
        code = tc.play_hop(self._state, self._buf, self._tables, a)
        if code == tc.HOP_COMPLETES:
            self._complete()
        return code

    def _complete(self) -> None:
        """The hops played complete a whole move: record it in the game."""
        head = self._last_head.tolist()
        if head[mg.F_NCAP] <= 1:  # a step or a single capture: these fields fix the path; reuse the Move
            key = (head[mg.F_FROM], head[mg.F_TO], head[mg.F_CAPTURED], head[mg.F_PROMOTES])
            move = self._moves_cache.get(key)
            if move is None:
                move = self._moves_cache[key] = _row_move(self._last_row.tolist())
        else:
            move = _row_move(self._last_row.tolist())
        self.last_move = move
        self.game.play_checked(move, int(self._state[tc.S_NLEGAL]))
        self._sync()

    def _sync(self) -> None:
        """Copy the game's draw counters and end state into the core state."""
        s = self._state
        raw = self.game.raw_counters()
        for slot, i in self._counter_slots:  # only rules the variant has show on planes
            s[slot] = raw[i]
        self._done = done = self.game.result is not None
        s[tc.S_DONE] = done

    # --- observation, mask, info ---------------------------------------------------
    def _observe(self) -> np.ndarray:
        obs, self._mask = observe(self._state, self._buf, self._tables, self._state[tc.S_SIDE])
        return obs

    def observation_for(self, color: int) -> tuple[np.ndarray, np.ndarray]:
        """(planes, mask) as ``color`` sees the current state; the mask is empty unless it is to move."""
        return observe(self._state, self._buf, self._tables, int(color))

    def _info(self) -> dict[str, Any]:
        side = int(self._state[tc.S_SIDE])
        info: dict[str, Any] = {"action_mask": self._mask, "to_play": COLOR_NAMES[side], "player": side}
        if self._done and self.game is not None:
            info["result"] = self.game.result
        return info

    def action_masks(self) -> np.ndarray:
        """The legal hops now, as a bool array (the sb3-contrib convention)."""
        return self._mask.astype(bool)

    # --- inspection ------------------------------------------------------------------
    @property
    def to_play(self) -> int:
        """The side to move (0 white, 1 black); the same player until a capture chain ends."""
        return int(self._state[tc.S_SIDE])

    @property
    def position(self) -> Position:
        """The position at the start of the current turn (mid-chain: before the chain's first hop)."""
        return self.game.position

    @property
    def result(self) -> GameResult | None:
        return self.game.result if self.game is not None else None

    def legal_actions(self) -> list[int]:
        return [int(a) for a in np.flatnonzero(self._mask)]

    def chain_state(self) -> tuple[Position, int, int]:
        """The board as it stands mid-chain, the square of the piece that must continue
        (-1 at the start of a turn) and the bitboard of pieces jumped so far."""
        mw, kw, mb, kb, cur, jumped = tc.chain_view(self._state, self._buf, self._tables)
        pos = Position(*(int(x) & ((1 << 64) - 1) for x in (mw, kw, mb, kb)), self.to_play)
        return pos, int(cur), int(jumped) & ((1 << 64) - 1)

    def chain_path(self) -> list[int]:
        """Internal squares visited so far in this turn (empty at the start of a turn)."""
        k = int(self._state[tc.S_HOPS])
        if k == 0 or self._state[tc.S_ALIVE_N] == 0:
            return []
        return [int(s) for s in self._buf[self._state[tc.S_ALIVE], mg.F_PATH : mg.F_PATH + k + 1]]

    def _hop_is_capture(self) -> bool:
        return bool(self._state[tc.S_ALIVE_N] > 0 and self._buf[self._state[tc.S_ALIVE], mg.F_NCAP] > 0)

    def action_text(self, action: int) -> str:
        """A hop as text in the variant's notation (``c3-d4``, ``c3:e5``, ``22x15``)."""
        return self.codec.hop_text(self.to_play, int(action), self._hop_is_capture())

    def illegal_action_message(self, action) -> str:
        side = self.to_play
        try:
            a = int(action)
            what = (f"action {a} ({self.codec.hop_text(side, a)})" if 0 <= a < self.codec.n_actions
                    else f"action {a} (out of range 0..{self.codec.n_actions - 1})")
        except (TypeError, ValueError):
            what = f"action {action!r} (not an integer)"
        legal = ", ".join(f"{a} ({self.action_text(a)})" for a in self.legal_actions()) or "(none)"
        return (f"illegal {what} for {COLOR_NAMES[side]} to move in "
                f"{self.rules.fen(self.game.position)}; legal actions: {legal}")

    # --- rendering -------------------------------------------------------------------
    def render(self):
        if self.render_mode is None:
            gym.logger.warn("render() called without render_mode; pass render_mode='ansi', 'rgb_array' or 'svg'")
            return None
        from tammi_rl.env import render

        return render.render_env(self, self.render_mode)

    def _repr_svg_(self) -> str:
        from tammi_rl.env import render

        return render.render_env(self, "svg")
