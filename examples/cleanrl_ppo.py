"""Masked PPO in one file, CleanRL style, on ``gymnasium.make_vec("scopa/Scopa-v0")``.

    pip install -e .[train]
    python examples/cleanrl_ppo.py --minutes 20 --out runs/cleanrl/ppo.pt
    scopa eval "py:examples/cleanrl_ppo.py:agent,path=runs/cleanrl/ppo.pt" expert --hands 1000
    tensorboard --logdir runs/cleanrl

The copyable start for your own algorithm: one batched Gymnasium vector env, one network,
one loop you can read top to bottom. It uses nothing of the kit's trainer.

- **Env**: ``num_envs`` games of 2-player scopa stepped at once, one hand per episode,
  rewarded with the hand's points margin; ``moves="legal"``: the action is a slot
  (the k-th legal move), the observation the 216 columns of the table followed by each
  slot's move features (``scopa_env.move_features``), ``info["action_mask"]`` marks the
  filled slots. Same-step autoreset: an ended hand's next observation is the next hand's.
- **Opponents, a pool**: each game has its own opponent (``envs.set_opponent(x,
  games)``): half play a frozen copy of the learner (self-play, refreshed every update),
  a tenth an older snapshot, a fifth ``greedy``, a fifth ``expert``: the kit's own PPO
  recipe (configs/ppo_scratch.yaml). A frozen copy is a callable on the batch's
  observations and masks.
- **Network**: an MLP encodes the 216 columns (the value head reads it); a small MLP
  scores (encoding, move features) for each filled slot only; the policy is a softmax over
  the filled slots. The kit's own network has this shape (scopa_policy/network.py).
- **PPO**: CleanRL's clipped objective, clipped value loss, entropy bonus, GAE; learning
  rate and entropy annealed over the budget.

The saved file (``--out``) holds the weights and the settings; ``agent(path=...)`` below
plays it for ``scopa eval`` (the arg-max of its policy), loading with
``torch.load(..., weights_only=True)``.
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import torch
from torch import nn

import scopa_env
from scopa_env.move_features import ACTION_DIM
from scopa_env.observation import OBS_DIM


@dataclass
class Args:
    """Every setting of a run (the command line mirrors these)."""

    seed: int = 1
    minutes: float = 20.0  # wall-clock budget of training (0: use total_decisions alone)
    total_decisions: int = 0  # learner decisions to train for (0: the budget alone)
    num_envs: int = 1024  # games stepped at once
    num_steps: int = 18  # decisions per game per rollout (a hand is 18 a seat)
    max_moves: int = 16  # slots of moves="legal" (1 decision in 220,000 has more)
    learning_rate: float = 1e-3
    lr_final_fraction: float = 0.3  # the learning rate ends at this fraction of its start
    gamma: float = 1.0
    gae_lambda: float = 0.95
    num_minibatches: int = 8
    update_epochs: int = 3
    clip_coef: float = 0.2
    ent_coef: float = 0.005
    ent_coef_final: float = 0.001
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    reward_scale: float = 0.25  # rewards are points: scaled for the value loss
    hidden: int = 128  # the observation encoder's width
    move_hidden: int = 64  # the move scorer's width
    pool: str = "self=0.5,past=0.1,greedy=0.2,expert=0.2"  # opponents' shares of the games
    past_every: int = 50  # updates between refreshes of the older snapshot
    snapshots: int = 0  # curve points over the budget: snapshots at each 1/n, the last the final
    out: str = "runs/cleanrl/ppo.pt"
    torch_threads: int = 0  # 0: torch's default


class Agent(nn.Module):
    """Encode the 216 columns; score each filled slot from (encoding, move features)."""

    def __init__(self, hidden: int = 128, move_hidden: int = 64) -> None:
        super().__init__()
        self.encoder = nn.Sequential(layer(OBS_DIM, hidden), nn.ReLU(),
                                     layer(hidden, hidden), nn.ReLU())
        self.critic = layer(hidden, 1, std=1.0)
        self.state_part = layer(hidden, move_hidden)
        self.move_part = layer(ACTION_DIM, move_hidden)
        self.scorer = nn.Sequential(nn.ReLU(), layer(move_hidden, move_hidden), nn.ReLU(),
                                    layer(move_hidden, 1, std=0.01))

    def forward(self, obs: torch.Tensor, mask: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """obs (B, 216 + K * 204), mask (B, K) bool -> logits (B, K) (-1e9 in empty
        slots), value (B,). Only the filled slots are scored."""
        b, k = mask.shape
        state = self.encoder(obs[:, :OBS_DIM])
        value = self.critic(state).squeeze(-1)
        row, col = mask.nonzero(as_tuple=True)
        moves = obs[:, OBS_DIM:].reshape(b, k, ACTION_DIM)[row, col]
        scores = self.scorer(self.state_part(state)[row] + self.move_part(moves)).squeeze(-1)
        logits = torch.full((b, k), -1e9, dtype=scores.dtype)
        logits[row, col] = scores
        return logits, value


def layer(n_in: int, n_out: int, std: float = float(np.sqrt(2))) -> nn.Linear:
    """CleanRL's orthogonal initialisation."""
    out = nn.Linear(n_in, n_out)
    nn.init.orthogonal_(out.weight, std)
    nn.init.constant_(out.bias, 0.0)
    return out


