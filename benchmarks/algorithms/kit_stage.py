"""A stage of the kit (``train.py``'s framework) as an algorithm of the baselines table:
``kit_ppo.py`` and ``kit_dmc.py`` call ``main`` with their config.

The stage trains with ``{kind}.total_env_steps: 0`` (no budget in moves) in slices of
``run.max_minutes`` (a tenth of the budget each, the last one what is left): each slice
ends after the update in progress, saves, and its ``policy.pt`` is the curve's snapshot;
the next slice resumes the run (``scopa_train.recipe.resume``). The training time is the
stage's own clock (``counters.wall_seconds``: rollouts and updates, not the start of a
slice nor its saves). The process starts as ``train.py`` does, with the commands'
thread wait policy (``agents.commands.quiet_idle_threads``).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

from protocol import CURVE_POINTS, parse_args, too_small, write_result

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from agents.commands import quiet_idle_threads  # noqa: E402

quiet_idle_threads()  # before torch loads, as train.py starts

# --smoke: a tiny network on 16 games, so that an update takes about a second
SMOKE = ["rollouts.num_envs=16", "network.hidden_size=32", "network.hidden_layers=1",
         "network.action_hidden=16", "opponents={self: 0.5, random: 0.5}",
         "run.torch_threads=1"]


def _quiet(_: str) -> None:
    pass


def main(config: Path, algorithm: str, description: str) -> int:
    args = parse_args(description)
    from scopa_train import recipe
    from scopa_train.config import ConfigError, load_config

    kind = load_config(config).kind
    sets = [f"run.runs_dir={args.out / 'runs'}", f"run.seed={args.seed}",
            f"{kind}.total_env_steps=0", "evaluation.every_steps=0",
            "checkpoints.every_steps=0", *(SMOKE if args.smoke else []),
            *([f"{kind}.num_minibatches=2"] if args.smoke else [])]
    budget = args.minutes * 60
    chunk = args.minutes / CURVE_POINTS
    try:
        out = recipe.start(load_config(config, [*sets, f"run.max_minutes={chunk}"]),
                           progress=False, log=_quiet)
    except ConfigError as e:
        print(f"{algorithm}: {e}", file=sys.stderr)
        return 2
    snapshots: list[dict[str, Any]] = []
    policy = None
    while True:
        if "counters" not in out:  # the slice ended before the stage began: no update
            if policy is None:
                too_small(algorithm, args.minutes, None)
            break
        c, policy = out["counters"], out["policy"]
        if c["update"] <= 1 and c["wall_seconds"] > budget:
            too_small(algorithm, args.minutes, c["wall_seconds"])
        snap = args.out / "snapshots" / f"policy_{len(snapshots):02d}.pt"
        shutil.copyfile(policy, snap)
        snapshots.append({"minutes": c["wall_seconds"] / 60, "env_steps": c["env_steps"],
                          "spec": f"ckpt:{snap}"})
        left = budget - c["wall_seconds"]
        if left <= 0:
            break
        out = recipe.resume(out["run_dir"], [f"run.max_minutes={min(chunk, left / 60):.6g}"],
                            progress=False, log=_quiet)
    final = args.out / "policy.pt"
    shutil.copyfile(policy, final)
    write_result(args.out, algorithm=algorithm, library="scopa (this kit)",
                 spec=f"ckpt:{final}", env_steps=c["env_steps"],
                 train_seconds=c["wall_seconds"], updates=c["update"], snapshots=snapshots,
                 minutes=args.minutes, seed=args.seed,
                 settings={"config": str(config.relative_to(ROOT)), "set": sets})
    return 0
