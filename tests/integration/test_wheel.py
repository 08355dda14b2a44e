"""A built wheel works on its own: variants, openings, Gymnasium ids and the CLI, from anywhere.

The variant files (``envs/``) and shipped models (``checkpoints/``) live at the repository
root and travel as the data packages ``tammi_rl.envs`` and ``tammi_rl.checkpoints``
(pyproject.toml). Here the project is built as a wheel and an sdist from a copy of the
checkout (an in-tree build would write ``build/`` into the checkout and reuse whatever a
stale ``build/lib`` holds), with junk planted in the copy that must stay out. The wheel is
installed with ``--no-deps`` into a fresh virtual environment that borrows this
environment's numpy, numba, torch and gymnasium (``--system-site-packages``) and is run
from a directory outside the checkout.

This environment's editable install must not stand in for the wheel: its finder (a
``.pth`` file in the base site-packages, which the venv reads too) maps ``tammi_rl`` and
the data packages onto the checkout, and it would quietly supply ``tammi_rl.envs`` if the
wheel lacked it. The venv gets a ``sitecustomize`` that drops that finder, and the test
checks that every ``tammi_rl`` module and data folder in use lies inside the venv.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
VARIANT_NAMES = sorted(p.stem for p in (ROOT / "envs").glob("*.toml"))
OPENING_NAMES = sorted(p.name for p in (ROOT / "envs" / "openings").glob("*.txt"))
RUSSIAN_PERFT_3 = 302  # tests/rules/test_perft.py PUBLISHED["russian"][2]

# Planted in the copy: (path, must it ship?). Shipped models are <variant>.pt; the trainer
# exports `<run>-latest.pt` into the same folder, and runs/ holds whole training runs.
PLANTED = {
    "checkpoints/english.pt": True,
    "checkpoints/russian-latest.pt": False,
    "runs/russian/checkpoints/ckpt_000001.pt": False,
    "runs/russian/metrics.csv": False,
    "envs/notes.txt": False,
}

SHIPPED_NAMES = {"russian.pt", "english.pt", "italian.pt", "turkish.pt", "international.pt"}

DROP_EDITABLE_FINDER = """\
# Written by tests/integration/test_wheel.py: hide the base environment's editable install of tammi_rl.
import sys
sys.meta_path[:] = [f for f in sys.meta_path
                    if not getattr(f, "__module__", "").startswith("__editable___tammi_rl")]
"""

PROBE = """\
import json, sys
from importlib import resources
import gymnasium, tammi_rl
from tammi_rl.eval.openings import OPENINGS_DIR
from tammi_rl.rules.variant import ENVS_DIR, available_variants
from tammi_rl.store.shipped import shipped_models
env = gymnasium.make("tammi/Russian-v0")
env.reset(seed=0)
ids = sorted(i for i in gymnasium.registry if i.startswith("tammi/"))
outside = sorted(name for name, module in sys.modules.items() if name.startswith("tammi_rl")
                 and getattr(module, "__file__", None) and not module.__file__.startswith(sys.prefix))
print(tammi_rl.__file__)
print(json.dumps({"prefix": sys.prefix, "envs_dir": str(ENVS_DIR), "openings_dir": str(OPENINGS_DIR),
                  "variants": available_variants(), "ids": ids, "outside": outside,
                  "openings": sorted(p.name for p in OPENINGS_DIR.glob("*.txt")),
                  "checkpoints": str(resources.files("tammi_rl.checkpoints")),
                  "models": sorted(p.name for p in resources.files("tammi_rl.checkpoints").iterdir()
                                   if p.name.endswith(".pt")),
                  "shipped": sorted(shipped_models())}))
