"""Train sb3-contrib's MaskablePPO on the batched Scopa env for a few minutes, then evaluate
it with ``scopa eval`` as the agent ``sb3:PATH``.

    pip install -e .[sb3]
    python examples/sb3_maskable_ppo.py --minutes 5 --out runs/sb3/maskable_ppo
    scopa eval sb3:runs/sb3/maskable_ppo.zip greedy --hands 1000

The learner plays seat 0 of 2-player scopa in ``--n-envs`` games stepped at once
(``agents.bridges.sb3_vec.ScopaSB3VecEnv``: one ``VecEnv`` over the numpy vector engine,
the opponents' moves computed in batch), one hand per episode, rewarded with the hand's
points margin (own minus other): the dense signal our own PPO trains on
(docs/training.md). Half the games play ``greedy``, half ``expert`` (``--opponent`` gives
one for all). ``MaskablePPO`` samples only legal moves through ``env.action_masks()``.

``--moves legal`` (default): ``Discrete(16)`` over the legal moves (``--max-moves``), each
slot's move features in the observation (``agents.bridges.move_interface``), so
``MlpPolicy`` learns from what a move does. 16 slots halve the network's input against
the default 32; about 1 decision in 220,000 of 2-player scopa has more legal moves, and
plays among its first 16. ``--moves catalogue``: one output per catalogue id (16,204), the
plain route, slower to learn and to train.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

SETTINGS: dict[str, Any] = {"n_steps": 32, "batch_size": 2048, "n_epochs": 4,
                            "learning_rate": 1e-3, "gamma": 1.0, "gae_lambda": 0.95,
                            "ent_coef": 0.0}
"""MaskablePPO's settings here (a rollout is n_envs x n_steps learner decisions)."""


def make_env(n_envs: int, opponent: str | None = None, moves: str = "legal", seed: int = 0,
             max_moves: int | None = 16, **options: Any) -> Any:
    """The batched VecEnv: ``opponent`` in every game, or (None) greedy in the even games
    and expert in the odd ones."""
    from agents.bridges.sb3_vec import ScopaSB3VecEnv

    if moves == "legal":
        options["max_moves"] = max_moves
    env = ScopaSB3VecEnv(n_envs, opponent=opponent or "greedy", reward="points",
                         episode="hand", moves=moves, **options)
    if opponent is None:
        env.env.set_opponent("expert", games=range(1, n_envs, 2))
    env.seed(seed)
    return env


def train(out: str | Path, minutes: float | None = None, steps: int | None = None,
          opponent: str | None = None, seed: int = 0, n_envs: int = 256,
          moves: str = "legal", max_moves: int | None = 16, verbose: int = 0,
          callback: Any = None, **settings: Any) -> Path:
    """Train until ``minutes`` of wall-clock time or ``steps`` learner decisions (the
    first reached), save the model and return its path (``OUT.zip``)."""
    try:
        from sb3_contrib import MaskablePPO
        from stable_baselines3.common.callbacks import BaseCallback, CallbackList
    except ImportError:
        raise SystemExit("this example needs sb3-contrib: pip install -e .[sb3]") from None
    if minutes is None and steps is None:
        raise ValueError("give minutes or steps (or both)")
    from torch.distributions import Distribution

    class Deadline(BaseCallback):
        """Stops training once the wall-clock budget is spent."""

        def __init__(self, seconds: float) -> None:
            super().__init__()
            self.end = time.monotonic() + seconds

        def _on_step(self) -> bool:
            return time.monotonic() < self.end

    env = make_env(n_envs, opponent, moves, seed, max_moves)
    model = MaskablePPO("MlpPolicy", env, seed=seed, device="cpu", verbose=verbose,
                        **{**SETTINGS, **settings})
    callbacks = [c for c in (Deadline(60 * minutes) if minutes is not None else None,
                             callback) if c is not None]
    total = steps if steps is not None else 10**12
    validate = Distribution._validate_args
    # checking every masked distribution's arguments costs as much as building it
    Distribution.set_default_validate_args(False)
    try:
        model.learn(total_timesteps=total, callback=CallbackList(callbacks))
    finally:
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
    p.add_argument("--opponent", default=None,
                   help="agent spec of every game's opponent (default: greedy and expert, "
                        "half the games each)")
    p.add_argument("--moves", choices=("legal", "catalogue"), default="legal")
    p.add_argument("--max-moves", type=int, default=16, help="slots of --moves legal")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--n-envs", type=int, default=256, help="games stepped at once")
    p.add_argument("--eval-hands", type=int, default=1000,
                   help="paired hands of each evaluation (0: none)")
    p.add_argument("--eval-against", nargs="+", default=["random", "greedy"], metavar="SPEC")
    args = p.parse_args(argv)
    if args.n_envs < 1:
        p.error(f"--n-envs must be at least 1, got {args.n_envs}")
    t0 = time.monotonic()
    path = train(args.out, minutes=args.minutes, steps=args.steps, opponent=args.opponent,
                 seed=args.seed, n_envs=args.n_envs, moves=args.moves,
                 max_moves=args.max_moves, verbose=1)
    print(f"trained {time.monotonic() - t0:.0f} s; model: {path}", flush=True)
    if args.eval_hands:
        from scopa_cli import main as scopa

        for spec in args.eval_against:
            cmd = ["eval", f"sb3:{path}", spec, "--hands", str(args.eval_hands),
                   "--seed", "1", "--matches", "0"]
            print("$ scopa " + " ".join(cmd), flush=True)
            status = scopa(cmd)
            if status:
                return status
    return 0


if __name__ == "__main__":
    sys.exit(main())
