"""tammi-rl: AlphaZero-style reinforcement learning for draughts (tammi)."""

__version__ = "0.1.0"
