"""The web page's JSON API (tammi_rl/web) through Flask's test client: every route, every error.

The agent is alpha-beta at depth 1 or a seeded random player, so each request takes
milliseconds; the real browser drives the same API in tests/integration/test_web_browser.py.
"""

from __future__ import annotations

import queue
import shlex
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import pytest
from flask.testing import FlaskClient

from tammi_rl.cli import main
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game
from tammi_rl.rules.pdn import read_pdn
from tammi_rl.rules.variant import available_variants
from tammi_rl.web import create_app, make_web_server
from tammi_rl.web.sessions import PAGE_OPTION_LIMITS, SessionStore

AGENT = "alphabeta:depth=1"
DOUBLE_CAPTURE = "W:Wc3:Bd4,f6,h8"  # Russian: white must take c3:e5:g7, hop by hop


def _defaults(variant: str) -> str:
    return f"random:seed={len(variant)}"


@pytest.fixture
def app():
    return create_app(default_player=_defaults, think_seconds=2.0, max_sessions=4)


@pytest.fixture
def client(app) -> FlaskClient:
    return app.test_client()


def _new(client: FlaskClient, **body) -> dict:
    body.setdefault("player", AGENT)
    response = client.post("/api/games", json=body)
    assert response.status_code == 200, response.json
    return response.json


def _post(client: FlaskClient, sid: str, route: str, body: dict | None = None, status: int = 200) -> dict:
    response = (
        client.post(f"/api/games/{sid}/{route}", json=body)
        if body is not None
        else client.post(f"/api/games/{sid}/{route}")
    )
    assert response.status_code == status, response.json
    return response.json


def _error(response, status: int = 400) -> str:
    assert response.status_code == status, response.data
    assert response.is_json
    message = response.json["error"]
    assert isinstance(message, str) and message
    return message


def _store(app) -> SessionStore:
    return app.extensions["tammi_rl"]["store"]


def _session_game(app, sid: str) -> Game:
    return _store(app).get(sid).game


def _pieces(state: dict) -> dict[int, str | None]:
    return {s["sq"]: s["piece"] for s in state["squares"]}


