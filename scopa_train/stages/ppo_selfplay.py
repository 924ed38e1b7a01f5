"""Stage kind ``ppo``: PPO self-play on the batched environment, read top to bottom.

    for each update (``PPOStage.loop``):
        schedule    learning rate and entropy coefficient, linear in the fraction of
                    updates done
        rollout     pick an opponent for every game from the pool (self / past snapshot /
                    baseline / any agent spec), play ``rollouts.rollout_steps`` moves per
                    game, GAE (``scopa_train.rollout``)
        update      PPO epochs over shuffled minibatches (``scopa_train.ppo``); a
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

import math
from pathlib import Path
from typing import Any

import numpy as np
import torch

from scopa_policy.checkpoint import policy_checkpoint
from scopa_policy.network import NetConfig, PolicyNet, count_parameters

from ..config import ConfigError, StageConfig
from ..framework import Log, Stage, starting_weights
from ..ppo import UpdateStats, ppo_update
from ..rollout import (
    PAST,
    Batch,
    RolloutCollector,
    RolloutStats,
    batched_baseline,
    make_teacher,
    rollout_length,
    sample_opponents,
)


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


class PoolStage(Stage):
    """What the stages that train the policy network against a pool of opponents (self,
    past snapshots, agents) share: their subclass sets ``net``, ``past_pool``,
    ``steps_per_rollout`` and ``num_updates`` (None: no budget in moves); this holds the
    update budget, the past pool, the starting weights, the checkpoint's parts and the
    evaluated policy. PPO (``PPOStage``) and DMC (``scopa_train.stages.dmc``) differ in
    their rollouts' policy and their update."""

    net: PolicyNet
    past_pool: list[dict[str, torch.Tensor]]
    steps_per_rollout: int
    num_updates: int | None

    @classmethod
    def new(cls, cfg: StageConfig, run_dir: Path, log: Log = print, **kw: Any) -> Any:
        """A new stage in ``run_dir``, from the weights ``init_from`` names (if any): the
        kind's ``build``."""
        stage = cls(cfg, run_dir, log=log, **kw)
        stage.start_from()
        return stage

    @classmethod
    def from_checkpoint(cls, ck: dict[str, Any], cfg: StageConfig, run_dir: Path,
                        log: Log = print, **kw: Any) -> Any:
        """The stage of a training checkpoint, where it stopped: the kind's ``resume``."""
        stage = cls(cfg, run_dir, log=log, **kw)
        stage.load(ck)
        return stage

    def done(self) -> bool:
        return self.num_updates is not None and self.counters.update >= self.num_updates

    def fraction_done(self) -> float:
        """The fraction of the updates done (0 without a budget in moves): schedules."""
        return self.counters.update / self.num_updates if self.num_updates else 0.0

    def past_net(self) -> PolicyNet:
        """A network with one of the past pool's snapshots, drawn at random."""
        net = PolicyNet(self.net.cfg)
        net.load_state_dict(self.past_pool[int(self.np_rng.integers(len(self.past_pool)))])
        return net.to(self.device).eval()

    def count_update(self, samples: int, snapshot_every: int, pool_size: int) -> None:
        """One more update of ``samples`` decisions; every ``snapshot_every`` updates the
        network joins the past pool (the oldest leave it past ``pool_size``)."""
        c = self.counters
        c.update += 1
        c.learner_samples += samples
        if c.update % snapshot_every == 0 and PAST in self.cfg.opponents:
            self.past_pool.append(self._snapshot())
            del self.past_pool[:-pool_size]

    # -- state ------------------------------------------------------------------------
    def _snapshot(self) -> dict[str, torch.Tensor]:
        """The network's weights, copied to the CPU (checkpoints load on any device)."""
        return {k: v.detach().cpu().clone() for k, v in self.net.state_dict().items()}

    def load_weights(self, state: dict[str, torch.Tensor]) -> None:
        """Start from these weights (the past pool, if any, starts from them too)."""
        try:
            self.net.load_state_dict(state)
        except (RuntimeError, KeyError) as e:
            raise ConfigError(f"the starting weights do not fit the config's network: "
                              f"{str(e).strip().splitlines()[0]}") from None
        self.past_pool = [self._snapshot()] if self.past_pool else []

    def start_from(self) -> None:
        """The weights ``init_from`` names, if any (a fresh network otherwise)."""
        if self.cfg.init_from:
            self.load_weights(starting_weights(self.cfg))

    def policy_parts(self, training: bool) -> dict[str, Any]:
        return policy_checkpoint(self.net, self.rules.to_dict(), {})

    def training_parts(self) -> dict[str, Any]:
        return {"past_pool": self.past_pool}

    def restore(self, ck: dict[str, Any]) -> None:
        self.net.load_state_dict(ck["model"])
        self.past_pool = [dict(sd) for sd in ck["past_pool"]]

    def eval_policy(self) -> tuple[PolicyNet, None]:
        return self.net, None

    def progress_total(self) -> tuple[int, int, str]:
        if self.num_updates is None:  # no total to show: the bar counts
            return 0, self.counters.env_steps, " env steps"
        total = self.num_updates * self.cfg.rollouts.num_envs * self.steps_per_rollout
        return total, self.counters.env_steps, " env steps"

    def describe_as(self, what: str) -> str:
        """``describe``'s line for the stage of ``what`` (e.g. "PPO")."""
        games = f"{self.cfg.rollouts.num_envs} games x {self.steps_per_rollout} moves"
        size = f"{what}, {count_parameters(self.net):,} parameters"
        if self.num_updates is None:
            until = (f"until {self.cfg.run.max_minutes:g} min have passed"
                     if self.cfg.run.max_minutes else "until stopped")
            return f"{size}, updates of {games} {until}"
        return f"{size}, {self.num_updates} updates of {games}"


