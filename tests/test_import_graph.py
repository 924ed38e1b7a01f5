"""Imports go down, and nothing imports in a circle: the import graph of every module of
the kit, function-level imports included, read from the source (``tests.import_graph``);
and no module name in two layers."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.import_graph import LAYERS, build

ROOT = Path(__file__).resolve().parent.parent
GRAPH = build(ROOT)


def _name_clashes() -> dict[str, list[str]]:
    """Module names (the last dotted part) found in more than one layer."""
    by_name: dict[str, set[str]] = {}
    for module in GRAPH.files:
        by_name.setdefault(module.rpartition(".")[2], set()).add(module)
    return {name: sorted(ms) for name, ms in by_name.items()
            if len({m.split(".")[0] for m in ms}) > 1}


# Gymnasium's convention: the engine registers its id `scopa/Scopa-v0` with the entry point
# string of the class, which lives a layer up; Gymnasium imports it on `make`, never before
# (tests/test_package.py checks that `import scopa_env` leaves `agents` unimported).
REGISTERED_BY_NAME = {("scopa_env", "agents.bridges.gym_env", "string"),
                      ("scopa_env", "agents.bridges.gym_vector", "string")}


def test_no_module_reaches_a_higher_layer() -> None:
    up = [f"{m} -> {t} ({kind})" for m, t, kind in GRAPH.upward()
          if (m, t, kind) not in REGISTERED_BY_NAME]
    assert not up, "imports or module names reaching a higher layer: " + "; ".join(up)
    assert REGISTERED_BY_NAME <= set(GRAPH.upward())  # each exception is still needed


@pytest.mark.parametrize("package", LAYERS)
def test_no_import_cycle(package: str) -> None:
    cycles = [c for c in GRAPH.cycles() if any(m.split(".")[0] == package for m in c)]
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_the_rules_are_the_bottom_of_the_engine() -> None:
    """``scopa_env.rules`` imports only itself and the engine's leaves (modules that
    import nothing of the kit: the deck, bit counts), so every other engine module may
    build on it and none sits below it."""
    rules = {m for m in GRAPH.files if m == "scopa_env.rules" or m.startswith("scopa_env.rules.")}
    leaves = {m for m in GRAPH.files if m.startswith("scopa_env.") and not GRAPH.imports[m]}
    assert {"scopa_env.rules.capture", "scopa_env.rules.deal"} <= rules
    assert {"scopa_env.cards", "scopa_env.bitsets"} <= leaves
    above = [f"{m} -> {t}" for m in sorted(rules)
             for t in sorted(GRAPH.imports[m] - rules - leaves)]
    assert not above, "scopa_env.rules imports engine modules above it: " + "; ".join(above)
    assert "scopa_env.rules.capture" in GRAPH.imports["scopa_env.catalogue"]


def test_no_module_name_in_two_layers() -> None:
    clashes = _name_clashes()
    assert not clashes, f"module names in two layers: {clashes}"


def test_every_module_and_function_level_import_is_seen() -> None:
    assert {"scopa_env.game", "agents.evaluation.evaluate", "scopa_policy.agent", "scopa_cli",
            "train"} <= set(GRAPH.files)
    assert "agents" in GRAPH.imports["scopa_cli"]  # `from agents import make_agent` in a function
    assert "agents.evaluation.ray_eval" in GRAPH.imports["agents.evaluation.evaluate"]  # likewise
    assert "scopa_policy.agent" in GRAPH.imports["scopa_policy.specs"]


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path


def test_the_checker_finds_cycles_and_upward_reaches(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "scopa_env/__init__.py": "",
        "scopa_env/a.py": "def f():\n    from . import b\n",
        "scopa_env/b.py": "from .a import f\nX = 'agents.bridge:Thing'\n",
        "agents/__init__.py": "from scopa_env import a\n",
        "agents/bridge.py": "import scopa_env.b\n",
        "agents/low.py": "def g():\n    import scopa_policy.net\n",
        "scopa_policy/__init__.py": "",
        "scopa_policy/net.py": "from agents import low\n",
    })
    g = build(root)
    assert g.cycles() == [["agents.low", "scopa_policy.net"], ["scopa_env.a", "scopa_env.b"]]
    assert g.upward() == [("agents.low", "scopa_policy.net", "import"),
                          ("scopa_env.b", "agents.bridge", "string")]
