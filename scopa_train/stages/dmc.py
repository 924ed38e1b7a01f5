"""Stage kind ``dmc``: Deep Monte-Carlo (DouZero's method) on the batched environment.

The network is the policy network's shape (``scopa_policy.network.PolicyNet``): its
score of each legal move, from the observation and the move's features, is read as
Q(information set, move) in scaled points. Acting greedily on Q is the argmax of those
scores, which is what a learned agent plays: a DMC checkpoint is a ``ckpt:PATH`` agent
as a PPO one is. Read top to bottom:

    for each update (``DMCStage.loop``):
        schedule    epsilon, linear in the fraction of updates done
        rollout     pick an opponent for every game from the pool (self / past snapshot /
                    baseline / any agent spec); the learner's seats (both, in self-play)
                    and past snapshots play epsilon-greedy on Q (``EpsilonGreedy``); whole
                    hands, so every decision's target is its Monte-Carlo return, the
                    rewards its side receives until the hand ends (the rollout collector
                    with gamma = lambda = 1, ``scopa_train.rollout``)
        update      mean squared error of Q(s, chosen move) against the return, over
                    shuffled minibatches (``q_update``); a snapshot joins the past pool
                    every ``dmc.past_snapshot_every`` updates
        log, evaluate, save, stop: as the PPO stage (``scopa_train.framework``)

The value head is left as it is (a later ``ppo`` stage starting from these weights
learns it).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

import agents
from scopa_policy.features import Candidates
from scopa_policy.network import NetConfig, PolicyNet

from ..config import StageConfig
from ..ppo import explained_variance
from ..rollout import (
    PAST,
    Batch,
    RolloutCollector,
    RolloutStats,
    batched_baseline,
    rollout_length,
    sample_opponents,
)
from . import ppo_selfplay


class EpsilonGreedy(nn.Module):
    """A Q-network as the collector's policy: its log-probabilities are those of
    epsilon-greedy on Q (``epsilon`` shared uniformly over the legal moves, the rest on
    the best one), so that sampling from them, as the collector does, plays
    epsilon-greedy. The value it returns is the network's own (unused by DMC's
    targets: the rollouts end with whole episodes)."""

    def __init__(self, q: PolicyNet, epsilon: float) -> None:
        super().__init__()
        self.q, self.epsilon = q, epsilon

    def forward_moves(self, obs: torch.Tensor, cand: Candidates
                      ) -> tuple[torch.Tensor, torch.Tensor]:
        q, value = self.q.forward_moves(obs, cand)
        legal = torch.zeros_like(q, dtype=torch.bool)
        legal[cand.row, cand.col] = True
        probs = legal * (self.epsilon / legal.sum(-1, keepdim=True))
        best = q.argmax(-1, keepdim=True)
        probs.scatter_add_(1, best, torch.full_like(best, 1.0 - self.epsilon, dtype=q.dtype))
        logp = torch.where(probs > 0, torch.log(probs), torch.full_like(q, -1e9))
        return logp, value


@dataclass
class QStats:
    """One DMC update: the loss (scaled points squared), how much of the returns' variance
    Q explains, the mean Q of the chosen moves and mean return (scaled), and the cost."""

    q_loss: float
    explained_variance: float
    q_taken: float
    mean_return: float
    samples: int  # decisions passed through the learner (all epochs)
    seconds: float


def q_update(net: PolicyNet, optimizer: torch.optim.Optimizer, batch: Batch,
             rng: np.random.Generator, *, epochs: int, num_minibatches: int,
             max_grad_norm: float) -> QStats:
    """Fit Q(s, chosen move) to the Monte-Carlo returns (``batch.returns``) by mean
    squared error, ``epochs`` passes over shuffled minibatches."""
    t0 = time.perf_counter()
    net.train()
    device = next(net.parameters()).device
    batch = batch.to(device)
    size = len(batch)
    mb_size = max(1, size // num_minibatches)
    losses: list[float] = []
    for _ in range(epochs):
        order = torch.from_numpy(rng.permutation(size)).to(device)
        for start in range(0, size, mb_size):
            idx = order[start:start + mb_size]
            q = _taken(net, batch, idx)
            loss = torch.mean((q - batch.returns[idx]) ** 2)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), max_grad_norm)
            optimizer.step()
            losses.append(float(loss.detach()))
    net.eval()
    with torch.no_grad():
        q_all = _taken(net, batch, torch.arange(size, device=device)).cpu().numpy()
    returns = batch.returns.cpu().numpy()
    return QStats(q_loss=float(np.mean(losses)) if losses else float("nan"),
                  explained_variance=explained_variance(q_all, returns),
                  q_taken=float(q_all.mean()) if size else float("nan"),
                  mean_return=float(returns.mean()) if size else float("nan"),
                  samples=size * epochs, seconds=time.perf_counter() - t0)


def _taken(net: PolicyNet, batch: Batch, idx: torch.Tensor) -> torch.Tensor:
    """Q of the chosen move of decisions ``idx``."""
    cand = batch.candidates(idx)
    scores, _ = net.forward_moves(batch.obs[idx], cand)
    return scores.gather(1, batch.actions[idx][:, None]).squeeze(1)


class DMCStage(ppo_selfplay.PoolStage):
    """Deep Monte-Carlo against a pool of opponents (module docstring)."""

    KIND = "dmc"

    def __init__(self, cfg: StageConfig, run_dir: Path, **kw: Any) -> None:
        super().__init__(cfg, run_dir, **kw)
        n, d = cfg.network, cfg.dmc
        self.net = PolicyNet(NetConfig(n.hidden_size, n.hidden_layers, n.action_hidden))
        self.net.to(self.device).eval()
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=d.learning_rate,
                                          foreach=True)  # as PPO's: multi-tensor, faster
        self.past_pool: list[dict[str, torch.Tensor]] = []
        self.collector = RolloutCollector(cfg.make_env(), d.reward_scale, agents.make_agent,
                                          batched_baseline)
        self.steps_per_rollout = rollout_length(cfg)
        per_update = cfg.rollouts.num_envs * self.steps_per_rollout
        self.num_updates = (max(1, math.ceil(d.total_env_steps / per_update))
                            if d.total_env_steps else None)
        if PAST in cfg.opponents:
            self.past_pool.append(self._snapshot())

    # -- the loop ---------------------------------------------------------------------
    def loop(self) -> str | None:
        while not self.done():
            epsilon = self._epsilon()
            batch, rs = self._rollout(epsilon)
            qs = self._update(batch)
            self.counters.env_steps += rs.env_steps
            self.scalars(dmc_scalars(rs, qs, len(batch), epsilon=epsilon,
                                     lr=self.cfg.dmc.learning_rate,
                                     updates=self.counters.update,
                                     past_pool=len(self.past_pool)))
            self.advance()
            self.evaluate_and_save()
            why = self.halted()
            if why is not None:
                return why
        return None

    def _epsilon(self) -> float:
        d = self.cfg.dmc
        return d.epsilon + self.fraction_done() * (d.epsilon_final - d.epsilon)

    def _rollout(self, epsilon: float) -> tuple[Batch, RolloutStats]:
        """Opponents for every game (and the learner's side), a past snapshot if one
        plays, then one rollout of whole hands on fresh deals seeded by the update
        number; gamma = lambda = 1 make each decision's return its Monte-Carlo return."""
        cfg = self.cfg
        n = cfg.rollouts.num_envs
        kinds = sample_opponents(self.np_rng, cfg.opponents, n, have_past=bool(self.past_pool))
        learner_team = self.np_rng.integers(0, 2, n)
        past = EpsilonGreedy(self.past_net(), epsilon) if PAST in kinds else None
        seed = (cfg.seed * 1_000_003 + self.counters.update) % (2**63)
        return self.collector.collect(EpsilonGreedy(self.net, epsilon), past, kinds,
                                      learner_team, self.steps_per_rollout, reset_seed=seed,
                                      agent_seed=seed, gamma=1.0, lam=1.0)

    def _update(self, batch: Batch) -> QStats:
        d = self.cfg.dmc
        stats = q_update(self.net, self.optimizer, batch, self.np_rng,
                         epochs=d.update_epochs, num_minibatches=d.num_minibatches,
                         max_grad_norm=d.max_grad_norm)
        self.count_update(len(batch), d.past_snapshot_every, d.past_pool_size)
        return stats

    def describe(self) -> str:
        return self.describe_as("DMC")


def dmc_scalars(rs: RolloutStats, qs: QStats, decisions: int, *, epsilon: float, lr: float,
                updates: int, past_pool: int) -> dict[str, float]:
    """The TensorBoard scalars of one DMC update, by tag (docs/training.md lists them)."""
    return {
        "losses/q_mse": qs.q_loss, "losses/q_explained_variance": qs.explained_variance,
        "values/q_chosen_mean": qs.q_taken, "values/return_mean": qs.mean_return,
        "charts/epsilon": epsilon, "charts/learning_rate": lr,
        "charts/env_steps_per_second": rs.env_steps / max(rs.seconds, 1e-9),
        "charts/learner_samples_per_second": qs.samples / max(qs.seconds, 1e-9),
        "charts/rollout_seconds": rs.seconds, "charts/update_seconds": qs.seconds,
        "charts/policy_forward_seconds": rs.policy_seconds,
        "charts/opponent_seconds": rs.opponent_seconds,
        "charts/decisions_per_rollout": decisions,
        "charts/updates": updates, "charts/past_pool_size": past_pool,
        **ppo_selfplay.rollout_scalars(rs)}


build = DMCStage.new
resume = DMCStage.from_checkpoint
check_ready = ppo_selfplay.check_ready  # the same: device, starting weights, evaluation opponents

__all__ = ["DMCStage", "EpsilonGreedy", "QStats", "build", "check_ready", "dmc_scalars",
           "q_update", "resume"]