# --- the page and its files -------------------------------------------------------------------
def test_index_and_static_files(client: FlaskClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and page.mimetype == "text/html"
    text = page.data.decode()
    assert 'id="board"' in text and "/static/app.js" in text and "/static/style.css" in text
    assert "http" not in text.replace("http-equiv", "")  # nothing fetched from elsewhere (offline)
    for name, mimetype in (("app.js", "text/javascript"), ("style.css", "text/css")):
        response = client.get(f"/static/{name}")
        assert response.status_code == 200 and response.mimetype == mimetype, name
        response.close()


def test_variants_lists_every_variant_with_its_default_opponent(client: FlaskClient) -> None:
    data = client.get("/api/variants").json
    assert [v["name"] for v in data["variants"]] == available_variants()
    assert data["default_variant"] == "russian"
    for v in data["variants"]:
        assert v["default_player"] == _defaults(v["name"])
        assert v["board_size"] == Rules.for_variant(v["name"]).variant.board_size


def test_one_player_for_every_variant_and_the_opening_variant() -> None:
    client = create_app(default_player=_defaults, player="random", variant="Turkish").test_client()
    data = client.get("/api/variants").json
    assert data["default_variant"] == "turkish"
    assert {v["default_player"] for v in data["variants"]} == {"random"}
    state = client.post("/api/games", json={}).json
    assert state["variant"]["name"] == "turkish" and state["player"] == "random"


def test_unknown_opening_variant_fails_before_serving() -> None:
    with pytest.raises(ValueError, match="unknown variant 'nope'"):
        create_app(variant="nope")


# --- games ------------------------------------------------------------------------------------
@pytest.mark.parametrize("variant", available_variants())
def test_new_game_shows_the_engine_start_position(client: FlaskClient, variant: str) -> None:
    state = _new(client, variant=variant, player="random:seed=1", side="white")
    rules = Rules.for_variant(variant)
    start = rules.start_position()
    assert state["variant"]["name"] == variant
    assert len(state["squares"]) == rules.geometry.n_squares  # Turkish: all 64, International: 50
    assert _pieces(state) == {sq: start.piece_at(sq) for sq in range(rules.geometry.n_squares)}
    assert state["fen"] == rules.fen(start) and state["plies"] == 0 and state["result"] is None
    coords = {(s["row"], s["col"]) for s in state["squares"]}
    assert coords == set(rules.geometry.coords)
    human_first = start.side == 0
    assert state["turn"] == ("human" if human_first else "agent")
    legal = Game(rules).legal_hops()
    assert sorted(h["hop"] for h in state["hops"]) == (legal if human_first else [])


def test_get_game_and_defaults(client: FlaskClient) -> None:
    state = client.post("/api/games", json={}).json  # every field optional
    assert state["variant"]["name"] == "russian" and state["human"] == "white"
    assert state["player"] == _defaults("russian") and state["player_name"] == "random(seed=7)"
    again = client.get(f"/api/games/{state['id']}").json
    assert again["id"] == state["id"] and again["fen"] == state["fen"]
    assert client.post("/api/games").status_code == 200  # no body at all


def test_hop_then_agent_answers_with_its_analysis(app, client: FlaskClient) -> None:
    state = _new(client)
    hop = state["hops"][0]
    after = _post(client, state["id"], "hop", {"from": hop["from"], "to": hop["to"]})
    assert after["turn"] == "agent" and after["plies"] == 1 and after["hops"] == []
    assert after["last_move"]["path"] == [hop["from"], hop["to"]]
    answered = _post(client, state["id"], "agent")
    assert answered["turn"] == "human" and answered["plies"] == 2
    game = _session_game(app, state["id"])
    assert _pieces(answered) == {sq: game.position.piece_at(sq) for sq in range(32)}
    analysis = answered["analysis"]
    assert analysis["side"] == "black" and not analysis["hint"] and analysis["ply"] == 1
    assert analysis["move"] == answered["moves"][0]["second"] == analysis["pv"][0]
    assert analysis["depth"] >= 1 and analysis["nodes"] >= 1 and analysis["elapsed_s"] >= 0
    assert -1 <= analysis["value"] <= 1 and analysis["wdl"] is None
    assert sum(h["share"] for h in analysis["hops"]) == pytest.approx(1.0)
    assert {h["hop"] for h in analysis["hops"]} == set(Game(game.rules, start=game.positions[1]).legal_hops())
    assert answered["movetext"].startswith("1. ")


def test_multi_capture_hop_by_hop(app, client: FlaskClient) -> None:
    state = _new(client, fen=DOUBLE_CAPTURE)
    rules = Rules.for_variant("russian")
    c3, e5, g7, d4, f6 = (rules.square(n) for n in ("c3", "e5", "g7", "d4", "f6"))
    assert [(h["from"], h["to"]) for h in state["hops"]] == [(c3, e5)]
    mid = _post(client, state["id"], "hop", {"from": c3, "to": e5})
    assert mid["turn"] == "human" and mid["plies"] == 0 and mid["chain"] == [c3, e5] and mid["jumped"] == [d4]
    assert [(h["from"], h["to"]) for h in mid["hops"]] == [(e5, g7)]  # only the capturing piece goes on
    pieces = _pieces(mid)
    assert pieces[c3] is None and pieces[e5] == "w" and pieces[d4] == "b"  # jumped pieces stay until the end
    message = _error(client.post(f"/api/games/{state['id']}/hop", json={"from": e5, "to": rules.square("d6")}))
    assert "illegal hop e5-d6" in message and "e5-g7" in message
    undone = _post(client, state["id"], "undo")  # mid-capture: back to the start of the turn
    assert undone["chain"] == [] and _pieces(undone)[c3] == "w"
    _post(client, state["id"], "hop", {"from": c3, "to": e5})
    done = _post(client, state["id"], "hop", {"from": e5, "to": g7})
    assert done["plies"] == 1 and done["moves"][0]["first"] == "c3:e5:g7"
    assert done["last_move"]["captures"] == [d4, f6]
    assert _pieces(done)[g7] == "w" and _pieces(done)[d4] is None and _pieces(done)[f6] is None


@pytest.mark.parametrize(
    ("variant", "fen", "first", "shown"),
    [
        ("russian", "W:Wb6:Bc7,f6", ("b6", "d8"), {"d8": "W", "c7": "b"}),  # crowned mid-capture, goes on as a king
        ("brazilian", "W:Wb6:Bc7,e7", ("b6", "d8"), {"d8": "w", "c7": "b"}),  # crowned only where the move ends
        ("turkish", "W:Wa2:Ba3,a5,h8", ("a2", "a4"), {"a4": "w", "a3": None}),  # jumped pieces leave at once
    ],
)
def test_the_board_mid_capture_follows_the_variant(client, variant, fen, first, shown) -> None:
    rules = Rules.for_variant(variant)
    state = _new(client, variant=variant, fen=fen)
    frm, to = (rules.square(n) for n in first)
    mid = _post(client, state["id"], "hop", {"from": frm, "to": to})
    assert mid["chain"] == [frm, to] and mid["turn"] == "human" and mid["plies"] == 0
    pieces = _pieces(mid)
    assert pieces[frm] is None
    assert {name: pieces[rules.square(name)] for name in shown} == shown


def test_hint_analyses_without_playing(client: FlaskClient) -> None:
    state = _new(client)
    hinted = _post(client, state["id"], "hint")
    assert hinted["plies"] == 0 and hinted["turn"] == "human"
    assert hinted["analysis"]["hint"] and hinted["analysis"]["side"] == "white"
    assert hinted["analysis"]["move"] in {m for m in ("c3-d4", "c3-b4", "a3-b4", "e3-d4", "e3-f4", "g3-f4", "g3-h4")}


def test_a_hint_on_a_forced_capture_shows_the_search_after_it(client: FlaskClient) -> None:
    """c3:e5:g7 is White's only move: the hint shows the searched position after it (White a
    man up), not the depth-0 static value of the position before it (a man down)."""
    state = _new(client, fen="W:Wc3,g1:Bd4,f6,b8", player="alphabeta:depth=3")
    analysis = _post(client, state["id"], "hint")["analysis"]
    assert analysis["move"] == "c3:e5:g7" and analysis["depth"] >= 2 and analysis["nodes"] > 0
    assert analysis["value"] > 0 and len(analysis["pv"]) > 1


def test_undo_takes_back_the_move_and_the_answer(client: FlaskClient) -> None:
    state = _new(client)
    sid = state["id"]
    assert "nothing to undo" in _error(client.post(f"/api/games/{sid}/undo"))
    hop = state["hops"][0]
    _post(client, sid, "hop", {"from": hop["from"], "to": hop["to"]})
    _post(client, sid, "agent")
    back = _post(client, sid, "undo")
    assert back["plies"] == 0 and back["fen"] == state["fen"] and back["analysis"] is None


def test_undo_when_the_agent_opened(client: FlaskClient) -> None:
    state = _new(client, side="black")
    sid = state["id"]
    assert state["turn"] == "agent" and state["hops"] == []
    opened = _post(client, sid, "agent")
    hop = opened["hops"][0]
    _post(client, sid, "hop", {"from": hop["from"], "to": hop["to"]})
    replied = _post(client, sid, "agent")
    assert replied["plies"] == 3
    back = _post(client, sid, "undo")
    assert back["plies"] == 1 and back["turn"] == "human"


def test_set_position(client: FlaskClient) -> None:
    state = _new(client)
    sid = state["id"]
    fen = "B:WK25:B1,3"
    english = _post(client, sid, "new", {"variant": "english", "side": "black", "player": "random:seed=2"})
    assert english["variant"]["name"] == "english"
    placed = _post(client, sid, "position", {"fen": fen})
    rules = Rules.for_variant("english")
    assert placed["fen"] == rules.fen(rules.parse_fen(fen)) and placed["start_fen"] == placed["fen"]
    assert placed["human"] == "black" and placed["variant"]["name"] == "english" and placed["turn"] == "human"


def test_pdn_download_reads_back(client: FlaskClient) -> None:
    state = _new(client, fen=DOUBLE_CAPTURE)
    sid = state["id"]
    for body in ({"from": 9, "to": 18}, {"from": 18, "to": 27}):
        _post(client, sid, "hop", body)
    response = client.get(f"/api/games/{sid}/pdn")
    assert response.status_code == 200 and "attachment" in response.headers["Content-Disposition"]
    assert ".pdn" in response.headers["Content-Disposition"]
    [game] = read_pdn(response.data.decode())
    rules = Rules.for_variant("russian")
    assert game.start == rules.parse_fen(DOUBLE_CAPTURE)
    assert [m.path for m in game.moves] == [(9, 18, 27)]
    assert game.tags["White"] == "human" and game.tags["Black"] == "alphabeta(depth=1)"


def test_a_whole_game_to_its_result(app, client: FlaskClient) -> None:
    state = _new(client, player="random:seed=3", max_plies=30)
    sid = state["id"]
    for _ in range(100):
        if state["turn"] == "over":
            break
        if state["turn"] == "agent":
            state = _post(client, sid, "agent")
        else:
            hop = state["hops"][-1]
            state = _post(client, sid, "hop", {"from": hop["from"], "to": hop["to"]})
    assert state["result"] is not None and state["turn"] == "over" and state["hops"] == []
    assert state["movetext"] and state["plies"] <= 30
    game = _session_game(app, sid)
    assert state["result"]["pdn"] == game.result.pdn
    assert client.get(f"/api/games/{sid}/pdn").data.decode().rstrip().endswith(game.result.pdn)
    assert "game is over" in _error(client.post(f"/api/games/{sid}/agent"))
    assert "game is over" in _error(client.post(f"/api/games/{sid}/hop", json={"from": 0, "to": 4}))
    assert "game is over" in _error(client.post(f"/api/games/{sid}/hint"))


def test_many_games_in_one_session_keep_the_player(app, client: FlaskClient) -> None:
    state = _new(client, player="random:seed=4", max_plies=4)
    sid = state["id"]
    player = _store(app).get(sid).player
    for i in range(25):
        while state["turn"] != "over":
            if state["turn"] == "agent":
                state = _post(client, sid, "agent")
            else:
                hop = state["hops"][0]
                state = _post(client, sid, "hop", {"from": hop["from"], "to": hop["to"]})
        state = _post(client, sid, "new", {"side": "black" if i % 2 else "white", "max_plies": 4})
    assert state["games_played"] == 26 and len(_store(app)) == 1
    assert _store(app).get(sid).player is player  # same variant and spec: not made again
    changed = _post(client, sid, "new", {"player": AGENT})
    assert changed["player"] == AGENT and _store(app).get(sid).player is not player


def test_store_is_bounded(app, client: FlaskClient) -> None:
    ids = [_new(client)["id"] for _ in range(7)]
    assert len(_store(app)) == 4
    for sid in ids[:3]:
        message = _error(client.get(f"/api/games/{sid}"), 404)
        assert "unknown game" in message and "start a new game" in message
    for sid in ids[3:]:
        assert client.get(f"/api/games/{sid}").status_code == 200


# --- errors -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"variant": "chess"}, "unknown variant 'chess'"),
        ({"variant": 3}, "field 'variant' must be a string"),
        ({"player": "stockfish"}, "unknown player kind 'stockfish'"),
        ({"player": "alphabeta:depth=x"}, "depth must be a whole number"),
        ({"player": "alphabeta:bogus=1"}, "unknown option 'bogus'"),
        ({"player": "human"}, "must be an engine"),
        ({"side": "red"}, "field 'side' must be 'white' or 'black'"),
        ({"fen": "W:Wz9:B1"}, "bad FEN 'W:Wz9:B1'"),
        ({"fen": "not a fen"}, "bad FEN"),
        ({"max_plies": "ten"}, "field 'max_plies' must be a whole number"),
        ({"max_plies": True}, "field 'max_plies' must be a whole number"),
        ({"max_plies": 0}, "max_plies must be between 1 and"),
        ({"colour": "white"}, "unknown field 'colour'"),
        ({"player": "mcts:model=russian,sims=100000"}, "sims must be <= 10000 on this page, got 100000"),
        ({"player": "mcts:model=russian,threads=1000"}, "threads must be <= 64 on this page"),
        ({"player": "alphabeta:tt_bits=28"}, "tt_bits must be <= 22 on this page, got 28"),
        ({"player": "ab:depth=2,tt_bits=23"}, "tt_bits must be <= 22 on this page"),
        ({"player": "alphabeta:tt_bits=x"}, "tt_bits must be a whole number"),  # the player's own message
    ],
)
def test_bad_game_settings(client: FlaskClient, body: dict, expected: str) -> None:
    assert expected in _error(client.post("/api/games", json=body))
    sid = _new(client)["id"]
    assert expected in _error(client.post(f"/api/games/{sid}/new", json=body))
    assert client.get(f"/api/games/{sid}").json["plies"] == 0  # the game in progress is untouched


