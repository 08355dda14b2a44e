"""The page's script (tammi_rl/web/static/app.js) without a browser: node runs it against a
stand-in DOM and a scripted server (``page_harness.js``), so its logic after an answer or
a refusal is checked on any machine with node; the browser test in
tests/integration/test_web_browser.py drives the real page."""

from __future__ import annotations

import json
import shutil
import subprocess
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

NODE = shutil.which("node") or shutil.which("nodejs")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed (Debian: apt-get install nodejs)")
HARNESS = Path(__file__).with_name("page_harness.js")
APP_JS = resources.files("tammi_rl.web") / "static" / "app.js"
PLAYING = "alphabeta:depth=1"


def _state(player: str) -> dict[str, Any]:
    """A game state as the server sends it: a Russian game at its start, the human (White) to move."""
    return {
        "id": "g1",
        "variant": {"name": "russian", "board_size": 8, "geometry": "diagonal", "first_player": "white"},
        "squares": [],
        "hops": [],
        "chain": [],
        "jumped": [],
        "last_move": None,
        "moves": [],
        "movetext": "",
        "fen": "W:W21,22:B11,12",
        "plies": 0,
        "side": "white",
        "human": "white",
        "turn": "human",
        "result": None,
        "player": player,
        "player_name": player,
        "analysis": None,
    }


def _run(routes: dict[str, list[dict[str, Any]]], steps: list[list[str]]) -> dict[str, Any]:
    assert NODE is not None
    scenario = json.dumps({"routes": routes, "steps": steps})
    done = subprocess.run(
        [NODE, str(HARNESS), str(APP_JS), scenario], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


VARIANTS = {
    "status": 200,
    "body": {
        "variants": [{"name": "russian", "board_size": 8, "default_player": PLAYING}],
        "default_variant": "russian",
    },
}


def test_a_refused_new_game_shows_the_game_that_goes_on() -> None:
    """New game with a bad spec answered 400: the error shows, and the status line and the
    Opponent box show the game still being played (not "starting..." and the refused spec)."""
    refused = {"status": 400, "body": {"error": "bad player spec 'alphabeta:depth=oops'"}}
    shown = _run(
        {
            "GET /api/variants": [VARIANTS],
            "POST /api/games": [{"status": 200, "body": _state(PLAYING)}],
            "POST /api/games/g1/new": [refused],
        },
        [["start"], ["set", "player", "alphabeta:depth=oops"], ["call", "newGame"]],
    )
    assert [r["key"] for r in shown["requests"]] == ["GET /api/variants", "POST /api/games", "POST /api/games/g1/new"]
    assert shown["requests"][-1]["body"]["player"] == "alphabeta:depth=oops"
    assert shown["error"] == "bad player spec 'alphabeta:depth=oops'" and not shown["error_hidden"]
    assert shown["status"] == "Your move (white)"
    assert (shown["player"], shown["variant"], shown["side"]) == (PLAYING, "russian", "white")


def test_a_refused_first_game_says_there_is_none() -> None:
    """The first New game refused: no game goes on, and the status line says so."""
    refused = {"status": 400, "body": {"error": "unknown player kind 'stockfish'"}}
    shown = _run(
        {"GET /api/variants": [VARIANTS], "POST /api/games": [refused]},
        [["start"]],
    )
    assert shown["error"] == "unknown player kind 'stockfish'" and not shown["error_hidden"]
    assert shown["status"].startswith("no game")
