"""TorchRL's PPO (``ClipPPOLoss``, ``GAE``, a ``Collector``) on the batched Scopa env,
with action masking.

    pip install -e .[torchrl]
    python examples/torchrl_ppo.py --iterations 100 --out runs/torchrl/ppo.pt
    scopa eval "py:examples/torchrl_ppo.py:agent,path=runs/torchrl/ppo.pt" greedy

TorchRL's ``GymWrapper`` takes ``gymnasium.make_vec("scopa/Scopa-v0", ...)`` as it is (a
batch of ``num_envs`` games, same-step autoreset, which TorchRL requires); it reads
``info["action_mask"]`` into the tensordict's ``action_mask``, which ``MaskedCategorical``
reads. ``moves="legal"``: the action is a slot (the k-th legal move), the observation
the table's 216 columns and each slot's move features. The learner plays seat 0, one hand
per episode, rewarded with the hand's points margin, half the games against ``greedy``
and half against ``expert``. The networks are TorchRL's plain ``MLP``s on the flat
observation.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium
import torch

import scopa_env

SETTINGS: dict[str, Any] = {"num_envs": 256, "rollout": 32, "minibatch": 2048, "epochs": 4,
                            "hidden": 256, "lr": 3e-4, "max_moves": 16}


def make_env(num_envs: int, max_moves: int = 16, seed: int = 0) -> Any:
    """The batched env as a TorchRL env: half the games against expert."""
    from torchrl.envs import GymWrapper

    envs = gymnasium.make_vec(scopa_env.GYM_ENV_ID, num_envs=num_envs, opponent="greedy",
                              reward="points", episode="hand", moves="legal",
                              max_moves=max_moves, autoreset_mode="SameStep")
    envs.unwrapped.set_opponent("expert", games=range(1, num_envs, 2))
    env = GymWrapper(envs, categorical_action_encoding=True)
    env.set_seed(seed)
    return env


def networks(obs_dim: int, slots: int, hidden: int) -> tuple[torch.nn.Module, torch.nn.Module]:
    """The policy (logits over the slots) and the value MLPs."""
    from torchrl.modules import MLP

    return (MLP(in_features=obs_dim, out_features=slots, num_cells=[hidden, hidden]),
            MLP(in_features=obs_dim, out_features=1, num_cells=[hidden, hidden]))


def actor_critic(policy_net: torch.nn.Module, value_net: torch.nn.Module) -> tuple[Any, Any]:
    """TorchRL's masked actor (``MaskedCategorical`` reads ``action_mask``) and critic."""
    from tensordict.nn import TensorDictModule
    from torchrl.modules import MaskedCategorical, ProbabilisticActor, ValueOperator

    class Logits(torch.nn.Module):
        def __init__(self, net: torch.nn.Module) -> None:
            super().__init__()
            self.net = net

        def forward(self, obs: torch.Tensor, mask: torch.Tensor
                    ) -> tuple[torch.Tensor, torch.Tensor]:
            return self.net(obs), mask.bool()

    actor = ProbabilisticActor(
        TensorDictModule(Logits(policy_net), in_keys=["observation", "action_mask"],
                         out_keys=["logits", "mask"]),
        in_keys=["logits", "mask"], distribution_class=MaskedCategorical,
        return_log_prob=True)
    critic = ValueOperator(value_net, in_keys=["observation"])
    return actor, critic