@pytest.mark.parametrize("route", ["/api/games", "hop", "new", "position"])
@pytest.mark.parametrize("data", ["{not json", "[1, 2]", '"text"', "null"])
def test_malformed_json(client: FlaskClient, route: str, data: str) -> None:
    path = route if route.startswith("/") else f"/api/games/{_new(client)['id']}/{route}"
    message = _error(client.post(path, data=data, content_type="application/json"))
    assert "JSON object" in message


@pytest.mark.parametrize("route", ["/api/games", "hop", "new", "position"])
@pytest.mark.parametrize(
    ("data", "why"),
    [
        ("[" * 10_000 + "]" * 10_000, "nested too deep"),
        ('{"a":' * 10_000 + "1" + "}" * 10_000, "nested too deep"),
        (b'{"fen": "\xff\xfe"}', "not UTF-8"),
        ("{not json", "not valid JSON"),
        ("[1, 2]", "got a JSON array"),
        ("null", "got a JSON null"),
    ],
    ids=["deep-array", "deep-object", "not-utf8", "malformed", "array", "null"],
)
def test_unreadable_json_is_a_bad_request_not_a_crash(client: FlaskClient, route: str, data, why: str) -> None:
    """Whatever body the server cannot read as a JSON object gets HTTP 400 saying why, never 500."""
    path = route if route.startswith("/") else f"/api/games/{_new(client)['id']}/{route}"
    message = _error(client.post(path, data=data, content_type="application/json"))
    assert "JSON object" in message and why in message