class PPOStage(PoolStage):
    """PPO self-play against a pool of opponents (module docstring)."""

    KIND = "ppo"

    def __init__(self, cfg: StageConfig, run_dir: Path, **kw: Any) -> None:
        super().__init__(cfg, run_dir, **kw)
        n = cfg.network
        self.net = PolicyNet(NetConfig(n.hidden_size, n.hidden_layers, n.action_hidden))
        self.net.to(self.device).eval()
        # foreach: the multi-tensor Adam, bit for bit the per-tensor one (torch's default
        # on the CPU) in a fraction of the time
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=cfg.ppo.learning_rate,
                                          eps=1e-5, foreach=True)
        self.past_pool: list[dict[str, torch.Tensor]] = []
        self.collector = make_collector(cfg)
        self.steps_per_rollout = rollout_length(cfg)
        per_update = cfg.rollouts.num_envs * self.steps_per_rollout
        # None: no budget in moves (``ppo.total_env_steps: 0``), until the time limit
        self.num_updates = (max(1, math.ceil(cfg.ppo.total_env_steps / per_update))
                            if cfg.ppo.total_env_steps else None)
        if PAST in cfg.opponents:
            self.past_pool.append(self._snapshot())

    # -- the loop ---------------------------------------------------------------------
    def loop(self) -> str | None:
        while not self.done():
            lr, ent_coef = self._schedule()
            batch, rollout_stats = self._rollout()
            update_stats = self._update(batch, ent_coef)
            self.counters.env_steps += rollout_stats.env_steps
            self.scalars(update_scalars(rollout_stats, update_stats, len(batch), lr=lr,
                                        ent_coef=ent_coef, updates=self.counters.update,
                                        past_pool=len(self.past_pool)))
            self.advance()
            self.evaluate_and_save()
            why = self.halted()
            if why is not None:
                return why
        return None

    def _schedule(self) -> tuple[float, float]:
        """This update's learning rate (set on the optimizer) and entropy coefficient:
        linear in the fraction of updates done, from the start values to
        ``lr_final_fraction`` of the rate and to ``ent_coef_final``."""
        p = self.cfg.ppo
        frac = self.fraction_done()
        lr = p.learning_rate * (1.0 - frac * (1.0 - p.lr_final_fraction))
        ent_coef = p.ent_coef + frac * (p.ent_coef_final - p.ent_coef)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        return lr, ent_coef

    def _rollout(self) -> tuple[Batch, RolloutStats]:
        """Opponents for every game (and the learner's team), a past snapshot if one
        plays, then one rollout with GAE on fresh deals seeded by the update number."""
        cfg = self.cfg
        n = cfg.rollouts.num_envs
        kinds = sample_opponents(self.np_rng, cfg.opponents, n, have_past=bool(self.past_pool))
        learner_team = self.np_rng.integers(0, 2, n)
        past_net = self.past_net() if PAST in kinds else None
        seed = (cfg.seed * 1_000_003 + self.counters.update) % (2**63)
        return self.collector.collect(self.net, past_net, kinds, learner_team,
                                      self.steps_per_rollout, reset_seed=seed, agent_seed=seed,
                                      gamma=cfg.ppo.gamma, lam=cfg.ppo.gae_lambda)

    def _update(self, batch: Batch, ent_coef: float) -> UpdateStats:
        """PPO on the rollout; every ``past_snapshot_every`` updates the network joins the
        past pool (the oldest leave it)."""
        p = self.cfg.ppo
        stats = ppo_update(self.net, self.optimizer, batch, self.np_rng,
                           epochs=p.update_epochs, num_minibatches=p.num_minibatches,
                           clip_coef=p.clip_coef, clip_vloss=p.clip_vloss, ent_coef=ent_coef,
                           vf_coef=p.vf_coef, max_grad_norm=p.max_grad_norm,
                           norm_adv=p.norm_adv, target_kl=p.target_kl,
                           endgame_coef=p.endgame_coef)
        self.count_update(len(batch), p.past_snapshot_every, p.past_pool_size)
        return stats

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
        "charts/learning_rate": lr, "charts/entropy_coef": ent_coef,
        "charts/env_steps_per_second": rs.env_steps / max(rs.seconds, 1e-9),
        "charts/learner_samples_per_second": us.samples / max(us.seconds, 1e-9),
        "charts/rollout_seconds": rs.seconds, "charts/update_seconds": us.seconds,
        "charts/policy_forward_seconds": rs.policy_seconds,
        "charts/opponent_seconds": rs.opponent_seconds,
        "charts/teacher_seconds": rs.teacher_seconds,
        "charts/decisions_per_rollout": decisions,
        "charts/updates": updates, "charts/past_pool_size": past_pool,
    }
    if us.taught_fraction > 0:
        scalars.update({
            "endgame/taught_fraction": us.taught_fraction,
            "endgame/expected_regret_points": us.endgame_loss,
            "endgame/argmax_best_move_rate": us.endgame_best_move_rate,
            "endgame/argmax_regret_points": us.endgame_regret_points})
    scalars.update(rollout_scalars(rs))
    return scalars


