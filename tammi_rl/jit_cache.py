"""Keep numba's on-disk caches honest across modules.

numba's cache (``@njit(cache=True)``) is keyed on the compiled function's own source
file only. A compiled function that calls code from another module inlines it and
freezes that module's globals, so after the other module changes it keeps running the
OLD copy. `refresh_caches` fixes this without hand-written dependency lists: for every
module of the package that imports numba it computes, with `ast`, the transitive
closure of the package-internal modules it imports (``import a.b``, ``from a.b import
c`` where ``c`` may be a submodule, relative imports, imports inside functions), hashes
their sources and deletes the module's numba cache files when that hash changed.

Imports are followed as written: ``from pkg.sub import mod`` depends on ``pkg/sub/mod.py``
only, not on the ``pkg/__init__.py`` and ``pkg/sub/__init__.py`` that Python runs on the
way (those matter only if they patch other modules as a side effect).

A fast path makes the call at every package import cost about a millisecond: the AST
work runs only when the ``(path, mtime, size)`` fingerprint of the package's ``.py``
files differs from the one stamped in ``<package>/__pycache__/jit_cache.stamp``.

Cache locations handled: the default ``__pycache__`` next to each source and, when
``NUMBA_CACHE_DIR`` is set, numba's mirror of the source directory under it (each keeps
its own ``<stem>.deps`` stamp). numba's user-wide fallback cache (used when the package
directory is read-only, e.g. a site-packages install that is not edited in place) is not
handled: clear it by hand (``~/.cache/numba`` on Linux) if you edit such an install.
Filesystem errors are swallowed: numba then compiles in memory or caches elsewhere.
"""

from __future__ import annotations

import ast
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

SCHEME = b"tammi_rl.jit_cache v2\0"  # bump to invalidate every cache written by an older scheme
PACKAGE_STAMP = "jit_cache.stamp"


def _package_dir(package_dir: Path | str | None) -> Path:
    # abspath, not resolve(): numba names NUMBA_CACHE_DIR entries after the unresolved source path
    return Path(os.path.abspath(package_dir if package_dir is not None else Path(__file__).parent))


def _python_files(package_dir: Path) -> list[Path]:
    return sorted(p for p in package_dir.rglob("*.py") if "__pycache__" not in p.parts)


def _module_name(package_dir: Path, path: Path) -> str:
    parts = [package_dir.name, *path.relative_to(package_dir).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(tree: ast.AST, name: str, is_package: bool, files: dict[str, Path]) -> Iterator[str]:
    """Absolute names of the modules ``tree`` (module ``name``) imports, anywhere in its body.

    ``from a.b import c`` names module ``a.b.c`` when that is a file of the package, else ``a.b``.
    """
    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                if node.level > len(anchor):
                    continue  # relative import beyond the top-level package
                base = ".".join(anchor[: len(anchor) - node.level + 1] + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                yield sub if sub in files else base


def _dependency_graph(package_dir: Path) -> tuple[dict[str, Path], dict[str, set[str]], set[str]]:
    """Module files, package-internal import edges and the names of the numba-compiled modules."""
    files = {_module_name(package_dir, p): p for p in _python_files(package_dir)}
    edges: dict[str, set[str]] = {}
    compiled: set[str] = set()
    for name, path in files.items():
        try:
            tree = ast.parse(path.read_bytes(), str(path))
        except (OSError, SyntaxError, ValueError):
            tree = ast.Module(body=[], type_ignores=[])
        imported = set(_imports(tree, name, path.name == "__init__.py", files))
        edges[name] = {m for m in imported if m in files}
        if any(m == "numba" or m.startswith("numba.") for m in imported):
            compiled.add(name)
    return files, edges, compiled


def _closure(start: str, edges: dict[str, set[str]]) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for dep in edges.get(todo.pop(), ()):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    seen.discard(start)
    return seen


def _cache_dirs(source: Path) -> list[Path]:
    """Where numba keeps ``source``'s cache: ``__pycache__`` and, if set, under NUMBA_CACHE_DIR."""
    dirs = [source.parent / "__pycache__"]
    user_dir = os.environ.get("NUMBA_CACHE_DIR")
    if user_dir:  # numba.core.caching._CacheLocator.get_suitable_cache_subpath
        parent = os.path.dirname(os.path.abspath(source))
        dirs.append(Path(user_dir) / f"{os.path.basename(parent)}_{hashlib.sha1(parent.encode()).hexdigest()}")
    return dirs


def _refresh_module(source: Path, digest: str) -> bool:
    """Drop ``source``'s numba caches whose stamp differs from ``digest``; True if any were dropped."""
    dropped = False
    for cache in _cache_dirs(source):
        stamp = cache / f"{source.stem}.deps"
        try:
            if stamp.read_text() == digest:
                continue
        except OSError:
            pass
        for pattern in (f"{source.stem}.*.nbi", f"{source.stem}.*.nbc"):
            for path in cache.glob(pattern):
                path.unlink(missing_ok=True)
                dropped = True
        cache.mkdir(parents=True, exist_ok=True)
        stamp.write_text(digest)
    return dropped


def _fingerprint(package_dir: Path) -> str:
    digest = hashlib.sha256(SCHEME + os.environ.get("NUMBA_CACHE_DIR", "").encode())
    for path in _python_files(package_dir):
        st = path.stat()
        digest.update(f"{path.relative_to(package_dir).as_posix()}\0{st.st_mtime_ns}\0{st.st_size}\0".encode())
    return digest.hexdigest()


def refresh_caches(package_dir: Path | str | None = None) -> list[str]:
    """Delete numba caches of ``package_dir``'s compiled modules whose imported sources changed.

    ``package_dir`` defaults to the ``tammi_rl`` package. Returns the names of the modules
    whose caches were dropped. Never raises on filesystem errors.
    """
    package_dir = _package_dir(package_dir)
    pkg_stamp = package_dir / "__pycache__" / PACKAGE_STAMP
    fingerprint: str | None = None
    try:
        fingerprint = _fingerprint(package_dir)
        if pkg_stamp.read_text() == fingerprint:
            return []
    except OSError:
        pass
    try:
        files, edges, compiled = _dependency_graph(package_dir)
    except OSError:
        return []
    dropped: list[str] = []
    complete = True
    for name in sorted(compiled):
        try:
            digest = hashlib.sha256(SCHEME)
            for dep in sorted(_closure(name, edges)):
                digest.update(dep.encode() + b"\0" + hashlib.sha256(files[dep].read_bytes()).digest())
            if _refresh_module(files[name], digest.hexdigest()):
                dropped.append(name)
        except OSError:
            complete = False
    # Written only after every module stamp, so an interrupted or failed run is redone next time.
    if complete and fingerprint:
        try:
            pkg_stamp.parent.mkdir(exist_ok=True)
            pkg_stamp.write_text(fingerprint)
        except OSError:
            pass
    return dropped


def compiled_dependencies(package_dir: Path | str | None = None) -> dict[str, list[str]]:
    """For inspection: each compiled module of the package and the modules its cache depends on."""
    _, edges, compiled = _dependency_graph(_package_dir(package_dir))
    return {name: sorted(_closure(name, edges)) for name in sorted(compiled)}