def test_a_body_not_sent_as_json_is_refused(client: FlaskClient) -> None:
    message = _error(client.post("/api/games", data='{"player": "random"}', content_type="text/plain"))
    assert "application/json" in message


def test_bad_hops(client: FlaskClient) -> None:
    state = _new(client)
    sid = state["id"]
    hop = state["hops"][0]
    assert "needs the field 'from'" in _error(client.post(f"/api/games/{sid}/hop", json={"to": 1}))
    assert "needs the field 'to'" in _error(client.post(f"/api/games/{sid}/hop", json={"from": 1}))
    assert "must be a whole number" in _error(client.post(f"/api/games/{sid}/hop", json={"from": "c3", "to": 1}))
    assert "is not a square of the russian board" in _error(
        client.post(f"/api/games/{sid}/hop", json={"from": 99, "to": 1})
    )
    message = _error(client.post(f"/api/games/{sid}/hop", json={"from": hop["from"], "to": hop["from"]}))
    assert "illegal hop" in message and "legal hops now" in message
    assert "illegal hop a1-b2" in _error(client.post(f"/api/games/{sid}/hop", json={"from": 0, "to": 4}))
    message = _error(client.post(f"/api/games/{sid}/agent"))
    assert "cannot let the agent move: it is the human's turn" in message
    _post(client, sid, "hop", {"from": hop["from"], "to": hop["to"]})
    message = _error(client.post(f"/api/games/{sid}/hop", json={"from": hop["from"], "to": hop["to"]}))
    assert "it is the agent's turn" in message
    assert "it is the agent's turn" in _error(client.post(f"/api/games/{sid}/hint"))


