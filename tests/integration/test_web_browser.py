"""The web page in a real browser: headless Chromium plays whole games by clicks.

Needs Debian's ``chromium`` and ``chromium-driver`` and selenium (the test extra). Without
the browser the tests skip, naming the command that installs it (``support.browser_gate``);
with ``TAMMI_REQUIRE_BROWSER=1`` they fail instead: ``.ci/run`` installs Chromium and sets
it, so CI never skips them.

The server runs in this process (a thread), so after every move the board the page
shows is compared square by square with the engine's own position in the session.
``TAMMI_SCREENSHOT=docs/serve.png`` also writes the screenshot there (for the README).
"""

from __future__ import annotations

import os
import random
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from support.browser_gate import current_gate, find_browser

from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game
from tammi_rl.rules.notation import format_move
from tammi_rl.web import create_app, make_web_server, server_url
from tammi_rl.web.sessions import SessionStore
from tammi_rl.web.views import move_rows

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

ROOT = Path(__file__).resolve().parents[2]
GATE = current_gate()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(GATE.action == "skip", reason=GATE.message)]
WAIT_S = 180
"""Most seconds any one wait on the page may take: generous, for a loaded CI machine (every
wait is for a condition the page reaches, never a fixed sleep, so a fast machine waits little)."""
POLL_S = 0.1

Board = dict[str, Any]
"""The page's board as `_board` reads it."""


@pytest.fixture(scope="module", autouse=True)
def _browser_required() -> None:
    """Fail every test here, before the server starts, when the browser is required but absent."""
    if GATE.action == "fail":
        pytest.fail(GATE.message)


def _browser_parts() -> tuple[str, str]:
    try:
        import selenium  # noqa: F401
    except ImportError:
        pytest.fail("selenium is not installed: pip install -e '.[test]'")
    chromium, driver = find_browser()
    assert chromium and driver, GATE  # the gate skipped or failed the tests otherwise
    return chromium, driver


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, SessionStore]]:
    app = create_app(default_player=lambda variant: "alphabeta:depth=1", think_seconds=5.0)
    # Warm up before the browser waits: the first search may compile (numba) on a cold cache.
    client = app.test_client()
    sid = client.post("/api/games", json={"side": "black"}).json["id"]
    assert client.post(f"/api/games/{sid}/agent").status_code == 200
    httpd = make_web_server(app, "127.0.0.1", 0)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server_url(httpd), app.extensions["tammi_rl"]["store"]
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    chromium, driver_path = _browser_parts()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,900"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    driver.set_script_timeout(WAIT_S)
    driver.set_page_load_timeout(WAIT_S)
    try:
        yield driver
    finally:
        driver.quit()


# --- page helpers ------------------------------------------------------------------------------
def _wait(driver: WebDriver, condition: Callable[[WebDriver], Any], what: str) -> Any:
    """Poll ``condition`` until it returns something truthy (returned); fail after `WAIT_S`."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT_S, poll_frequency=POLL_S).until(condition, message=f"waiting for {what}")


def _board(driver: WebDriver) -> Board:
    """The board element's state, read in one script call (an empty, busy board while a
    navigation has not yet run the page's script)."""
    return driver.execute_script(
        """
        const b = document.getElementById("board");
        if (!b || typeof page === "undefined") {
            return {version: 0, busy: "1", turn: "", plies: 0, chain: 0, over: "0", id: null,
                    squares: [], movable: [], targets: [], rows: [], error: ""};
        }
        return {version: Number(b.dataset.version), busy: b.dataset.busy, turn: b.dataset.turn,
                plies: Number(b.dataset.plies), chain: Number(b.dataset.chain), over: b.dataset.over,
                id: page.game ? page.game.id : null,
                squares: [...b.querySelectorAll(".square")].map(
                    (c) => [Number(c.dataset.sq), c.dataset.piece || null]),
                movable: [...b.querySelectorAll(".square.movable")].map((c) => Number(c.dataset.sq)),
                targets: [...b.querySelectorAll(".square.target")].map((c) => Number(c.dataset.sq)),
                rows: [...document.querySelectorAll("#moves tbody tr")].map(
                    (r) => [...r.querySelectorAll("td")].map((td) => td.textContent)),
                error: document.getElementById("error").hidden ? "" : document.getElementById("error").textContent};
        """
    )


