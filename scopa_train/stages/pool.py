"""What the kinds that train the policy network against a pool of opponents share
(``ppo``, ``dmc``), written once: ``PoolStage``, its constructor, loop and rollout.

    for each update (``PoolStage.loop``):
        schedule    the kind's values for this update (``schedule``), linear in the
                    fraction of updates done
        rollout     pick an opponent for every game from the pool (self / past snapshot /
                    baseline / any agent spec), play ``rollouts.rollout_steps`` moves per
                    game on fresh deals seeded by the update number
                    (``scopa_train.rollout``); the learner's seats and past snapshots
                    play the kind's acting policy (``acting``)
        learn       the kind's update on the rollout (``learn``); a snapshot joins the
                    past pool every ``past_snapshot_every`` updates
        log         TensorBoard scalars (``update_scalars``), the progress bar
        evaluate    every ``evaluation.every_steps`` env steps, and save a periodic
                    checkpoint every ``checkpoints.every_steps`` (the framework's)
        stop        when the framework's ``halted()`` says (a signal, ``run.max_minutes``)

A kind on it names its config section (``SECTION``: ``total_env_steps``,
``learning_rate``, ``reward_scale``, ``past_snapshot_every`` and ``past_pool_size`` are
read from it) and defines those hooks.
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
from ..device import torch_device
from ..framework import Log, Stage, starting_weights
from ..rollout import PAST, Batch, RolloutStats, rollout_length, sample_opponents


class PoolStage(Stage):
    """A stage that trains the policy network against a pool of opponents (module
    docstring). A subclass sets ``SECTION`` (and ``ADAM_EPS``) and defines
    ``make_collector``, ``schedule``, ``acting``, ``returns``, ``learn`` and
    ``update_scalars``."""

    SECTION = ""  # the kind's own config section
    ADAM_EPS = 1e-8  # Adam's epsilon (torch's default)

    def __init__(self, cfg: StageConfig, run_dir: Path, **kw: Any) -> None:
        super().__init__(cfg, run_dir, **kw)
        n, own = cfg.network, self.settings
        self.net = PolicyNet(NetConfig(n.hidden_size, n.hidden_layers, n.action_hidden))
        self.net.to(self.device).eval()
        # foreach: the multi-tensor Adam, bit for bit the per-tensor one (torch's default
        # on the CPU) in a fraction of the time
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=own.learning_rate,
                                          eps=self.ADAM_EPS, foreach=True)
        self.past_pool: list[dict[str, torch.Tensor]] = []
        self.collector = self.make_collector()
        self.steps_per_rollout = rollout_length(cfg)
        per_update = cfg.rollouts.num_envs * self.steps_per_rollout
        # None: no budget in moves (``total_env_steps: 0``), until the time limit
        self.num_updates = (max(1, math.ceil(own.total_env_steps / per_update))
                            if own.total_env_steps else None)
        if PAST in cfg.opponents:
            self.past_pool.append(self._snapshot())

    @property
    def settings(self) -> Any:
        """The kind's own config section."""
        return getattr(self.cfg, self.SECTION)

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

    # -- what a kind on the pool defines ----------------------------------------------
    def make_collector(self) -> Any:
        """The rollout collector (``scopa_train.rollout.RolloutCollector`` or one with
        its interface)."""
        raise NotImplementedError

    def schedule(self) -> dict[str, float]:
        """This update's scheduled values, by name (set where they apply)."""
        raise NotImplementedError

    def acting(self, net: PolicyNet, knobs: dict[str, float]) -> Any:
        """The policy a network plays in the rollouts (the learner's and past ones)."""
        return net

    def returns(self) -> tuple[float, float]:
        """(gamma, lambda) of the rollouts' returns and advantages."""
        raise NotImplementedError

    def learn(self, batch: Batch, knobs: dict[str, float]) -> Any:
        """The update on one rollout; its figures."""
        raise NotImplementedError

    def update_scalars(self, rs: RolloutStats, stats: Any, decisions: int,
                       knobs: dict[str, float]) -> dict[str, float]:
        """The TensorBoard scalars of one update, by tag."""
        raise NotImplementedError

    # -- the loop ---------------------------------------------------------------------
    def loop(self) -> str | None:
        own = self.settings
        while not self.done():
            knobs = self.schedule()
            batch, rollout_stats = self.rollout(knobs)
            stats = self.learn(batch, knobs)
            self.count_update(len(batch), own.past_snapshot_every, own.past_pool_size)
            self.counters.env_steps += rollout_stats.env_steps
            self.scalars(self.update_scalars(rollout_stats, stats, len(batch), knobs))
            self.advance()
            self.evaluate_and_save()
            why = self.halted()
            if why is not None:
                return why
        return None

    def rollout(self, knobs: dict[str, float]) -> tuple[Batch, RolloutStats]:
        """Opponents for every game (and the learner's side), a past snapshot if one
        plays, then one rollout on fresh deals seeded by the update number."""
        cfg = self.cfg
        n = cfg.rollouts.num_envs
        kinds = sample_opponents(self.np_rng, cfg.opponents, n, have_past=bool(self.past_pool))
        learner_team = self.np_rng.integers(0, 2, n)
        past = self.acting(self.past_net(), knobs) if PAST in kinds else None
        seed = (cfg.seed * 1_000_003 + self.counters.update) % (2**63)
        gamma, lam = self.returns()
        return self.collector.collect(self.acting(self.net, knobs), past, kinds, learner_team,
                                      self.steps_per_rollout, reset_seed=seed, agent_seed=seed,
                                      gamma=gamma, lam=lam)

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