def test_bad_positions(client: FlaskClient) -> None:
    sid = _new(client)["id"]
    assert "needs the field 'fen'" in _error(client.post(f"/api/games/{sid}/position", json={}))
    assert "needs the field 'fen'" in _error(client.post(f"/api/games/{sid}/position", json={"fen": "  "}))
    assert "must be a string" in _error(client.post(f"/api/games/{sid}/position", json={"fen": 5}))
    assert "bad FEN 'W:W99:B1'" in _error(client.post(f"/api/games/{sid}/position", json={"fen": "W:W99:B1"}))


def test_page_limits_allow_the_defaults_and_the_caps(app, client: FlaskClient) -> None:
    assert PAGE_OPTION_LIMITS["alphabeta"]["tt_bits"] == 22 and PAGE_OPTION_LIMITS["mcts"]["sims"] == 10_000
    state = _new(client, player="alphabeta:depth=1,tt_bits=22")
    assert state["player"] == "alphabeta:depth=1,tt_bits=22"
    assert _store(app).get(state["id"]).player.config.tt_bits == 22


def test_the_page_starts_no_program_it_is_sent(client: FlaskClient, tmp_path: Path) -> None:
    """A request naming an outside engine (a command to run) is refused; the server's own
    ``--player`` may be one (next test)."""
    mark = tmp_path / "ran"
    message = _error(client.post("/api/games", json={"player": f'hub:cmd="touch {mark}"'}))
    assert "the page does not start programs" in message
    assert not mark.exists()


