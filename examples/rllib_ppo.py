"""Train RLlib's PPO on the PettingZoo environment, every seat one shared policy, with
action masking; then evaluate it with the kit's evaluator.

    pip install -e .[rllib]
    python examples/rllib_ppo.py --iterations 20 --out runs/rllib/ppo

RLlib sees ``scopa_env.env(...)`` through its ``PettingZooEnv`` wrapper (turn-based:
only the seat to move observes and acts). All seats map to the one policy ``shared``,
RLlib's default PPO torch module whose logits over the 16,204 catalogue ids are masked by
the observation's ``action_mask`` (an illegal id gets ``FLOAT_MIN``), in exploration,
inference and training alike: a sampled illegal id would raise in the environment
(``illegal_action="raise"``), so a run that finishes has honoured every mask. Rewards
are the hand points margin at each hand end (``reward="points"``, one hand per
episode): the same signal as the kit's own trainer (docs/training.md).

Like the SB3 example this is the plain route, one logit per catalogue id: simpler and
slower to learn than ``python train.py``, whose policy scores each legal move by its
features, but it runs on any Ray cluster RLlib runs on (``ray start --head``,
``ray start --address=...``, then the same command with ``--address auto``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import scopa_env
from scopa_env.moves import N_ACTIONS
from scopa_env.observation import InfoSet, encode_info

ENV_NAME = "scopa_pettingzoo"
POLICY = "shared"
INSTALL_HINT = "pip install -e .[rllib]"


def make_env(config: dict[str, Any] | None = None) -> Any:
    """The PettingZoo AEC env wrapped as RLlib's ``MultiAgentEnv`` (``config``: the
    env's keyword arguments, e.g. ``{"players": 4}``)."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    options = {"reward": "points", "episode": "hand", **dict(config or {})}
    return PettingZooEnv(scopa_env.env(**options))


