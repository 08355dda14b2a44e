"""Register one Gymnasium id per variant file in ``envs/`` (``tammi/Russian-v0``, ...).

Called on ``import tammi_rl``; reads only the TOML files (no numba, no torch), so
importing the package stays light. The env itself is imported when an id is made.
"""

from __future__ import annotations

import gymnasium

from tammi_rl.rules.variant import ENVS_DIR, load_variant_file

ENTRY_POINT = "tammi_rl.env.draughts_env:DraughtsEnv"


def register_variants() -> list[str]:
    """Register every ``envs/*.toml`` variant that is not registered yet; return all their ids."""
    ids = []
    for path in sorted(ENVS_DIR.glob("*.toml")):
        try:
            variant = load_variant_file(path)
        except Exception:  # a broken user file must not break `import tammi_rl`
            continue
        ids.append(variant.gym_id)
        if variant.gym_id not in gymnasium.registry:
            shipped = path.stem == variant.name  # a name reuses the cached engine
            # No OrderEnforcing/PassiveEnvChecker wrappers: `make` returns the env itself, so
            # `action_masks()` (the sb3-contrib convention) is reachable on what `make` returns.
            gymnasium.register(
                id=variant.gym_id,
                entry_point=ENTRY_POINT,
                order_enforce=False,
                disable_env_checker=True,
                kwargs={"variant": variant.name if shipped else str(path)},
            )
    return ids
