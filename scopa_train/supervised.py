"""What the supervised stages share: rollouts of a fixed policy, then epochs of minibatches.

A supervised stage (``algo: last_deal``, ``algo: suit_distill``) collects decisions from
rollouts of the ``init_from`` policy (``play_rollouts``), then fits a network to targets
computed for them, epoch by epoch (``SupervisedStage``): Adam with a cosine learning
rate, a held-out share scored after every epoch (TensorBoard ``TAG/...``, the run's
``evaluations.jsonl``, the log), ``checkpoints/latest.pt`` every epoch and on a stop,
``final.pt`` and ``policy.pt`` at the end. Ctrl-C, SIGTERM and ``max_minutes`` save and
stop, during the collection too; ``--resume`` collects the same decisions again (the
collection is seeded and its policy fixed) and goes on from the minibatch where the run
stopped. A subclass says what is collected, what one minibatch step is, how the held-out
share is scored and what the checkpoint holds; its module has ``prepare(cfg)`` (what
``init_from`` gives it), ``start`` and ``resume``, which ``trainer`` calls.
"""

from __future__ import annotations

import json
import math
import random
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import torch

from scopa_policy.checkpoint import save_atomic
from scopa_policy.network import PolicyNet

from .config import TrainConfig
from .rollout import PAST, SELF, Batch, RolloutCollector, Teacher, sample_opponents

Halted = Callable[[], "str | None"]


