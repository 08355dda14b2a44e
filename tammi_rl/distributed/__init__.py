"""Self-play beside the learner: worker pools on this machine or on a Ray cluster.

`tammi_rl.distributed.pool` states what the asynchronous trainer needs from a pool;
`processes` runs the workers as processes on this machine (weights through the
shared-memory board of `weights`), `ray_backend` as Ray actors, and `inference` holds the
GPU inference server that batches the workers' positions. Nothing here imports Ray at
package import time, so ``import tammi_rl`` works without it.
"""

from __future__ import annotations

RAY_INSTALL_HINT = "pip install 'tammi-rl[ray]'  (or: pip install 'ray[default]>=2.9')"
