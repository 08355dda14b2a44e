"""The web page's server: a Flask app with a small JSON API, and `serve` to run it.

    app = create_app(player="alphabeta:depth=6", think_seconds=5.0)
    serve(app, host="127.0.0.1", port=8000)       # what `tammi-rl serve` runs

Routes (each answers JSON, except the page, its static files and the PDN download):

* ``GET /``: the page (``static/index.html``); ``GET /static/...``: its script and style;
* ``GET /api/variants``: the variants, each with its default opponent;
* ``POST /api/games``: a new session with a new game, from ``{variant, player, side, fen,
  max_plies}`` (every field optional); ``POST /api/games/<id>/new``: another game in it;
* ``GET /api/games/<id>``: the game's state (board, legal hops, moves, result, analysis);
* ``POST /api/games/<id>/hop``: the human's hop ``{from, to}`` (internal squares);
* ``POST /api/games/<id>/agent``: the agent plays its move, with its analysis;
* ``POST /api/games/<id>/hint``: the agent analyses the human's position;
* ``POST /api/games/<id>/undo``: take back the human's last move and the answer to it;
* ``POST /api/games/<id>/position``: a new game from ``{fen}``;
* ``GET /api/games/<id>/pdn``: the game as a PDN file.

A bad request (a body that is not a JSON object: malformed, nested too deep, not UTF-8,
not sent as ``application/json``; a wrong field, an unknown variant or player spec, a
player spec over the page's limits, a bad FEN, an illegal hop, a move out of turn) is
answered with HTTP 400 and ``{"error": message}``, the message naming what was wrong; an
unknown game id with 404; anything unexpected (a bug, memory running out) with 500 and
``{"error": message}`` (the traceback goes to the server's log), never an HTML page.

The page answers only requests addressed to this machine by name (``Host`` is
``localhost``, ``127.0.0.1``, ``::1`` or the address the server listens on; 403
otherwise), so a web site cannot reach it through a DNS name of its own that points at
127.0.0.1 (DNS rebinding). A server listening on every address (``0.0.0.0``, ``::``)
answers any ``Host``.

The engine is not thread-safe (`Rules` keeps a scratch buffer), so every engine call of
every session runs under one lock: the server is for one person at a time, as a local
page is.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

from flask import Flask, Response, jsonify, request
from werkzeug.exceptions import HTTPException
from werkzeug.serving import BaseWSGIServer, make_server

from tammi_rl.players.defaults import default_player_spec
from tammi_rl.rules.errors import TammiError
from tammi_rl.rules.position import BLACK, COLOR_NAMES, WHITE
from tammi_rl.rules.variant import available_variants, load_variant
from tammi_rl.web.sessions import GameSession, GameSettings, RequestError, SessionStore, starts_a_program
from tammi_rl.web.views import analysis_view, game_view, variant_view

MAX_REQUEST_BYTES = 64 * 1024
"""Largest request body accepted (a FEN of the biggest board is well under 1 KiB)."""
_SETTINGS_FIELDS = {"variant", "player", "side", "fen", "max_plies"}
LOCAL_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
"""``Host`` names every app answers to; `make_web_server` adds the address it listens on."""
ANY_ADDRESS = frozenset({"", "0.0.0.0", "::"})
"""Listening addresses that mean every interface: the server then answers any ``Host``."""
_HOSTS_KEY = "TAMMI_RL_HOSTS"


def create_app(
    default_player: Callable[[str], str] | None = None,
    player: str | None = None,
    variant: str = "russian",
    think_seconds: float | None = None,
    max_sessions: int = 16,
) -> Flask:
    """The page's Flask app.

    ``player`` (a spec) is every variant's default opponent when given; otherwise
    ``default_player(variant)`` is (default: the variant's shipped model, else alpha-beta,
    as `tammi_rl.players.defaults` says). ``variant`` is the one the page opens with.
    ``think_seconds`` caps the time of each search of the agent, besides the spec's own
    depth or simulations (None: the spec's own limits alone). ``max_sessions`` games are
    kept (`SessionStore`).
    """
    variant = variant.lower()
    if variant not in available_variants():  # fail before the server starts
        raise TammiError(f"unknown variant {variant!r}; variants: {', '.join(available_variants())}")
    choose_default = default_player or default_player_spec
    think = think_seconds or None
    app = Flask(__name__, static_folder=str(resources.files("tammi_rl.web") / "static"), static_url_path="/static")
    app.config["MAX_CONTENT_LENGTH"] = MAX_REQUEST_BYTES
    app.config[_HOSTS_KEY] = set(LOCAL_NAMES)  # None: any Host (see make_web_server)
    app.json.sort_keys = False  # type: ignore[attr-defined]
    store = SessionStore(max_sessions=max_sessions)
    engine = threading.RLock()
    app.extensions["tammi_rl"] = {"store": store, "engine": engine}

    def default_for(name: str) -> str:
        return player or choose_default(name)

    # --- request reading ---------------------------------------------------------------
    def body() -> dict[str, Any]:
        raw = request.get_data(cache=True)
        if not raw:
            return {}
        if not request.is_json:  # a cross-site form cannot send JSON without a CORS preflight
            raise RequestError(f"{_OBJECT_EXAMPLE}, sent with Content-Type: application/json")
        return parse_body(raw)

    def text_field(data: dict[str, Any], key: str) -> str | None:
        value = data.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise RequestError(f"field {key!r} must be a string, got {type(value).__name__}")
        return value.strip() or None

    def int_field(data: dict[str, Any], key: str) -> int | None:
        value = data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise RequestError(f"field {key!r} must be a whole number, got {value!r}")
        return value

    def settings_from(data: dict[str, Any], current: GameSettings | None) -> GameSettings:
        unknown = sorted(set(data) - _SETTINGS_FIELDS)
        if unknown:
            raise RequestError(f"unknown field {unknown[0]!r}; a game takes {', '.join(sorted(_SETTINGS_FIELDS))}")
        name = (text_field(data, "variant") or (current.variant if current else variant)).lower()
        if name not in available_variants():
            raise RequestError(f"unknown variant {name!r}; variants: {', '.join(available_variants())}")
        side_text = text_field(data, "side") or (COLOR_NAMES[current.human] if current else "white")
        if side_text not in COLOR_NAMES:
            raise RequestError(f"field 'side' must be 'white' or 'black' (the human's colour), got {side_text!r}")
        spec = text_field(data, "player")
        if spec is not None and spec != default_for(name).strip() and starts_a_program(spec):
            raise RequestError(
                f"player spec {spec!r}: the page does not start programs; give an outside engine to the server "
                "(tammi-rl serve --player 'hub:cmd=...')"
            )
        if spec is None:
            same_variant = current is not None and current.variant == name
            spec = current.player if same_variant and current is not None else default_for(name)
        return GameSettings(
            variant=name,
            player=spec,
            human=WHITE if side_text == "white" else BLACK,
            fen=text_field(data, "fen"),
            max_plies=int_field(data, "max_plies"),
        )

    def state(session: GameSession) -> Response:
        view = game_view(session.game)
        search = session.last_search
        view.update(
            id=session.id,
            player=session.player_spec,
            player_name=session.player.name if session.player is not None else session.player_spec,
            human=COLOR_NAMES[session.human],
            turn=session.turn,
            games_played=session.games_played,
            analysis=None,
        )
        if search is not None:
            analysis = analysis_view(session.rules, search.analysis, search.side, view["player_name"])
            analysis.update(ply=search.ply, hint=search.hint)
            view["analysis"] = analysis
        if session.turn != "human":
            view["hops"] = []
        return jsonify(view)

    def with_session(sid: str, action: Callable[[GameSession], object]) -> Response:
        session = store.get(sid)
        with engine, session.lock:
            action(session)
            return state(session)

    @app.before_request
    def check_host() -> tuple[Response, int] | None:
        allowed = app.config[_HOSTS_KEY]
        name = _host_name(request.host)
        if allowed is None or name in allowed:
            return None
        return jsonify(error=f"this page answers only requests to {', '.join(sorted(allowed))}; got Host {name!r}"), 403

    # --- errors --------------------------------------------------------------------------
    @app.errorhandler(RequestError)
    def request_error(exc: RequestError) -> tuple[Response, int]:
        return jsonify(error=str(exc)), exc.status

    @app.errorhandler(TammiError)
    def engine_error(exc: TammiError) -> tuple[Response, int]:
        return jsonify(error=str(exc)), 400

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> tuple[Response, int]:
        status = exc.code or 500
        message = {
            404: f"no such page or API route: {request.path}",
            405: f"{request.method} is not allowed on {request.path}",
            413: f"request body too large (at most {MAX_REQUEST_BYTES} bytes)",
        }.get(status, exc.description or exc.name)
        return jsonify(error=message), status

    @app.errorhandler(Exception)
    def unexpected_error(exc: Exception) -> tuple[Response, int]:
        app.logger.exception("unexpected error on %s %s", request.method, request.path)
        what = "out of memory" if isinstance(exc, MemoryError) else f"{type(exc).__name__}: {exc}"
        return jsonify(error=f"internal error on {request.method} {request.path}: {what}"), 500

    # --- routes --------------------------------------------------------------------------
    @app.get("/")
    def index() -> Response:
        return app.send_static_file("index.html")

    @app.get("/api/variants")
    def variants() -> Response:
        listed = []
        for name in available_variants():
            listed.append({**variant_view(load_variant(name)), "default_player": default_for(name)})
        return jsonify(variants=listed, default_variant=variant)

    @app.post("/api/games")
    def create_game() -> Response:
        settings = settings_from(body(), None)
        with engine:
            session = store.create(settings)
            with session.lock:
                return state(session)

    @app.get("/api/games/<sid>")
    def get_game(sid: str) -> Response:
        return with_session(sid, lambda s: None)

    @app.post("/api/games/<sid>/new")
    def new_game(sid: str) -> Response:
        data = body()
        session = store.get(sid)
        settings = settings_from(data, session.settings)
        return with_session(sid, lambda s: s.new_game(settings))

    @app.post("/api/games/<sid>/hop")
    def hop(sid: str) -> Response:
        data = body()
        squares = []
        for key in ("from", "to"):
            value = int_field(data, key)
            if value is None:
                raise RequestError(f"a hop needs the field {key!r} (an internal square index)")
            squares.append(value)
        return with_session(sid, lambda s: s.play_hop(squares[0], squares[1]))

    @app.post("/api/games/<sid>/agent")
    def agent(sid: str) -> Response:
        return with_session(sid, lambda s: s.agent_move(think))

    @app.post("/api/games/<sid>/hint")
    def hint(sid: str) -> Response:
        return with_session(sid, lambda s: s.hint(think))

    @app.post("/api/games/<sid>/undo")
    def undo(sid: str) -> Response:
        return with_session(sid, lambda s: s.undo())

    @app.post("/api/games/<sid>/position")
    def position(sid: str) -> Response:
        fen = text_field(body(), "fen")
        if fen is None:
            raise RequestError("setting a position needs the field 'fen': a FEN string in the game's own notation")
        return with_session(sid, lambda s: s.set_position(fen))

    @app.get("/api/games/<sid>/pdn")
    def pdn(sid: str) -> Response:
        session = store.get(sid)
        with engine, session.lock:
            text = session.pdn()
            name = f"tammi-{session.rules.variant.name}-{session.id}.pdn"
        return Response(
            text,
            mimetype="application/x-pdn",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )

    return app


_JSON_KINDS = {list: "array", str: "string", int: "number", float: "number", bool: "boolean"}
_OBJECT_EXAMPLE = 'the request body must be a JSON object, e.g. {"fen": "W:W21:B12"}'


def parse_body(raw: bytes) -> dict[str, Any]:
    """A request body as a JSON object, or `RequestError` (HTTP 400) saying why it is not one.

    Parsed here rather than by Flask's ``get_json``, which lets a body nested thousands
    deep escape as ``RecursionError`` (HTTP 500) and hides why a body was refused."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RequestError(f"{_OBJECT_EXAMPLE}; the body is not UTF-8 (byte {exc.start})") from None
    try:
        data = json.loads(text)
    except RecursionError:
        raise RequestError(f"{_OBJECT_EXAMPLE}; the body is nested too deep to read") from None
    except ValueError as exc:
        raise RequestError(f"{_OBJECT_EXAMPLE}; the body is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        kind = "null" if data is None else _JSON_KINDS.get(type(data), type(data).__name__)
        raise RequestError(f"{_OBJECT_EXAMPLE}; got a JSON {kind}")
    return data


def _host_name(host: str) -> str:
    """The name in a ``Host`` header (``[::1]:8000`` -> ``::1``), lower-cased."""
    try:
        return urlsplit(f"//{host}").hostname or ""
    except ValueError:  # e.g. an unclosed "[" or a bad port
        return host.lower()


def make_web_server(app: Flask, host: str = "127.0.0.1", port: int = 8000) -> BaseWSGIServer:
    """A threaded WSGI server (werkzeug's) for ``app``, listening; port 0 picks a free one.
    Run it with ``serve_forever()``, stop it with ``shutdown()`` from another thread.

    ``app`` then also answers requests whose ``Host`` is ``host`` (besides the local
    names), or any ``Host`` when ``host`` is every address (`ANY_ADDRESS`)."""
    server = make_server(host, port, app, threaded=True)
    allowed = app.config.get(_HOSTS_KEY)
    if host in ANY_ADDRESS:
        app.config[_HOSTS_KEY] = None
    elif allowed is not None:
        allowed.add(host.strip("[]").lower())
    return server


def server_url(server: BaseWSGIServer) -> str:
    """The page's address on ``server``."""
    host = server.host
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{server.server_port}/"


def serve(app: Flask, host: str = "127.0.0.1", port: int = 8000, ready: Callable[[str], None] | None = None) -> None:
    """Serve ``app`` until interrupted; ``ready`` is called with the page's address once it listens."""
    server = make_web_server(app, host, port)
    if ready is not None:
        ready(server_url(server))
    try:
        server.serve_forever()
    finally:
        server.server_close()
