"""TorchRL (``.[torchrl]``, examples/torchrl_ppo.py): its ``GymWrapper`` takes the batched env
from ``gymnasium.make_vec`` as it is (same-step autoreset, the mask read from the info),
PPO trains a masked policy on it, and the saved policy plays as a kit agent."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from agents.evaluation.evaluate import evaluate
from tests.helpers import import_example

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "torchrl_ppo.py"

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("torchrl") is None,
    reason="TorchRL is not installed (pip install -e .[torchrl]): its example is not tested")


def test_torchrl_ppo_trains_on_the_batched_env_and_plays(tmp_path: Path) -> None:
    example = import_example("torchrl_ppo")
    lines: list[str] = []
    out = tmp_path / "ppo.pt"
    _, info = example.train(2, seed=0, out=str(out), log=lines.append, num_envs=16,
                            rollout=8, minibatch=64, epochs=1, hidden=16)
    assert [line.split(":")[0] for line in lines] == ["iteration 1", "iteration 2"]
    assert "iteration 2: 256 learner decisions" in lines[1]
    assert info["env_steps"] >= 2 * 256 - 16
    spec = f"py:{EXAMPLE}:agent,path={out}"
    res = evaluate(spec, "greedy", hands=4, seed=0, matches=0)
    assert res.hands == 4  # every move it chose was legal (an illegal one raises)
