"""Stage kind ``dmc``: Deep Monte-Carlo (DouZero's method) on the batched environment: its
config section (``DMCSection``), its checks, its update (``q_update``) and its stage
(``DMCStage``, on the pool stage that PPO shares, ``scopa_train.stages.pool``).

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
        log, evaluate, save, stop: as the PPO stage (``scopa_train.stages.pool``)

The value head is left as it is (a later ``ppo`` stage starting from these weights
learns it).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

import agents
from scopa_policy.features import Candidates
from scopa_policy.network import PolicyNet

from ..config import StageConfig
from ..rollout import Batch, RolloutCollector, RolloutStats, batched_baseline
from ..settings import ConfigError, setting
from . import StageKind
from .pool import (
    PoolStage,
    check_ready,
    explained_variance,
    learner_start,
    rollout_scalars,
    update_charts,
)


# -- the config section and its checks -------------------------------------------------
@dataclass
class DMCSection:
    total_env_steps: int = setting(2_000_000, "environment moves to train for (all seats); 0: no "
                                   "budget in moves, the stage trains until run.max_minutes or a "
                                   "stop (epsilon then keeps its start value)", lo=0)
    reward_scale: float = setting(0.25, "rewards are multiplied by this for learning (the Q "
                                  "targets); logged points stay unscaled", lo=0, lo_open=True)
    learning_rate: float = setting(3e-4, "Adam learning rate (constant)", lo=0, hi=1, lo_open=True)
    epsilon: float = setting(0.1, "the actors' exploration at the start: the share of moves "
                             "drawn uniformly among the legal ones, the rest greedy on Q", lo=0,
                             hi=1)
    epsilon_final: float = setting(0.01, "exploration at the end (linear schedule, stepped once "
                                   "per update)", lo=0, hi=1)
    update_epochs: int = setting(1, "passes over each rollout's decisions", lo=1, hi=100)
    num_minibatches: int = setting(4, "minibatches per pass", lo=1, hi=1024)
    max_grad_norm: float = setting(1.0, "gradient clipping norm", lo=0, lo_open=True)
    past_snapshot_every: int = setting(10, "updates between snapshots added to the past pool",
                                       lo=1)
    past_pool_size: int = setting(5, "past snapshots kept (oldest dropped)", lo=1, hi=100)


def check(cfg: StageConfig) -> None:
    """Whole episodes within a rollout; exploration that does not grow."""
    if cfg.rollouts.episode != "hand":
        raise ConfigError("stage kind 'dmc' needs rollouts.episode: hand (its targets are "
                          "the Monte-Carlo returns of whole episodes within a rollout)")
    if cfg.dmc.epsilon_final > cfg.dmc.epsilon:
        raise ConfigError(f"config key 'dmc.epsilon_final' ({cfg.dmc.epsilon_final}) must "
                          f"not exceed 'dmc.epsilon' ({cfg.dmc.epsilon})")


# -- the update ------------------------------------------------------------------------
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
    device, batch, size, mb_size = learner_start(net, batch, num_minibatches)
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


# -- the stage -------------------------------------------------------------------------
class DMCStage(PoolStage):
    """Deep Monte-Carlo against a pool of opponents (module docstring)."""

    KIND = "dmc"
    SECTION = "dmc"

    def make_collector(self) -> Any:
        return RolloutCollector(self.cfg.make_env(), self.cfg.dmc.reward_scale,
                                agents.make_agent, batched_baseline)

    def schedule(self) -> dict[str, float]:
        d = self.cfg.dmc
        return {"epsilon": d.epsilon + self.fraction_done() * (d.epsilon_final - d.epsilon)}

    def acting(self, net: PolicyNet, knobs: dict[str, float]) -> EpsilonGreedy:
        return EpsilonGreedy(net, knobs["epsilon"])

    def returns(self) -> tuple[float, float]:
        return 1.0, 1.0  # each decision's return: its Monte-Carlo return

    def learn(self, batch: Batch, knobs: dict[str, float]) -> QStats:
        d = self.cfg.dmc
        return q_update(self.net, self.optimizer, batch, self.np_rng,
                        epochs=d.update_epochs, num_minibatches=d.num_minibatches,
                        max_grad_norm=d.max_grad_norm)

    def update_scalars(self, rs: RolloutStats, stats: QStats, decisions: int,
                       knobs: dict[str, float]) -> dict[str, float]:
        return dmc_scalars(rs, stats, decisions, epsilon=knobs["epsilon"],
                           lr=self.cfg.dmc.learning_rate, updates=self.counters.update,
                           past_pool=len(self.past_pool))

    def describe(self) -> str:
        return self.describe_as("DMC")


def dmc_scalars(rs: RolloutStats, qs: QStats, decisions: int, *, epsilon: float, lr: float,
                updates: int, past_pool: int) -> dict[str, float]:
    """The TensorBoard scalars of one DMC update, by tag (docs/training.md lists them)."""
    return {
        "losses/q_mse": qs.q_loss, "losses/q_explained_variance": qs.explained_variance,
        "values/q_chosen_mean": qs.q_taken, "values/return_mean": qs.mean_return,
        "charts/epsilon": epsilon,
        **update_charts(rs, samples=qs.samples, seconds=qs.seconds, decisions=decisions,
                        lr=lr, updates=updates, past_pool=past_pool),
        **rollout_scalars(rs)}


build = DMCStage.new
resume = DMCStage.from_checkpoint

KIND = StageKind(
    name="dmc", help="Deep Monte-Carlo: Q per legal move fitted to self-play returns",
    sections={"dmc": DMCSection}, reads=("checkpoints",), check=check,
    check_ready=check_ready, build=build, resume=resume,
    from_policy=False)
"""The stage kind, as ``scopa_train.stages`` registers it."""

__all__ = ["KIND", "DMCSection", "DMCStage", "EpsilonGreedy", "QStats", "build", "check",
           "check_ready", "dmc_scalars", "q_update", "resume"]