def masked_module_class() -> type:
    """PPO's default torch module with its action logits masked by ``action_mask``
    (defined on first use: RLlib is imported only when the example runs)."""
    from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import (
        DefaultPPOTorchRLModule,
    )
    from ray.rllib.core.columns import Columns
    from ray.rllib.utils.torch_utils import FLOAT_MIN

    class MaskedPPOModule(DefaultPPOTorchRLModule):
        """Encoder and heads see ``observation``; the logits of ids that are not legal
        are pushed to ``FLOAT_MIN`` before any distribution is built."""

        def __init__(self, *, observation_space: Any = None, **kwargs: Any) -> None:
            self.space_with_mask = observation_space
            super().__init__(observation_space=observation_space["observation"], **kwargs)

        def setup(self) -> None:
            super().setup()
            self.observation_space = self.space_with_mask  # what RLlib's connectors see

        def _split(self, batch: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
            obs = batch[Columns.OBS]
            return obs["action_mask"], {**batch, Columns.OBS: obs["observation"]}

        def _masked(self, out: dict[str, Any], mask: Any) -> dict[str, Any]:
            out[Columns.ACTION_DIST_INPUTS] = out[Columns.ACTION_DIST_INPUTS].masked_fill(
                mask == 0, FLOAT_MIN)
            return out

        def _forward_inference(self, batch: dict[str, Any], **kw: Any) -> dict[str, Any]:
            mask, batch = self._split(batch)
            return self._masked(super()._forward_inference(batch, **kw), mask)

        def _forward_exploration(self, batch: dict[str, Any], **kw: Any) -> dict[str, Any]:
            mask, batch = self._split(batch)
            return self._masked(super()._forward_exploration(batch, **kw), mask)

        def _forward_train(self, batch: dict[str, Any], **kw: Any) -> dict[str, Any]:
            mask, batch = self._split(batch)
            return self._masked(super()._forward_train(batch, **kw), mask)

        def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
            if isinstance(batch[Columns.OBS], dict):
                _, batch = self._split(batch)
            return super().compute_values(batch, embeddings)

    return MaskedPPOModule


def build_config(players: int = 2, seed: int = 0, env_runners: int = 0,
                 batch: int = 1024, minibatch: int = 256, epochs: int = 4,
                 hidden: int = 256, lr: float = 3e-4) -> Any:
    """The ``PPOConfig``: one shared, masked policy for every seat."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    if __name__ != "__main__":  # imported (a test): Ray workers get this module by value
        import ray.cloudpickle

        ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    register_env(ENV_NAME, make_env)
    return (
        PPOConfig()
        # RLlib's env check steps random ids, which this env rightly refuses as illegal
        .environment(ENV_NAME, env_config={"players": players}, disable_env_checking=True)
        .framework("torch")
        .env_runners(num_env_runners=env_runners, num_envs_per_env_runner=1,
                     num_cpus_per_env_runner=1)
        .learners(num_learners=0)
        .multi_agent(policies={POLICY}, policy_mapping_fn=lambda agent_id, *a, **k: POLICY)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            POLICY: RLModuleSpec(module_class=masked_module_class(),
                                 model_config={"fcnet_hiddens": [hidden, hidden],
                                               "vf_share_layers": True})}))
        .training(train_batch_size_per_learner=batch, minibatch_size=minibatch,
                  num_epochs=epochs, lr=lr, gamma=1.0, lambda_=0.95, entropy_coeff=0.0)
        .debugging(seed=seed)
    )


class RLlibAgent:
    """A trained shared policy as a kit agent: the arg-max of its masked logits."""

    def __init__(self, module: Any, spec: str = "rllib") -> None:
        self.module, self.spec = module, spec

    def act(self, info: InfoSet) -> int:
        import torch
        from ray.rllib.core.columns import Columns

        mask = np.zeros(N_ACTIONS, np.int8)
        mask[list(info.legal_actions)] = 1
        obs = {"observation": torch.from_numpy(encode_info(info)[None]),
               "action_mask": torch.from_numpy(mask[None])}
        with torch.no_grad():
            out = self.module.forward_inference({Columns.OBS: obs})
        return int(out[Columns.ACTION_DIST_INPUTS][0].argmax())


def train(iterations: int, players: int = 2, seed: int = 0, env_runners: int = 0,
          batch: int = 1024, minibatch: int = 256, epochs: int = 4, address: str | None = None,
          log: Any = print) -> tuple[Any, list[dict[str, Any]]]:
    """Build PPO and run ``iterations`` training iterations (on the Ray cluster at
    ``address``, or a local one); the algorithm and each iteration's summary."""
    import ray

    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    algo = build_config(players, seed, env_runners, batch, minibatch, epochs).build_algo()
    history = []
    for it in range(1, iterations + 1):
        t0 = time.perf_counter()
        res = algo.train()
        runners = res.get("env_runners", {})
        learner = res.get("learners", {}).get(POLICY, {})
        row = {"iteration": it,
               "env_steps": int(runners.get("num_env_steps_sampled_lifetime", 0)),
               "episodes": int(runners.get("num_episodes_lifetime", 0)),
               "policy_loss": learner.get("policy_loss"), "entropy": learner.get("entropy"),
               "seconds": time.perf_counter() - t0}
        history.append(row)
        log(f"iteration {it}: {row['env_steps']:,} env steps, {row['episodes']} hands, "
            f"policy loss {_fmt(row['policy_loss'])}, entropy {_fmt(row['entropy'])}, "
            f"{row['seconds']:.1f} s")
    return algo, history


def _fmt(x: Any) -> str:
    return "-" if x is None else f"{float(x):.3f}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--iterations", type=int, default=20, help="PPO training iterations")
    p.add_argument("--players", type=int, choices=(2, 4), default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--env-runners", type=int, default=1,
                   help="RLlib env runners (Ray actors sampling episodes; 0: in the driver)")
    p.add_argument("--batch", type=int, default=2048, help="env steps per iteration")
    p.add_argument("--minibatch", type=int, default=256)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--address", default=None,
                   help="Ray cluster address ('auto': the one `ray start` joined; default: "
                        "RAY_ADDRESS, else a cluster started on this machine, else a new "
                        "local one)")
    p.add_argument("--out", default=None, help="save the trained algorithm to this folder")
    p.add_argument("--eval-hands", type=int, default=200,
                   help="paired hands against greedy after training (0: skip)")
    args = p.parse_args(argv)
    try:
        import ray
        import ray.rllib  # noqa: F401
    except ImportError:
        print(f"this example needs RLlib: {INSTALL_HINT}", file=sys.stderr)
        return 2
    algo, _ = train(args.iterations, args.players, args.seed, args.env_runners, args.batch,
                    args.minibatch, args.epochs, args.address)
    try:
        if args.out:
            path = Path(args.out).resolve()
            algo.save_to_path(str(path))
            print(f"saved the algorithm to {path}")
        if args.eval_hands:
            from agents.evaluation.evaluate import evaluate, format_report

            agent = RLlibAgent(algo.get_module(POLICY), spec="rllib_ppo")
            print(format_report(evaluate(agent, "greedy", hands=args.eval_hands,
                                         seed=args.seed, players=args.players)))
    finally:
        algo.stop()
        ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
