"""Training throughput, piece by piece and end to end, in one process.

    python benchmarks/train_throughput.py [--config configs/recipe.yaml] [--stage NAME]
        [--set SECTION.KEY=VALUE] [--json]

Measured in the same run, with one PPO stage of the config (``--stage``, default the
config's first PPO stage: stage 1 of the recipe) and its batch size
(``rollouts.num_envs``), network, threads and device:

- ``raw_env_steps_per_s``: ``VectorScopaEnv`` alone, uniformly random legal moves;
- ``rollout_steps_per_s``: env steps per second of a rollout in which every game is
  played against one opponent kind (``self``, ``greedy``, ``expert``), policy forward,
  move features and opponents' choices included;
- ``learner_samples_per_s``: decisions per second through the PPO update, every epoch
  counted;
- ``overall_env_steps_per_s``: a short real training run (``PPOStage.train``, the
  config's opponent pool, logging to TensorBoard) for ``--updates`` updates, plus one
  periodic evaluation and the one-off calibration of the evaluation opponents,
  amortised over ``evaluation.every_steps`` and ``ppo.total_env_steps`` as a full run
  pays them;
- ``overall_vs_raw``: the ratio of the two;
- ``overall_vs_raw_cpu``: the same ratio by process CPU time (every thread's): env steps
  per CPU-second of training against those of the raw env, which a busy machine moves
  less than the wall-clock ratio (the training's two threads wait for each other there).
- the limit the matrix products set (``--no-flops`` leaves it out):
  ``matmul_gflops``, the machine's float32 matrix-product rate at the training's torch
  threads (the best of five products of two 2,048 x 2,048 matrices);
  ``train_flops_per_env_step``, the matrix-product FLOPs of one real update of the stage
  (its rollout's forward passes and its PPO epochs, backward included), counted by
  torch's ``FlopCounterMode``, per env step; ``learner_gflops`` and
  ``overall_matmul_gflops``, the rates those FLOPs run at in the learner and in the whole
  training run; and ``matmul_ceiling_vs_raw``, the overall / raw ratio training would
  reach if it did nothing but its matrix products at ``matmul_gflops``.

Absolute figures on a shared machine vary by 2x; the ratios are measured in one run.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agents.commands import quiet_idle_threads  # noqa: E402

quiet_idle_threads()  # first, before torch loads: the thread policy the commands start with

# isort: split
import torch  # noqa: E402
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from scopa_env.vector import VectorScopaEnv  # noqa: E402
from scopa_train.config import ConfigError, StageConfig, load_recipe  # noqa: E402
from scopa_train.framework import make_run_dir  # noqa: E402
from scopa_train.stages.ppo import PPOStage, ppo_update  # noqa: E402


def ppo_stage(config: str | Path, overrides: list[str], name: str | None = None
              ) -> StageConfig:
    """The PPO stage ``name`` of a config, after ``--set`` ``overrides`` (default: its
    first PPO stage; a config without ``stages:`` is one stage); ``ConfigError`` when
    there is none."""
    stages = load_recipe(config, overrides).stages
    found = [s for s in stages if s.name == name] if name else \
        [s for s in stages if s.kind == "ppo"]
    if not found or found[0].kind != "ppo":
        raise ConfigError(f"{config} has no PPO stage{' ' + repr(name) if name else ''} "
                          f"(stages: {', '.join(f'{s.name} ({s.kind})' for s in stages)})")
    return found[0]


def quiet_stage(cfg: StageConfig, runs_dir: str) -> PPOStage:
    """A fresh PPO stage of ``cfg`` in a new run folder under ``runs_dir``, without
    periodic evaluations or checkpoints, logging nothing."""
    cfg = replace(cfg, run=replace(cfg.run, runs_dir=runs_dir),
                  evaluation=replace(cfg.evaluation, every_steps=0),
                  checkpoints=replace(cfg.checkpoints, every_steps=0))
    return PPOStage(cfg, make_run_dir(cfg), progress=False, log=lambda _: None)


def raw_env(cfg: StageConfig, steps: int) -> tuple[float, float]:
    """Env steps per second of random legal play at the config's batch size, by wall
    clock and by process CPU time."""
    n = cfg.rollouts.num_envs
    env = VectorScopaEnv(n, rules=cfg.rules.name, reward=cfg.rollouts.reward,
                         episode=cfg.rollouts.episode, seed=0, records=False,
                         **cfg.rules_kwargs)
    rng = np.random.default_rng(0)
    rows = np.arange(n)

    def play(k: int) -> None:
        for _ in range(k):
            pick = (rng.random(n) * env.legal_count).astype(np.int64)
            env.step(env.legal_ids[rows, pick])

    play(5)  # warm-up
    t0, c0 = time.perf_counter(), time.process_time()
    play(steps)
    return (steps * n / (time.perf_counter() - t0), steps * n / (time.process_time() - c0))


def rollouts(stage: PPOStage, kind: str, repeats: int) -> tuple[float, Any]:
    """Env steps per second of rollouts with every game against ``kind``; the last
    rollout's batch."""
    n = stage.cfg.rollouts.num_envs
    kinds = [kind] * n
    team = np.arange(n) % 2
    steps = seconds = 0.0
    batch = None
    for r in range(repeats + 1):  # the first one warms up
        t0 = time.perf_counter()
        batch, rs = stage.collector.collect(
            stage.net, None, kinds, team, stage.steps_per_rollout, reset_seed=100 + r,
            agent_seed=100 + r, gamma=stage.cfg.ppo.gamma, lam=stage.cfg.ppo.gae_lambda)
        if r:
            steps += rs.env_steps
            seconds += time.perf_counter() - t0
    return steps / seconds, batch


