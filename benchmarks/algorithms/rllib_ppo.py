"""RLlib's PPO on the PettingZoo env, every seat one shared masked policy (multi-agent
self-play), for a wall-clock budget: the baselines table's ``rllib_ppo`` row (protocol.py
has the command line).

RLlib's own loop (``algo.train()``, one iteration at a time) with the configuration of
examples/rllib_ppo.py (``build_config``: 2,048 env steps an iteration, one env runner,
minibatches of 256, 4 epochs, a 256 x 256 network with one logit per catalogue id, illegal
ids masked) until the budget is spent; the shared RLModule is saved every tenth of the
budget and at the end (``rllib:PATH``). The training time counts the iterations, not
starting Ray nor building the algorithm. Env steps are RLlib's
``num_env_steps_sampled_lifetime`` (one move of one seat each).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from protocol import Clock, load_example, need, parse_args, refuse_overrun, write_result

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

NAME = "rllib_ppo"
SETTINGS = {"env_runners": 1, "batch": 2048, "minibatch": 256, "epochs": 4}
SMOKE = {"batch": 128, "minibatch": 64, "epochs": 1, "hidden": 32}


def main() -> int:
    args = parse_args(__doc__.splitlines()[0])
    from agents.evaluation.ray_eval import explicit_auth_mode

    explicit_auth_mode(None)  # before Ray is imported: no notice about it
    need("ray.rllib", "rllib", NAME)
    example = load_example("rllib_ppo")
    import ray

    settings = {**SETTINGS, **(SMOKE if args.smoke else {})}
    # a Ray of its own (never a cluster another job started here), on the machine's 2 cores
    ray.init(address="local", include_dashboard=False, log_to_driver=False, num_cpus=2)
    try:
        algo = example.build_config(seed=args.seed, **settings).build_algo()
        module = algo.get_module(example.POLICY)
        snapshots: list[dict] = []

        def snapshot(path: Path, seconds: float, steps: int) -> str:
            algo.get_module(example.POLICY).save_to_path(str(path))
            snapshots.append({"minutes": seconds / 60, "env_steps": steps,
                              "spec": f"rllib:{path}"})
            return f"rllib:{path}"

        assert module is not None
        clock, updates, steps, first = Clock(args.minutes), 0, 0, None
        while not clock.over():
            res = algo.train()
            updates += 1
            steps = int(res.get("env_runners", {}).get("num_env_steps_sampled_lifetime", 0))
            first = clock.seconds() if first is None else first
            if clock.snapshot_due():
                snapshot(args.out / "snapshots" / f"module_{len(snapshots):02d}",
                         clock.seconds(), steps)
        seconds = clock.seconds()
        refuse_overrun(NAME, args, clock.budget, first)
        t0 = time.perf_counter()
        spec = snapshot(args.out / "module", seconds, steps)
        algo.stop()
    finally:
        ray.shutdown()
    write_result(args.out, algorithm=NAME, library="RLlib PPO (Ray)", spec=spec,
                 env_steps=steps, train_seconds=seconds, updates=updates,
                 snapshots=snapshots, minutes=args.minutes, seed=args.seed,
                 settings={**settings, "save_seconds": time.perf_counter() - t0})
    return 0


if __name__ == "__main__":
    sys.exit(main())
