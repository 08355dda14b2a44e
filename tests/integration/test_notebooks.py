"""The notebooks in notebooks/ run top to bottom, on a smoke run made here.

Each notebook takes its inputs from one cell tagged ``parameters`` (papermill style);
the test appends its own values to that cell (small settings, paths into tmp_path) and
executes the notebook with nbclient in a fresh kernel. Any cell error fails the test.

The kernel is this interpreter: a kernel spec written to a temporary JUPYTER_PATH runs
``sys.executable -m ipykernel_launcher``, so the test needs only the ``ipykernel``
package (no ``ipykernel install``), and a user's own ``python3`` kernel cannot be picked
up by mistake.
"""

from __future__ import annotations

import ast
import json
import os
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

NOTEBOOKS_DIR = Path(__file__).resolve().parents[2] / "notebooks"
SMOKE_CONFIG = Path(__file__).resolve().parents[2] / "configs" / "smoke.yaml"
KERNEL_NAME = "tammi-rl-notebook-test"
CELL_TIMEOUT_S = 300

NOTEBOOKS = ["01_rules_and_env.ipynb", "02_training_run.ipynb", "03_inspect_agent.ipynb"]


@pytest.fixture(scope="session")
def smoke_run(tmp_path_factory) -> Path:
    """A finished smoke run (configs/smoke.yaml: 2 iterations, checkpoints, one evaluation)."""
    from tammi_rl.config import load_config
    from tammi_rl.train.trainer import train

    root = tmp_path_factory.mktemp("notebook_run")
    cfg = load_config(SMOKE_CONFIG, overrides=[f"runs_dir={root / 'runs'}", f"checkpoints_dir={root / 'checkpoints'}"])
    with open(os.devnull, "w") as quiet:
        summary = train(cfg, out=quiet)
    assert (summary.run_dir / "checkpoints" / "latest.pt").is_file()
    return summary.run_dir


@pytest.fixture(scope="session")
def kernel_path(tmp_path_factory):
    """JUPYTER_PATH with a kernel spec that runs this interpreter."""
    root = tmp_path_factory.mktemp("jupyter")
    spec_dir = root / "kernels" / KERNEL_NAME
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "tammi-rl tests",
        "language": "python",
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec), encoding="utf-8")
    old = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = str(root) + (os.pathsep + old if old else "")
    yield root
    if old is None:
        os.environ.pop("JUPYTER_PATH", None)
    else:
        os.environ["JUPYTER_PATH"] = old


def parameters_cell(nb) -> nbformat.NotebookNode:
    cells = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(cells) == 1, f"expected one cell tagged 'parameters', found {len(cells)}"
    assert cells[0].cell_type == "code"
    return cells[0]


def parameter_names(cell) -> set[str]:
    tree = ast.parse(cell.source)
    return {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)}


def inject(nb, params: dict) -> None:
    """Append ``name = value`` lines to the parameters cell (each name must be a parameter)."""
    cell = parameters_cell(nb)
    unknown = set(params) - parameter_names(cell)
    assert not unknown, f"not parameters of this notebook: {sorted(unknown)}"
    lines = [f"{name} = {value!r}" for name, value in params.items()]
    cell.source += "\n\n# injected by tests/integration/test_notebooks.py\n" + "\n".join(lines) + "\n"


def notebook_params(name: str, run_dir: Path) -> dict:
    if name.startswith("01"):
        return {"variant": "russian", "moves": 4, "seed": 1}
    if name.startswith("02"):
        return {
            "run_dir": str(run_dir),
            "ladder_games": 2,
            "ladder_opponents": ["alphabeta:depth=1,tt_bits=12"],
            "ladder_simulations": 4,
            "ladder_max_plies": 20,
        }
    if name.startswith("03"):
        return {
            "checkpoint": str(run_dir),
            "simulations": 8,
            "device": "cpu",
            "opponent": "alphabeta:depth=1,tt_bits=12",
            "max_plies": 12,
        }
    raise AssertionError(f"no test parameters for {name}")


def test_every_notebook_is_tested():
    assert sorted(p.name for p in NOTEBOOKS_DIR.glob("*.ipynb")) == sorted(NOTEBOOKS)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_committed_clean(name):
    """One parameters cell, and no outputs or execution counts (outputs are not committed)."""
    nb = nbformat.read(NOTEBOOKS_DIR / name, as_version=4)
    nbformat.validate(nb)
    parameters_cell(nb)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert not cell.outputs, f"{name}: cell {i} has outputs; clear them before committing"
            assert cell.execution_count is None, f"{name}: cell {i} has an execution count"


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs(name, smoke_run, kernel_path, tmp_path):
    nb = nbformat.read(NOTEBOOKS_DIR / name, as_version=4)
    inject(nb, notebook_params(name, smoke_run))
    client = NotebookClient(
        nb, kernel_name=KERNEL_NAME, timeout=CELL_TIMEOUT_S, resources={"metadata": {"path": str(tmp_path)}}
    )
    try:
        client.execute()
    except CellExecutionError as exc:
        pytest.fail(f"{name} failed:\n{exc}", pytrace=False)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
    # every code cell ran, and the pictures were made
    assert all(c.execution_count for c in nb.cells if c.cell_type == "code" and c.source.strip())
    kinds = {k for c in nb.cells if c.cell_type == "code" for o in c.outputs for k in o.get("data", {})}
    assert "image/png" in kinds  # matplotlib figures
    if not name.startswith("02"):
        assert kinds & {"image/svg+xml", "text/html"}  # SVG boards
