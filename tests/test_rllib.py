"""The RLlib path (``.[rllib]``, examples/rllib_ppo.py): RLlib's PPO trains one shared,
masked policy for every seat of the PettingZoo environment on a local Ray cluster, and
the trained module plays legal moves as a kit agent."""

from __future__ import annotations

import importlib.util
from types import ModuleType

import numpy as np
import pytest

from agents.evaluation.evaluate import evaluate
from scopa_env.game import new_match
from scopa_env.moves import N_ACTIONS
from scopa_env.observation import encode, info_set
from tests.helpers import import_example

HAVE_RLLIB = importlib.util.find_spec("ray") is not None and \
    importlib.util.find_spec("ray.rllib") is not None
pytestmark = pytest.mark.skipif(
    not HAVE_RLLIB, reason="RLlib is not installed (pip install -e .[rllib]): the RLlib "
    "example is not tested")


@pytest.fixture(scope="module")
def example() -> ModuleType:
    return import_example("rllib_ppo")


def test_rllib_ppo_trains_two_iterations_with_masks_honoured(ray_cluster, example) -> None:
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
    finally:
        algo.stop()