def learner_start(net: PolicyNet, batch: Batch, num_minibatches: int
                  ) -> tuple[torch.device, Batch, int, int]:
    """An update's start: the network in training mode, and its device, the rollout on
    that device, the rollout's size and the minibatch size."""
    net.train()
    device = next(net.parameters()).device
    size = len(batch)
    return device, batch.to(device), size, max(1, size // num_minibatches)


def explained_variance(pred: np.ndarray, target: np.ndarray) -> float:
    """1 - Var(target - pred) / Var(target): how much of the targets' variance the
    predictions explain (NaN when the targets do not vary)."""
    var = float(np.var(target))
    return float("nan") if var == 0 else 1.0 - float(np.var(target - pred)) / var


def update_charts(rs: RolloutStats, *, samples: int, seconds: float, decisions: int,
                  lr: float, updates: int, past_pool: int) -> dict[str, float]:
    """The ``charts/...`` scalars every pool kind writes after an update: its learning
    rate, the rollout's and the update's rates and times (``samples`` decisions through
    the learner in ``seconds``), the decisions, the updates and the past pool's size."""
    return {
        "charts/learning_rate": lr,
        "charts/env_steps_per_second": rs.env_steps / max(rs.seconds, 1e-9),
        "charts/learner_samples_per_second": samples / max(seconds, 1e-9),
        "charts/rollout_seconds": rs.seconds, "charts/update_seconds": seconds,
        "charts/policy_forward_seconds": rs.policy_seconds,
        "charts/opponent_seconds": rs.opponent_seconds,
        "charts/decisions_per_rollout": decisions,
        "charts/updates": updates, "charts/past_pool_size": past_pool}


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


def check_ready(cfg: StageConfig) -> None:
    """What can fail before the run folder exists: the device, the starting weights
    and every evaluation opponent (a ``ckpt:`` file is read)."""
    import agents

    torch_device(cfg)
    if cfg.init_from:
        starting_weights(cfg)
    if cfg.evaluation.every_steps:
        for spec in cfg.evaluation.opponents:
            try:
                agents.make_agent(spec, seed=0)
            except ValueError as e:
                raise ConfigError(f"config key 'evaluation.opponents': {spec!r}: {e}") from None


__all__ = ["PoolStage", "check_ready", "explained_variance", "learner_start",
           "rollout_scalars", "update_charts"]
