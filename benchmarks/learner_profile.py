"""The learner's profile: where one PPO update of a self-play rollout spends its time.

    python benchmarks/learner_profile.py [--config configs/recipe.yaml] [--stage NAME]
        [--set SECTION.KEY=VALUE] [--json]

The PPO stage as ``benchmarks/train_throughput.py`` measures it (``--stage``, default the
config's first PPO stage: its batch size, network, threads and device) collects one
self-play rollout, runs one update to warm up, then one more ``ppo_update`` over the same
rollout under ``torch.profiler`` (CPU, FLOPs counted). Printed:

- ``matmul_share``: the matrix products' share of the update's CPU time (the self CPU
  time of ``aten::mm`` and ``aten::addmm`` over that of every operator profiled);
- ``matmul_gflops_while_running``: the rate those products run at while they run (their
  FLOPs over their self CPU time);
- ``update_seconds`` (under the profiler) and the top operators by self CPU time.

BENCHMARKS.md's learner-profile figure ("mm and addmm are 65% of its CPU time") is this
command's ``matmul_share``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from agents.commands import quiet_idle_threads  # noqa: E402

quiet_idle_threads()  # first, before torch loads: the thread policy the commands start with

# isort: split
import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402
from train_throughput import ppo_stage, quiet_stage, rollouts, update  # noqa: E402

from scopa_train.config import ConfigError  # noqa: E402

PRODUCTS = ("aten::mm", "aten::addmm")


def learner_profile(stage: object, batch: object, top: int = 8) -> dict[str, object]:
    """One profiled PPO update of ``stage`` over ``batch`` (after one to warm up)."""
    update(stage, batch)
    with profile(activities=[ProfilerActivity.CPU], with_flops=True) as prof:
        stats = update(stage, batch)
    events = prof.key_averages()
    total = sum(e.self_cpu_time_total for e in events)  # microseconds
    products = [e for e in events if e.key in PRODUCTS]
    mm_us = sum(e.self_cpu_time_total for e in products)
    flops = sum(e.flops for e in products)
    ranked = sorted(events, key=lambda e: e.self_cpu_time_total, reverse=True)[:top]
    return {"matmul_share": mm_us / total,
            "matmul_gflops_while_running": flops / (mm_us * 1e-6) / 1e9 if mm_us else 0.0,
            "matmul_gflop": flops / 1e9, "update_seconds": stats.seconds,
            "samples": stats.samples,
            "top_self_cpu_share": {e.key: e.self_cpu_time_total / total for e in ranked}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default=str(ROOT / "configs" / "recipe.yaml"))
    p.add_argument("--stage", metavar="NAME",
                   help="the PPO stage of the config to profile (default: its first)")
    p.add_argument("--set", dest="overrides", action="append", default=[],
                   metavar="KEY=VALUE", help="config override, as train.py's (repeatable)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    args = p.parse_args(argv)
    try:
        cfg = ppo_stage(args.config, args.overrides, args.stage)
    except ConfigError as e:
        p.error(str(e))
    with tempfile.TemporaryDirectory() as tmp:
        stage = quiet_stage(cfg, tmp)
        _, batch = rollouts(stage, "self", 1)
        out = {"config": str(args.config), "stage": cfg.name, "overrides": args.overrides,
               "decisions": len(batch), "device": str(stage.device),
               "torch_threads": torch.get_num_threads(), **learner_profile(stage, batch)}
    if args.json:
        print(json.dumps(out))
    else:
        print(f"{out['stage']}: one PPO update of {out['decisions']:,} decisions "
              f"({out['samples']:,} through the learner), {out['update_seconds']:.2f} s "
              f"under the profiler, {out['torch_threads']} threads on {out['device']}")
        print(f"  matrix products (mm, addmm): {out['matmul_share']:.0%} of its CPU time, "
              f"{out['matmul_gflops_while_running']:.0f} GFLOP/s while they run "
              f"({out['matmul_gflop']:.1f} GFLOP)")
        for key, share in out["top_self_cpu_share"].items():
            print(f"  {share:6.1%}  {key}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
