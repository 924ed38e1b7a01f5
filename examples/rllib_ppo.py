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

import scopa_env
from agents.bridges.rllib_agent import INSTALL_HINT, POLICY, RLlibAgent
from agents.evaluation.ray_eval import explicit_auth_mode

ENV_NAME = "scopa_pettingzoo"
__all__ = ["RLlibAgent", "build_config", "make_env", "train", "POLICY"]


def make_env(config: dict[str, Any] | None = None) -> Any:
    """The PettingZoo AEC env wrapped as RLlib's ``MultiAgentEnv`` (``config``: the
    env's keyword arguments, e.g. ``{"players": 4}``)."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    options = {"reward": "points", "episode": "hand", **dict(config or {})}
    return PettingZooEnv(scopa_env.env(**options))


def build_config(players: int = 2, seed: int = 0, env_runners: int = 0,
                 batch: int = 1024, minibatch: int = 256, epochs: int = 4,
                 hidden: int = 256, lr: float = 3e-4) -> Any:
    """The ``PPOConfig``: one shared, masked policy for every seat."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    from agents.bridges.rllib_agent import MaskedPPOModule, quiet_rllib_notices

    quiet_rllib_notices()  # two notices of RLlib's own that no setting avoids

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
        # a runner that dies stops the run with its error: RLlib keeps the runners'
        # config in the object store, so Ray logs (at error level) that restarting them
        # may fail
        .fault_tolerance(restart_failed_env_runners=False)
        .learners(num_learners=0)
        .multi_agent(policies={POLICY}, policy_mapping_fn=lambda agent_id, *a, **k: POLICY)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={
            POLICY: RLModuleSpec(module_class=MaskedPPOModule,
                                 model_config={"fcnet_hiddens": [hidden, hidden],
                                               "vf_share_layers": True})}))
        .training(train_batch_size_per_learner=batch, minibatch_size=minibatch,
                  num_epochs=epochs, lr=lr, gamma=1.0, lambda_=0.95, entropy_coeff=0.0)
        .debugging(seed=seed, log_sys_usage=False)  # no GPU monitoring (and no notice)
    )


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
    explicit_auth_mode(args.address)  # before Ray is imported: no notice about it
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
