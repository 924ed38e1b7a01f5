"""``make train`` and ``make test``: what they run (a stand-in for the venv's python) and
what they install (``make -n``): the recipe is one command, the trainer's install adds the
train extra (torch, TensorBoard, matplotlib), the tests' install the rest; every editable
install is quiet."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _folder(tmp_path: Path, installed: bool = True) -> Path:
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    (tmp_path / "pyproject.toml").write_text("")
    os.utime(tmp_path / "pyproject.toml", (1, 1))
    if installed:
        venv = tmp_path / ".venv" / "bin"
        venv.mkdir(parents=True)
        (venv / "activate").write_text("")
        (tmp_path / ".venv" / ".installed").write_text("")
        (venv / "python").write_text("#!/bin/sh\necho \"python $*\"\n")
        (venv / "python").chmod(0o755)
    return tmp_path


def _make(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["make", "-s", *args], cwd=folder, capture_output=True, text=True,
                          timeout=60)


def test_make_train_is_the_recipe_in_one_command(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    out = _make(folder, "train")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["python train.py --config configs/recipe.yaml"]
    out = _make(folder, "train", "CONFIG=configs/team4.yaml")
    assert out.stdout.splitlines() == ["python train.py --config configs/team4.yaml"]


def test_the_trainer_installs_the_train_extra_and_the_tests_the_rest(tmp_path: Path) -> None:
    folder = _folder(tmp_path, installed=False)
    train = _make(folder, "-n", "train").stdout
    installs = [line for line in train.splitlines() if "pip install" in line and "-e" in line]
    assert [line.partition("pip install -q -e ")[2] for line in installs] == ['".[train]"']
    assert "torch==2.13.0" in train  # the CPU wheel first where no torch is present
    test = _make(folder, "-n", "test").stdout
    assert 'pip install -q -e ".[test,train,web,sb3,ray,rllib,openspiel,torchrl,docs]"' in test
    assert "pytest" in test
    # setuptools' note on every editable install of a flat layout is silenced
    for line in (train + test).splitlines():
        if "pip install -q -e" in line:
            assert line.startswith('PYTHONWARNINGS="ignore:Editable installation" '), line