def rollout_scalars(rs: RolloutStats) -> dict[str, float]:
    """The ``rollout/...`` scalars of one rollout: points and margins per hand and
    episode returns, by opponent kind."""
    scalars: dict[str, float] = {}
    for kind, hands in rs.hand_points.items():
        own = np.array([h[0] for h in hands], np.float64)
        other = np.array([h[1] for h in hands], np.float64)
        scalars[f"rollout/points_per_hand_learner_vs_{kind}"] = float(own.mean())
        if kind != "self":
            scalars[f"rollout/margin_per_hand_vs_{kind}"] = float((own - other).mean())
        else:
            scalars["rollout/points_per_hand_selfplay"] = float((own + other).mean() / 2)
    for kind, rets in rs.episode_returns.items():
        if kind != "self":
            scalars[f"rollout/episode_return_vs_{kind}"] = float(np.mean(rets))
    return scalars


build = PPOStage.new
resume = PPOStage.from_checkpoint


def check_ready(cfg: StageConfig) -> None:
    """What can fail before the run folder exists: the device, the starting weights
    and every evaluation opponent (a ``ckpt:`` file is read)."""
    import agents

    cfg.torch_device()
    if cfg.init_from:
        starting_weights(cfg)
    if cfg.evaluation.every_steps:
        for spec in cfg.evaluation.opponents:
            try:
                agents.make_agent(spec, seed=0)
            except ValueError as e:
                raise ConfigError(f"config key 'evaluation.opponents': {spec!r}: {e}") from None


__all__ = ["PPOStage", "build", "check_ready", "make_collector", "resume", "rollout_scalars",
           "update_scalars"]
