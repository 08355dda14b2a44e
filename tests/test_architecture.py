"""The package's shape: layers that only point down, and documentation that stays inside.

The layer contract lives in pyproject.toml (``[tool.importlinter]``); import-linter checks
every import, function-local ones included, so a wrong-way import fails here.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "tammi_rl"


def contracts() -> list[dict]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


def test_import_contracts_hold() -> None:
    lint = Path(sys.executable).with_name("lint-imports")
    cmd = [str(lint)] if lint.exists() else [sys.executable, "-m", "importlinter.cli"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "broken" in done.stdout and " 0 broken" in done.stdout


def test_every_subpackage_has_a_layer() -> None:
    """A new top-level module or package cannot slip past the layer contract."""
    layers = next(c for c in contracts() if c["type"] == "layers")["layers"]
    named = {name.strip() for layer in layers for name in layer.split("|")}
    present = {
        f"tammi_rl.{p.stem}"
        for p in PACKAGE.iterdir()
        if (p.is_dir() and (p / "__init__.py").exists()) or (p.suffix == ".py" and p.stem != "__init__")
    }
    assert present == named, f"not in a layer: {sorted(present - named)}; gone: {sorted(named - present)}"


def test_no_reference_to_files_outside_the_repository() -> None:
    """The project documents itself: no pointer to design or rules files it does not ship."""
    outside = re.compile(r"DESIGN\.md|RULES\.md|\.\./shared")
    offenders = []
    for path in [
        *ROOT.glob("*.md"),
        ROOT / "pyproject.toml",
        *ROOT.glob("envs/**/*"),
        *ROOT.glob("configs/*"),
        *ROOT.glob("notebooks/*.ipynb"),
        *ROOT.glob("checkpoints/*.md"),
        *PACKAGE.rglob("*.py"),
        *ROOT.glob("tests/**/*.py"),
        *ROOT.glob("docs/**/*.md"),
    ]:
        if path.is_file() and path.name != Path(__file__).name and outside.search(path.read_text(errors="ignore")):
            offenders.append(str(path.relative_to(ROOT)))
    assert not offenders, offenders


def test_package_list_is_complete() -> None:
    """pyproject.toml lists every package, so a wheel never misses a new one."""
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(("tammi_rl", *p.parent.relative_to(PACKAGE).parts)) for p in PACKAGE.rglob("__init__.py")}
    assert found | {"tammi_rl.envs", "tammi_rl.checkpoints"} == listed