def update(stage: PPOStage, batch: Any, epochs: int | None = None) -> Any:
    """The stage's PPO update over ``batch`` (``epochs``, default the config's, each run
    whole where one is given); its ``UpdateStats``."""
    p = stage.cfg.ppo
    return ppo_update(stage.net, stage.optimizer, batch, np.random.default_rng(0),
                      epochs=epochs or p.update_epochs, num_minibatches=p.num_minibatches,
                      clip_coef=p.clip_coef, clip_vloss=p.clip_vloss,
                      ent_coef=p.ent_coef, vf_coef=p.vf_coef,
                      max_grad_norm=p.max_grad_norm, norm_adv=p.norm_adv,
                      target_kl=0.0 if epochs else p.target_kl)


def learner(stage: PPOStage, batch: Any) -> float:
    """Decisions per second through the PPO update (all epochs)."""
    us = update(stage, batch)
    return us.samples / us.seconds


def overall(cfg: StageConfig, updates: int, runs_dir: str) -> dict[str, float]:
    """A short real training run plus one evaluation and the calibration, amortised."""
    stage = quiet_stage(cfg, runs_dir)
    rate: dict[str, float] = {}
    t0, c0 = time.perf_counter(), time.process_time()
    stage.train(stop_after_updates=updates)
    train_s, train_cpu = time.perf_counter() - t0, time.process_time() - c0
    steps = stage.counters.env_steps
    calib_s = eval_s = calib_cpu = eval_cpu = 0.0
    every = cfg.evaluation.every_steps
    if every:  # the stage evaluates against the config's evaluation opponents
        t0, c0 = time.perf_counter(), time.process_time()
        stage.evaluate()  # calibrates the opponents first (once per run)
        first, first_cpu = time.perf_counter() - t0, time.process_time() - c0
        t0, c0 = time.perf_counter(), time.process_time()
        stage.evaluate()
        eval_s, eval_cpu = time.perf_counter() - t0, time.process_time() - c0
        calib_s, calib_cpu = max(0.0, first - eval_s), max(0.0, first_cpu - eval_cpu)
    for key, run_s, ev, cal in (("overall_env_steps_per_s", train_s, eval_s, calib_s),
                                ("overall_env_steps_per_cpu_s", train_cpu, eval_cpu,
                                 calib_cpu)):
        amortised = (run_s + ev * steps / every
                     + cal * steps / cfg.ppo.total_env_steps) if every else run_s
        rate[key] = steps / amortised
    return {**rate, "train_seconds": train_s, "train_env_steps": steps,
            "eval_seconds": eval_s, "calibration_seconds": calib_s}


