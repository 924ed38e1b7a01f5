"""Rollouts on Ray (``backend: ray``): rollout workers are Ray actors, the learner stays
in the driver.

Each update the driver puts the policy's weights (and the past snapshot's, when a game
plays one) into Ray's object store once and hands every worker the object reference.
Worker ``w`` (``ray_workers`` of them, one CPU each) owns a ``VectorScopaEnv`` with its
contiguous block of the ``num_envs`` games and plays them with ``RolloutCollector``,
GAE included (a game's decision streams never leave its worker); the driver
concatenates the workers' batches in worker order and trains on them as on a local
rollout. Worker ``w``'s deals, baseline agents and move sampling are seeded from the
update's seed and ``w`` (worker 0 takes the update's seeds as they are), so a run is
deterministic for a given seed and worker count.

A worker that dies (its process killed, its node lost) is replaced by a fresh actor
that plays the same block with the same seeds: the update gets the same games and
samples as if nothing had happened, each counted once (the dead worker's partial
rollout is dropped). More than ``MAX_REPLACEMENTS`` deaths in one rollout stop the run
with an error.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import fields
from typing import Any

import numpy as np
import torch

from agents.evaluation.ray_eval import RayBackendError, connect, unwrap
from scopa_env.play import derive_seed
from scopa_policy.network import NetConfig, PolicyNet

from .config import ConfigError, StageConfig
from .rollout import Batch, BatchedBaseline, RolloutCollector, RolloutStats, make_teacher

MAX_REPLACEMENTS = 3  # worker deaths tolerated per rollout
START_TIMEOUT_S = 300.0  # workers that have not started by then: the cluster is too busy


def worker_seed(seed: int, worker: int) -> int:
    """Worker ``worker``'s seed for a seed of the update (worker 0: ``seed`` itself)."""
    return seed if worker == 0 else derive_seed(seed, worker)


class RolloutWorker:
    """One rollout worker (a Ray actor; a plain object in tests): its own vector env
    of ``games`` games and CPU copies of the networks it is sent."""

    def __init__(self, cfg: StageConfig, games: int, make_baseline: Any,
                 batched: BatchedBaseline | None) -> None:
        torch.set_num_threads(1)  # one CPU per worker
        self.env = cfg.make_env(games)
        self.collector = RolloutCollector(self.env, cfg.ppo.reward_scale, make_baseline,
                                          batched, teacher=make_teacher(cfg))
        self.nets: dict[str, PolicyNet] = {}

    def pid(self) -> int:
        return os.getpid()

    def _net(self, role: str, net_cfg: NetConfig, weights: dict[str, torch.Tensor]
             ) -> PolicyNet:
        net = self.nets.get(role)
        if net is None or net.cfg != net_cfg:
            net = self.nets[role] = PolicyNet(net_cfg).eval()
        net.load_state_dict(weights)
        return net

    def collect(self, net_cfg: NetConfig, weights: dict[str, torch.Tensor],
                past_weights: dict[str, torch.Tensor] | None, kinds: list[str],
                learner_team: np.ndarray, steps: int, reset_seed: int, agent_seed: int,
                gamma: float, lam: float) -> tuple[Batch, RolloutStats]:
        """One rollout of this worker's games (``RolloutCollector.collect``), its move
        sampling seeded from ``agent_seed``."""
        net = self._net("learner", net_cfg, weights)
        past = None if past_weights is None else self._net("past", net_cfg, past_weights)
        torch.manual_seed(agent_seed)  # after building the nets (their init draws too)
        return self.collector.collect(net, past, kinds, learner_team, steps,
                                      reset_seed=reset_seed, agent_seed=agent_seed,
                                      gamma=gamma, lam=lam)


def merge_batches(batches: list[Batch]) -> Batch:
    """The workers' batches as one (in order): every field concatenated, the move
    offsets recomputed."""
    batches = [b for b in batches if len(b)] or batches[:1]
    data = {f.name: torch.cat([getattr(b, f.name) for b in batches]) for f in fields(Batch)}
    count = data["move_count"]
    data["move_start"] = torch.cumsum(count, 0) - count
    return Batch(**data)


