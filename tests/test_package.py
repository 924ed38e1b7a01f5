"""The installed package: `scopa --version`, what is importable, the Gymnasium id."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

import scopa_env
from tests.helpers import fresh_python

ROOT = Path(__file__).resolve().parent.parent


def test_scopa_version(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-c", "import sys, scopa_cli; sys.exit(scopa_cli.main())",
                          "--version"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"scopa {importlib.metadata.version('scopa-rl')}"
    assert scopa_env.__version__ == importlib.metadata.version("scopa-rl")


def test_only_the_kit_is_importable_outside_the_checkout(tmp_path: Path) -> None:
    """From another folder the kit's packages import, but train.py, tests, examples and
    benchmarks of the checkout do not (they are not part of the package; a module of the
    same name that another package installs, such as TorchRL's ``benchmarks``, is not
    ours)."""
    code = ("import importlib.util as u, pathlib\n"
            f"root = pathlib.Path({str(ROOT)!r})\n"
            "names = ['scopa_env', 'agents', 'scopa_policy', 'scopa_train', 'scopa_web',\n"
            "         'scopa_cli', 'train', 'tests', 'examples', 'benchmarks']\n"
            "found = [(n, u.find_spec(n)) for n in names]\n"
            "print([n for n, s in found if s is not None and s.origin is not None\n"
            "       and pathlib.Path(s.origin).resolve().is_relative_to(root)])\n")
    out = fresh_python(code, cwd=tmp_path)
    assert out == str(['scopa_env', 'agents', 'scopa_policy', 'scopa_train',
                                      'scopa_web', 'scopa_cli'])


def test_the_engine_registers_the_gym_id_by_name_and_make_imports_the_class() -> None:
    """``import scopa_env`` registers ``scopa/Scopa-v0`` without importing the agents layer
    (a string entry point); ``gymnasium.make`` imports it; ``import agents`` after it
    registers nothing twice (warnings are errors here)."""
    code = ("import sys, warnings, gymnasium, scopa_env\n"
            "warnings.simplefilter('error')\n"
            "spec = gymnasium.spec('scopa/Scopa-v0')\n"
            "print(spec.entry_point, 'agents' in sys.modules)\n"
            "env = gymnasium.make('scopa/Scopa-v0', opponent='greedy')\n"
            "obs, info = env.reset(seed=1)\n"
            "print(type(env).__name__, obs.shape, 'agents' in sys.modules)\n"
            "import agents\n"
            "print(agents.GYM_ENV_ID == scopa_env.GYM_ENV_ID)\n")
    out = fresh_python(code)
    assert out.splitlines() == ["agents.bridges.gym_env:ScopaGymEnv False",
                                "ScopaGymEnv (216,) True", "True"]
