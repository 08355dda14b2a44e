"""The web page: play any variant against any player in a browser, with the agent's analysis.

    tammi-rl serve --port 8000 --player alphabeta:depth=6     # then open http://127.0.0.1:8000/

`tammi_rl.web.app` holds the Flask app and its JSON API, `tammi_rl.web.sessions` the
games being played (a bounded store), `tammi_rl.web.views` the JSON the page draws, and
``static/`` the page itself (plain HTML, CSS and JavaScript, no build step, nothing
fetched from elsewhere).
"""

from __future__ import annotations

from tammi_rl.web.app import create_app, make_web_server, serve, server_url

__all__ = ["create_app", "make_web_server", "serve", "server_url"]
