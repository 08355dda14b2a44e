"""Gymnasium/PettingZoo environments: hop actions, observation planes, renderers, wrappers.

Submodules are imported on use (``tammi_rl.env.draughts_env`` pulls in numba).
"""