@dataclass
class FlatDecisions:
    """Decisions with their legal moves flat: decision ``i``'s moves are entries
    ``start[i]:start[i] + count[i]`` of the per-move arrays of a subclass."""

    obs: np.ndarray  # (N, 216) float32
    start: np.ndarray  # (N,) int64
    count: np.ndarray  # (N,) int64

    def __len__(self) -> int:
        return len(self.obs)

    def moves(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The moves of decisions ``idx``: (flat move indices, each one's decision as a
        place in ``idx``, its place in that decision's legal list)."""
        count = self.count[idx]
        row = np.repeat(np.arange(len(idx)), count)
        col = np.arange(len(row)) - (np.cumsum(count) - count)[row]
        return self.start[idx][row] + col, row, col


def play_rollouts(policy: PolicyNet, cfg: TrainConfig, teacher: Teacher | None = None
                  ) -> Iterator[tuple[Batch, int]]:
    """Rollouts of ``policy`` against the config's opponents (``past`` plays as
    ``self``), seeded by the config's seed and the rollout's number: each rollout's
    learner decisions and env steps, for as long as the caller reads them."""
    import agents
    from scopa_env.vector import VectorScopaEnv

    from .trainer import batched_baseline, rollout_length

    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    env = VectorScopaEnv(cfg.num_envs, rules=cfg.rules, reward=cfg.reward,
                         episode=cfg.episode, seed=cfg.seed, records=False,
                         **cfg.rules_kwargs)
    collector = RolloutCollector(env, cfg.reward_scale, agents.make_agent, batched_baseline,
                                 teacher=teacher)
    weights: dict[str, float] = {}
    for k, w in cfg.opponents.items():
        kind = SELF if k == PAST else k
        weights[kind] = weights.get(kind, 0.0) + w
    rollout = 0
    while True:
        kinds = sample_opponents(rng, weights, cfg.num_envs, have_past=False)
        seed = (cfg.seed * 1_000_003 + rollout) % (2**63)
        batch, stats = collector.collect(policy, None, kinds,
                                         rng.integers(0, 2, cfg.num_envs),
                                         rollout_length(cfg), reset_seed=seed,
                                         agent_seed=seed, gamma=1.0, lam=1.0)
        rollout += 1
        yield batch, stats.env_steps


def length_buckets(order: np.ndarray, lengths: np.ndarray, batch: int, group: int,
                   rng: np.random.Generator) -> list[np.ndarray]:
    """Minibatches of ``batch`` from ``order`` (already shuffled) that pad little: each
    run of ``group`` x ``batch`` decisions is sorted by ``lengths`` (of ``order``'s
    entries) and cut into ``group`` minibatches, and the minibatches are shuffled. As
    many minibatches as cutting ``order`` directly gives; every decision once."""
    span = group * batch
    out: list[np.ndarray] = []
    for a in range(0, len(order), span):
        run = order[a:a + span]
        run = run[np.argsort(lengths[a:a + span], kind="stable")]
        out += [run[b:b + batch] for b in range(0, len(run), batch)]
    return [out[k] for k in rng.permutation(len(out))]


class SupervisedStage:
    """Collect, then fit epoch by epoch; checkpoints and TensorBoard like a PPO run.

    A subclass sets ``TAG`` (the TensorBoard prefix) and ``WHAT`` (a few words for the
    log), builds ``self.net`` before calling ``__init__`` here, and implements
    ``collect``, ``step``, ``score``, ``checkpoint_parts`` and ``load_parts``; its
    ``settings()`` give the epochs, minibatch size, learning rate and held-out share."""

    TAG = "supervised"
    WHAT = "a network"
    net: torch.nn.Module

    def __init__(self, cfg: TrainConfig, run_dir: Path, resume: dict[str, Any] | None = None,
                 log: Callable[[str], None] = print) -> None:
        self.cfg, self.run_dir, self.log = cfg, run_dir, log
        cfg.set_up_torch(torch.device("cpu"))  # these stages fit on the CPU
        random.seed(cfg.seed)
        torch.manual_seed(cfg.seed)
        self.rules = cfg.make_rules()
        self.epochs, self.batch, self.lr, self.holdout = self.settings()
        self.optimizer = torch.optim.Adam(self.trainable(), lr=self.lr)
        self.writer: Any = None
        self.counters: dict[str, Any] = {"epoch": 0, "step": 0, "wall_seconds": 0.0,
                                         "collect_seconds": 0.0, "decisions": 0,
                                         "env_steps": 0, "update": 0}
        if resume is not None:
            self.load_parts(resume)
            self.optimizer.load_state_dict(resume["optimizer"])
            self.counters.update(resume["counters"])

    # -- what a stage defines --------------------------------------------------------
    def settings(self) -> tuple[int, int, float, float]:
        """(epochs, decisions a minibatch, starting learning rate, held-out share)."""
        raise NotImplementedError

    def trainable(self) -> list[torch.nn.Parameter]:
        """The parameters the optimizer fits: the network's (a stage with a training-only
        head adds the head's)."""
        return list(self.net.parameters())

    def collect(self, halted: Halted) -> tuple[Any, int]:
        """The stage's data (``len()`` decisions; None when ``halted()`` stopped the
        collection) and the env steps played."""
        raise NotImplementedError

    def step(self, data: Any, idx: np.ndarray) -> torch.Tensor:
        """The loss of the minibatch of decisions ``idx``."""
        raise NotImplementedError

    def score(self, data: Any, idx: np.ndarray) -> dict[str, float]:
        """Held-out figures of decisions ``idx`` (TensorBoard ``TAG/heldout_NAME``)."""
        raise NotImplementedError

    def checkpoint_parts(self, trained: bool, training: bool) -> dict[str, Any]:
        """The policy file's contents (``policy_checkpoint``) and, for a training
        checkpoint (``training``), what a resume needs besides; ``trained``: whether any
        minibatch has been fitted yet."""
        raise NotImplementedError

    def load_parts(self, ck: dict[str, Any]) -> None:
        """Load the trained network's weights (and anything else) from a training
        checkpoint of this stage."""
        raise NotImplementedError

    def minibatches(self, data: Any, train_idx: np.ndarray, rng: np.random.Generator
                    ) -> list[np.ndarray]:
        """One epoch's minibatches of ``train_idx``, drawn with ``rng`` (seeded by the
        epoch, so a resume sees the same ones): a random permutation cut in order."""
        order = rng.permutation(train_idx)
        return [order[a:a + self.batch] for a in range(0, len(order), self.batch)]

    # -- the loop ----------------------------------------------------------------------
    def held_out(self, n: int) -> np.ndarray:
        """The held-out decisions of ``n`` collected: the last ``holdout`` share."""
        return np.arange(n - max(1, int(n * self.holdout)), n)

    def checkpoint_dict(self, kind: str = "training") -> dict[str, Any]:
        """A training checkpoint, or (``kind="policy"``) the policy file."""
        trained = self.counters["update"] > 0
        ck = self.checkpoint_parts(trained, kind == "training")
        ck.update(counters=dict(self.counters), config=self.cfg.to_dict())
        if kind == "training":
            ck.update(kind="training", optimizer=self.optimizer.state_dict(), past_pool=[],
                      rng={}, saved_at=datetime.now().isoformat(timespec="seconds"))
        return ck

    def save(self, tag: str) -> Path:
        from .trainer import save_run_checkpoint

        return save_run_checkpoint(self.checkpoint_dict(), self.run_dir / "checkpoints", tag)

    def train(self) -> dict[str, Any]:
        """Collect the data, fit the remaining minibatches, save; the outcome."""
        from torch.utils.tensorboard import SummaryWriter

        from scopa_policy.network import count_parameters

        from .trainer import _StopFlag

        cfg, c = self.cfg, self.counters
        self.writer = SummaryWriter(str(self.run_dir / "tensorboard"))
        self.log(f"run directory: {self.run_dir}  ({self.WHAT}, "
                 f"{count_parameters(self.net):,} parameters)")
        started, wall0 = time.perf_counter(), c["wall_seconds"]
        with _StopFlag() as stop:
            def halted() -> str | None:
                """Why to stop now (a signal, ``max_minutes``), or None; keeps the clock."""
                c["wall_seconds"] = wall0 + time.perf_counter() - started
                if stop.signal is not None:
                    return f"stopped by {signal.Signals(stop.signal).name}"
                if cfg.max_minutes and c["wall_seconds"] >= cfg.max_minutes * 60:
                    return f"max_minutes={cfg.max_minutes} reached"
                return None

            if c["epoch"] >= self.epochs:  # a finished run: nothing to collect
                return self._finish("finished")
            data, env_steps = self.collect(halted)
            self.log(f"collection {'stopped' if data is None else 'done'}: "
                     f"{time.perf_counter() - started:.0f} s, {env_steps:,} env steps")
            if c["epoch"] == 0 and c["step"] == 0:
                c["collect_seconds"], c["env_steps"] = time.perf_counter() - started, env_steps
            reason = halted() if data is None else self._fit(data, halted)
        return self._finish(reason or "finished")

    def _fit(self, data: Any, halted: Halted) -> str | None:
        """The epochs from where the counters stand; why they stopped early, or None."""
        cfg, c = self.cfg, self.counters
        c["decisions"] = len(data)
        held_idx = self.held_out(len(data))
        held = len(held_idx)
        train_idx = np.arange(len(data) - held)
        per_epoch = math.ceil(len(train_idx) / self.batch)
        total = per_epoch * self.epochs
        self.log(f"{len(data):,} decisions ({held:,} held out); {self.epochs} "
                 f"epochs of {per_epoch} minibatches")
        while c["epoch"] < self.epochs:
            batches = self.minibatches(data, train_idx,
                                       np.random.default_rng(cfg.seed + c["epoch"]))
            losses: list[float] = []
            while c["step"] < per_epoch:
                why = halted()
                if why is not None:
                    return why
                done = c["epoch"] * per_epoch + c["step"]
                lr = self.lr * 0.5 * (1 + math.cos(math.pi * done / total))
                for group in self.optimizer.param_groups:
                    group["lr"] = lr
                loss = self.step(data, batches[c["step"]])
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                self.optimizer.step()
                losses.append(float(loss.detach()))
                c["step"] += 1
                c["update"] = done + 1
                if c["step"] % 200 == 0:
                    w = self.writer
                    w.add_scalar(f"{self.TAG}/loss", float(np.mean(losses[-200:])), done + 1)
                    w.add_scalar("charts/learning_rate", lr, done + 1)
                    w.add_scalar("charts/wall_minutes", c["wall_seconds"] / 60, done + 1)
            c["epoch"], c["step"] = c["epoch"] + 1, 0
            self._end_epoch(data, held_idx, float(np.mean(losses)) if losses else float("nan"))
        return None

    def _end_epoch(self, data: Any, held_idx: np.ndarray, loss: float) -> None:
        """Score the held-out decisions (TensorBoard, evaluations.jsonl, the log); save."""
        c = self.counters
        was = self.net.training
        self.net.eval()
        with torch.no_grad():
            figures = self.score(data, held_idx)
        self.net.train(was)
        for name, value in figures.items():
            self.writer.add_scalar(f"{self.TAG}/heldout_{name}", value, c["epoch"])
        with open(self.run_dir / "evaluations.jsonl", "a") as fh:
            fh.write(json.dumps({"epoch": c["epoch"],
                                 **{f"heldout_{k}": v for k, v in figures.items()},
                                 "wall_seconds": c["wall_seconds"]}) + "\n")
        shown = ", ".join(f"{k.replace('_', ' ')} {v:.3f}" for k, v in figures.items())
        self.log(f"epoch {c['epoch']}/{self.epochs}: loss {loss:.4f}, held out: {shown} "
                 f"({c['wall_seconds'] / 60:.1f} min)")
        self.save("latest")

    def _finish(self, reason: str) -> dict[str, Any]:
        """``final.pt`` (or ``latest.pt`` when stopped early) and ``policy.pt``."""
        c = self.counters
        final = c["epoch"] >= self.epochs
        path = self.save("final" if final else "latest")
        policy = save_atomic(self.checkpoint_dict("policy"), self.run_dir / "policy.pt")
        self.writer.flush()
        self.writer.close()
        self.log(f"{reason}: {c['epoch']} epochs, {c['wall_seconds'] / 60:.1f} min; "
                 f"checkpoint {path}; policy {policy}")
        return {"reason": reason, "finished": final, "checkpoint": str(path),
                "policy": str(policy), "counters": dict(c), "run_dir": str(self.run_dir)}


__all__ = ["FlatDecisions", "SupervisedStage", "length_buckets", "play_rollouts"]
