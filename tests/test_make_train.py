"""``make train``'s two stages, with a stand-in for the venv's python: what it runs, and
the one line when stage 1 stopped before finishing."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _make(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["make", "-s", "train", *args], cwd=folder, capture_output=True,
                          text=True, timeout=60)


def test_make_train_runs_stage_1_then_stage_2(tmp_path: Path) -> None:
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    (tmp_path / "pyproject.toml").write_text("")
    os.utime(tmp_path / "pyproject.toml", (1, 1))
    venv = tmp_path / ".venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "activate").write_text("")
    (tmp_path / ".venv" / ".installed").write_text("")
    # the stand-in prints its arguments; for stage 1 it makes the run folder
    (venv / "python").write_text(
        "#!/bin/sh\necho \"python $*\"\n"
        "case \"$*\" in *name=stage1*) mkdir -p runs/stage1-20260101-000000/checkpoints;; esac\n")
    (venv / "python").chmod(0o755)
    out = _make(tmp_path)
    assert "--config configs/default.yaml --set name=stage1" in out.stdout
    assert out.returncode == 2  # make: the recipe failed (stage 1 wrote no checkpoint)
    assert ("stage 1 (runs/stage1-20260101-000000) has not finished: .venv/bin/python "
            "train.py --resume runs/stage1-20260101-000000, then make train") in out.stdout
    ck = tmp_path / "runs" / "stage1-20260101-000000" / "checkpoints"
    (ck / "latest.pt").write_text("")
    out = _make(tmp_path)  # stopped: not started again, not continued with stage 2
    assert out.returncode == 2 and "python" not in out.stdout.split("stage 1")[0]
    (ck / "final.pt").write_text("")
    out = _make(tmp_path)
    assert out.returncode == 0
    assert out.stdout.strip() == ("python train.py --config configs/finetune.yaml --set "
                                  "init_from=runs/stage1-20260101-000000/policy.pt")
    out = _make(tmp_path, "CONFIG=configs/team4.yaml")
    assert out.stdout.strip() == "python train.py --config configs/team4.yaml"
