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
        self.said_at = 0
        """The output's length (in lines) when `say` last sent commands."""

    def say(self, *lines: str, wait: bool = True) -> list[str]:
        self.said_at = len(self.out.getvalue().splitlines())
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
        """Every line since the last `say` (those it returned too) once one starts with
        ``prefix``; polls, and fails after ``seconds``.

        Waiting for a line rather than sleeping a fixed time keeps a test true on a cold
        numba cache or a busy machine, where a first search may compile for many seconds;
        looking back to the last `say` keeps it true on a warm one, where the search may
        have answered before `say` returned."""
        deadline = time.monotonic() + seconds
        while True:
            self.new_lines()
            lines = self.out.getvalue().splitlines()[self.said_at :]
            if any(line.startswith(prefix) for line in lines):
                return lines
            if time.monotonic() >= deadline:
                raise AssertionError(f"no line starting {prefix!r} within {seconds} s: {lines}")
            time.sleep(0.02)

    def done_within(self, seconds: float) -> list[str]:
        """The new lines once ``done`` has come (fails after ``seconds``)."""
        assert self.engine.wait(seconds), f"no done within {seconds} s"
        return self.new_lines()
