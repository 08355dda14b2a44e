"""tammi-rl: AlphaZero-style reinforcement learning for draughts (tammi)."""

__version__ = "0.1.0"

from tammi_rl.env.registration import register_variants as _register_variants  # noqa: E402

_register_variants()