def _settled(driver: WebDriver) -> Board:
    """Wait until no request is in flight and it is not the agent's turn; the board then."""
    state: Board = {}

    def ready(d: WebDriver) -> bool:
        state.update(_board(d))
        return state["busy"] == "0" and state["turn"] in ("human", "over") and state["version"] > 0

    _wait(driver, ready, "the page to settle on the human's turn")
    return state


def _click(driver: WebDriver, sq: int) -> None:
    driver.find_element("css selector", f'#board .square[data-sq="{sq}"]').click()


def _board_when(driver: WebDriver, test: Callable[[Board], bool], what: str) -> Board:
    """Wait until the board passes ``test``; the board then."""

    def check(d: WebDriver) -> Board | None:
        board = _board(d)
        return board if test(board) else None

    return _wait(driver, check, what)


def _targets_shown(driver: WebDriver) -> Board:
    return _board_when(driver, lambda b: bool(b["targets"]), "the legal targets to show")


def _hop_to(driver: WebDriver, target: int, before: int) -> Board:
    """Click a target square; the board once the hop (and any answer it started) is in.

    ``before`` is the board's version when the target was clicked (the click sends the
    hop and marks the page busy at once, so "idle and redrawn" means the answer is in)."""
    _click(driver, target)
    return _board_when(driver, lambda b: b["version"] > before and b["busy"] == "0", "the hop to be played")


def _check_board(board: Board, game: Game) -> None:
    shown = dict(board["squares"])
    n = game.rules.geometry.n_squares
    expected = {sq: game.position.piece_at(sq) for sq in range(n)}
    assert shown == expected, f"page and engine disagree after {len(game.moves)} plies"


def _play_by_clicks(driver: WebDriver, store: SessionStore, rng: random.Random, max_moves: int = 200) -> Game:
    """Play the human's side by clicks until the game ends; check the board after each move."""
    board = _settled(driver)
    game = store.get(board["id"]).game
    for _ in range(max_moves):
        board = _settled(driver)
        game = store.get(board["id"]).game
        assert board["error"] == "", board["error"]
        assert board["plies"] == len(game.moves) and board["chain"] == 0
        _check_board(board, game)
        rows = move_rows(game)
        assert board["rows"] == [[f"{r['number']}.", r["first"] or "...", r["second"] or ""] for r in rows]
        assert [m for r in board["rows"] for m in r[1:] if m not in ("", "...")] == [
            format_move(game.rules, m) for m in game.moves
        ]  # the move list is the engine's record
        if board["over"] == "1":
            assert game.is_over
            return game
        legal_from = {int(game.codec.action_from[game.side, a]) for a in game.legal_hops()}
        assert set(board["movable"]) == legal_from  # only pieces that can move are offered
        while True:  # one turn: hop by hop
            piece = rng.choice(board["movable"])
            _click(driver, piece)
            board = _targets_shown(driver)
            expected = {
                int(game.codec.action_to[game.side, a])
                for a in game.legal_hops()
                if game.codec.action_from[game.side, a] == piece
            }
            assert set(board["targets"]) == expected  # only legal landing squares are offered
            board = _hop_to(driver, rng.choice(board["targets"]), board["version"])
            if board["chain"] == 0 or board["turn"] != "human":
                break
            chain = game.chain_path()
            assert board["movable"] == [chain[-1]]  # the capturing piece goes on, alone
            shown = dict(board["squares"])
            assert shown[chain[0]] is None and shown[chain[-1]] == game.position.piece_at(chain[0])
    raise AssertionError(f"no result after {max_moves} moves")


