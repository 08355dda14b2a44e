"""The player interface: anything that chooses a whole legal move for a game position."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from tammi_rl.rules.game import Game
from tammi_rl.rules.position import Move


class PlayerQuit(Exception):
    """A (human) player stopped the game: ``resign`` True when they resigned rather than quit."""

    def __init__(self, resign: bool = False) -> None:
        super().__init__("resigned" if resign else "quit")
        self.resign = resign


@runtime_checkable
class Player(Protocol):
    """The interface every player implements."""

    name: str

    def choose(self, game: Game) -> Move:
        """A legal move for the side to move in ``game`` (not over)."""
        ...

    def new_game(self, seed: int | None = None) -> None:
        """Forget the previous game; reseed any randomness when given a seed."""
        ...
