"""Keep numba's on-disk caches honest across modules.

numba keys a cached function on its own source file only. A compiled function that
calls (and so inlines) code from another module keeps running the OLD copy of that
code after the other module changes. Every module whose compiled functions call into
another module's compiled code calls `drop_stale_cache` at import: it hashes the
dependencies' sources and deletes the module's cache files when the hash changed.
(Default cache location only; with NUMBA_CACHE_DIR set, clear that directory by hand.)
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from types import ModuleType


def drop_stale_cache(module_file: str, dependencies: list[ModuleType]) -> None:
    """Delete ``module_file``'s numba cache if any dependency's source changed since it was built."""
    module = Path(module_file)
    try:
        digest = hashlib.sha1()
        for dep in dependencies:
            digest.update(Path(dep.__file__).read_bytes())
        cache = module.parent / "__pycache__"
        stamp = cache / f"{module.stem}.deps"
        if stamp.exists() and stamp.read_text() == digest.hexdigest():
            return
        for path in cache.glob(f"{module.stem}.*.nb[ic]"):
            path.unlink(missing_ok=True)
        cache.mkdir(exist_ok=True)
        stamp.write_text(digest.hexdigest())
    except OSError:
        pass  # read-only install: numba compiles in memory or uses its own cache directory