def _screenshot(driver: WebDriver, tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    assert driver.save_screenshot(str(path)), "the browser took no screenshot"
    assert path.stat().st_size > 10_000
    target = os.environ.get("TAMMI_SCREENSHOT")
    if target:
        out = Path(target) if Path(target).is_absolute() else ROOT / target
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, out)
    return path


def _start(driver: WebDriver, url: str, *, variant: str, side: str, player: str, max_plies: int) -> None:
    from selenium.webdriver.support.ui import Select

    driver.get(url)
    _board_when(driver, lambda b: b["version"] > 0 and b["busy"] == "0", "the page to load")
    Select(driver.find_element("id", "variant")).select_by_value(variant)
    Select(driver.find_element("id", "side")).select_by_value(side)
    for field, value in (("player", player), ("max-plies", str(max_plies))):
        box = driver.find_element("id", field)
        box.clear()
        box.send_keys(value)
    before = _board(driver)["version"]
    driver.find_element("id", "new-game").click()
    _board_when(driver, lambda b: b["version"] > before, "the new game")


# --- the tests ---------------------------------------------------------------------------------
def test_play_a_whole_game_by_clicks_as_black(
    server: tuple[str, SessionStore], browser: WebDriver, tmp_path: Path
) -> None:
    """Russian against alpha-beta depth 1, the human as Black (board turned, the agent opens)."""
    url, store = server
    _start(browser, url, variant="russian", side="black", player="alphabeta:depth=1", max_plies=40)
    game = _play_by_clicks(browser, store, random.Random(1))
    assert game.result is not None and len(game.moves) <= 40
    text = browser.find_element("id", "status").text
    assert text.startswith("Game over") and game.result.pdn in text
    assert game.result.pdn in browser.find_element("id", "movetext").text
    # Black's view, the board turned: a1 (internal square 0) is the top-right cell.
    cells = browser.find_elements("css selector", "#board .cell")
    assert len(cells) == 64 and cells[7].get_attribute("data-name") == Rules.for_variant("russian").square_name(0)
    assert browser.find_element("id", "an-move").text != "-"  # the agent's analysis is shown
    _screenshot(browser, tmp_path, "serve-black.png")


def test_errors_show_on_the_page_and_turkish_plays(
    server: tuple[str, SessionStore], browser: WebDriver, tmp_path: Path
) -> None:
    """A bad FEN and a bad player spec are shown on the page; Turkish (all 64 squares) plays."""
    url, store = server
    _start(browser, url, variant="turkish", side="white", player="alphabeta:depth=1", max_plies=16)
    board = _settled(browser)
    assert len(board["squares"]) == 64  # orthogonal: every square is playable
    cells = browser.find_elements("css selector", "#board .cell")
    assert cells[56].get_attribute("data-name") == "a1"  # White's view: a1 bottom left
    fen = browser.find_element("id", "fen")
    fen.clear()
    fen.send_keys("W:Wz99:B1")
    browser.find_element("id", "set-fen").click()
    error = _board_when(browser, lambda b: bool(b["error"]), "the FEN error")["error"]
    assert "bad FEN 'W:Wz99:B1'" in error
    player = browser.find_element("id", "player")
    player.clear()
    player.send_keys("stockfish")
    browser.find_element("id", "new-game").click()
    error = _board_when(browser, lambda b: "stockfish" in b["error"], "the player spec error")["error"]
    assert "unknown player kind 'stockfish'" in error
    player.clear()
    player.send_keys("alphabeta:depth=1")
    browser.find_element("id", "new-game").click()
    _board_when(browser, lambda b: b["error"] == "" and b["busy"] == "0", "the error to clear")
    game = _play_by_clicks(browser, store, random.Random(2))
    assert game.rules.variant.name == "turkish" and game.result is not None
    # Hint, then the main screenshot: a game in progress with the analysis beside it.
    _start(browser, url, variant="russian", side="white", player="alphabeta:depth=3", max_plies=300)
    rng = random.Random(5)
    for _ in range(6):
        board = _settled(browser)
        piece = rng.choice(board["movable"])
        _click(browser, piece)
        board = _targets_shown(browser)
        while True:
            board = _hop_to(browser, rng.choice(board["targets"]), board["version"])
            if board["chain"] == 0 or board["turn"] != "human":
                break
            board = _targets_shown(browser)
    board = _settled(browser)
    _check_board(board, store.get(board["id"]).game)
    before = board["version"]
    browser.find_element("id", "hint").click()
    _board_when(browser, lambda b: b["version"] > before and b["busy"] == "0", "the hint")
    assert "hint for white" in browser.find_element("id", "analysis-who").text
    piece = _settled(browser)["movable"][0]
    _click(browser, piece)  # show the legal targets of one piece in the picture
    _screenshot(browser, tmp_path, "serve.png")


