"""The Ray backend against the local one on this machine: rollouts and evaluation.

    python benchmarks/ray_throughput.py [--config configs/recipe.yaml] [--stage NAME]
        [--set SECTION.KEY=VALUE] [--rollouts 3] [--hands 400] [--cpus 2] [--json]

- ``rollout_steps_per_s``: env steps per second of ``collect`` (the games, network and
  opponent pool of one PPO stage of the config, ``--stage``, default its first; an
  untrained network), locally (``RolloutCollector``, one process) and on a local Ray
  cluster of ``--cpus`` CPUs with 1 and 2 rollout workers
  (``RayRolloutCollector``: weights to the object store, the workers' rollouts, the
  merge); after one warm-up rollout, so the workers' start-up is not counted;
- ``eval_seconds``: ``evaluate(expert, greedy, --hands)`` locally in one process and
  as Ray tasks on the warm cluster (the same results; the one-off ``ray.init`` is
  reported on its own).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from train_throughput import ppo_stage  # noqa: E402  (benchmarks/, beside this script)

from agents.evaluation.evaluate import evaluate  # noqa: E402
from scopa_policy.network import NetConfig, PolicyNet  # noqa: E402
from scopa_train.config import ConfigError, StageConfig  # noqa: E402
from scopa_train.rollout import rollout_length, sample_opponents  # noqa: E402
from scopa_train.stages.ppo import make_collector  # noqa: E402


def with_backend(cfg: StageConfig, backend: str, workers: int | None = None) -> StageConfig:
    """``cfg`` with its rollouts on ``backend`` (and ``workers`` Ray workers)."""
    r = replace(cfg.rollouts, backend=backend)
    return replace(cfg, rollouts=replace(r, ray_workers=workers) if workers else r)


def rollout_rate(collector: Any, cfg: StageConfig, net: PolicyNet, rollouts: int) -> float:
    """Env steps per second of ``rollouts`` rollouts after a warm-up one."""
    rng = np.random.default_rng(0)
    steps = rollout_length(cfg)

    def one(u: int) -> int:
        n = cfg.rollouts.num_envs
        kinds = sample_opponents(rng, cfg.opponents, n, have_past=False)
        _, stats = collector.collect(net, None, kinds, rng.integers(0, 2, n), steps,
                                     reset_seed=u, agent_seed=u, gamma=cfg.ppo.gamma,
                                     lam=cfg.ppo.gae_lambda)
        return stats.env_steps

    one(0)
    t0 = time.perf_counter()
    done = sum(one(u) for u in range(1, rollouts + 1))
    return done / (time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default=str(ROOT / "configs" / "recipe.yaml"))
    p.add_argument("--stage", metavar="NAME",
                   help="the PPO stage of the config (default: its first)")
    p.add_argument("--set", dest="overrides", action="append", default=[],
                   metavar="KEY=VALUE", help="config override, as train.py's (repeatable)")
    p.add_argument("--rollouts", type=int, default=3)
    p.add_argument("--hands", type=int, default=400)
    p.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray cluster")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    import ray
    import torch

    try:
        cfg = with_backend(ppo_stage(args.config, args.overrides, args.stage), "local")
    except ConfigError as e:
        p.error(str(e))
    torch.set_num_threads(1)
    n = cfg.network
    net = PolicyNet(NetConfig(n.hidden_size, n.hidden_layers, n.action_hidden)).eval()
    out: dict[str, Any] = {"stage": cfg.name, "num_envs": cfg.rollouts.num_envs,
                           "rollout_moves": rollout_length(cfg),
                           "opponents": cfg.opponents, "rollout_steps_per_s": {}}
    out["rollout_steps_per_s"]["local"] = rollout_rate(make_collector(cfg), cfg, net,
                                                       args.rollouts)
    t0 = time.perf_counter()
    ray.init(num_cpus=args.cpus, include_dashboard=False, logging_level="WARNING")
    out["ray_init_s"] = time.perf_counter() - t0
    try:
        for workers in (1, 2):
            rcfg = with_backend(cfg, "ray", workers)
            collector = make_collector(rcfg)
            out["rollout_steps_per_s"][f"ray_{workers}_workers"] = rollout_rate(
                collector, rcfg, net, args.rollouts)
            collector.close()
        out["eval_seconds"] = {}
        for backend in ("local", "ray"):
            res = evaluate("expert", "greedy", hands=args.hands, seed=5, backend=backend)
            out["eval_seconds"][backend] = res.elapsed_s
            out[f"eval_margin_{backend}"] = res.points_per_hand.margin
    finally:
        ray.shutdown()
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for k, v in out["rollout_steps_per_s"].items():
            print(f"rollout {k:>16}: {v:>9,.0f} env steps/s")
        print(f"ray.init: {out['ray_init_s']:.1f} s")
        for k, v in out["eval_seconds"].items():
            print(f"eval expert vs greedy, {args.hands} paired hands, {k:>5}: {v:.1f} s "
                  f"(margin {out[f'eval_margin_{k}']:+.4f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
