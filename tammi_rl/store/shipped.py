"""Trained models that ship with tammi-rl, one per variant: ``checkpoints/<variant>.pt``.

    shipped_models()                    # {"russian": Path(".../checkpoints/russian.pt"), ...}
    shipped_model("russian")            # that path, or ShippedModelError naming what ships

They are ordinary checkpoints, installed as the data package ``tammi_rl.checkpoints``, so
an editable install and a wheel find them alike; their model cards are in
``checkpoints/README.md``. A name is a variant name (``russian``): a player spec says
``mcts:model=russian``, `tammi-rl eval russian` rates it. Training runs export to the same
directory as ``<run name>-latest.pt``; those never count as shipped.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from tammi_rl.rules.errors import TammiError

LOCAL_EXPORT_SUFFIX = "-latest"
"""Training exports (``<run>-latest.pt``) share the directory; they are not shipped models."""


class ShippedModelError(TammiError):
    """No shipped model has the name asked for (the message lists the ones that ship)."""


def models_dir() -> Path:
    """Where the shipped models are (the ``tammi_rl.checkpoints`` data package)."""
    return Path(str(resources.files("tammi_rl.checkpoints")))


def shipped_models(directory: Path | None = None) -> dict[str, Path]:
    """Every shipped model by name (the file's stem), sorted by name."""
    folder = directory if directory is not None else models_dir()
    found = {
        path.stem: path
        for path in folder.glob("*.pt")
        if not path.stem.endswith(LOCAL_EXPORT_SUFFIX) and path.is_file()
    }
    return dict(sorted(found.items()))


def shipped_model(name: str, directory: Path | None = None) -> Path:
    """The file of the shipped model ``name``; `ShippedModelError` lists the names that ship."""
    models = shipped_models(directory)
    key = name.strip().lower()
    if key in models:
        return models[key]
    known = ", ".join(models) if models else "none (this install ships no trained model)"
    raise ShippedModelError(f"no shipped model named {name!r}; shipped models: {known}")