class FrozenCopy:
    """A callable opponent: a copy of the learner that samples from its policy, refreshed
    in place (``refresh``) so that the env keeps the same callable."""

    __name__ = "frozen learner"

    def __init__(self, agent: Agent, seed: int) -> None:
        self.net = Agent(agent.encoder[0].out_features, agent.move_part.out_features)
        self.gen = torch.Generator().manual_seed(seed)
        self.refresh(agent)

    def refresh(self, agent: Agent) -> None:
        self.net.load_state_dict(agent.state_dict())

    @torch.no_grad()
    def __call__(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        logits, _ = self.net(torch.from_numpy(obs), torch.from_numpy(mask).bool())
        return torch.multinomial(torch.softmax(logits, -1), 1, generator=self.gen)[:, 0].numpy()


def parse_pool(text: str) -> dict[str, float]:
    """``"self=0.5,greedy=0.5"`` -> shares (summing to 1)."""
    pool = {}
    for part in text.split(","):
        name, _, share = part.partition("=")
        pool[name.strip()] = float(share)
    total = sum(pool.values())
    if total <= 0 or any(v < 0 for v in pool.values()):
        raise SystemExit(f"--pool: shares must be >= 0 and not all 0, got {text!r}")
    return {k: v / total for k, v in pool.items()}


def save(agent: Agent, args: Args, path: str | Path) -> None:
    """Weights and settings, written atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    torch.save({"state_dict": agent.state_dict(), "args": asdict(args)}, tmp)
    os.replace(tmp, path)


def train(args: Args) -> Agent:
    rng = np.random.default_rng(args.seed)
    torch.manual_seed(args.seed)
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    envs = gymnasium.make_vec(scopa_env.GYM_ENV_ID, num_envs=args.num_envs, opponent="greedy",
                              reward="points", episode="hand", moves="legal",
                              max_moves=args.max_moves, autoreset_mode="SameStep")
    env = envs.unwrapped
    agent = Agent(args.hidden, args.move_hidden)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    # the pool: a contiguous block of games per opponent
    pool = parse_pool(args.pool)
    edges = np.round(np.cumsum([0, *pool.values()]) * args.num_envs).astype(int)
    blocks = {name: np.arange(edges[i], edges[i + 1]) for i, name in enumerate(pool)}
    selfplay, past = FrozenCopy(agent, args.seed), FrozenCopy(agent, args.seed + 1)
    for name, games in blocks.items():
        if len(games):
            env.set_opponent({"self": selfplay, "past": past}.get(name, name), games)
    writer = None
    try:
        from torch.utils.tensorboard import SummaryWriter
        writer = SummaryWriter(str(Path(args.out).with_suffix("")) + "-tb")
    except ImportError:
        pass

    n, t = args.num_envs, args.num_steps
    obs_dim = env.single_observation_space.shape[0]
    obs_buf = torch.zeros((t, n, obs_dim))
    mask_buf = torch.zeros((t, n, args.max_moves), dtype=torch.bool)
    actions = torch.zeros((t, n), dtype=torch.long)
    logprobs, rewards, dones, values = (torch.zeros((t, n)) for _ in range(4))

    next_obs, info = envs.reset(seed=args.seed)
    next_obs = torch.from_numpy(next_obs)
    next_mask = torch.from_numpy(info["action_mask"]).bool()
    next_done = torch.zeros(n)
    start = time.monotonic()
    update, decisions = 0, 0
    snapshots: list[dict[str, Any]] = []  # --snapshots: each one's time, env steps, file
    while True:
        elapsed = time.monotonic() - start
        done_frac = max(elapsed / (60 * args.minutes) if args.minutes else 0.0,
                        decisions / args.total_decisions if args.total_decisions else 0.0)
        if done_frac >= 1.0:
            break
        if args.snapshots and done_frac >= (len(snapshots) + 1) / args.snapshots:
            path = Path(args.out).with_name(f"{Path(args.out).stem}-{len(snapshots):02d}.pt")
            save(agent, args, path)
            snapshots.append({"minutes": elapsed / 60, "env_steps": env.env_steps,
                              "path": str(path)})
        update += 1
        # anneal the learning rate and the entropy bonus over the budget
        lr = args.learning_rate * (1 - done_frac * (1 - args.lr_final_fraction))
        optimizer.param_groups[0]["lr"] = lr
        ent_coef = args.ent_coef + done_frac * (args.ent_coef_final - args.ent_coef)
        # self-play: the "self" games play the learner as it is now, "past" an older copy
        selfplay.refresh(agent)
        if update % args.past_every == 0:
            past.refresh(agent)

        # -- rollout ----------------------------------------------------------------------
        hand_points: list[float] = []
        for step in range(t):
            obs_buf[step], mask_buf[step], dones[step] = next_obs, next_mask, next_done
            with torch.no_grad():
                logits, value = agent(next_obs, next_mask)
                probs = torch.distributions.Categorical(logits=logits)
                action = probs.sample()
            actions[step], logprobs[step] = action, probs.log_prob(action)
            values[step] = value
            next_obs, reward, term, trunc, info = envs.step(action.numpy())
            rewards[step] = torch.from_numpy(reward) * args.reward_scale
            next_obs = torch.from_numpy(next_obs)
            next_mask = torch.from_numpy(info["action_mask"]).bool()
            next_done = torch.from_numpy(term | trunc).float()
            hand_points += reward[term].tolist()
        decisions += t * n

        # -- advantages (GAE) -------------------------------------------------------------
        with torch.no_grad():
            next_value = agent(next_obs, next_mask)[1]
            advantages = torch.zeros_like(rewards)
            lastgaelam = torch.zeros(n)
            for step in reversed(range(t)):
                nonterminal = 1.0 - (next_done if step == t - 1 else dones[step + 1])
                nextvalues = next_value if step == t - 1 else values[step + 1]
                delta = rewards[step] + args.gamma * nextvalues * nonterminal - values[step]
                lastgaelam = delta + args.gamma * args.gae_lambda * nonterminal * lastgaelam
                advantages[step] = lastgaelam
            returns = advantages + values

        # -- PPO epochs -------------------------------------------------------------------
        b_obs, b_mask = obs_buf.reshape(t * n, -1), mask_buf.reshape(t * n, -1)
        b_actions, b_logprobs = actions.reshape(-1), logprobs.reshape(-1)
        b_adv, b_returns, b_values = advantages.reshape(-1), returns.reshape(-1), values.reshape(-1)
        size = t * n
        mb_size = size // args.num_minibatches
        clipfracs = []
        for _ in range(args.update_epochs):
            order = torch.from_numpy(rng.permutation(size))
            for lo in range(0, size, mb_size):
                mb = order[lo:lo + mb_size]
                logits, newvalue = agent(b_obs[mb], b_mask[mb])
                logp_all = torch.log_softmax(logits, -1)
                newlogprob = logp_all.gather(1, b_actions[mb, None]).squeeze(1)
                entropy = -(logp_all.exp() * logp_all).sum(-1)
                logratio = newlogprob - b_logprobs[mb]
                ratio = logratio.exp()
                with torch.no_grad():
                    approx_kl = ((ratio - 1) - logratio).mean()
                    clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
                adv = b_adv[mb]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                pg_loss = torch.max(-adv * ratio, -adv * torch.clamp(
                    ratio, 1 - args.clip_coef, 1 + args.clip_coef)).mean()
                v_clipped = b_values[mb] + torch.clamp(newvalue - b_values[mb],
                                                       -args.clip_coef, args.clip_coef)
                v_loss = 0.5 * torch.max((newvalue - b_returns[mb]) ** 2,
                                         (v_clipped - b_returns[mb]) ** 2).mean()
                entropy_loss = entropy.mean()
                loss = pg_loss - ent_coef * entropy_loss + args.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

        # -- logging ----------------------------------------------------------------------
        sps = int(2 * decisions / (time.monotonic() - start))  # env steps: both seats' moves
        if writer is not None:
            step = 2 * decisions
            writer.add_scalar("charts/learning_rate", lr, step)
            writer.add_scalar("charts/hand_points_per_hand", np.mean(hand_points or [0]), step)
            writer.add_scalar("losses/value_loss", v_loss.item(), step)
            writer.add_scalar("losses/policy_loss", pg_loss.item(), step)
            writer.add_scalar("losses/entropy", entropy_loss.item(), step)
            writer.add_scalar("losses/approx_kl", approx_kl.item(), step)
            writer.add_scalar("losses/clipfrac", np.mean(clipfracs), step)
            writer.add_scalar("charts/env_steps_per_second", sps, step)
        if update % 20 == 1:
            print(f"update {update}: {2 * decisions:,} env steps, {sps:,} env steps/s, "
                  f"points a hand {np.mean(hand_points or [0]):+.3f} (all opponents)",
                  flush=True)
    env.close()
    if writer is not None:
        writer.close()
    agent.updates, agent.env_steps, agent.snapshots = update, env.env_steps, snapshots
    agent.train_seconds = time.monotonic() - start
    save(agent, args, args.out)
    return agent


# -- the trained agent for scopa eval ----------------------------------------------------
class CleanRLAgent:
    """A saved network as a kit agent: the arg-max of its policy over the legal moves."""

    def __init__(self, path: str | Path) -> None:
        from agents.bridges.move_interface import MoveInterface

        saved = torch.load(path, map_location="cpu", weights_only=True)
        a = saved["args"]
        self.net = Agent(a["hidden"], a["move_hidden"])
        self.net.load_state_dict(saved["state_dict"])
        self.net.eval()
        self.moves = MoveInterface("legal", a["max_moves"])
        self.spec = f"cleanrl:{path}"

    @torch.no_grad()
    def act_batch(self, infos: list[Any]) -> list[int]:
        obs, mask, ids = self.moves.encode_infos(infos)  # as the env showed them
        logits, _ = self.net(torch.from_numpy(obs), torch.from_numpy(mask).bool())
        return self.moves.chosen_ids(logits.argmax(-1).numpy(), ids)

    def act(self, info: Any) -> int:
        return self.act_batch([info])[0]


def agent(path: str, seed: int | None = None) -> CleanRLAgent:
    """``scopa eval "py:examples/cleanrl_ppo.py:agent,path=FILE.pt" ...``"""
    return CleanRLAgent(path)


def main(argv: list[str] | None = None) -> Agent:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for f in fields(Args):
        p.add_argument(f"--{f.name.replace('_', '-')}", type=type(f.default), default=f.default)
    args = Args(**vars(p.parse_args(argv)))
    if args.minutes <= 0 and args.total_decisions <= 0:
        p.error("give --minutes or --total-decisions above 0")
    trained = train(args)
    print(f"saved {args.out}: {trained.env_steps:,} env steps, {trained.updates} updates, "
          f"{trained.train_seconds:.0f} s", flush=True)
    return trained


if __name__ == "__main__":
    main()