def test_an_outside_engine_given_to_the_server_plays_on_the_page(tmp_path: Path) -> None:
    fake = Path(__file__).resolve().parents[1] / "support" / "fake_hub_engine.py"
    log = tmp_path / "lines"
    spec = f'hub:cmd="{shlex.quote(sys.executable)} {shlex.quote(str(fake))} play {shlex.quote(str(log))}",time=0.1'
    app = create_app(player=spec, variant="russian")
    client = app.test_client()
    sid = _new(client, player=spec, side="black")["id"]
    state = _post(client, sid, "agent")
    assert state["turn"] == "human" and len(_session_game(app, sid).moves) == 1  # c3-b4, from the engine
    assert "level move-time=0.1" in log.read_text(encoding="utf-8").splitlines()
    _store(app).get(sid).player.close()


def test_an_unexpected_error_is_a_json_500(client: FlaskClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure no check foresaw (here memory running out while the player is made) is
    answered with JSON naming it, not Flask's HTML error page; the server keeps serving."""

    def out_of_memory(spec: str, rules: Rules) -> None:
        raise MemoryError

    with monkeypatch.context() as patch:
        patch.setattr("tammi_rl.web.sessions.parse_player_spec", out_of_memory)
        message = _error(client.post("/api/games", json={"player": AGENT}), 500)
    assert "internal error on POST /api/games: out of memory" in message
    monkeypatch.setattr("tammi_rl.web.app.game_view", lambda game: 1 / 0)
    message = _error(client.post("/api/games", json={"player": "random"}), 500)
    assert "ZeroDivisionError" in message
    monkeypatch.undo()
    assert client.post("/api/games", json={"player": "random"}).status_code == 200


def test_only_local_host_names_are_answered(monkeypatch: pytest.MonkeyPatch) -> None:
    """DNS rebinding: a request whose Host is another name is refused (403), even over 127.0.0.1;
    the address the server listens on is answered too, and any Host when it listens on all."""
    app = create_app(default_player=_defaults)
    client = app.test_client()
    for host in ("localhost", "localhost:8000", "127.0.0.1:5000", "[::1]:8000", "LOCALHOST"):
        assert client.get("/api/variants", headers={"Host": host}).status_code == 200, host
    for host in ("evil.example", "evil.example:8000", "localhost.evil.example", "127.0.0.1.nip.io"):
        message = _error(client.get("/api/variants", headers={"Host": host}), 403)
        assert "answers only requests to" in message and repr(host.split(":")[0]) in message
    assert client.get("/", headers={"Host": "evil.example"}).status_code == 403
    monkeypatch.setattr("tammi_rl.web.app.make_server", lambda *args, **kwargs: None)  # nothing listens
    make_web_server(app, "192.168.1.5", 0)
    assert client.get("/api/variants", headers={"Host": "192.168.1.5:8000"}).status_code == 200
    assert client.get("/api/variants", headers={"Host": "evil.example"}).status_code == 403
    make_web_server(app, "0.0.0.0", 0)
    assert client.get("/api/variants", headers={"Host": "evil.example"}).status_code == 200


def test_unknown_game_route_method_and_size(client: FlaskClient) -> None:
    for method, route in (("get", ""), ("post", "/hop"), ("post", "/agent"), ("post", "/undo"), ("get", "/pdn")):
        message = _error(getattr(client, method)(f"/api/games/nope{route}", json={"from": 1, "to": 2}), 404)
        assert "unknown game 'nope'" in message
    assert "no such page or API route: /api/nothing" in _error(client.get("/api/nothing"), 404)
    assert "GET is not allowed on /api/games" in _error(client.get("/api/games"), 405)
    big = {"fen": "W:W" + "1," * 40_000 + "2:B3"}
    assert "too large" in _error(client.post("/api/games", json=big), 413)


# --- the command --------------------------------------------------------------------------
def test_serve_command_rejects_bad_arguments(capsys) -> None:
    assert main(["serve", "--player", "stockfish"]) == 2
    assert "unknown player kind 'stockfish'" in capsys.readouterr().err
    assert main(["serve", "--variant", "chess"]) == 2
    assert "unknown variant" in capsys.readouterr().err
    assert main(["serve", "--port", "70000"]) == 2
    assert "--port must be between 0 and 65535" in capsys.readouterr().err
    assert main(["serve", "--think", "-1"]) == 2
    assert main(["serve", "--player", "alphabeta:tt_bits=28"]) == 2
    assert "tt_bits must be <= 22 on this page" in capsys.readouterr().err
    assert main(["serve", "--help"]) == 0
    assert "--player" in capsys.readouterr().out


def _first_line(proc: subprocess.Popen[str], timeout_s: float) -> str | None:
    """The first line ``proc`` prints, or None if it prints none within ``timeout_s`` (read
    in a thread: a server that hangs before printing fails the test, not the CI job)."""
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None
    stdout = proc.stdout
    threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
    try:
        return lines.get(timeout=timeout_s)
    except queue.Empty:
        return None


def test_serve_command_serves_the_page(tmp_path: Path) -> None:
    """`tammi-rl serve --port 0` listens on localhost, says where, and answers."""
    startup_s = 120  # a cold start imports torch and may compile: generous for a loaded CI machine
    log = tmp_path / "stderr.txt"
    with open(log, "w") as stderr:  # a file, not a pipe: the request log can never block the server
        proc = subprocess.Popen(
            [sys.executable, "-m", "tammi_rl.cli", "serve", "--port", "0", "--player", "random"],
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
        try:
            line = _first_line(proc, startup_s)
            assert line is not None, (
                f"tammi-rl serve printed nothing within {startup_s} s (exit status {proc.poll()}); "
                f"stderr: {log.read_text()[-2000:]}"
            )
            assert "open http://127.0.0.1:" in line, (line, proc.poll(), log.read_text()[-2000:])
            url = line.split("open ", 1)[1].split()[0]
            with urllib.request.urlopen(url + "api/variants", timeout=60) as response:
                assert b'"default_player":"random"' in response.read().replace(b" ", b"")
            with urllib.request.urlopen(url, timeout=60) as response:
                assert b'id="board"' in response.read()
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=30)


def test_an_mcts_agent_shows_visits_priors_and_wdl(tmp_path) -> None:
    """A network player (a tiny untrained one): the analysis has visits, priors and a WDL."""
    import torch

    from tammi_rl.config import Config, NetworkConfig
    from tammi_rl.nn.model import build_model
    from tammi_rl.store.checkpoint import make_checkpoint, save_checkpoint

    rules = Rules.for_variant("russian")
    network = NetworkConfig(blocks=1, channels=8, value_hidden=8)
    torch.manual_seed(0)
    ckpt = make_checkpoint(
        variant="russian",
        network=network,
        model=build_model(rules, network),
        learner=None,
        counters={"iteration": 0, "games": 0},
        rng={},
        worker=None,
        config=Config(variant="russian").to_dict(),
    )
    path = tmp_path / "tiny.pt"
    save_checkpoint(path, ckpt)
    client = create_app(think_seconds=5.0).test_client()
    spec = f"mcts:checkpoint={path},sims=16,runtime=torch"
    state = _new(client, player=spec, side="black")
    answered = _post(client, state["id"], "agent")
    analysis = answered["analysis"]
    assert answered["plies"] == 1 and analysis["move"] == answered["moves"][0]["first"] == analysis["pv"][0]
    assert sum(h["visits"] for h in analysis["hops"]) >= 15
    assert sum(h["prior"] for h in analysis["hops"]) == pytest.approx(1.0, abs=1e-3)
    assert sum(h["share"] for h in analysis["hops"]) == pytest.approx(1.0, abs=1e-6)
    wdl = analysis["wdl"]  # a network player always has one: win, draw, loss for the side that searched
    assert isinstance(wdl, list) and len(wdl) == 3, wdl
    assert all(0 <= p <= 1 for p in wdl) and sum(wdl) == pytest.approx(1.0, abs=1e-3)
    hinted = _post(client, state["id"], "hint")
    assert hinted["analysis"]["hint"] and hinted["plies"] == 1


@pytest.mark.parametrize(
    ("fen", "reason"),
    [
        ("W:W:B", "no pieces at all"),
        ("B:W:Bc3", "white has no piece"),
        ("W:WKc3:B", "black has no piece"),
        ("W:W21,22", "e.g. 'W:Wa3,c3,Ke3:Bb8,d8,f8'"),  # the example is in Russian's own notation
    ],
)
def test_a_fen_without_a_piece_for_a_side_is_a_bad_request(client: FlaskClient, fen: str, reason: str) -> None:
    """The FEN box refuses a board where a side has no piece (it showed '1-0 (white wins:
    no_moves)' with no white piece): HTTP 400 in New game and Set position, the game kept."""
    assert reason in _error(client.post("/api/games", json={"player": AGENT, "fen": fen}))
    state = _new(client)
    message = _error(client.post(f"/api/games/{state['id']}/position", json={"fen": fen}))
    assert message.startswith(f"bad FEN {fen!r}") and reason in message
    assert client.get(f"/api/games/{state['id']}").json["fen"] == state["fen"]


def test_an_mcts_player_on_a_missing_gpu_is_a_bad_request(client: FlaskClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """device=cuda where torch has no CUDA: New game answers HTTP 400 naming the spec and the
    fix (it was a 500 from torch), and the game in progress goes on."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    spec = "mcts:model=russian,device=cuda"
    message = _error(client.post("/api/games", json={"player": spec}))
    assert message.startswith(f"player spec {spec!r}: device=cuda but CUDA is not available here")
    assert "use device=cpu" in message
    state = _new(client)
    assert "CUDA is not available" in _error(client.post(f"/api/games/{state['id']}/new", json={"player": spec}))
    assert client.get(f"/api/games/{state['id']}").json["fen"] == state["fen"]
