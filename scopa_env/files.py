"""Output files: whether one can be written, checked before any work starts."""

from __future__ import annotations

import os
from pathlib import Path


def writable_file(path: str | os.PathLike, what: str = "output file") -> Path:
    """``path`` if a file can be created or replaced there, else ``ValueError`` naming
    the problem (missing folder, a folder in the way, no permission)."""
    p = Path(path)
    folder = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise ValueError(f"{what} {p} is a folder, not a file")
    if not folder.is_dir():
        raise ValueError(f"cannot write {what} {p}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise ValueError(f"cannot write {what} {p}: permission denied")
    return p
