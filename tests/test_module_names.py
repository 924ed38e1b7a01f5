"""A docstring that names a training module names one that exists: every
````scopa_train.…```` name in the kit's code and docs imports (a module, or an attribute
of one), so a renamed module leaves no name behind."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NAME = re.compile(r"`{1,2}(scopa_train(?:\.[A-Za-z_][A-Za-z0-9_]*)+)`{1,2}")
FOLDERS = ("scopa_env", "agents", "scopa_policy", "scopa_train", "scopa_web", "benchmarks",
           "examples", "docs")


def resolve(name: str) -> Any:
    """The module or attribute ``name`` names; AttributeError / ImportError if none."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
            break
        except ImportError:
            if i == 1:
                raise
    for part in parts[i:]:
        obj = getattr(obj, part)
    return obj


def test_every_named_training_module_exists() -> None:
    named: dict[str, list[str]] = {}
    for folder in FOLDERS:
        for f in sorted((ROOT / folder).rglob("*")):
            if f.suffix in (".py", ".md") and "research" not in f.parts:
                for name in NAME.findall(f.read_text(encoding="utf-8", errors="ignore")):
                    named.setdefault(name, []).append(str(f.relative_to(ROOT)))
    assert "scopa_train.stages.last_deal" in named  # the scan reads the docstrings
    missing = []
    for name, files in sorted(named.items()):
        try:
            resolve(name)
        except (ImportError, AttributeError):
            missing.append(f"{name} ({', '.join(sorted(set(files)))})")
    assert not missing, missing
