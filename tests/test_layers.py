"""Layers import downward only: scopa_env <- agents <- scopa_policy <- scopa_train <- the
scopa command (scopa_cli). Each layer is imported, with every one of its modules, in a
fresh interpreter, and no module of a higher layer may have been loaded."""

from __future__ import annotations

import pkgutil
from pathlib import Path

import pytest

from tests.helpers import fresh_python

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ["scopa_env", "agents", "scopa_policy", "scopa_train", "scopa_cli"]


def _modules(package: str) -> list[str]:
    """The package and every module in it, subpackages included."""
    path = ROOT / package
    if not path.is_dir():
        return [package]
    return [package] + [m.name for m in pkgutil.walk_packages([str(path)], f"{package}.")
                        if not m.name.endswith("__main__")]


@pytest.mark.parametrize("level", range(len(LAYERS) - 1))
def test_a_layer_loads_no_higher_layer(level: int) -> None:
    layer, higher = LAYERS[level], LAYERS[level + 1:]
    code = ("import importlib, sys\n"
            f"for name in {_modules(layer)!r}:\n"
            "    importlib.import_module(name)\n"
            f"print(sorted({{m.split('.')[0] for m in sys.modules}} & {set(higher)!r}))\n")
    out = fresh_python(code)
    assert out == "[]", f"{layer} loads {out}"


def test_the_engine_loads_without_torch() -> None:
    code = ("import importlib, sys\n"
            f"for name in {_modules('scopa_env')!r}:\n"
            "    importlib.import_module(name)\n"
            "print('torch' in sys.modules)\n")
    out = fresh_python(code)
    assert out == "False"
