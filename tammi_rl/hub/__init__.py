"""``tammi-rl hub``: a Hub-protocol engine on stdin/stdout, for draughts GUIs and pydraughts.

The protocol is Scan 3.x's Hub (version 2). The GUI sends ``hub`` (answered by ``id``,
``param`` lines and ``wait``), ``set-param name=... value=...``, ``init`` (``ready``),
``pos pos=<position> [moves="..."]``, ``level ...``, ``go think|ponder|analyze``
(``info`` lines, then ``done move=... [ponder=...]``), ``stop``, ``ponder-hit``,
``new-game``, ``ping`` (``pong``) and ``quit``; anything wrong is answered with
``error message="..."``.

Modules: `protocol` (reading and writing lines), `notation` (Hub squares, positions and
moves), `level` (time controls as search limits), `engine` (the state and the loop).
Variants: ``normal`` (International), ``russian``, ``brazilian``; others are refused.
Squares are numbered as pydraughts' `HubEngine` sends them, so its ``play(board)`` works
on every variant: positions in the standard order (b8 = 1 on 8x8), moves in each board's
own numbering (International 1-50 as in the positions; Russian and Brazilian from a1 = 1).
"""

from tammi_rl.hub.engine import HUB_VARIANTS, HubEngine
from tammi_rl.hub.notation import HubNotation, HubNotationError

__all__ = ["HUB_VARIANTS", "HubEngine", "HubNotation", "HubNotationError"]
