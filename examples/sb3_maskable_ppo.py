"""Train sb3-contrib's MaskablePPO on ``scopa/Scopa-v0`` for a few minutes, then evaluate
it with ``scopa eval`` as the agent ``sb3:PATH``.

    pip install -e .[sb3]
    python examples/sb3_maskable_ppo.py --minutes 5 --out runs/sb3/maskable_ppo
    scopa eval sb3:runs/sb3/maskable_ppo.zip greedy --hands 400

The learner plays seat 0 of 2-player scopa against ``--opponent`` (default greedy),
one hand per episode, rewarded with the hand's points margin (own minus other): the
dense signal our own PPO trains on (docs/training.md). ``MaskablePPO`` samples only
legal ids through ``env.action_masks()``. Its ``MlpPolicy`` has one output per catalogue
id (16,204): the plain Gymnasium route, simpler and slower to learn than the kit's own
policy, which scores each legal move by its features (``python train.py``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium

import agents


def make_env(opponent: str, **options: Any) -> gymnasium.Env:
    return gymnasium.make(agents.GYM_ENV_ID, opponent=opponent, reward="points",
                          episode="hand", **options)


def train(out: str | Path, minutes: float | None = None, steps: int | None = None,
          opponent: str = "greedy", seed: int = 0, n_envs: int = 4, n_steps: int = 128,
          verbose: int = 0) -> Path:
    """Train until ``minutes`` of wall-clock time or ``steps`` learner decisions (the
    first reached), save the model and return its path (``OUT.zip``)."""
    try:
        from sb3_contrib import MaskablePPO
        from stable_baselines3.common.callbacks import BaseCallback
        from stable_baselines3.common.vec_env import DummyVecEnv
    except ImportError:
        raise SystemExit("this example needs sb3-contrib: pip install -e .[sb3]") from None
    if minutes is None and steps is None:
        raise ValueError("give minutes or steps (or both)")
    import torch
    from torch.distributions import Distribution


    class Deadline(BaseCallback):
        """Stops training once the wall-clock budget is spent."""

        def __init__(self, seconds: float) -> None:
            super().__init__()
            self.end = time.monotonic() + seconds

        def _on_step(self) -> bool:
            return time.monotonic() < self.end

    env = DummyVecEnv([lambda: make_env(opponent) for _ in range(n_envs)])
    # short updates and a large step: minutes of training, not hours
    model = MaskablePPO("MlpPolicy", env, n_steps=n_steps, batch_size=128, n_epochs=4,
                        learning_rate=1e-3, gamma=1.0, gae_lambda=0.95, ent_coef=0.0,
                        seed=seed, device="cpu", verbose=verbose)
    callback = Deadline(60 * minutes) if minutes is not None else None
    total = steps if steps is not None else 10**12
    threads, validate = torch.get_num_threads(), Distribution._validate_args
    torch.set_num_threads(1)  # small matrices: a second thread costs more than it gives
    # checking every 16,204-wide distribution's arguments costs as much as building it
    Distribution.set_default_validate_args(False)
    try:
        model.learn(total_timesteps=total, callback=callback)
    finally:
        torch.set_num_threads(threads)
        Distribution.set_default_validate_args(validate)
    path = Path(out)
    path = path if path.suffix == ".zip" else path.with_name(path.name + ".zip")
    path.parent.mkdir(parents=True, exist_ok=True)
    model.save(str(path))
    env.close()
    return path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--minutes", type=float, default=5.0, help="training wall-clock minutes")
    p.add_argument("--steps", type=int, default=None,
                   help="stop after this many learner decisions instead (if reached first)")
    p.add_argument("--out", default="runs/sb3/maskable_ppo",
                   help="model path (.zip is added; default runs/sb3/maskable_ppo)")
    p.add_argument("--opponent", default="greedy", help="agent spec of the opponent")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--n-envs", type=int, default=4)
    p.add_argument("--eval-hands", type=int, default=400,
                   help="paired hands of each evaluation (0: none)")
    p.add_argument("--eval-against", nargs="+", default=["random", "greedy"], metavar="SPEC")
    args = p.parse_args(argv)
    t0 = time.monotonic()
    path = train(args.out, minutes=args.minutes, steps=args.steps, opponent=args.opponent,
                 seed=args.seed,
                 n_envs=args.n_envs, verbose=1)
    print(f"trained {time.monotonic() - t0:.0f} s; model: {path}", flush=True)
    if args.eval_hands:
        from scopa_cli import main as scopa

        for spec in args.eval_against:
            cmd = ["eval", f"sb3:{path}", spec, "--hands", str(args.eval_hands),
                   "--seed", "1"]
            print("$ scopa " + " ".join(cmd), flush=True)
            status = scopa(cmd)
            if status:
                return status
    return 0


if __name__ == "__main__":
    sys.exit(main())