"""


def _ignore(directory: str, names: list[str]) -> set[str]:
    """What the copy leaves out: VCS, caches, build outputs, runs, local (big) checkpoints."""
    top = Path(directory) == ROOT
    skip = set()
    for name in names:
        if (
            name in ("__pycache__", ".git")
            or name.endswith((".pyc", ".nbi", ".nbc", ".egg-info"))
            or (top and (name.startswith(".") or name in ("build", "dist", "runs")))
            or (name.endswith(".pt") and name not in SHIPPED_NAMES)
        ):
            skip.add(name)
    return skip


def _run(args: list, cwd: Path, env: dict | None = None, timeout: int = 300) -> str:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{args} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _pip_wheel(source: Path, out: Path) -> Path:
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-w",
            out,
            source,
        ],
        cwd=source,
    )
    (wheel,) = out.glob("tammi_rl-*.whl")
    return wheel


@pytest.fixture(scope="module")
def build(tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("wheel")
    source = base / "src"
    shutil.copytree(ROOT, source, ignore=_ignore)
    for rel in PLANTED:
        (source / rel).parent.mkdir(parents=True, exist_ok=True)
        (source / rel).write_bytes(b"planted by tests/integration/test_wheel.py\n")

    wheel = _pip_wheel(source, base / "dist")
    sdist = Path(
        _run(
            [
                sys.executable,
                "-c",
                "import sys; from setuptools import build_meta; print(build_meta.build_sdist(sys.argv[1]))",
                base / "sdist",
            ],
            cwd=source,
        )
        .strip()
        .splitlines()[-1]
    )
    sdist = base / "sdist" / sdist.name

    venv = base / "venv"
    _run([sys.executable, "-m", "venv", "--system-site-packages", venv], cwd=base)
    python = venv / "bin" / "python"
    purelib = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=base)
    (Path(purelib.strip()) / "sitecustomize.py").write_text(DROP_EDITABLE_FINDER)
    if sys.prefix != sys.base_prefix:  # tests in a venv: the nested one would borrow the base's packages, not these
        outer = [p for p in site.getsitepackages() if Path(p).resolve().is_relative_to(Path(sys.prefix).resolve())]
        (Path(purelib.strip()) / "borrowed_env.pth").write_text("".join(f"{p}\n" for p in outer))
    _run(
        [
            python,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
            "--no-index",
            "--ignore-installed",
            wheel,
        ],
        cwd=base,
    )

    outside = base / "elsewhere"  # neither the checkout nor the venv
    outside.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    return {
        "base": base,
        "wheel": wheel,
        "sdist": sdist,
        "venv": venv,
        "python": python,
        "purelib": Path(purelib.strip()),
        "cwd": outside,
        "env": env,
    }


def test_wheel_carries_the_data_and_no_junk(build):
    names = set(zipfile.ZipFile(build["wheel"]).namelist())
    for variant in VARIANT_NAMES:
        assert f"tammi_rl/envs/{variant}.toml" in names
    for opening in OPENING_NAMES:
        assert f"tammi_rl/envs/openings/{opening}" in names
    assert {"tammi_rl/envs/__init__.py", "tammi_rl/checkpoints/__init__.py", "tammi_rl/checkpoints/README.md"} <= names
    for rel, ships in PLANTED.items():
        in_wheel = any(name.endswith(Path(rel).name) for name in names)
        assert in_wheel == ships, (rel, ships)
    top = {name.split("/")[0] for name in names}
    assert all(t == "tammi_rl" or t.endswith(".dist-info") for t in top), top
    assert not any(part in ("runs", "tests", "__pycache__", "build") for name in names for part in name.split("/")), (
        "junk in the wheel"
    )


def test_sdist_carries_the_data_and_builds_the_same_wheel(build):
    with tarfile.open(build["sdist"]) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
        extract = build["base"] / "unpacked"
        if hasattr(tarfile, "data_filter"):
            tar.extractall(extract, filter="data")
        else:  # pragma: no cover - Python < 3.11.4
            tar.extractall(extract)
    for variant in VARIANT_NAMES:
        assert f"envs/{variant}.toml" in names
    for opening in OPENING_NAMES:
        assert f"envs/openings/{opening}" in names
    assert {"pyproject.toml", "envs/__init__.py", "checkpoints/__init__.py", "checkpoints/english.pt"} <= names
    assert not any(name.startswith("runs/") or name.endswith("-latest.pt") for name in names)

    (root,) = extract.iterdir()
    again = _pip_wheel(root, build["base"] / "dist-from-sdist")
    assert set(zipfile.ZipFile(again).namelist()) == set(zipfile.ZipFile(build["wheel"]).namelist())


def test_installed_cli_runs_perft_and_lists_variants(build):
    bin_dir = build["venv"] / "bin"
    out = _run([bin_dir / "tammi-rl", "perft", "russian", "3"], cwd=build["cwd"], env=build["env"])
    assert out.strip().splitlines()[-1].strip() == str(RUSSIAN_PERFT_3), out
    out = _run([bin_dir / "tammi-rl", "variants"], cwd=build["cwd"], env=build["env"])
    listed = [line.split()[0] for line in out.strip().splitlines() if line.strip()]
    assert {"russian", "english", "italian", "turkish"} <= set(listed), out
    assert sorted(listed) == VARIANT_NAMES, out


def test_installed_package_makes_gymnasium_envs_from_its_own_files(build):
    out = _run([build["python"], "-c", PROBE], cwd=build["cwd"], env=build["env"])
    package_file, probe = out.strip().splitlines()[-2:]
    probe = json.loads(probe)
    venv = str(build["venv"].resolve())
    assert Path(probe["prefix"]).resolve() == build["venv"].resolve()
    assert Path(package_file).resolve().is_relative_to(venv), package_file
    assert not Path(package_file).resolve().is_relative_to(ROOT), package_file
    assert probe["outside"] == [], f"tammi_rl modules loaded from outside the venv: {probe['outside']}"
    for key in ("envs_dir", "openings_dir", "checkpoints"):
        assert Path(probe[key]).resolve().is_relative_to(venv), (key, probe[key])
    assert probe["variants"] == VARIANT_NAMES
    assert probe["openings"] == OPENING_NAMES
    assert "english.pt" in probe["models"] and set(probe["models"]) <= SHIPPED_NAMES  # no -latest.pt export
    assert probe["shipped"] == sorted(name.removesuffix(".pt") for name in probe["models"])
    assert {f"tammi/{name.capitalize()}-v0" for name in ("russian", "english", "italian", "turkish")} <= set(
        probe["ids"]
    ), probe["ids"]


def _installed_files(purelib: Path) -> set[str]:
    """Every file under the venv's site-packages but caches: ``__pycache__`` holds bytecode and
    numba's compiled functions (`tammi_rl.jit_cache`), which a run may add; they are no output."""
    return {str(p.relative_to(purelib)) for p in purelib.rglob("*") if "__pycache__" not in p.parts}


def test_installed_eval_writes_in_the_current_directory_not_in_the_package(build):
    """`tammi-rl eval russian` reads the model from inside the installed package; its games and
    summary must land in the directory the user runs it from."""
    here = build["base"] / "eval-here"
    here.mkdir()
    before = _installed_files(build["purelib"])
    argv = ["eval", "russian", "--vs", "random", "--games", "2", "--sims", "2", "--max-plies", "20", "--quiet"]
    out = _run([build["venv"] / "bin" / "tammi-rl", *argv], cwd=here, env=build["env"])
    new = sorted(_installed_files(build["purelib"]) - before)
    assert new == [], f"eval wrote into site-packages: {new}"
    written = here / "eval_russian"
    assert {p.name for p in written.iterdir()} == {"games.pdn", "summary.json", "summary.csv"}, out
    summary = json.loads((written / "summary.json").read_text())
    assert Path(summary["checkpoint"]).resolve().is_relative_to(build["purelib"].resolve())  # the wheel's model
    assert len(summary["games"]) == 2
    assert f"written to {written.resolve()}" in out
