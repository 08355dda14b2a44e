"""tammi-rl: AlphaZero-style reinforcement learning for draughts (tammi).

Importing the package first drops numba caches whose inlined dependencies changed
(`tammi_rl.jit_cache`), then registers one Gymnasium id per shipped variant.
"""

from tammi_rl.jit_cache import refresh_caches as _refresh_caches

_refresh_caches()

from tammi_rl.env.registration import register_variants as _register_variants  # noqa: E402

__version__ = "0.1.0"

_register_variants()
