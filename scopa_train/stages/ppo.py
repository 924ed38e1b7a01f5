"""Stage kind ``ppo``: PPO self-play on the batched environment: its config section
(``PPOSection``), its checks, its update (``ppo_update``, CleanRL style: clipped
objective, clipped value loss, entropy bonus) and its stage (``PPOStage``, on the pool
stage that DMC shares, ``scopa_train.stages.pool``). Read top to bottom:

    for each update (``PPOStage.loop``):
        schedule    learning rate and entropy coefficient, linear in the fraction of
                    updates done
        rollout     pick an opponent for every game from the pool (self / past snapshot /
                    baseline / any agent spec), play ``rollouts.rollout_steps`` moves per
                    game, GAE (``scopa_train.rollout``)
        update      PPO epochs over shuffled minibatches (``ppo_update``); a
                    snapshot joins the past pool every ``ppo.past_snapshot_every`` updates
        log         TensorBoard scalars, the progress bar
        evaluate    every ``evaluation.every_steps`` env steps (the framework's evaluator:
                    fixed deals, best checkpoint by ``evaluation.best_metric``)
        save        a periodic checkpoint every ``checkpoints.every_steps``
        stop        when the framework's ``halted()`` says (a signal, ``run.max_minutes``)

Checkpoints, the clock, stops, evaluation and the end of the run are
``scopa_train.framework``'s.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from scopa_policy.features import take_rows
from scopa_policy.network import PolicyNet

from ..config import StageConfig, needs_two_player_points
from ..rollout import (
    Batch,
    RolloutCollector,
    RolloutStats,
    batched_baseline,
    make_teacher,
)
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
class PPOSection:
    total_env_steps: int = setting(2_000_000, "environment moves to train for (all seats); 0: no "
                                   "budget in moves, the stage trains until run.max_minutes or a "
                                   "stop (the schedules then keep their start values)", lo=0)
    reward_scale: float = setting(0.25, "rewards are multiplied by this for learning (value "
                                  "targets); logged points stay unscaled", lo=0, lo_open=True)
    learning_rate: float = setting(3e-4, "Adam learning rate", lo=0, hi=1, lo_open=True)
    lr_final_fraction: float = setting(0.1, "linear schedule, stepped once per update: final lr = "
                                       "learning_rate x this", lo=0, hi=1)
    gamma: float = setting(1.0, "discount per own move", lo=0, hi=1)
    gae_lambda: float = setting(0.95, "GAE lambda", lo=0, hi=1)
    update_epochs: int = setting(4, "PPO epochs per rollout", lo=1, hi=100)
    num_minibatches: int = setting(4, "minibatches per epoch", lo=1, hi=1024)
    clip_coef: float = setting(0.2, "PPO ratio clip", lo=0, hi=1, lo_open=True)
    clip_vloss: bool = setting(True, "clip the value loss like the policy ratio")
    ent_coef: float = setting(0.01, "entropy bonus at the start", lo=0, hi=1)
    ent_coef_final: float = setting(0.001, "entropy bonus at the end (linear schedule, stepped "
                                    "once per update)", lo=0, hi=1)
    vf_coef: float = setting(0.5, "value loss weight", lo=0, hi=100)
    max_grad_norm: float = setting(0.5, "gradient clipping norm", lo=0, lo_open=True)
    norm_adv: bool = setting(True, "normalise advantages per minibatch")
    target_kl: float = setting(0.0, "stop the epochs early when approx KL exceeds this (0 = off)",
                               lo=0)
    endgame_coef: float = setting(0.0, "2 players: weight of the exact last-deal teacher. Once "
                                  "the deck is empty every card is known; the learner's decisions "
                                  "there are solved exactly (agents.baselines.endgame), their "
                                  "value targets become the exact values and the loss gains "
                                  "this weight times the policy's expected regret in points "
                                  "(0 = off)", lo=0, hi=100)
    past_snapshot_every: int = setting(10, "updates between snapshots added to the past pool",
                                       lo=1)
    past_pool_size: int = setting(5, "past snapshots kept (oldest dropped)", lo=1, hi=100)

    def __post_init__(self) -> None:
        if self.ent_coef_final > self.ent_coef:
            raise ConfigError(f"config key 'ppo.ent_coef_final' ({self.ent_coef_final}) must "
                              f"not exceed 'ppo.ent_coef' ({self.ent_coef})")


def check(cfg: StageConfig) -> None:
    """The exact last-deal teacher (``ppo.endgame_coef``) needs 2-player hands for points."""
    if cfg.ppo.endgame_coef > 0:
        needs_two_player_points(cfg, "config key 'ppo.endgame_coef'",
                                "the exact last-deal values are hand points margins, and "
                                "only 2-player seats know every card once the deck is empty")


# -- the update ------------------------------------------------------------------------
@dataclass
class UpdateStats:
    policy_loss: float
    value_loss: float
    entropy: float
    approx_kl: float
    old_approx_kl: float
    clip_fraction: float
    explained_variance: float
    epochs: int
    samples: int  # transitions passed through the learner (all epochs)
    seconds: float
    # the exact teacher's decisions (last deal, 2 players; ``endgame_coef``): their share
    # of the rollout, and the policy's expected regret on them (points per decision) and
    # how its argmax did on them, measured in the first epoch before each minibatch's step
    taught_fraction: float = 0.0
    endgame_loss: float = 0.0
    endgame_best_move_rate: float = float("nan")
    endgame_regret_points: float = float("nan")


def ppo_update(net: PolicyNet, optimizer: torch.optim.Optimizer, batch: Batch,
               rng: np.random.Generator, *, epochs: int, num_minibatches: int,
               clip_coef: float, clip_vloss: bool, ent_coef: float, vf_coef: float,
               max_grad_norm: float, norm_adv: bool, target_kl: float,
               endgame_coef: float = 0.0) -> UpdateStats:
    """PPO epochs over the rollout; with ``endgame_coef`` > 0, plus that weight times the
    policy's expected regret on the minibatch's taught decisions (the exact teacher's
    loss in hand points of each move against the best one, weighted by the move's
    probability: a policy gradient over every legal move with exact action values)."""
    t0 = time.perf_counter()
    device, batch, size, mb_size = learner_start(net, batch, num_minibatches)
    clipfracs: list[float] = []
    pg_loss = v_loss = entropy_loss = approx_kl = old_approx_kl = torch.zeros(())
    eg_losses: list[float] = []
    eg_best: list[float] = []
    eg_regret: list[float] = []
    samples = 0
    epochs_done = 0
    for _ in range(epochs):
        epochs_done += 1
        order = rng.permutation(size)
        for start in range(0, size, mb_size):
            mb = torch.from_numpy(order[start:start + mb_size]).to(device)
            if len(mb) < 2:
                continue
            # the move features were computed once, in the rollout
            cand = batch.candidates(mb)
            logits, newvalue = net.forward_moves(take_rows(batch.obs, mb), cand)
            logp_all = torch.log_softmax(logits, -1)
            newlogp = logp_all.gather(1, batch.actions[mb][:, None]).squeeze(1)
            # padding has probability 0 and a finite log-prob (-1e9): adds 0
            entropy = -(logp_all.exp() * logp_all).sum(-1)
            logratio = newlogp - batch.logprobs[mb]
            ratio = logratio.exp()
            with torch.no_grad():
                old_approx_kl = (-logratio).mean()
                approx_kl = ((ratio - 1) - logratio).mean()
                clipfracs.append(float(((ratio - 1.0).abs() > clip_coef).float().mean()))
            adv = batch.advantages[mb]
            if norm_adv:
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            pg_loss = torch.max(-adv * ratio,
                                -adv * torch.clamp(ratio, 1 - clip_coef, 1 + clip_coef)).mean()
            ret = batch.returns[mb]
            if clip_vloss:
                v_unclipped = (newvalue - ret) ** 2
                v_clipped = batch.values[mb] + torch.clamp(
                    newvalue - batch.values[mb], -clip_coef, clip_coef)
                v_loss = 0.5 * torch.max(v_unclipped, (v_clipped - ret) ** 2).mean()
            else:
                v_loss = 0.5 * ((newvalue - ret) ** 2).mean()
            entropy_loss = entropy.mean()
            loss = pg_loss - ent_coef * entropy_loss + vf_coef * v_loss
            taught = batch.taught[mb]
            if taught.any():
                # the policy's expected regret: each move's exact loss in points against
                # the best one, weighted by its probability (padding weighs 0)
                regret = batch.padded(batch.move_regret, mb, cand)[taught]
                eg_loss = (logp_all[taught].exp() * regret).sum(-1).mean()
                if endgame_coef > 0:
                    loss = loss + endgame_coef * eg_loss
                if epochs_done == 1:
                    eg_losses.append(float(eg_loss.detach()))
                    with torch.no_grad():
                        picked = regret.gather(1, logits[taught].argmax(-1, keepdim=True))
                        eg_best.extend((picked == 0).float().squeeze(1).tolist())
                        eg_regret.extend(picked.squeeze(1).tolist())
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), max_grad_norm)
            optimizer.step()
            samples += len(mb)
        if target_kl and float(approx_kl) > target_kl:
            break
    net.eval()
    return UpdateStats(
        policy_loss=float(pg_loss.detach()), value_loss=float(v_loss.detach()),
        entropy=float(entropy_loss.detach()), approx_kl=float(approx_kl),
        old_approx_kl=float(old_approx_kl),
        clip_fraction=float(np.mean(clipfracs)) if clipfracs else 0.0,
        explained_variance=explained_variance(batch.values.cpu().numpy(),
                                              batch.returns.cpu().numpy()),
        epochs=epochs_done, samples=samples, seconds=time.perf_counter() - t0,
        taught_fraction=float(batch.taught.float().mean()) if size else 0.0,
        endgame_loss=float(np.mean(eg_losses)) if eg_losses else 0.0,
        endgame_best_move_rate=float(np.mean(eg_best)) if eg_best else float("nan"),
        endgame_regret_points=float(np.mean(eg_regret)) if eg_regret else float("nan"))


# -- the stage -------------------------------------------------------------------------
def make_collector(cfg: StageConfig) -> Any:
    """The rollout collector: ``rollouts.num_envs`` games in one vector env, baselines
    played by ``agents`` (batched where they have a batched form); with ``rollouts.backend:
    ray``, the same interface over Ray actors (``scopa_train.ray_backend``)."""
    import agents

    if cfg.rollouts.backend == "ray":
        from ..ray_backend import RayRolloutCollector

        return RayRolloutCollector(cfg, agents.make_agent, batched_baseline)
    return RolloutCollector(cfg.make_env(), cfg.ppo.reward_scale, agents.make_agent,
                            batched_baseline, teacher=make_teacher(cfg))


class PPOStage(PoolStage):
    """PPO self-play against a pool of opponents (module docstring)."""

    KIND = "ppo"
    SECTION = "ppo"
    ADAM_EPS = 1e-5

    def make_collector(self) -> Any:
        return make_collector(self.cfg)

    def schedule(self) -> dict[str, float]:
        """This update's learning rate (set on the optimizer) and entropy coefficient:
        linear in the fraction of updates done, from the start values to
        ``lr_final_fraction`` of the rate and to ``ent_coef_final``."""
        p = self.cfg.ppo
        frac = self.fraction_done()
        lr = p.learning_rate * (1.0 - frac * (1.0 - p.lr_final_fraction))
        ent_coef = p.ent_coef + frac * (p.ent_coef_final - p.ent_coef)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        return {"lr": lr, "ent_coef": ent_coef}

    def returns(self) -> tuple[float, float]:
        return self.cfg.ppo.gamma, self.cfg.ppo.gae_lambda  # GAE

    def learn(self, batch: Batch, knobs: dict[str, float]) -> UpdateStats:
        p = self.cfg.ppo
        return ppo_update(self.net, self.optimizer, batch, self.np_rng,
                          epochs=p.update_epochs, num_minibatches=p.num_minibatches,
                          clip_coef=p.clip_coef, clip_vloss=p.clip_vloss,
                          ent_coef=knobs["ent_coef"], vf_coef=p.vf_coef,
                          max_grad_norm=p.max_grad_norm, norm_adv=p.norm_adv,
                          target_kl=p.target_kl, endgame_coef=p.endgame_coef)

    def update_scalars(self, rs: RolloutStats, stats: UpdateStats, decisions: int,
                       knobs: dict[str, float]) -> dict[str, float]:
        return update_scalars(rs, stats, decisions, lr=knobs["lr"], ent_coef=knobs["ent_coef"],
                              updates=self.counters.update, past_pool=len(self.past_pool))

    def describe(self) -> str:
        return self.describe_as("PPO")


def update_scalars(rs: RolloutStats, us: UpdateStats, decisions: int, *, lr: float,
                   ent_coef: float, updates: int, past_pool: int) -> dict[str, float]:
    """The TensorBoard scalars of one update, by tag (docs/training.md lists them)."""
    scalars = {
        "losses/policy": us.policy_loss, "losses/value": us.value_loss,
        "losses/entropy": us.entropy, "losses/approx_kl": us.approx_kl,
        "losses/old_approx_kl": us.old_approx_kl, "losses/clip_fraction": us.clip_fraction,
        "losses/explained_variance": us.explained_variance,
        "charts/entropy_coef": ent_coef, "charts/teacher_seconds": rs.teacher_seconds,
        **update_charts(rs, samples=us.samples, seconds=us.seconds, decisions=decisions,
                        lr=lr, updates=updates, past_pool=past_pool),
    }
    if us.taught_fraction > 0:
        scalars.update({
            "endgame/taught_fraction": us.taught_fraction,
            "endgame/expected_regret_points": us.endgame_loss,
            "endgame/argmax_best_move_rate": us.endgame_best_move_rate,
            "endgame/argmax_regret_points": us.endgame_regret_points})
    scalars.update(rollout_scalars(rs))
    return scalars


build = PPOStage.new
resume = PPOStage.from_checkpoint

KIND = StageKind(
    name="ppo", help="self-play PPO", sections={"ppo": PPOSection}, reads=("checkpoints",),
    check=check, check_ready=check_ready, build=build,
    resume=resume, from_policy=False, ray=True)
"""The stage kind, as ``scopa_train.stages`` registers it."""

__all__ = ["KIND", "PPOSection", "PPOStage", "UpdateStats", "build", "check", "check_ready",
           "make_collector", "ppo_update", "resume", "update_scalars"]
