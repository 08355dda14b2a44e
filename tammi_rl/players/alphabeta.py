"""The alpha-beta baseline as a player, and its ``alphabeta:...`` spec (alias ``ab``)."""

from __future__ import annotations

from tammi_rl.alphabeta.driver import MAX_DEPTH, AlphaBeta, AlphaBetaConfig, AlphaBetaResult
from tammi_rl.alphabeta.heuristic import EvalWeights
from tammi_rl.players.base import Player
from tammi_rl.players.spec import PlayerSpecError, float_option, int_option, reject_unknown
from tammi_rl.rules.engine import Rules
from tammi_rl.rules.game import Game
from tammi_rl.rules.position import Move

MAX_WEIGHT = 100_000
"""Largest evaluation weight a spec may set (a man is 100)."""


class AlphaBetaPlayer:
    """The alpha-beta baseline (`tammi_rl.alphabeta`); ``last`` holds the last `AlphaBetaResult`."""

    def __init__(
        self, rules: Rules, config: AlphaBetaConfig | None = None, seed: int | None = None, name: str | None = None
    ) -> None:
        self.config = config or AlphaBetaConfig()
        self.search = AlphaBeta(rules, self.config, seed=seed)
        self.seed = seed
        self.last: AlphaBetaResult | None = None
        self.name = name or _describe("alphabeta", self.config, seed)

    def choose(self, game: Game) -> Move:
        result = self.search.search(game.position, game.reversible_history())
        self.last = result
        return result.move

    def new_game(self, seed: int | None = None) -> None:
        self.search.new_game(seed)


def _describe(kind: str, config: object, seed: int | None) -> str:
    parts = [f"{k}={getattr(config, k)}" for k in ("depth", "time", "nodes", "margin") if getattr(config, k)]
    if seed is not None:
        parts.append(f"seed={seed}")
    return f"{kind}({','.join(parts)})"


def make_alphabeta_player(rules: Rules, options: dict[str, str], spec: str) -> Player:
    """Factory behind ``alphabeta[:depth=D,time=T,nodes=N,margin=M,seed=S,tt_bits=B,<weight>=V]``:
    ``<weight>`` is any evaluation weight (``king=320``). Default ``depth=6``; giving only
    ``time`` or ``nodes`` removes the depth limit."""
    weight_names = set(EvalWeights.__dataclass_fields__)
    reject_unknown(spec, options, {"depth", "time", "nodes", "margin", "seed", "tt_bits", "name"} | weight_names)
    kwargs: dict[str, object] = {}
    if "depth" in options:
        kwargs["depth"] = int_option(spec, "depth", options["depth"], 1)
        if options["depth"] and int(options["depth"]) > MAX_DEPTH:
            raise PlayerSpecError(f"player spec {spec!r}: depth must be <= {MAX_DEPTH}, got {options['depth']}")
    elif "time" in options or "nodes" in options:
        kwargs["depth"] = None
    if "time" in options:
        kwargs["time"] = float_option(spec, "time", options["time"])
    if "nodes" in options:
        kwargs["nodes"] = int_option(spec, "nodes", options["nodes"], 1)
    if "margin" in options:
        kwargs["margin"] = int_option(spec, "margin", options["margin"], 0)
    if "tt_bits" in options:
        kwargs["tt_bits"] = int_option(spec, "tt_bits", options["tt_bits"], 4)
        if int(options["tt_bits"]) > 28:
            raise PlayerSpecError(f"player spec {spec!r}: tt_bits must be <= 28, got {options['tt_bits']}")
    weights = {k: int_option(spec, k, v) for k, v in options.items() if k in weight_names}
    for key, weight in weights.items():
        if abs(weight) > MAX_WEIGHT:  # larger ones overflow the evaluation tables and the mate bound
            raise PlayerSpecError(f"player spec {spec!r}: {key} must be within +-{MAX_WEIGHT}, got {weight}")
    if weights:
        kwargs["weights"] = weights
    seed = int_option(spec, "seed", options["seed"]) if "seed" in options else None
    try:
        config = AlphaBetaConfig(**kwargs)  # type: ignore[arg-type]
    except ValueError as exc:
        raise PlayerSpecError(f"player spec {spec!r}: {exc}") from None
    return AlphaBetaPlayer(rules, config, seed=seed, name=options.get("name"))
