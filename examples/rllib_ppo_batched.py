"""Train RLlib's PPO (new API stack) on the batched Gymnasium env through
``gymnasium.make_vec``, with action masking; then evaluate it with the kit's evaluator.

    pip install -e .[rllib]
    python examples/rllib_ppo_batched.py --iterations 50 --out runs/rllib/batched
    scopa eval rllib:runs/rllib/batched greedy --hands 1000

RLlib's ``SingleAgentEnvRunner`` builds its envs with ``gymnasium.make_vec``; with
``gym_env_vectorize_mode="vector_entry_point"`` that is ``scopa/Scopa-v0``'s own batched
env (``agents.bridges.gym_vector``): ``--num-envs`` games stepped at once by the numpy
engine, the opponents' moves computed in batch (half the games ``greedy``, half
``expert``, set when the env is created: ``on_environment_created``). The learner plays
seat 0, one hand per episode, rewarded with the hand's points margin.

``moves="legal"`` (``--moves``): ``Discrete(16)`` over the legal moves with each slot's
move features in the observation; ``mask_in_obs=True`` puts the mask in the observation
(``{"observation", "action_mask"}``), where ``MaskedPPOModule`` (RLlib's default PPO torch
module with the illegal actions' logits pushed to ``FLOAT_MIN``) reads it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import scopa_env
from agents.bridges.rllib_agent import INSTALL_HINT, RLlibAgent
from agents.evaluation.ray_eval import explicit_auth_mode

SETTINGS: dict[str, Any] = {"num_envs": 256, "rollout": 32, "minibatch": 2048, "epochs": 4,
                            "hidden": 256, "lr": 3e-4}
"""The PPO settings here (a train batch is num_envs x rollout learner decisions)."""


def env_config(moves: str = "legal", max_moves: int = 16) -> dict[str, Any]:
    """The batched env's options (``gymnasium.make_vec`` keyword arguments)."""
    config = {"opponent": "greedy", "reward": "points", "episode": "hand", "moves": moves,
              "mask_in_obs": True}
    if moves == "legal":
        config["max_moves"] = max_moves
    return config


def half_expert(env: Any, **kwargs: Any) -> None:
    """``on_environment_created``: the odd games play ``expert`` (the even ones greedy)."""
    env.set_opponent("expert", games=range(1, env.num_envs, 2))


def build_config(seed: int = 0, moves: str = "legal", max_moves: int = 16,
                 num_envs: int = 256, rollout: int = 32, minibatch: int = 2048,
                 epochs: int = 4, hidden: int = 256, lr: float = 3e-4) -> Any:
    """The ``PPOConfig``: one masked policy on ``num_envs`` batched games."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from agents.bridges.rllib_agent import MaskedPPOModule, quiet_rllib_notices

    quiet_rllib_notices()
    return (
        PPOConfig()
        .environment(scopa_env.GYM_ENV_ID, env_config=env_config(moves, max_moves),
                     disable_env_checking=True)
        .framework("torch")
        # the env is a VectorEnv itself: no SyncVectorEnv of single envs around it
        .env_runners(num_env_runners=0, num_envs_per_env_runner=num_envs,
                     gym_env_vectorize_mode="vector_entry_point")
        .callbacks(on_environment_created=lambda env, **kw: half_expert(env))
        .learners(num_learners=0)
        .rl_module(rl_module_spec=RLModuleSpec(
            module_class=MaskedPPOModule,
            model_config={"fcnet_hiddens": [hidden, hidden], "vf_share_layers": True}))
        .training(train_batch_size_per_learner=num_envs * rollout,
                  minibatch_size=min(minibatch, num_envs * rollout),
                  num_epochs=epochs, lr=lr, gamma=1.0, lambda_=0.95, entropy_coeff=0.0)
        .debugging(seed=seed, log_sys_usage=False)
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--iterations", type=int, default=50, help="PPO training iterations")
    p.add_argument("--moves", choices=("legal", "catalogue"), default="legal")
    p.add_argument("--num-envs", type=int, default=SETTINGS["num_envs"])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=None, help="save the trained module to this folder")
    p.add_argument("--eval-hands", type=int, default=200,
                   help="paired hands against greedy after training (0: skip)")
    args = p.parse_args(argv)
    explicit_auth_mode(None)  # before Ray is imported: no notice about it
    try:
        import ray
        import ray.rllib  # noqa: F401
    except ImportError:
        print(f"this example needs RLlib: {INSTALL_HINT}", file=sys.stderr)
        return 2
    ray.init(address="local", include_dashboard=False, log_to_driver=False)
    try:
        algo = build_config(args.seed, args.moves, num_envs=args.num_envs).build_algo()
        for it in range(1, args.iterations + 1):
            t0 = time.perf_counter()
            res = algo.train()
            runners = res.get("env_runners", {})
            print(f"iteration {it}: {int(runners.get('num_env_steps_sampled_lifetime', 0)):,}"
                  f" learner decisions, return {runners.get('episode_return_mean', 0):+.3f} "
                  f"points a hand, {time.perf_counter() - t0:.1f} s", flush=True)
        module = algo.get_module()
        if args.out:
            path = Path(args.out).resolve()
            module.save_to_path(str(path))
            print(f"saved the module to {path} (agent spec rllib:{path})")
        if args.eval_hands:
            from agents.evaluation.evaluate import evaluate, format_report

            print(format_report(evaluate(RLlibAgent(module, spec="rllib_ppo_batched"),
                                         "greedy", hands=args.eval_hands, seed=args.seed)))
        algo.stop()
    finally:
        ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
