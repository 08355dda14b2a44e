"""`DraughtsEnv`: a Gymnasium environment for any variant, one hop per step.

    env = gymnasium.make("tammi/Russian-v0")
    obs, info = env.reset(seed=0)
    while True:
        action = env.np_random.choice(np.flatnonzero(info["action_mask"]))
        obs, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break

Actions: `tammi_rl.rules.actions` (one hop, canonical frame of the side to move).
Observations: `tammi_rl.env.observation` (planes from the side to move's view).
``info`` on reset and every step: ``action_mask`` (int8, exact), ``to_play``
("white"/"black") and ``player`` (0/1) of the side to move now, and at the end
``result`` (a `GameResult`). Rewards are +1/-1/0 for the player who took the action;
a game ended by its rules is ``terminated``; a game stopped at ``max_plies`` is
``truncated`` with reward 0 and the variant's adjudication in ``info["result"]``.

The compiled turn machine (`tammi_rl.rules.turn`) holds the whole game state, draw
counters and result included, so a step costs two compiled calls (the hop, then the
observation). `DraughtsEnv.game` is the same game as a `Game` record (moves, positions,
PDN), built on demand from the moves played.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from tammi_rl.env import render
from tammi_rl.env.observation import ObservationEncoder, observe
from tammi_rl.rules import draw_rules as dr
from tammi_rl.rules import movegen as mg
from tammi_rl.rules import turn as tc
from tammi_rl.rules.actions import ActionCodec, codec_for
from tammi_rl.rules.engine import Rules, engine_limit_error, engine_limits
from tammi_rl.rules.errors import MoveError
from tammi_rl.rules.game import Game, board_position, row_move
from tammi_rl.rules.position import COLOR_NAMES, Move, Position
from tammi_rl.rules.results import REASONS, GameResult
from tammi_rl.rules.variant import Variant

ILLEGAL_ACTION_MODES = ("raise", "lose")
RESET_OPTIONS = ("fen", "random_opening_plies")
DEFAULT_MAX_PLIES = 400
"""Length cap when none is given: long enough for real games, short enough for random play."""


class IllegalActionError(MoveError):
    """An action that is not a legal hop now (the message names it and the legal ones)."""


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
    or "lose": the mover loses at once), ``render_mode`` (ansi, rgb_array, svg) and
    ``attack_planes`` (the observation's two attack planes, for a network trained with them).
    ``reset(options={"fen": ..., "random_opening_plies": ...})`` overrides the opening once.
    """

    # Gymnasium reads metadata from the class; Env declares it as a plain attribute, not a ClassVar.
    metadata = {"render_modes": ["ansi", "rgb_array", "svg"], "render_fps": 2}  # noqa: RUF012

    def __init__(
        self,
        variant: str | Path | Variant = "russian",
        max_plies: int | None = None,
        opening_fen: str | None = None,
        random_opening_plies: int = 0,
        illegal_action: str = "raise",
        render_mode: str | None = None,
        attack_planes: bool = False,
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
        self.encoder = ObservationEncoder.for_rules(self.rules, attack_planes)
        self.max_plies = DEFAULT_MAX_PLIES if max_plies is None else (max_plies or None)
        self.opening_fen = opening_fen
        self.random_opening_plies = random_opening_plies
        self.illegal_action = illegal_action
        self.render_mode = render_mode
        if opening_fen is not None:
            self.rules.parse_fen(opening_fen)  # fail at make time on a bad FEN
        self._n_actions = self.codec.n_actions
        self.action_space: spaces.Discrete = spaces.Discrete(self.codec.n_actions)
        self.observation_space = spaces.Box(0.0, 1.0, self.encoder.shape, dtype=np.float32)
        # With a cap the repetition table never outgrows max_plies + 1 rows; without one it grows.
        self._state, self._buf, self._history = tc.new_state(history_rows=(self.max_plies or 62) + 2)
        self._tables = tc.build_tables(self.rules, self.max_plies)
        self._mask = np.zeros(self.codec.n_actions, dtype=np.int8)
        self._last_row = self._state[tc.S_LAST :]
        self._last_head = self._state[tc.S_LAST : tc.S_LAST + mg.F_PATH_LEN + 1]
        self._moves_cache: dict[tuple[int, int, int, int], Move] = {}
        self._start_position = self.rules.start_position()
        self._start: Position = self._start_position
        self._moves: list[Move] = []
        """Whole moves completed since reset."""
        self._game: Game | None = None
        """The `Game` record, built and brought up to date on demand (`game`)."""
        self._resigned: int | None = None
        """The side that lost by an illegal action (illegal_action="lose")."""
        self._result: GameResult | None = None
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
        self._start = start
        self._moves = []
        self._game = None
        self._resigned = None
        self._result = None
        self._state[tc.S_BOARD : tc.S_SIDE + 1] = start.as_int64()
        with engine_limits(lambda: self.rules.fen(start)):
            tc.begin_game(self._state, self._buf, self._tables, self._history)
        self._done = bool(self._state[tc.S_DONE])

    def _random_opening(self, plies: int) -> bool:
        """Play ``plies`` random whole moves; False if the game ended meanwhile (retry)."""
        rng = self.np_random
        for _ in range(plies):
            if self._done:
                return False
            move = self.rules.legal_moves(self.position)[int(rng.integers(self._state[tc.S_NLEGAL]))]
            for action in self.codec.move_actions(self.to_play, move):
                code = self._play(action)
            assert code == tc.HOP_COMPLETES, "a whole legal move did not complete"
        return not self._done

    # --- step ----------------------------------------------------------------------
    def step(self, action):
        if self._done:
            raise RuntimeError("the episode is over; call reset() before step()")
        side = int(self._state[tc.S_SIDE])
        code = self._play(action)
        if code == tc.HOP_ILLEGAL:
            if self.illegal_action == "raise":
                raise IllegalActionError(self.illegal_action_message(action))
            self._resign(side)
            obs = self._observe()
            info = self._info()
            info["illegal_action"] = True
            return obs, -1.0, True, False, info
        reward, terminated, truncated = 0.0, False, False
        if self._done:
            s = self._state
            if s[tc.S_REASON] == dr.R_ADJUDICATION:
                truncated = True
            else:
                terminated = True
                winner = s[tc.S_WINNER]
                if winner != dr.DRAWN:
                    reward = 1.0 if winner == side else -1.0
        return self._observe(), reward, terminated, truncated, self._info()

    def _play(self, action) -> int:
        """Apply one hop to the core and, when it completes a move, to the game."""
        a = action if type(action) is int else _as_int(action)
        if not 0 <= a < self._n_actions:
            return tc.HOP_ILLEGAL
        try:
            code = tc.play_hop(self._state, self._buf, self._tables, self._history, a)
        except IndexError as exc:  # a limit of the move generator, in the next turn's moves
            raise engine_limit_error(self.rules.fen(self.position), exc) from None
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
                move = self._moves_cache[key] = row_move(self._last_row.tolist())
        else:
            move = row_move(self._last_row.tolist())
        self.last_move = move
        self._moves.append(move)
        s = self._state
        self._done = s[tc.S_DONE] != 0
        if s[tc.S_HISTORY_N] >= self._history.shape[0]:  # keep a free row for the next move
            self._history = dr.grow_history(self._history)

    def _resign(self, side: int) -> None:
        """``side`` loses at once (an illegal action under illegal_action="lose")."""
        s = self._state
        s[tc.S_WINNER], s[tc.S_REASON], s[tc.S_DONE] = 1 - side, REASONS.index("resignation"), 1
        self._resigned = side
        self._done = True

    # --- observation, mask, info ---------------------------------------------------
    def _observe(self) -> np.ndarray:
        obs, self._mask = observe(self._state, self._buf, self._tables, self._state[tc.S_SIDE], self.encoder.planes)
        return obs

    def observation_for(self, color: int) -> tuple[np.ndarray, np.ndarray]:
        """(planes, mask) as ``color`` sees the current state; the mask is empty unless it is to move."""
        return observe(self._state, self._buf, self._tables, int(color), self.encoder.planes)

    def _info(self) -> dict[str, Any]:
        side = int(self._state[tc.S_SIDE])
        info: dict[str, Any] = {"action_mask": self._mask, "to_play": COLOR_NAMES[side], "player": side}
        if self._done:
            info["result"] = self.result
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
        return board_position(self._state[tc.S_BOARD : tc.S_BOARD + 4], self._state[tc.S_SIDE])

    @property
    def result(self) -> GameResult | None:
        """How the game ended (None while it goes on, and before the first reset)."""
        if not self._done or self._state[tc.S_DONE] == 0:
            return None
        if self._result is None:
            winner = int(self._state[tc.S_WINNER])
            self._result = GameResult(None if winner == dr.DRAWN else winner, REASONS[int(self._state[tc.S_REASON])])
        return self._result

    @property
    def game(self) -> Game:
        """The game so far as a `Game` record (moves, positions, counters, PDN), brought up
        to date with the moves played since it was last read. Treat it as read-only."""
        game = self._game
        if game is None:
            game = self._game = Game(self.rules, start=self._start, max_plies=self.max_plies)
        for move in self._moves[len(game.moves) :]:
            game.play(move)
        if self._resigned is not None and game.result is None:
            game.resign(self._resigned)
        return game

    @property
    def counters(self) -> tuple[int, int, int, int]:
        """The draw counters now: (no_progress_plies, kings_only_plies, three_kings_plies, repetitions)."""
        return tuple(int(x) for x in self._state[tc.S_COUNTERS : tc.S_COUNTERS + 4])  # type: ignore[return-value]

    def legal_actions(self) -> list[int]:
        return [int(a) for a in np.flatnonzero(self._mask)]

    def chain_state(self) -> tuple[Position, int, int]:
        """The board as it stands mid-chain, the square of the piece that must continue
        (-1 at the start of a turn) and the bitboard of pieces jumped so far."""
        mw, kw, mb, kb, cur, jumped = tc.state_chain_view(self._state, self._buf, self._tables)
        white_men, white_kings, black_men, black_kings = (int(x) & ((1 << 64) - 1) for x in (mw, kw, mb, kb))
        pos = Position(white_men, white_kings, black_men, black_kings, self.to_play)
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
            what = (
                f"action {a} ({self.codec.hop_text(side, a)})"
                if 0 <= a < self.codec.n_actions
                else f"action {a} (out of range 0..{self.codec.n_actions - 1})"
            )
        except (TypeError, ValueError):
            what = f"action {action!r} (not an integer)"
        legal = ", ".join(f"{a} ({self.action_text(a)})" for a in self.legal_actions()) or "(none)"
        return (
            f"illegal {what} for {COLOR_NAMES[side]} to move in {self.rules.fen(self.position)}; legal actions: {legal}"
        )

    # --- rendering -------------------------------------------------------------------
    def render(self):
        if self.render_mode is None:
            gym.logger.warn("render() called without render_mode; pass render_mode='ansi', 'rgb_array' or 'svg'")
            return None
        return render.render_env(self, self.render_mode)

    def _repr_svg_(self) -> str:
        return render.render_env(self, "svg")