def merge_stats(stats: list[RolloutStats], seconds: float) -> RolloutStats:
    """The workers' rollout statistics as one: counts summed, per-kind lists joined in
    worker order, the time shares (policy, opponents) averaged over the workers and
    ``seconds`` the driver's wall time of the whole rollout."""
    out = RolloutStats()
    for f in fields(RolloutStats):
        values = [getattr(s, f.name) for s in stats]
        if isinstance(values[0], dict):
            merged: dict[str, list[Any]] = {}
            for v in values:
                for kind, items in v.items():
                    merged.setdefault(kind, []).extend(items)
            setattr(out, f.name, merged)
        elif isinstance(values[0], int):
            setattr(out, f.name, sum(values))
        else:
            setattr(out, f.name, float(np.mean(values)))
    out.seconds = seconds
    return out


def _cpu_weights(net: PolicyNet) -> dict[str, torch.Tensor]:
    return {k: v.detach().cpu() for k, v in net.state_dict().items()}


class RayRolloutCollector:
    """``RolloutCollector``'s interface over ``rollouts.ray_workers`` Ray actors.

    ``worker_cls`` is the worker's class (``RolloutWorker``; tests pass one that dies);
    ``log`` hears about replaced workers."""

    def __init__(self, cfg: StageConfig, make_baseline: Any,
                 batched: BatchedBaseline | None = None, *,
                 worker_cls: type = RolloutWorker, log: Callable[[str], None] = print) -> None:
        r = cfg.rollouts
        self.ray = ray = connect(r.ray_address)
        self.cfg, self.log = cfg, log
        self.blocks = np.array_split(np.arange(r.num_envs), r.ray_workers)
        cpus = ray.cluster_resources().get("CPU", 0)
        if cpus < r.ray_workers:
            raise ConfigError(f"config key 'rollouts.ray_workers' = {r.ray_workers}: the Ray "
                              f"cluster has {cpus:g} CPU(s), one per rollout worker is needed")
        self._remote = ray.remote(num_cpus=1, max_restarts=0)(worker_cls)
        self._args = (cfg, make_baseline, batched)
        self.actors = [self._start(w) for w in range(r.ray_workers)]
        self.replaced = 0  # workers replaced over the run
        try:
            ray.get([a.pid.remote() for a in self.actors], timeout=START_TIMEOUT_S)
        except ray.exceptions.GetTimeoutError:
            raise RayBackendError(f"the {r.ray_workers} rollout workers did not all start "
                                  f"within {START_TIMEOUT_S:.0f} s: is the Ray cluster busy?"
                                  ) from None

    def _start(self, w: int) -> Any:
        return self._remote.remote(self._args[0], len(self.blocks[w]), *self._args[1:])

    def collect(self, net: PolicyNet, past_net: PolicyNet | None, kinds: list[str],
                learner_team: np.ndarray, steps: int, reset_seed: int, agent_seed: int,
                gamma: float, lam: float) -> tuple[Batch, RolloutStats]:
        """One rollout over all workers (``RolloutCollector.collect``'s arguments)."""
        ray, t0 = self.ray, time.perf_counter()
        weights = ray.put(_cpu_weights(net))
        past = None if past_net is None else ray.put(_cpu_weights(past_net))
        team = np.asarray(learner_team)

        def submit(w: int) -> Any:
            g = self.blocks[w]
            return self.actors[w].collect.remote(
                net.cfg, weights, past, [kinds[i] for i in g], team[g], steps,
                worker_seed(reset_seed, w), worker_seed(agent_seed, w), gamma, lam)

        pending = {submit(w): w for w in range(len(self.actors))}
        results: dict[int, tuple[Batch, RolloutStats]] = {}
        deaths = 0
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            w = pending.pop(done[0])
            try:
                results[w] = ray.get(done[0])
            except ray.exceptions.RayActorError as e:
                deaths += 1
                if deaths > MAX_REPLACEMENTS:
                    raise RayBackendError(f"rollout workers died {deaths} times in one "
                                          f"rollout ({type(e).__name__}); the run stopped"
                                          ) from None
                self.log(f"rollout worker {w} died ({type(e).__name__}); replaced, its "
                         f"{len(self.blocks[w])} games are played again")
                self.actors[w] = self._start(w)
                self.replaced += 1
                pending[submit(w)] = w
            except ray.exceptions.RayTaskError as e:
                raise unwrap(ray, e) from None
        batches, stats = zip(*(results[w] for w in range(len(self.actors))), strict=True)
        return merge_batches(list(batches)), merge_stats(list(stats),
                                                        time.perf_counter() - t0)

    def close(self) -> None:
        """End the workers (they also end when the collector is dropped)."""
        for a in self.actors:
            self.ray.kill(a)
        self.actors = []
