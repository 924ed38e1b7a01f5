"""The RLlib path (``.[rllib]``, examples/rllib_ppo.py): RLlib's PPO trains one shared,
masked policy for every seat of the PettingZoo environment on a local Ray cluster, and
the trained module plays legal moves as a kit agent, also from its checkpoint as the
agent spec ``rllib:PATH``; the example runs without warnings or error-level lines."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from agents import check_spec, make_agent
from agents.evaluation.evaluate import evaluate
from agents.evaluation.evaluate import main as scopa_eval
from scopa_env.game import new_match
from scopa_env.moves import N_ACTIONS
from scopa_env.observation import encode, info_set
from tests.helpers import import_example

HAVE_RLLIB = importlib.util.find_spec("ray") is not None and \
    importlib.util.find_spec("ray.rllib") is not None
pytestmark = pytest.mark.skipif(
    not HAVE_RLLIB, reason="RLlib is not installed (pip install -e .[rllib]): the RLlib "
    "example is not tested")


ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def example() -> ModuleType:
    return import_example("rllib_ppo")


def test_the_example_runs_without_warnings_or_errors(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "examples/rllib_ppo.py", "--iterations", "1", "--batch", "128",
         "--minibatch", "64", "--epochs", "1", "--env-runners", "1", "--eval-hands", "2",
         "--out", str(tmp_path / "algo")], cwd=ROOT, capture_output=True, text=True,
        timeout=600)
    assert out.returncode == 0, out.stderr
    noisy = [line for line in out.stderr.splitlines()
             if re.search(r"\b(WARNING|ERROR|CRITICAL)\b|^\[[^]]* [EWF] \d+ \d+\]|Warning:",
                          line)]
    assert noisy == [], out.stderr
    assert "saved the algorithm to" in out.stdout and "rllib_ppo vs greedy" in out.stdout


def test_rllib_specs_are_checked_clearly(tmp_path: Path, capsys) -> None:
    with pytest.raises(ValueError, match="no such checkpoint folder"):
        check_spec(f"rllib:{tmp_path / 'missing'}")
    with pytest.raises(ValueError, match="is not an RLlib checkpoint"):
        make_agent(f"rllib:{tmp_path}")
    with pytest.raises(ValueError, match="needs a path"):
        check_spec("rllib:")
    assert scopa_eval([f"rllib:{tmp_path}", "random", "--hands", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("scopa eval: error:") and "\n" not in err and str(tmp_path) in err


def test_rllib_ppo_trains_two_iterations_with_masks_honoured(ray_cluster, example,
                                                            tmp_path: Path) -> None:
    # an illegal sampled id would raise in the env (illegal_action="raise"): two
    # iterations that finish sampled only legal moves, on a Ray env runner
    algo, history = example.train(2, env_runners=1, batch=128, minibatch=64, epochs=1,
                                  log=lambda _: None)
    try:
        assert [h["iteration"] for h in history] == [1, 2]
        assert history[1]["env_steps"] >= 256 and history[1]["episodes"] >= 5  # 36-move hands
        assert np.isfinite(history[1]["policy_loss"])
        module = algo.get_module(example.POLICY)
        agent = example.RLlibAgent(module)
        # the masked arg-max is legal everywhere; unmasked, the 16,204 logits would
        # pick an illegal id: the mask is what keeps the policy legal
        import torch
        from ray.rllib.core.columns import Columns

        unmasked_illegal = 0
        for seed in range(20):
            s = new_match("scopa", seed=seed)
            info = info_set(s, s.to_move)
            assert agent.act(info) in info.legal_actions
            obs = {"observation": torch.from_numpy(encode(s, s.to_move)[None]),
                   "action_mask": torch.ones((1, N_ACTIONS), dtype=torch.int8)}
            with torch.no_grad():
                out = module.forward_inference({Columns.OBS: obs})
            unmasked_illegal += int(out[Columns.ACTION_DIST_INPUTS][0].argmax()) \
                not in info.legal_actions
        assert unmasked_illegal > 0
        res = evaluate(agent, "random", hands=8, seed=1, matches=0)
        assert res.hands == 8

        # the checkpoint as an agent spec: the same moves as the module it saved
        path = tmp_path / "algo"
        algo.save_to_path(str(path))
        spec = f"rllib:{path}"
        assert check_spec(spec) == spec
        loaded = make_agent(spec, seed=0)
        assert loaded.spec == spec
        infos = []
        for seed in range(20):
            s = new_match("scopa", seed=100 + seed)
            infos.append(info_set(s, s.to_move))
        assert loaded.act_batch(infos) == agent.act_batch(infos)
        assert all(a in i.legal_actions for a, i in zip(loaded.act_batch(infos), infos,
                                                        strict=True))
        module_dir = path / "learner_group" / "learner" / "rl_module" / example.POLICY
        assert make_agent(f"rllib:{module_dir}").act_batch(infos) == agent.act_batch(infos)
        assert scopa_eval([spec, "random", "--hands", "4", "--json"]) == 0
    finally:
        algo.stop()


def test_the_batched_example_trains_through_make_vec_and_plays_as_rllib_spec(
        tmp_path: Path) -> None:
    """examples/rllib_ppo_batched.py: RLlib's env runner builds the batched env with
    gymnasium.make_vec (vector_entry_point), the masked module learns on moves="legal" with
    the mask in the observation, and the saved module plays as ``rllib:PATH``, its slots
    mapped back to catalogue ids."""
    out = subprocess.run(
        [sys.executable, "examples/rllib_ppo_batched.py", "--iterations", "1", "--num-envs",
         "16", "--eval-hands", "2", "--out", str(tmp_path / "module")], cwd=ROOT,
        capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "iteration 1: 512 learner decisions" in out.stdout, out.stdout
    agent = make_agent(f"rllib:{tmp_path / 'module'}")
    assert agent.moves.legal and agent.moves.slots == 16
    res = evaluate(f"rllib:{tmp_path / 'module'}", "greedy", hands=4, seed=0, matches=0)
    assert res.hands == 4 and res.points_per_hand.a >= 0  # each of its moves was legal
