"""The ``run.device: cuda`` path: a learner on a GPU repeats itself for a seed (two processes,
and a stopped-and-resumed run), and what it writes loads and plays on the CPU.

These run only where torch sees a CUDA GPU (CI machines have none; the figures of a run
on one are in BENCHMARKS.md, "Learning on a GPU")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from agents.evaluation.evaluate import evaluate
from scopa_train import recipe
from scopa_train.config import load_config

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(),
                                reason="no CUDA GPU: torch.cuda.is_available() is False")

ROOT = Path(__file__).resolve().parent.parent
SMOKE = ROOT / "configs" / "smoke.yaml"
# the recipe's network and minibatch shape, few games: the kernels training uses
SMALL = ["run.device=cuda", "rollouts.num_envs=256", "ppo.num_minibatches=2",
         "evaluation.every_steps=0", "checkpoints.every_steps=0", "network.hidden_size=256",
         "network.hidden_layers=2", "network.action_hidden=128"]


def _quiet(_: str) -> None:
    pass


def _weights(path: Path) -> dict[str, torch.Tensor]:
    return torch.load(path, weights_only=True, map_location="cpu")["model"]


def _assert_equal(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), k


def test_two_cuda_runs_give_the_same_weights(tmp_path: Path) -> None:
    """Each run is its own process, so cuBLAS is set up afresh (CUBLAS_WORKSPACE_CONFIG
    comes from the training stage, not from this test's environment)."""
    weights = []
    for name in ("a", "b"):
        cmd = [sys.executable, str(ROOT / "train.py"), "--config", str(SMOKE), "--no-progress",
               "--set", f"run.runs_dir={tmp_path / name}", "--set", "ppo.total_env_steps=27648"]
        for o in SMALL:
            cmd += ["--set", o]
        env = {k: v for k, v in os.environ.items() if k != "CUBLAS_WORKSPACE_CONFIG"}
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600,
                              env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        weights.append(_weights(next((tmp_path / name).glob("*/policy.pt"))))
    _assert_equal(*weights)


def test_stopped_and_resumed_cuda_run_equals_a_straight_run(tmp_path: Path) -> None:
    def cfg(name: str):
        return load_config(SMOKE, [*SMALL, f"run.runs_dir={tmp_path / name}",
                                   "ppo.total_env_steps=36864"])

    straight = recipe.start(cfg("a"), progress=False, log=_quiet)
    part = recipe.start(cfg("b"), progress=False, stop_after_updates=2, log=_quiet)
    assert not part["finished"] and part["counters"]["update"] == 2
    resumed = recipe.resume(part["run_dir"], progress=False, log=_quiet)
    assert resumed["finished"] and resumed["counters"]["update"] == 4
    _assert_equal(_weights(straight["checkpoint"]), _weights(resumed["checkpoint"]))


def test_a_cuda_trained_policy_plays_on_the_cpu(tmp_path: Path) -> None:
    run = recipe.start(load_config(SMOKE, [*SMALL, f"run.runs_dir={tmp_path}",
                                           "ppo.total_env_steps=9216"]),
                       progress=False, log=_quiet)
    policy = Path(run["run_dir"]) / "policy.pt"
    ck = torch.load(policy, weights_only=True)  # no map_location: CPU tensors on disk
    assert all(v.device.type == "cpu" for v in ck["model"].values())
    res = evaluate(f"ckpt:{policy}", "random", hands=20, seed=1)
    assert res.hands == 20
    low, high = res.points_per_hand.ci95
    assert low <= res.points_per_hand.margin <= high
