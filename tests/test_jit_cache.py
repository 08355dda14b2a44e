"""`tammi_rl.jit_cache.refresh_caches` against real numba caches of a throwaway package.

Each end-to-end check runs a fresh interpreter (so numba really loads its on-disk cache)
on a tiny package in ``tmp_path``: ``caller.run`` inlines ``callee.value``; after
``callee.py`` changes, numba alone keeps serving the stale cached ``caller.run`` (the
control test shows this), and `refresh_caches` must make it pick up the new code.

`jit_cache.py` is loaded by file path so that neither this test nor its subprocesses
import (and compile) the rest of `tammi_rl`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

JIT_CACHE = Path(__file__).resolve().parents[1] / "tammi_rl" / "jit_cache.py"


def _load_jit_cache():
    spec = importlib.util.spec_from_file_location("_jit_cache_under_test", JIT_CACHE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


jc = _load_jit_cache()

CALLEE = """\
from numba import njit


@njit(cache=True, inline="always")
def value():
    return {value}
"""

CALLER = """\
from numba import njit

from pkg import {via}


@njit(cache=True)
def run():
    return {via}.value()
"""

MIDDLE = """\
from pkg.callee import value  # not compiled itself: only re-exports the callee's kernel
"""

SCRIPT = """\
import importlib.util, json, sys
jit_cache, root, refresh = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
sys.path.insert(0, root)
spec = importlib.util.spec_from_file_location("jit_cache", jit_cache)
jc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(jc)
dropped = jc.refresh_caches(root + "/pkg") if refresh else None
from pkg import caller
print(json.dumps({"dropped": dropped, "value": caller.run()}))
"""


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


def make_pkg(root: Path, via: str = "callee") -> Path:
    pkg = root / "pkg"
    write(pkg / "__init__.py", "")
    write(pkg / "callee.py", CALLEE.format(value=1))
    write(pkg / "caller.py", CALLER.format(via=via))
    if via == "middle":
        write(pkg / "middle.py", MIDDLE)
    return pkg


def edit_callee(pkg: Path, value: int) -> None:
    """Rewrite callee.py (same size) and move its mtime forward so the change is visible."""
    callee = pkg / "callee.py"
    before = callee.stat().st_mtime_ns
    callee.write_text(CALLEE.format(value=value))
    later = before + 5_000_000_000
    os.utime(callee, ns=(later, later))


def run_pkg(root: Path, refresh: bool, cache_dir: Path | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = str(cache_dir)
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(JIT_CACHE), str(root), "1" if refresh else "0"],
        env=env,
        check=False,  # the stderr goes into the assertion message below
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def numba_index_files(directory: Path, stem: str) -> list[Path]:
    return sorted(directory.glob(f"{stem}.*.nbi"))


@pytest.mark.slow
def test_control_numba_alone_runs_stale_inlined_code(tmp_path: Path) -> None:
    pkg = make_pkg(tmp_path)
    assert run_pkg(tmp_path, refresh=False)["value"] == 1
    assert numba_index_files(pkg / "__pycache__", "caller"), "numba did not write an on-disk cache"
    edit_callee(pkg, 2)
    assert run_pkg(tmp_path, refresh=False)["value"] == 1  # the bug refresh_caches exists for


@pytest.mark.slow
def test_refresh_drops_cache_of_caller_when_callee_changes(tmp_path: Path) -> None:
    pkg = make_pkg(tmp_path)
    first = run_pkg(tmp_path, refresh=True)
    assert first["value"] == 1
    assert numba_index_files(pkg / "__pycache__", "caller")
    edit_callee(pkg, 2)
    second = run_pkg(tmp_path, refresh=True)
    assert second == {"dropped": ["pkg.caller"], "value": 2}
    assert run_pkg(tmp_path, refresh=True) == {"dropped": [], "value": 2}


@pytest.mark.slow
def test_refresh_follows_imports_through_uncompiled_module(tmp_path: Path) -> None:
    pkg = make_pkg(tmp_path, via="middle")
    assert jc.compiled_dependencies(pkg) == {
        "pkg.callee": [],
        "pkg.caller": ["pkg.callee", "pkg.middle"],
    }
    assert run_pkg(tmp_path, refresh=True)["value"] == 1
    edit_callee(pkg, 3)
    assert run_pkg(tmp_path, refresh=True) == {"dropped": ["pkg.caller"], "value": 3}


@pytest.mark.slow
def test_refresh_with_numba_cache_dir(tmp_path: Path) -> None:
    pkg = make_pkg(tmp_path / "src")
    cache_dir = tmp_path / "numba_cache"
    assert run_pkg(tmp_path / "src", refresh=True, cache_dir=cache_dir)["value"] == 1
    assert not numba_index_files(pkg / "__pycache__", "caller")
    (mirror,) = {p.parent for p in cache_dir.rglob("caller.*.nbi")}  # numba's layout under the dir
    edit_callee(pkg, 2)
    second = run_pkg(tmp_path / "src", refresh=True, cache_dir=cache_dir)
    assert second == {"dropped": ["pkg.caller"], "value": 2}
    assert (mirror / "caller.deps").is_file()


def test_import_forms_resolve_to_package_modules(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    write(pkg / "__init__.py", "")
    write(pkg / "sub" / "__init__.py", "from .helpers import CONSTANT\n")
    write(pkg / "sub" / "helpers.py", "CONSTANT = 1\n")
    write(pkg / "sub" / "leaf.py", "X = 1\n")
    write(pkg / "plain.py", "import os\n")
    write(pkg / "lazy.py", "Y = 2\n")
    write(pkg / "unrelated.py", "Z = 3\n")
    write(
        pkg / "sub" / "kernel.py",
        """\
        import numba
        import pkg.plain
        from . import leaf
        from .. import sub
        from numpy import zeros


        def later():
            from pkg.lazy import Y
            return Y
        """,
    )
    deps = jc.compiled_dependencies(pkg)
    assert deps == {"pkg.sub.kernel": ["pkg.lazy", "pkg.plain", "pkg.sub", "pkg.sub.helpers", "pkg.sub.leaf"]}


def test_unchanged_tree_takes_fast_path_and_drops_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = make_pkg(tmp_path)
    cache = pkg / "__pycache__"
    cache.mkdir()
    fake = cache / "caller.run-6.py311.nbi"
    fake.write_bytes(b"index")
    assert jc.refresh_caches(pkg) == ["pkg.caller"]  # no stamp yet: cannot vouch for the cache
    fake.write_bytes(b"index")
    assert jc.refresh_caches(pkg) == []
    # touched but identical sources: the slow path runs and still keeps the cache
    os.utime(pkg / "callee.py", ns=(1, 1))
    assert jc.refresh_caches(pkg) == [] and fake.exists()

    def no_parsing(_: Path) -> None:
        raise AssertionError("fast path should not parse sources")

    monkeypatch.setattr(jc, "_dependency_graph", no_parsing)
    assert jc.refresh_caches(pkg) == []


def test_filesystem_errors_are_swallowed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert jc.refresh_caches(tmp_path / "does_not_exist") == []
    pkg = make_pkg(tmp_path)

    def read_only(*args: object, **kwargs: object) -> None:
        raise PermissionError("read-only file system")

    for name in ("write_text", "write_bytes", "mkdir", "unlink"):
        monkeypatch.setattr(Path, name, read_only)
    assert jc.refresh_caches(pkg) == []  # no __pycache__ and none can be made
    assert not (pkg / "__pycache__").exists()
    monkeypatch.undo()

    cache = pkg / "__pycache__"
    cache.mkdir()
    (cache / "caller.run-6.py311.nbi").write_bytes(b"index")
    monkeypatch.setattr(Path, "unlink", read_only)
    assert jc.refresh_caches(pkg) == []  # cannot delete: no crash, and no package stamp written
    assert not (cache / jc.PACKAGE_STAMP).exists()
