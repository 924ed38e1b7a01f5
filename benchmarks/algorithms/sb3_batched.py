"""sb3-contrib's MaskablePPO on the batched env (``agents.bridges.sb3_vec``) for a wall-clock
budget: the baselines table's ``sb3_batched_legal`` and ``sb3_batched_catalogue`` rows
(protocol.py has the command line; ``--moves`` picks the interface).

SB3's own loop with examples/sb3_maskable_ppo.py's settings and env: 256 games stepped at
once, the learner in seat 0, one hand per episode rewarded with its points margin, half
the games against ``greedy`` and half against ``expert``; ``MlpPolicy`` (64 x 64), samples
only legal moves. ``legal``: ``Discrete(16)`` over the legal moves with their features in
the observation; ``catalogue``: one output per catalogue id. Env steps are the moves of
both seats, counted by the env.
"""

from __future__ import annotations

import sys
from pathlib import Path

from protocol import need, write_result

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples"))

SMOKE = {"n_steps": 4, "batch_size": 64, "n_epochs": 1}
SMOKE_ENVS = 16


def run(args: object, moves: str) -> int:
    name = f"sb3_batched_{moves}"
    need("sb3_contrib", "sb3", name)
    import sb3_maskable_ppo as example
    from sb3_common import learn_for_budget
    from sb3_contrib import MaskablePPO
    from torch.distributions import Distribution

    settings = {**example.SETTINGS, **(SMOKE if args.smoke else {})}
    n_envs = SMOKE_ENVS if args.smoke else 256
    Distribution.set_default_validate_args(False)  # checking masked distributions
    env = example.make_env(n_envs, None, moves, args.seed)
    model = MaskablePPO("MlpPolicy", env, seed=args.seed, device="cpu", verbose=0,
                        **settings)
    seconds, updates, snapshots, spec = learn_for_budget(
        model, args, name, lambda: env.env.env_steps, settings["n_epochs"])
    steps = env.env.env_steps
    env.close()
    write_result(args.out, algorithm=name, library=f"sb3-contrib MaskablePPO, batched env, "
                 f"moves={moves}", spec=spec, env_steps=steps, train_seconds=seconds,
                 updates=updates, snapshots=snapshots, minutes=args.minutes, seed=args.seed,
                 settings={**settings, "n_envs": n_envs, "moves": moves,
                           "max_moves": 16 if moves == "legal" else None,
                           "opponents": "greedy (even games), expert (odd games)",
                           "policy": "MlpPolicy"})
    return 0
