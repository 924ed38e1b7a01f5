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
    """From another folder the kit's packages import, but train.py, tests and examples do
    not (they are not part of the package)."""
    code = ("import importlib.util as u\n"
            "names = ['scopa_env', 'agents', 'scopa_policy', 'scopa_train', 'scopa_web',\n"
            "         'scopa_cli', 'train', 'tests', 'examples', 'benchmarks']\n"
            "print([n for n in names if u.find_spec(n) is not None])\n")
    out = fresh_python(code, cwd=tmp_path)
    assert out == str(['scopa_env', 'agents', 'scopa_policy', 'scopa_train',
                                      'scopa_web', 'scopa_cli'])


def test_the_gym_id_is_registered_by_the_agents_layer_not_the_engine() -> None:
    code = ("import sys, gymnasium, scopa_env\n"
            "print('scopa/Scopa-v0' in gymnasium.registry)\n"
            "import agents\n"
            "spec = gymnasium.spec(agents.GYM_ENV_ID)\n"
            "print(spec.entry_point, 'agents.bridges.gym_env' in sys.modules)\n")
    out = fresh_python(code)
    assert out.splitlines() == ["False", "agents.bridges.gym_env:ScopaGymEnv False"]
