"""Backward compatibility in one place: what older tammi-rl versions wrote, read as today's formats.

    counters = upgrade_counters(ckpt["counters"])          # a checkpoint's counters, any age
    data, notes = upgrade_retired_keys(yaml_mapping)        # a config with retired keys

Each function takes plain data (dicts, lists, numpy arrays, paths) as an older version
wrote it and returns it in today's format, so the code that reads checkpoints, run
directories and configs knows one format only; its docstring names the old format.
Nothing is written back: an old run is upgraded whenever it is read, and its next
checkpoint is written in today's format. This is the package's lowest layer: it imports
nothing else from tammi_rl.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

# --- configs ---------------------------------------------------------------------------
RETIRED_CONFIG_KEYS: dict[str, tuple[str | None, str]] = {
    "train.steps_per_iteration": (
        None,
        "the learner is paced by train.replay_ratio (samples trained per new sample) instead; "
        "the old 40 steps of 256 per ~2500-sample iteration is a ratio of about 4",
    ),
    "distributed.max_restarts": ("selfplay.max_restarts", "it now counts the deaths of workers and actors alike"),
    "distributed.games_per_actor": (None, "actors now send their games as they finish them"),
}
"""Keys older configs (and old runs' config.yaml) may hold: dotted key -> (its new key, or
None when it is dropped; why)."""


def upgrade_retired_keys(data: Any) -> tuple[Any, list[str]]:
    """A raw config mapping with the `RETIRED_CONFIG_KEYS` moved or dropped (a copy), and one
    note per key found (for the loader's warning).

    Old format: configs written before the replay ratio and the worker pools (with
    ``train.steps_per_iteration``, ``distributed.max_restarts``, ``distributed.games_per_actor``).
    A moved key does not replace its new key when both are set. Anything but a mapping is
    returned as it is (the loader says what is wrong with it)."""
    if not isinstance(data, dict):
        return data, []
    data = copy.deepcopy(data)
    notes: list[str] = []
    for old, (new, why) in RETIRED_CONFIG_KEYS.items():
        section, key = old.split(".")
        node = data.get(section)
        if not isinstance(node, dict) or key not in node:
            continue
        value = node.pop(key)
        if new is not None:
            new_section, new_key = new.split(".")
            target = data.setdefault(new_section, {})
            if isinstance(target, dict):
                target.setdefault(new_key, value)
        moved = f"moved to {new}" if new else "ignored"
        notes.append(f"key '{old}' is retired and {moved}: {why}")
    return data, notes


DEFAULTS_BEFORE_THE_RECIPE: dict[str, Any] = {
    "threads": 0,
    "runtime": "auto",
    "network.blocks": 6,
    "network.channels": 64,
    "mcts.simulations": 64,
    "mcts.gumbel_c_scale": 1.0,
    "mcts.temperature_plies": 20,
    "mcts.play_forced_hops": False,
    "selfplay.games_per_iteration": 64,
    "selfplay.parallel_games": 64,
    "selfplay.max_plies": 300,
    "selfplay.resign_playout_fraction": 0.1,
    "replay.capacity": 200_000,
    "train.iterations": 100,
    "train.hours": 0.0,
    "train.lr": 1e-3,
    "train.value_target_search_weight": 0.0,
    "eval.every": 5,
    "eval.alphabeta_depths": [1, 2],
}
"""The defaults these keys had until the defaults became the shipped Russian CPU recipe
(``configs/russian.yaml``, since which a config states only what differs from it)."""


def upgrade_saved_config(config: Any) -> Any:
    """A config a run saved (its run directory's ``config.yaml``, or a checkpoint's ``config``)
    with each `DEFAULTS_BEFORE_THE_RECIPE` key it lacks set to that old default (a copy).

    Old format: a run saves its whole resolved config, so a config saved before a key existed
    lacks it, and that key's default once stood for the behaviour the run had; since the
    defaults became the recipe, some of those defaults say otherwise. Of these keys only
    ``runtime``, ``mcts.play_forced_hops``, ``train.hours`` and
    ``train.value_target_search_weight`` came after the first saved configs; the others fill
    partial configs (hand-made checkpoints) with what they meant before. The ``network``
    section gets `upgrade_network`'s keys, so it names the same network as the checkpoint's
    own ``network`` entry. Not for config files
    a user writes: they mean today's defaults. Anything but a mapping, and a section that is
    not one, is left as it is (the loader says what is wrong with it)."""
    if not isinstance(config, dict):
        return config
    data = copy.deepcopy(config)
    for dotted, value in DEFAULTS_BEFORE_THE_RECIPE.items():
        *sections, key = dotted.split(".")
        node: Any = data
        for section in sections:
            node = node.setdefault(section, {}) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node.setdefault(key, copy.copy(value))
    if isinstance(data.get("network"), dict):  # as the checkpoint's own network is read
        data["network"] = upgrade_network(data["network"])
    return data


# --- checkpoints -----------------------------------------------------------------------
NETWORK_KEYS_ADDED: dict[str, Any] = {
    "global_pooling": False,
    "soft_policy": False,
    "ownership": False,
    "short_value": False,
    "opponent_policy": False,
    "attack_planes": False,
}
"""Network settings later versions added, with the value that describes a network from before them."""


def upgrade_network(network: Mapping[str, Any]) -> dict[str, Any]:
    """A checkpoint's ``network`` (its shape and heads) with every key today's
    ``NetworkConfig`` has (a copy).

    Old format: checkpoints from before global pooling, the soft policy target and the
    ownership, short-horizon value and opponent-reply heads hold only ``blocks``,
    ``channels`` and ``value_hidden``; such a network has none of those (all False), whatever
    today's defaults say. Checkpoints from before the attack planes lack that key alone, and
    read 11 planes."""
    return {**NETWORK_KEYS_ADDED, **network}


COUNTERS_ADDED: dict[str, Any] = {
    "worker_restarts": 0,
    "pace_ratio": 0.0,
    "pace_positions": 0,
    "pace_samples": 0,
    "seconds": 0.0,
    "eval_seconds": 0.0,
    "budget_spent": False,
}
"""Progress counters later versions added, with the value that describes a run from before them."""


def upgrade_counters(counters: Mapping[str, Any]) -> dict[str, Any]:
    """A checkpoint's ``counters`` with every key today's trainer reads (a copy).

    Old formats, each lacking the keys added since:

    - before worker pools: no ``worker_restarts`` (no worker was ever replaced: 0);
    - before the replay-ratio pacing counted from where the ratio took effect: no
      ``pace_ratio``, ``pace_positions``, ``pace_samples`` (0: no ratio set, so the
      resume sets one and counts from there);
    - before the run's wall time was kept: no ``seconds`` (0: the clock starts at the resume);
    - before ``train.hours``: no ``eval_seconds`` and ``budget_spent`` (no evaluation
      timed yet; no budget ended the run).
    """
    return {**COUNTERS_ADDED, **counters}


def upgrade_learner_state(state: Mapping[str, Any]) -> dict[str, Any]:
    """A checkpoint's ``learner`` state without what today's learner does not restore (a copy).

    Old format: checkpoints from before the learning rate followed the run's progress hold a
    ``scheduler`` entry (the state of a torch LR scheduler); the rate now follows from the
    progress alone, so it is dropped."""
    return {key: value for key, value in state.items() if key != "scheduler"}


def upgrade_selfplay_state(state: Mapping[str, Any]) -> dict[str, Any]:
    """An in-process self-play worker's saved state with a search value and a policy surprise
    for every record of its games in progress (a copy).

    Old formats: checkpoints from before search values were kept in the samples: the games
    have no ``values``; each record gets NaN, which the worker reads as "no search value"
    and replaces with the game's outcome when the game ends. Checkpoints from before the
    policy surprise was kept have no ``surprise``; each record gets NaN, "not measured",
    which the learner weighs as an average sample. Checkpoints from before the opponent-reply
    target have no ``record_move``/``record_first_hop``; each record gets move -1, "not
    known", and its sample no reply target."""
    out = dict(state)
    if "games" in out:
        games = []
        for game in out["games"]:
            n = len(game["sides"])
            game = game if "values" in game else {**game, "values": np.full(n, np.nan, np.float32)}
            game = game if "surprise" in game else {**game, "surprise": np.full(n, np.nan, np.float32)}
            if "record_move" not in game:
                game = {**game, "record_move": np.full(n, -1, np.int64), "record_first_hop": np.zeros(n, bool)}
            games.append(game)
        out["games"] = games
    return out


PLAY_SETTINGS_BEFORE_THEIR_KEYS: dict[str, Any] = {"algorithm": "puct", "play_forced_hops": False}
"""What a run saved before ``eval.algorithm`` / ``eval.play_forced_hops`` existed plays with."""


def upgrade_checkpoint_config(config: object) -> dict[str, Any]:
    """A checkpoint's saved run ``config`` with the sections (``train``, ``mcts``, ``eval``) and
    keys a resume and a player read (a copy): `upgrade_saved_config`'s (``train.hours`` among
    them: 0, no budget, for runs from before it), and the agent's play settings.

    Old formats:

    - a checkpoint without a config (none is required to load one): read as a saved config
      that lacks every key;
    - runs from before ``eval.algorithm``: the agent plays PUCT;
    - runs from before ``eval.play_forced_hops``: the agent searches every hop (off).

    Runs from before ``eval.repetition_draws`` are not pinned to its old behaviour: they play
    with today's default, as it changes how the agent searches, not what it learned.
    """
    data: dict[str, Any] = upgrade_saved_config(config if isinstance(config, dict) else {})
    for section in ("train", "mcts", "eval"):
        data.setdefault(section, {})
    if isinstance(data["eval"], dict):
        for key, value in PLAY_SETTINGS_BEFORE_THEIR_KEYS.items():
            data["eval"].setdefault(key, value)
    return data


# --- run directories -------------------------------------------------------------------
def upgrade_replay_snapshot(arrays: Mapping[str, np.ndarray], squares: int | None = None) -> dict[str, np.ndarray]:
    """The arrays of a replay snapshot or chunk (``ReplayBuffer.snapshot``, ``save_chunks``)
    in format 4 (a copy); ``squares``, the board's playable squares, sizes the ownership labels
    a format-3 file lacks (None: half the board's cells).

    Old formats: format 1, written before samples kept their search value, has no ``value``
    array; each sample's value is its game's outcome, seen by the side to move (the codes
    format 1 wrote: 0 a win +1, 1 a draw 0, 2 a loss -1). Format 2, written before samples
    kept their policy surprise, has no ``surprise`` array; each sample gets NaN, "not
    measured", which the learner weighs as an average sample. Format 3, written before samples
    kept their ownership, short-horizon value and opponent-reply targets, has no
    ``ownership``, ``short_value``, ``reply_legal`` or ``reply_policy`` array; every square of
    every sample gets -1, every short value NaN and every reply no legal hop, "not recorded",
    which the learner leaves out of those losses."""
    out = dict(arrays)
    if int(out["version"]) == 1:
        outcome = out["outcome"]
        out["value"] = np.select([outcome == 0, outcome == 2], [1.0, -1.0], 0.0).astype(np.float32)
        out["version"] = np.array(2)
    if int(out["version"]) == 2:
        out["surprise"] = np.full(len(out["outcome"]), np.nan, np.float16)
        out["version"] = np.array(3)
    if int(out["version"]) == 3:
        if squares is None:  # the dark half of the board, right for every variant but Turkish
            height, width = out["obs"].shape[-2:]
            squares = height * width // 2
        out["ownership"] = np.full((len(out["outcome"]), squares), -1, np.int8)
        out["short_value"] = np.full(len(out["outcome"]), np.nan, np.float16)
        out["reply_legal"] = np.full(out["legal"].shape, -1, np.int16)
        out["reply_policy"] = np.zeros(out["policy"].shape, np.float16)
        out["version"] = np.array(4)
    return out


def one_file_replay_snapshot(run_root: str | Path) -> Path:
    """Where a run directory written before chunked replay saves kept its buffer.

    Old format: one ``replay.npz`` at the run's root (a `ReplayBuffer.snapshot`, rewritten at
    every checkpoint), where runs now keep ``replay/chunk_<first>_<end>.npz``; read on resume
    when the run has no chunks."""
    return Path(run_root) / "replay.npz"
