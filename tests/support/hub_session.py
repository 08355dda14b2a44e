"""A Hub engine on a string buffer, for the Hub tests: send lines, read what it answered."""

from __future__ import annotations

import io
import time

from tammi_rl.hub import HubEngine

RUSSIAN_START = "W" + "b" * 12 + "e" * 8 + "w" * 12
"""The Russian start position in Hub notation (Black's men on 1-12)."""
SEARCH_TIMEOUT_S = 120.0
"""Longest wait for any search to answer done before the test fails (instead of hanging)."""


class Session:
    """An engine on a string buffer; `say` sends lines and returns the new output lines."""

    def __init__(self, player: str = "alphabeta:depth=2", variant: str = "russian") -> None:
        self.out = io.StringIO()
        self.engine = HubEngine(player, self.out, variant)
        self.seen = 0

    def say(self, *lines: str, wait: bool = True) -> list[str]:
        for line in lines:
            assert self.engine.handle(line) is True
        if wait:
            assert self.engine.wait(SEARCH_TIMEOUT_S), f"no done within {SEARCH_TIMEOUT_S} s"
        return self.new_lines()

    def new_lines(self) -> list[str]:
        """The output lines since the last call."""
        text = self.out.getvalue().splitlines()
        new, self.seen = text[self.seen :], len(text)
        return new

    def lines_until(self, prefix: str, seconds: float = SEARCH_TIMEOUT_S) -> list[str]:
        """The new lines once one starts with ``prefix`` (polls; fails after ``seconds``).

        Waiting for a line rather than sleeping a fixed time keeps a test true on a cold
        numba cache or a busy machine, where a first search may compile for many seconds."""
        deadline = time.monotonic() + seconds
        lines: list[str] = []
        while time.monotonic() < deadline:
            lines += self.new_lines()
            if any(line.startswith(prefix) for line in lines):
                return lines
            time.sleep(0.02)
        raise AssertionError(f"no line starting {prefix!r} within {seconds} s: {lines}")

    def done_within(self, seconds: float) -> list[str]:
        """The new lines once ``done`` has come (fails after ``seconds``)."""
        assert self.engine.wait(seconds), f"no done within {seconds} s"
        return self.new_lines()
