"""Digests of source code, with the standard library only.

`source_digest` names a version of a code base by its bytes: the Ray backend compares the driver's and
each worker's gym-ctxbandits with it (ray_task.code_identity), and a result's identity includes the
user's module by it (user_modules.user_code). It sits at the bottom of the import graph, and the Ray
backend sends it to the workers by value together with ray_task, so the check runs even on a node
whose installed gym-ctxbandits has no such module.
"""

from __future__ import annotations

import hashlib
from pathlib import Path


def source_digest(roots: dict[str, Path]) -> str:
    """The first 12 hex digits of a SHA-256 over the .py and .toml files under each package folder
    of `roots` (name -> folder), each file by its path relative to the folder and its bytes."""
    digest = hashlib.sha256()
    for name, root in roots.items():
        for path in sorted(p for p in root.rglob("*") if p.suffix in (".py", ".toml") and "__pycache__" not in p.parts):
            digest.update(f"{name}/{path.relative_to(root).as_posix()}\0".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]
