"""OpenSpiel's PyTorch DQN on the pyspiel game ``python_scopa`` by self-play, for a
wall-clock budget: the baselines table's ``openspiel_dqn`` row (protocol.py has the
command line).

OpenSpiel's own loop on ``rl_environment.Environment("python_scopa")``: two DQN learners,
one per seat, with examples/openspiel_dqn.py's settings (``LEARNER``: a 256 x 256
Q-network over the 16,204 ids, a replay buffer of 10,000, batches of 64, a step every 8
moves), one-hand episodes, the hand's point margin as the return. Seat 0's learner is
the agent: saved (OpenSpiel's ``DQN.save``, with the example's ``dqn.json``) every tenth
of the budget and at the end, and played greedy on Q over the legal moves by the
example's factory (``py:examples/openspiel_dqn.py:agent,path=FILE``). Env steps are the
moves of both seats.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from protocol import Clock, load_example, need, parse_args, refuse_overrun, write_result

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
EXAMPLE = ROOT / "examples" / "openspiel_dqn.py"

NAME = "openspiel_dqn"
# examples/openspiel_dqn.py's learners
LEARNER = {"hidden_layers_sizes": [256, 256], "replay_buffer_capacity": 10_000,
           "batch_size": 64, "learning_rate": 1e-3, "optimizer_str": "adam",
           "update_target_network_every": 1000, "learn_every": 8,
           "min_buffer_size_to_learn": 500, "epsilon_decay_duration": 100_000,
           "epsilon_end": 0.05}
SMOKE = {"hidden_layers_sizes": [32], "batch_size": 32, "min_buffer_size_to_learn": 64}


def main() -> int:
    args = parse_args(__doc__.splitlines()[0])
    need("pyspiel", "openspiel", NAME)
    need("tree", "openspiel", NAME)  # dm-tree: open_spiel.python.pytorch imports it
    example = load_example("openspiel_dqn")  # registers python_scopa
    from open_spiel.python import rl_environment
    from open_spiel.python.pytorch import dqn

    settings: dict[str, Any] = {**LEARNER, **(SMOKE if args.smoke else {})}
    env = rl_environment.Environment(
        "python_scopa", chance_event_sampler=rl_environment.ChanceEventSampler(seed=args.seed))
    learners = [dqn.DQN(player_id=p, state_representation_size=example.OBS_DIM,
                        num_actions=example.N_ACTIONS, seed=args.seed + p, **settings)
                for p in range(2)]
    snapshots: list[dict[str, Any]] = []
    clock, steps, updates, first = Clock(args.minutes), 0, 0, None

    def snapshot(folder: Path) -> str:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "dqn.json").write_text(json.dumps(
            {"hidden": settings["hidden_layers_sizes"], "env_steps": steps,
             "seed": args.seed}) + "\n")
        learners[0].save(folder / "player0.pt", save_optimiser=False)
        spec = f"py:{EXAMPLE}:agent,path={folder / 'player0.pt'}"
        snapshots.append({"minutes": clock.seconds() / 60, "env_steps": steps, "spec": spec})
        return spec

    while not clock.over():
        time_step = env.reset()
        while not time_step.last():
            player = time_step.observations["current_player"]
            time_step = env.step([learners[player].step(time_step).action])
            steps += 1
            learner = learners[0]
            if player == 0 and learner.loss is not None and \
                    learner.step_counter % settings["learn_every"] == 0:
                updates += 1
                first = clock.seconds() if first is None else first
        for learner in learners:  # each learner sees the hand's end
            learner.step(time_step)
        if clock.snapshot_due() and updates:
            snapshot(args.out / "snapshots" / f"dqn_{len(snapshots):02d}")
    seconds = clock.seconds()
    refuse_overrun(NAME, args, clock.budget, first)
    spec = snapshot(args.out / "dqn")
    snapshots[-1]["minutes"] = seconds / 60
    write_result(args.out, algorithm=NAME, library="OpenSpiel DQN (PyTorch)", spec=spec,
                 env_steps=steps, train_seconds=seconds, updates=updates,
                 snapshots=snapshots, minutes=args.minutes, seed=args.seed,
                 settings=settings)
    return 0


if __name__ == "__main__":
    sys.exit(main())
