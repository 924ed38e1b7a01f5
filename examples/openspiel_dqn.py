"""OpenSpiel's PyTorch DQN trains on Scopa by self-play, and the result plays in the kit.

Two DQN learners (one per seat, OpenSpiel's ``open_spiel.python.pytorch.dqn`` with its
own training loop on ``rl_environment.Environment("python_scopa")``) play one-hand
episodes against each other; the information-state tensor is the env's 216-entry
observation and the return the hand's point margin. At the end each learner's Q-network
is saved (OpenSpiel's ``DQN.save``) with ``dqn.json`` (its layer sizes) beside it, and
the factory ``agent`` below makes it a kit agent (greedy on Q over the legal moves):

    .venv/bin/pip install -e .[openspiel,train]
    .venv/bin/python examples/openspiel_dqn.py --minutes 5 --out runs/openspiel-dqn
    .venv/bin/scopa eval py:examples/openspiel_dqn.py:agent,path=runs/openspiel-dqn/player0.pt \\
        greedy --hands 1000 --workers 2
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import agents.bridges.openspiel_game  # noqa: E402, F401  (registers python_scopa)
from scopa_env.moves import N_ACTIONS  # noqa: E402
from scopa_env.observation import OBS_DIM, InfoSet, encode_info  # noqa: E402


def train(minutes: float, out: Path, hidden: list[int], seed: int,
          max_steps: int | None = None) -> None:
    """Self-play DQN for ``minutes`` of wall time (or ``max_steps`` env steps)."""
    from open_spiel.python import rl_environment
    from open_spiel.python.pytorch import dqn

    env = rl_environment.Environment(
        "python_scopa", chance_event_sampler=rl_environment.ChanceEventSampler(seed=seed))
    learners = [dqn.DQN(player_id=p, state_representation_size=OBS_DIM, num_actions=N_ACTIONS,
                        hidden_layers_sizes=hidden, replay_buffer_capacity=10_000,
                        batch_size=64, learning_rate=1e-3, optimizer_str="adam",
                        update_target_network_every=1000, learn_every=8,
                        min_buffer_size_to_learn=500, epsilon_decay_duration=100_000,
                        epsilon_end=0.05, seed=seed + p)
                for p in range(2)]
    start, steps, episodes, returns = time.monotonic(), 0, 0, []
    while time.monotonic() - start < 60 * minutes and (max_steps is None or steps < max_steps):
        time_step = env.reset()
        while not time_step.last():
            player = time_step.observations["current_player"]
            time_step = env.step([learners[player].step(time_step).action])
            steps += 1
        for learner in learners:  # each learner sees the hand's end
            learner.step(time_step)
        episodes += 1
        returns.append(time_step.rewards[0])
        if episodes % 200 == 0:
            print(f"{time.monotonic() - start:6.0f} s  {episodes} hands  {steps} env steps  "
                  f"seat 0's mean return (last 200) {np.mean(returns[-200:]):+.2f}  "
                  f"loss {learners[0].loss}", flush=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / "dqn.json").write_text(json.dumps({"hidden": hidden, "env_steps": steps,
                                              "hands": episodes, "seed": seed}) + "\n")
    for p, learner in enumerate(learners):
        learner.save(out / f"player{p}.pt", save_optimiser=False)
    print(f"{episodes} hands, {steps} env steps in {time.monotonic() - start:.0f} s; "
          f"saved {out}/player0.pt and player1.pt\n"
          f"evaluate: scopa eval py:examples/openspiel_dqn.py:agent,path={out}/player0.pt "
          f"greedy --hands 1000 --workers 2")


class DQNAgent:
    """A saved OpenSpiel DQN Q-network as a kit agent: the legal move of highest Q."""

    def __init__(self, path: str, seed: int | None = None):
        from open_spiel.python.pytorch.dqn import MLP

        file = Path(path)
        try:
            meta = json.loads((file.parent / "dqn.json").read_text())
            weights = torch.load(file, weights_only=True, map_location="cpu")["model"]
        except (OSError, KeyError, ValueError, RuntimeError) as e:
            raise ValueError(f"{path}: not a DQN saved by examples/openspiel_dqn.py "
                             f"(with dqn.json beside it): {e}") from None
        self.net = MLP(OBS_DIM, meta["hidden"], N_ACTIONS)
        self.net.load_state_dict(weights)
        self.net.eval()
        self.spec = f"openspiel-dqn:{path}"

    @torch.no_grad()
    def act(self, info: InfoSet) -> int:
        q = self.net(torch.from_numpy(encode_info(info))[None])[0]
        legal = list(info.legal_actions)
        return legal[int(torch.argmax(q[legal]))]


def agent(path: str, seed: int | None = None) -> DQNAgent:
    """The ``py:`` spec's factory: ``py:examples/openspiel_dqn.py:agent,path=FILE.pt``."""
    return DQNAgent(path, seed=seed)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=5.0, help="wall-clock budget")
    ap.add_argument("--steps", type=int, default=None, help="stop after this many env steps")
    ap.add_argument("--out", type=Path, default=Path("runs/openspiel-dqn"))
    ap.add_argument("--hidden", default="256,256", help="hidden layer sizes")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    train(args.minutes, args.out, [int(x) for x in args.hidden.split(",")], args.seed,
          args.steps)


if __name__ == "__main__":
    main()