def train(iterations: int, seed: int = 0, out: str | None = None, log: Any = print,
          **settings: Any) -> tuple[torch.nn.Module, dict[str, Any]]:
    from torchrl.collectors import Collector
    from torchrl.data import LazyTensorStorage, ReplayBuffer, SamplerWithoutReplacement
    from torchrl.objectives import ClipPPOLoss
    from torchrl.objectives.value import GAE

    s = {**SETTINGS, **settings}
    torch.manual_seed(seed)
    env = make_env(s["num_envs"], s["max_moves"], seed)
    obs_dim = env.observation_spec["observation"].shape[-1]
    policy_net, value_net = networks(obs_dim, s["max_moves"], s["hidden"])
    actor, critic = actor_critic(policy_net, value_net)
    batch = s["num_envs"] * s["rollout"]
    collector = Collector(env, actor, frames_per_batch=batch,
                                  total_frames=batch * iterations,
                                  auto_register_policy_transforms=False)
    advantage = GAE(gamma=1.0, lmbda=0.95, value_network=critic, average_gae=True)
    loss = ClipPPOLoss(actor, critic, clip_epsilon=0.2, entropy_coeff=0.0)
    optimizer = torch.optim.Adam(loss.parameters(), lr=s["lr"])
    buffer = ReplayBuffer(storage=LazyTensorStorage(batch), sampler=SamplerWithoutReplacement(),
                          batch_size=s["minibatch"])
    start = time.monotonic()
    for it, data in enumerate(collector, 1):
        with torch.no_grad():
            advantage(data)
        buffer.extend(data.reshape(-1))
        for _ in range(s["epochs"]):
            for _ in range(batch // s["minibatch"]):
                parts = loss(buffer.sample())
                total = parts["loss_objective"] + parts["loss_critic"] + parts["loss_entropy"]
                optimizer.zero_grad()
                total.backward()
                torch.nn.utils.clip_grad_norm_(loss.parameters(), 0.5)
                optimizer.step()
        done = data["next", "done"].squeeze(-1)
        points = data["next", "reward"].squeeze(-1)[done]
        log(f"iteration {it}: {it * batch:,} learner decisions, "
            f"{float(points.mean()) if len(points) else 0.0:+.3f} points a hand, "
            f"{time.monotonic() - start:.0f} s")
    collector.shutdown()
    info = {"settings": s, "env_steps": env._env.unwrapped.env_steps,
            "seconds": time.monotonic() - start}
    if out:
        save(policy_net, s, out)
    return policy_net, info


def save(policy_net: torch.nn.Module, settings: dict[str, Any], path: str | Path) -> None:
    """The policy's weights and settings, written atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    torch.save({"state_dict": policy_net.state_dict(), "settings": settings}, tmp)
    os.replace(tmp, path)


class TorchRLAgent:
    """A saved policy as a kit agent: the arg-max of its logits over the legal slots."""

    def __init__(self, path: str | Path) -> None:
        from agents.bridges.move_interface import MoveInterface

        saved = torch.load(path, map_location="cpu", weights_only=True)
        s = saved["settings"]
        self.moves = MoveInterface("legal", s["max_moves"])
        self.net, _ = networks(self.moves.obs_dim, s["max_moves"], s["hidden"])
        self.net.load_state_dict(saved["state_dict"])
        self.net.eval()
        self.spec = f"torchrl:{path}"

    @torch.no_grad()
    def act_batch(self, infos: list[Any]) -> list[int]:
        obs, mask, ids = self.moves.encode_infos(infos)
        logits = self.net(torch.from_numpy(obs)).masked_fill(torch.from_numpy(mask) == 0,
                                                             float("-inf"))
        return self.moves.chosen_ids(logits.argmax(-1).numpy(), ids)

    def act(self, info: Any) -> int:
        return self.act_batch([info])[0]


def agent(path: str, seed: int | None = None) -> TorchRLAgent:
    """``scopa eval "py:examples/torchrl_ppo.py:agent,path=FILE.pt" ...``"""
    return TorchRLAgent(path)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--iterations", type=int, default=100)
    p.add_argument("--num-envs", type=int, default=SETTINGS["num_envs"])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/torchrl/ppo.pt")
    args = p.parse_args(argv)
    try:
        import torchrl  # noqa: F401
    except ImportError:
        print("this example needs TorchRL: pip install -e .[torchrl]", file=sys.stderr)
        return 2
    _, info = train(args.iterations, args.seed, args.out, num_envs=args.num_envs)
    print(f"saved {args.out}: {info['env_steps']:,} env steps in {info['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
