"""The package's shape: layers that only point down, no import cycles, and documentation
that stays inside.

The layer contract lives in pyproject.toml (``[tool.importlinter]``); import-linter checks
every import, function-local ones included, so a wrong-way import fails here. Layers allow
cycles inside a folder; `test_no_import_cycles` forbids those too.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tammi_rl.jit_cache import _dependency_graph

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


def import_cycles(package_dir: Path) -> list[list[str]]:
    """The groups of modules that import each other, directly or through others (Tarjan's
    strongly connected components). An import counts wherever it is written: at the top,
    inside a function or under ``TYPE_CHECKING`` (a deferred import is still a circle in the
    design). The graph is `tammi_rl.jit_cache`'s: ``from a.b import c`` names ``a.b.c`` when
    that is a module, else ``a.b``, and importing ``a.b.c`` does not count as importing the
    ``a`` and ``a.b`` packages Python runs on the way."""
    _, edges, _ = _dependency_graph(package_dir)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, deps = work[-1]
            dep = next(deps, None)
            if dep is not None:
                if dep not in index:
                    index[dep] = low[dep] = len(index)
                    stack.append(dep)
                    on_stack.add(dep)
                    work.append((dep, iter(sorted(edges.get(dep, ())))))
                elif dep in on_stack:
                    low[node] = min(low[node], index[dep])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    cycles.append(sorted(group))
    return cycles


def test_no_import_cycles() -> None:
    assert import_cycles(PACKAGE) == []


def test_import_cycles_are_found_through_functions_and_type_checking(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    for init in (pkg / "__init__.py", pkg / "sub" / "__init__.py"):
        init.write_text("")
    (pkg / "a.py").write_text("def f():\n    from pkg.sub import b\n")
    (pkg / "sub" / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..c import C\n")
    (pkg / "c.py").write_text("import pkg.a\n")
    (pkg / "d.py").write_text("from pkg import a, c\n")  # imports into the cycle, not part of it
    assert import_cycles(pkg) == [["pkg.a", "pkg.c", "pkg.sub.b"]]


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
