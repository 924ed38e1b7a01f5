"""sb3-contrib's MaskablePPO on the Gymnasium env ``scopa/Scopa-v0`` for a wall-clock
budget: the baselines table's ``sb3_maskable_ppo`` row (protocol.py has the command line).

SB3's own loop (``model.learn``) with a callback that saves a snapshot every tenth of the
budget and stops at its end. The learner plays seat 0 of 2-player scopa, one hand per
episode, rewarded with the hand's points margin, on 4 environments whose opponents are
the kit's agents ``greedy``, ``expert``, ``greedy``, ``expert`` (the env's API: one
opponent per environment). ``MlpPolicy`` has one output per catalogue id (16,204) and
samples only legal ids (``env.action_masks()``); the settings are those of the
example's first version (4 single envs; the example now runs the batched env, the
``sb3_batched_*`` rows). The table keeps this row as "one env per game". Env steps are
the moves of both seats: twice the learner's decisions (one hand: 18 moves each).
"""

from __future__ import annotations

import sys
from pathlib import Path

from protocol import need, parse_args, write_result

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

NAME = "sb3_maskable_ppo"
OPPONENTS = ["greedy", "expert", "greedy", "expert"]
SETTINGS = {"n_steps": 128, "batch_size": 128, "n_epochs": 4, "learning_rate": 1e-3,
            "gamma": 1.0, "gae_lambda": 0.95, "ent_coef": 0.0}
SMOKE = {"n_steps": 16, "batch_size": 32, "n_epochs": 1}


def main() -> int:
    args = parse_args(__doc__.splitlines()[0])
    need("sb3_contrib", "sb3", NAME)
    import gymnasium
    import torch
    from sb3_common import learn_for_budget
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv
    from torch.distributions import Distribution

    import agents

    def make(opponent: str):  # noqa: ANN202 - SB3 wants a thunk per env
        return lambda: gymnasium.make(agents.GYM_ENV_ID, opponent=opponent, reward="points",
                                      episode="hand")

    settings = {**SETTINGS, **(SMOKE if args.smoke else {})}
    torch.set_num_threads(1)  # the example's: small matrices, a second thread costs more
    Distribution.set_default_validate_args(False)  # checking 16,204-wide distributions
    env = DummyVecEnv([make(o) for o in OPPONENTS])
    model = MaskablePPO("MlpPolicy", env, seed=args.seed, device="cpu", verbose=0,
                        **settings)
    seconds, updates, snapshots, spec = learn_for_budget(
        model, args, NAME, lambda: 2 * model.num_timesteps, settings["n_epochs"])
    env.close()
    write_result(args.out, algorithm=NAME, library="sb3-contrib MaskablePPO", spec=spec,
                 env_steps=2 * model.num_timesteps, train_seconds=seconds, updates=updates,
                 snapshots=snapshots, minutes=args.minutes, seed=args.seed,
                 settings={**settings, "n_envs": len(OPPONENTS), "opponents": OPPONENTS,
                           "policy": "MlpPolicy"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