def matmul_gflops(n: int = 2048, repeats: int = 5) -> float:
    """The machine's float32 matrix-product rate at torch's threads, GFLOP/s: the best of
    ``repeats`` products of two ``n`` x ``n`` matrices."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    torch.mm(a, b)  # warm-up
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - t0)
    return 2 * n**3 / best / 1e9


def update_flops(cfg: StageConfig, runs_dir: str) -> float:
    """Matrix-product FLOPs of one real update of a fresh stage (rollout and PPO epochs,
    backward included), per env step."""
    stage = quiet_stage(cfg, runs_dir)
    with FlopCounterMode(display=False) as counter:
        stage.train(stop_after_updates=1)
    return counter.get_total_flops() / stage.counters.env_steps


def epoch_flops(stage: PPOStage, batch: Any) -> float:
    """Matrix-product FLOPs of one PPO epoch over ``batch``, per decision."""
    with FlopCounterMode(display=False) as counter:
        us = update(stage, batch, epochs=1)
    return counter.get_total_flops() / us.samples


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default=str(ROOT / "configs" / "recipe.yaml"))
    p.add_argument("--stage", metavar="NAME",
                   help="the PPO stage of the config to measure (default: its first)")
    p.add_argument("--set", dest="overrides", action="append", default=[],
                   metavar="KEY=VALUE", help="config override, as train.py's (repeatable): "
                   "rollouts.num_envs=512, run.device=cpu, STAGE.ppo.update_epochs=2")
    p.add_argument("--updates", type=int, default=4,
                   help="updates of the short training run (default 4)")
    p.add_argument("--repeats", type=int, default=2,
                   help="timed rollouts per opponent kind (default 2)")
    p.add_argument("--raw-steps", type=int, default=200, help="steps of the raw env timing")
    p.add_argument("--no-flops", action="store_true",
                   help="leave out the matrix-product limit (matmul_gflops and the FLOPs)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    args = p.parse_args(argv)
    try:
        cfg = ppo_stage(args.config, args.overrides, args.stage)
    except ConfigError as e:
        p.error(str(e))
    with tempfile.TemporaryDirectory() as tmp:
        probe = quiet_stage(cfg, tmp)
        raw, raw_cpu = raw_env(cfg, args.raw_steps)
        rollout: dict[str, float] = {}
        batch = None
        for kind in ("self", "greedy", "expert"):
            rate, b = rollouts(probe, kind, args.repeats)
            rollout[kind] = rate
            if kind == "self":
                batch = b
        learn = learner(probe, batch)
        end_to_end = overall(cfg, args.updates, tmp)
        if not args.no_flops:
            per_step, per_sample = update_flops(cfg, tmp), epoch_flops(probe, batch)
            moves = len(batch.feats) / len(batch)
            peak = matmul_gflops()
    out = {
        "config": str(args.config), "stage": cfg.name, "overrides": args.overrides,
        "num_envs": cfg.rollouts.num_envs, "moves_per_rollout": probe.steps_per_rollout,
        "device": str(probe.device), "torch_threads": torch.get_num_threads(),
        "raw_env_steps_per_s": raw, "raw_env_steps_per_cpu_s": raw_cpu,
        "rollout_steps_per_s": rollout,
        "learner_samples_per_s": learn, **end_to_end,
        "overall_vs_raw": end_to_end["overall_env_steps_per_s"] / raw,
        "overall_vs_raw_cpu": end_to_end["overall_env_steps_per_cpu_s"] / raw_cpu,
    }
    if not args.no_flops:
        overall_gflops = end_to_end["overall_env_steps_per_s"] * per_step / 1e9
        out.update(matmul_gflops=peak, train_flops_per_env_step=per_step,
                   learner_flops_per_sample=per_sample, moves_per_decision=moves,
                   learner_gflops=learn * per_sample / 1e9,
                   overall_matmul_gflops=overall_gflops,
                   matmul_ceiling_vs_raw=peak * 1e9 / per_step / raw)
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        print(f"config {out['config']}, stage {cfg.name} {' '.join(args.overrides)} "
              f"({cfg.rollouts.num_envs} games, {out['device']}, {out['torch_threads']} "
              f"torch threads)")
        print(f"raw env (random play)      {raw:12,.0f} env steps/s")
        for kind, rate in rollout.items():
            print(f"rollout vs {kind:<15} {rate:12,.0f} env steps/s")
        print(f"learner (PPO update)       {learn:12,.0f} decisions/s (epochs counted)")
        print(f"overall (training run)     {out['overall_env_steps_per_s']:12,.0f} env steps/s"
              f"  ({out['train_env_steps']:,} steps in {out['train_seconds']:.1f} s, "
              f"evaluation {out['eval_seconds']:.1f} s per {cfg.evaluation.every_steps:,} steps)")
        print(f"overall / raw              {out['overall_vs_raw']:12.4f}  "
              f"(by process CPU time {out['overall_vs_raw_cpu']:.4f})")
        if not args.no_flops:
            print(f"matrix products            {peak:12.1f} GFLOP/s (2,048 x 2,048, "
                  f"{out['torch_threads']} threads); learner {out['learner_gflops']:.1f}, "
                  f"whole training {out['overall_matmul_gflops']:.1f}")
            print(f"training's FLOPs           {per_step / 1e6:12.3f} MFLOP an env step "
                  f"({per_sample / 1e6:.3f} a decision through one PPO epoch, "
                  f"{moves:.2f} legal moves a decision)")
            print(f"ceiling / raw              {out['matmul_ceiling_vs_raw']:12.4f}  "
                  "(matrix products alone, at the rate above)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
