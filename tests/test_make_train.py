"""``make train``'s stages, with a stand-in for the venv's python: what it runs, and
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


def test_make_train_runs_the_stages_in_order(tmp_path: Path) -> None:
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    (tmp_path / "pyproject.toml").write_text("")
    os.utime(tmp_path / "pyproject.toml", (1, 1))
    venv = tmp_path / ".venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "activate").write_text("")
    (tmp_path / ".venv" / ".installed").write_text("")
    # the stand-in prints its arguments and makes the stage's run folder; stage 2
    # finishes at once, stage 1 writes no checkpoint
    (venv / "python").write_text(
        "#!/bin/sh\necho \"python $*\"\n"
        "for a in \"$@\"; do case $a in name=*) n=${a#name=};; esac; done\n"
        "mkdir -p runs/$n-20260101-000000/checkpoints\n"
        "[ $n = stage1 ] || touch runs/$n-20260101-000000/checkpoints/final.pt\n")
    (venv / "python").chmod(0o755)
    out = _make(tmp_path)
    assert out.stdout.splitlines()[0] == ("python train.py --config configs/default.yaml "
                                          "--set name=stage1")
    assert out.returncode == 2  # make: the recipe failed (stage 1 wrote no checkpoint)
    assert ("stage1 (runs/stage1-20260101-000000) has not finished: .venv/bin/python "
            "train.py --resume runs/stage1-20260101-000000, then make train") in out.stdout
    ck = tmp_path / "runs" / "stage1-20260101-000000" / "checkpoints"
    (ck / "latest.pt").write_text("")
    out = _make(tmp_path)  # stopped: not started again, not continued with stage 2
    assert out.returncode == 2 and "python" not in out.stdout.split("stage1")[0]
    (ck / "final.pt").write_text("")
    out = _make(tmp_path)
    assert out.returncode == 0
    assert out.stdout.splitlines() == [
        "python train.py --config configs/finetune.yaml --set name=stage2 "
        "--set init_from=runs/stage1-20260101-000000/policy.pt",
        "python train.py --config configs/last_deal.yaml --set name=stage3 "
        "--set init_from=runs/stage2-20260101-000000/policy.pt",
        "python train.py --config configs/suit_distill.yaml --set name=stage4 "
        "--set init_from=runs/stage3-20260101-000000/policy.pt",
        "python train.py --config configs/search_distill.yaml --set name=stage5 "
        "--set init_from=runs/stage4-20260101-000000/policy.pt",
        "the recipe's weights: runs/stage5-20260101-000000/policy.pt; ship them with: "
        ".venv/bin/python -m scopa_train.report export "
        "runs/stage5-20260101-000000/checkpoints/final.pt scopa_policy/pretrained/default.pt"]
    out = _make(tmp_path)  # every stage finished: nothing runs again
    assert out.returncode == 0 and out.stdout.splitlines() == [
        "the recipe's weights: runs/stage5-20260101-000000/policy.pt; ship them with: "
        ".venv/bin/python -m scopa_train.report export "
        "runs/stage5-20260101-000000/checkpoints/final.pt scopa_policy/pretrained/default.pt"]
    out = _make(tmp_path, "CONFIG=configs/team4.yaml")
    assert out.stdout.strip() == "python train.py --config configs/team4.yaml"
