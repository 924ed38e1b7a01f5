"""examples/cleanrl_ppo.py (masked PPO in one file, CleanRL style, on ``gymnasium.make_vec``)
for a wall-clock budget: the baselines table's ``cleanrl_ppo`` row (protocol.py has the
command line).

The script's own loop with its defaults (1,024 games, a pool of self-play, an older
snapshot, ``greedy`` and ``expert``; ``moves="legal"``, 16 slots; the kit's network shape
and PPO settings), stopped by its ``--minutes``; it saves a snapshot every tenth of the
budget and the final network, played by ``py:examples/cleanrl_ppo.py:agent,path=FILE``
(the arg-max of its policy). Env steps are the moves of both seats, counted by the env.
"""

from __future__ import annotations

import sys
from pathlib import Path

from protocol import CURVE_POINTS, load_example, parse_args, too_small, write_result

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
EXAMPLE = ROOT / "examples" / "cleanrl_ppo.py"
NAME = "cleanrl_ppo"
SMOKE = {"num_envs": 16, "num_steps": 4, "hidden": 16, "move_hidden": 8,
         "num_minibatches": 2, "update_epochs": 1}


def main() -> int:
    args = parse_args(__doc__.splitlines()[0])
    example = load_example("cleanrl_ppo")
    run = example.Args(seed=args.seed, minutes=args.minutes, snapshots=CURVE_POINTS,
                       out=str(args.out / "snapshots" / "agent.pt"),
                       **(SMOKE if args.smoke else {}))
    agent = example.train(run)
    if not agent.updates:
        too_small(NAME, args.minutes, None)
    final = args.out / "agent.pt"
    (args.out / "snapshots" / "agent.pt").replace(final)
    spec_of = f"py:{EXAMPLE.relative_to(ROOT)}:agent,path={{}}"
    snapshots = [{"minutes": s["minutes"], "env_steps": s["env_steps"],
                  "spec": spec_of.format(s["path"])} for s in agent.snapshots]
    snapshots.append({"minutes": agent.train_seconds / 60, "env_steps": agent.env_steps,
                      "spec": spec_of.format(final)})
    write_result(args.out, algorithm=NAME, library="CleanRL-style script (examples/)",
                 spec=spec_of.format(final), env_steps=agent.env_steps,
                 train_seconds=agent.train_seconds, updates=agent.updates,
                 snapshots=snapshots, minutes=args.minutes, seed=args.seed,
                 settings={k: v for k, v in vars(run).items() if k != "out"})
    return 0


if __name__ == "__main__":
    sys.exit(main())