def test_multi_capture_by_clicks_from_a_fen(server: tuple[str, SessionStore], browser: WebDriver) -> None:
    """A position set in the FEN box; a double capture clicked hop by hop, only legal squares offered."""
    url, store = server
    _start(browser, url, variant="russian", side="white", player="alphabeta:depth=1", max_plies=300)
    fen = browser.find_element("id", "fen")
    fen.clear()
    fen.send_keys("W:Wc3:Bd4,f6,h8")
    before = _board(browser)["version"]
    browser.find_element("id", "set-fen").click()
    _board_when(browser, lambda b: b["version"] > before and b["busy"] == "0", "the position")
    rules = Rules.for_variant("russian")
    c3, e5, g7, d4 = (rules.square(n) for n in ("c3", "e5", "g7", "d4"))
    board = _settled(browser)
    game = store.get(board["id"]).game
    _check_board(board, game)
    assert board["movable"] == [c3]
    _click(browser, c3)
    board = _targets_shown(browser)
    assert board["targets"] == [e5]
    board = _hop_to(browser, e5, board["version"])
    assert board["chain"] == 2 and board["turn"] == "human" and board["targets"] == [g7]
    assert browser.find_element("css selector", f'.square[data-sq="{d4}"]').get_attribute("class").count("captured")
    _click(browser, rules.square("a1"))  # not a legal square: nothing happens
    assert _board(browser)["targets"] == [g7]
    _hop_to(browser, g7, board["version"])
    board = _settled(browser)  # black answers h8:f6 and White has nothing left
    assert board["over"] == "1" and game.result is not None and game.result.winner == 1
    assert [format_move(rules, m) for m in game.moves] == ["c3:e5:g7", "h8:f6"]
    _check_board(board, game)
    assert "0-1" in browser.find_element("id", "status").text


def test_a_refused_new_game_shows_the_game_that_goes_on(server: tuple[str, SessionStore], browser: WebDriver) -> None:
    """After New game with a bad spec (HTTP 400) the error shows above the board, while the
    status line and the Opponent box show the game still being played, not "starting..."
    and the refused spec."""
    url, _ = server
    _start(browser, url, variant="russian", side="white", player="alphabeta:depth=1", max_plies=40)
    before = _settled(browser)
    status = browser.find_element("id", "status").text
    assert status.startswith("Your move")
    player = browser.find_element("id", "player")
    player.clear()
    player.send_keys("alphabeta:depth=oops")
    browser.find_element("id", "new-game").click()
    board = _board_when(browser, lambda b: bool(b["error"]) and b["busy"] == "0", "the refused spec's error")
    assert "depth" in board["error"]
    assert board["id"] == before["id"] and board["plies"] == before["plies"]
    assert browser.find_element("id", "status").text == status
    assert player.get_attribute("value") == "alphabeta:depth=1"
