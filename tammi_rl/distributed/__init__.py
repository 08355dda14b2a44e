"""Distributed self-play: the same self-play workers on Ray actors, for more than one machine.

`tammi_rl.distributed.ray_backend` runs self-play workers as Ray actors behind the
trainer's `SelfPlayBackend` interface; the learner stays on the driver. Nothing here
imports Ray at package import time, so ``import tammi_rl`` works without it.
"""

from __future__ import annotations

RAY_INSTALL_HINT = "pip install 'tammi-rl[ray]'  (or: pip install 'ray[default]>=2.9')"
