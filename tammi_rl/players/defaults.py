"""The player a front end offers when none is named: the variant's shipped model, else alpha-beta."""

from __future__ import annotations

from tammi_rl.store.shipped import shipped_models

FALLBACK_SPEC = "alphabeta:depth=6"
"""The player of a variant that ships no trained model."""


def default_player_spec(variant: str, simulations: int = 400) -> str:
    """``mcts:model=VARIANT,sims=N`` where a model ships for ``variant``, else `FALLBACK_SPEC`."""
    if variant in shipped_models():
        return f"mcts:model={variant},sims={simulations}"
    return FALLBACK_SPEC
