"""Training throughput, piece by piece and end to end, in one process.

    python benchmarks/train_throughput.py [--config configs/default.yaml] [--json]

Measured in the same run, with the config's batch size (``num_envs``), network,
threads and device:

- ``raw_env_steps_per_s``: ``VectorScopaEnv`` alone, uniformly random legal moves;
- ``rollout_steps_per_s``: env steps per second of a rollout in which every game is
  played against one opponent kind (``self``, ``greedy``, ``expert``), policy forward,
  move features and opponents' choices included;
- ``learner_samples_per_s``: decisions per second through the PPO update, every epoch
  counted;
- ``overall_env_steps_per_s``: a short real training run (``Trainer.train``, the
  config's opponent pool, logging to TensorBoard) for ``--updates`` updates, plus one
  periodic evaluation and the one-off calibration of the evaluation opponents,
  amortised over ``eval_every_steps`` and ``total_env_steps`` as a full run pays them;
- ``overall_vs_raw``: the ratio of the two.

Absolute figures on a shared machine vary by 2x; the ratio is measured in one run.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import scopa_policy  # noqa: E402, F401  (first: torch's thread policy, as in training)

# isort: split
import torch  # noqa: E402

from scopa_env.vector import VectorScopaEnv  # noqa: E402
from scopa_train.config import load_config  # noqa: E402
from scopa_train.ppo import ppo_update  # noqa: E402
from scopa_train.trainer import Trainer, make_run_dir  # noqa: E402


def raw_env(cfg: Any, steps: int) -> float:
    """Env steps per second of random legal play at the config's batch size."""
    env = VectorScopaEnv(cfg.num_envs, rules=cfg.rules, reward=cfg.reward,
                         episode=cfg.episode, seed=0, records=False, **cfg.rules_kwargs)
    rng = np.random.default_rng(0)
    rows = np.arange(cfg.num_envs)

    def play(k: int) -> None:
        for _ in range(k):
            pick = (rng.random(cfg.num_envs) * env.legal_count).astype(np.int64)
            env.step(env.legal_ids[rows, pick])

    play(5)  # warm-up
    t0 = time.perf_counter()
    play(steps)
    return steps * cfg.num_envs / (time.perf_counter() - t0)


def rollouts(trainer: Trainer, kind: str, repeats: int) -> tuple[float, Any]:
    """Env steps per second of rollouts with every game against ``kind``; the last
    rollout's batch."""
    n = trainer.cfg.num_envs
    kinds = [kind] * n
    team = np.arange(n) % 2
    steps = seconds = 0.0
    batch = None
    for r in range(repeats + 1):  # the first one warms up
        t0 = time.perf_counter()
        batch, rs = trainer.collector.collect(
            trainer.net, None, kinds, team, trainer.steps_per_rollout, reset_seed=100 + r,
            agent_seed=100 + r, gamma=trainer.cfg.gamma, lam=trainer.cfg.gae_lambda)
        if r:
            steps += rs.env_steps
            seconds += time.perf_counter() - t0
    return steps / seconds, batch


def learner(trainer: Trainer, batch: Any) -> float:
    """Decisions per second through the PPO update (all epochs)."""
    cfg = trainer.cfg
    us = ppo_update(trainer.net, trainer.optimizer, batch, np.random.default_rng(0),
                    epochs=cfg.update_epochs, num_minibatches=cfg.num_minibatches,
                    clip_coef=cfg.clip_coef, clip_vloss=cfg.clip_vloss,
                    ent_coef=cfg.ent_coef, vf_coef=cfg.vf_coef,
                    max_grad_norm=cfg.max_grad_norm, norm_adv=cfg.norm_adv,
                    target_kl=cfg.target_kl)
    return us.samples / us.seconds


def overall(cfg: Any, updates: int, runs_dir: str) -> dict[str, float]:
    """A short real training run plus one evaluation and the calibration, amortised."""
    from dataclasses import replace

    quiet = replace(cfg, runs_dir=runs_dir, eval_every_steps=0, checkpoint_every_steps=0)
    trainer = Trainer(quiet, make_run_dir(quiet), progress=False, log=lambda _: None)
    t0 = time.perf_counter()
    trainer.train(stop_after_updates=updates)
    train_s = time.perf_counter() - t0
    steps = trainer.counters.env_steps
    calib_s = eval_s = 0.0
    if cfg.eval_every_steps:
        trainer.cfg = replace(trainer.cfg, eval_every_steps=cfg.eval_every_steps)
        t0 = time.perf_counter()
        trainer.evaluate()  # calibrates the opponents first (once per run)
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        trainer.evaluate()
        eval_s = time.perf_counter() - t0
        calib_s = max(0.0, first - eval_s)
    amortised = (train_s + eval_s * steps / cfg.eval_every_steps
                 + calib_s * steps / cfg.total_env_steps) if cfg.eval_every_steps else train_s
    return {"overall_env_steps_per_s": steps / amortised, "train_seconds": train_s,
            "train_env_steps": steps, "eval_seconds": eval_s, "calibration_seconds": calib_s}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default=str(ROOT / "configs" / "default.yaml"))
    p.add_argument("--set", dest="overrides", action="append", default=[],
                   metavar="KEY=VALUE", help="config override (repeatable)")
    p.add_argument("--updates", type=int, default=4,
                   help="updates of the short training run (default 4)")
    p.add_argument("--repeats", type=int, default=2,
                   help="timed rollouts per opponent kind (default 2)")
    p.add_argument("--raw-steps", type=int, default=200, help="steps of the raw env timing")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    args = p.parse_args(argv)
    cfg = load_config(args.config, args.overrides)
    with tempfile.TemporaryDirectory() as tmp:
        from dataclasses import replace

        probe_cfg = replace(cfg, runs_dir=tmp, eval_every_steps=0)
        trainer = Trainer(probe_cfg, make_run_dir(probe_cfg), progress=False,
                          log=lambda _: None)
        raw = raw_env(cfg, args.raw_steps)
        rollout: dict[str, float] = {}
        batch = None
        for kind in ("self", "greedy", "expert"):
            rate, b = rollouts(trainer, kind, args.repeats)
            rollout[kind] = rate
            if kind == "self":
                batch = b
        learn = learner(trainer, batch)
        end_to_end = overall(cfg, args.updates, tmp)
    out = {
        "config": str(args.config), "overrides": args.overrides,
        "num_envs": cfg.num_envs, "moves_per_rollout": trainer.steps_per_rollout,
        "device": str(getattr(trainer, "device", "cpu")), "torch_threads": torch.get_num_threads(),
        "raw_env_steps_per_s": raw, "rollout_steps_per_s": rollout,
        "learner_samples_per_s": learn, **end_to_end,
        "overall_vs_raw": end_to_end["overall_env_steps_per_s"] / raw,
    }
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        print(f"config {out['config']} {' '.join(args.overrides)} ({cfg.num_envs} games, "
              f"{out['device']}, {out['torch_threads']} torch threads)")
        print(f"raw env (random play)      {raw:12,.0f} env steps/s")
        for kind, rate in rollout.items():
            print(f"rollout vs {kind:<15} {rate:12,.0f} env steps/s")
        print(f"learner (PPO update)       {learn:12,.0f} decisions/s (epochs counted)")
        print(f"overall (training run)     {out['overall_env_steps_per_s']:12,.0f} env steps/s"
              f"  ({out['train_env_steps']:,} steps in {out['train_seconds']:.1f} s, "
              f"evaluation {out['eval_seconds']:.1f} s per {cfg.eval_every_steps:,} steps)")
        print(f"overall / raw              {out['overall_vs_raw']:12.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
