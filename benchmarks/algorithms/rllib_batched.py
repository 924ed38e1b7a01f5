"""RLlib's PPO (new API stack) on the batched env through ``gymnasium.make_vec``, for a
wall-clock budget: the baselines table's ``rllib_batched`` row (protocol.py has the command
line).

RLlib's own loop (``algo.train()``) with examples/rllib_ppo_batched.py's configuration:
the env runner builds ``scopa/Scopa-v0``'s batched env itself (``vector_entry_point``), 256
games, half against ``greedy`` and half against ``expert``, one hand per episode rewarded
with its points margin, ``moves="legal"`` (16 slots) with the mask in the observation for
the masked PPO module (256 x 256, shared value layers), 8,192 learner decisions an
iteration, minibatches of 2,048, 4 epochs. The module is saved every tenth of the budget
and at the end (``rllib:PATH``). Env steps are the moves of both seats, counted by the env.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from protocol import Clock, load_example, need, parse_args, refuse_overrun, write_result

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

NAME = "rllib_batched"
SMOKE = {"num_envs": 16, "rollout": 8, "minibatch": 64, "epochs": 1, "hidden": 32}


def main() -> int:
    args = parse_args(__doc__.splitlines()[0])
    from agents.evaluation.ray_eval import explicit_auth_mode

    explicit_auth_mode(None)  # before Ray is imported: no notice about it
    need("ray.rllib", "rllib", NAME)
    example = load_example("rllib_ppo_batched")
    import ray

    settings = {**example.SETTINGS, **(SMOKE if args.smoke else {})}
    ray.init(address="local", include_dashboard=False, log_to_driver=False, num_cpus=2)
    try:
        algo = example.build_config(seed=args.seed, **settings).build_algo()
        env = algo.env_runner_group.local_env_runner.env.unwrapped  # the batched env
        snapshots: list[dict] = []

        def snapshot(path: Path, seconds: float) -> str:
            algo.get_module().save_to_path(str(path))
            snapshots.append({"minutes": seconds / 60, "env_steps": env.env_steps,
                              "spec": f"rllib:{path}"})
            return f"rllib:{path}"

        clock, updates, first = Clock(args.minutes), 0, None
        while not clock.over():
            algo.train()
            updates += 1
            first = clock.seconds() if first is None else first
            if clock.snapshot_due():
                snapshot(args.out / "snapshots" / f"module_{len(snapshots):02d}",
                         clock.seconds())
        seconds, steps = clock.seconds(), env.env_steps
        refuse_overrun(NAME, args, clock.budget, first)
        t0 = time.perf_counter()
        spec = snapshot(args.out / "module", seconds)
        algo.stop()
    finally:
        ray.shutdown()
    write_result(args.out, algorithm=NAME, library="RLlib PPO (Ray), batched env via make_vec",
                 spec=spec, env_steps=steps, train_seconds=seconds, updates=updates,
                 snapshots=snapshots, minutes=args.minutes, seed=args.seed,
                 settings={**settings, "moves": "legal", "max_moves": 16,
                           "opponents": "greedy (even games), expert (odd games)",
                           "save_seconds": time.perf_counter() - t0})
    return 0


if __name__ == "__main__":
    sys.exit(main())
