"""``tammi-rl export CHECKPOINT --onnx FILE | --model FILE``: the network for other runtimes,
or as a small playing checkpoint (how the shipped ``checkpoints/<variant>.pt`` are made).

With ``--onnx`` the model takes ``planes`` float32 ``[B, C, H, W]`` (`tammi_rl.env.observation`) and
returns ``logits`` ``[B, A]`` over hop actions (`tammi_rl.rules.actions`) and ``value``
``[B]`` in [-1, 1] for the side to move. Its metadata names the variant and the encoding,
so a reader can check it is feeding the right planes.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TextIO

from tammi_rl.atomic import atomic_write
from tammi_rl.env.observation import plane_names
from tammi_rl.nn.model import input_planes
from tammi_rl.nn.runtime import ENCODING_VERSION, onnx_bytes
from tammi_rl.nn.saved import SavedNetwork, load_network
from tammi_rl.rules.actions import codec_for
from tammi_rl.store.checkpoint import playing_checkpoint, save_checkpoint


def run_export_command(args: argparse.Namespace, out: TextIO | None = None) -> int:
    saved = load_network(args.checkpoint)
    if args.model:
        return export_playing_checkpoint(saved, args.model, out)
    rules = saved.rules
    size = rules.geometry.size
    planes = input_planes(saved.model)
    metadata = {
        "tammi_rl.variant": rules.variant.name,
        "tammi_rl.encoding_version": ENCODING_VERSION,
        "tammi_rl.planes": json.dumps(list(plane_names(planes))),
        "tammi_rl.input_shape": json.dumps([planes, size, size]),
        "tammi_rl.n_actions": str(codec_for(rules).n_actions),
        "tammi_rl.network": json.dumps(
            {
                "blocks": saved.network.blocks,
                "channels": saved.network.channels,
                "value_hidden": saved.network.value_hidden,
            }
        ),
        "tammi_rl.checkpoint": str(saved.path),
    }
    data = onnx_bytes(saved.model, (planes, size, size), metadata)
    atomic_write(args.onnx, lambda f: f.write(data))
    print(
        f"wrote {args.onnx}: {rules.variant.name} network {saved.network.blocks}x{saved.network.channels}, "
        f"{len(data):,} bytes",
        file=out,
    )
    return 0


def export_playing_checkpoint(saved: SavedNetwork, target: str, out: TextIO | None = None) -> int:
    """Write ``saved``'s checkpoint without its optimizer, RNG and worker state."""
    save_checkpoint(target, playing_checkpoint(saved.checkpoint))
    counters = saved.checkpoint.get("counters", {})
    print(
        f"wrote {target}: {saved.rules.variant.name} network {saved.network.blocks}x{saved.network.channels}, "
        f"iteration {counters.get('iteration', '?')}, {counters.get('games', '?')} games, "
        f"{Path(target).stat().st_size:,} bytes",
        file=out,
    )
    return 0
