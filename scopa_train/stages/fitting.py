"""What the fitting stage kinds share: rollouts of a fixed policy, then epochs of minibatches.

A fitting stage (kind ``last_deal``, kind ``distill``) reads the ``fit`` section
(``FitSection``, the same for each) and collects ``fit.decisions``
decisions from rollouts of the ``init_from`` policy (``play_rollouts``), then fits a
network to targets computed for them, epoch by epoch (``FittingStage``): Adam with a
cosine learning rate (``fit.lr``), ``fit.epochs`` passes of ``fit.batch`` decisions, a
held-out share (``fit.holdout``) scored after every epoch (TensorBoard ``KIND/...``, the
run's ``evaluations.jsonl``, the log) and ``checkpoints/latest.pt`` saved. Stops, the
clock, checkpoints, TensorBoard and the evaluation at the end are
``scopa_train.framework``'s; a resume goes on from the minibatch where the run stopped,
with the same decisions: a stage whose collection is slow and compact
(``KEEP_COLLECTED``: the exact last-deal solving) keeps it in the run folder
(``collected.npz``, written atomically, deleted when the fit ends) and reads it back;
another collects them again (the collection is seeded and its policy fixed). A
subclass says what is collected (``collect``), what one minibatch's loss is (``step``),
how the held-out share is scored (``score``) and what the checkpoints hold.
"""

from __future__ import annotations

import dataclasses
import io
import math
import time
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from scopa_env.files import FileProblem, write_atomic
from scopa_policy.network import PolicyNet

from ..config import StageConfig
from ..framework import Stage
from ..rollout import (
    PAST,
    SELF,
    Batch,
    RolloutCollector,
    Teacher,
    batched_baseline,
    rollout_length,
    sample_opponents,
)
from ..settings import ConfigError, setting

Halted = Callable[[], "str | None"]


@dataclass
class FitSection:
    decisions: int = setting(1_000_000, "decisions to collect from the starting policy's "
                             "rollouts before fitting", lo=100)
    epochs: int = setting(3, "passes over the collected decisions", lo=1, hi=1000)
    batch: int = setting(1024, "decisions per minibatch", lo=1, hi=1 << 20)
    lr: float = setting(5e-4, "Adam learning rate at the start (cosine to 0)", lo=0, hi=1,
                        lo_open=True)
    holdout: float = setting(0.02, "share of the decisions (the last collected) held out to "
                             "score each epoch", lo=0, hi=0.5, lo_open=True)


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


def play_rollouts(policy: PolicyNet, cfg: StageConfig, teacher: Teacher | None = None,
                  keep_rounds: bool = False) -> Iterator[tuple[Batch, int]]:
    """Rollouts of ``policy`` against the config's opponents (``past`` plays as
    ``self``), seeded by the config's seed and the rollout's number: each rollout's
    learner decisions and env steps, for as long as the caller reads them
    (``keep_rounds``: with each decision's round row, ``Batch.rounds``)."""
    import agents

    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    n = cfg.rollouts.num_envs
    collector = RolloutCollector(cfg.make_env(), cfg.ppo.reward_scale, agents.make_agent,
                                 batched_baseline,
                                 teacher=teacher, keep_rounds=keep_rounds)
    weights: dict[str, float] = {}
    for k, w in cfg.opponents.items():
        kind = SELF if k == PAST else k
        weights[kind] = weights.get(kind, 0.0) + w
    rollout = 0
    while True:
        kinds = sample_opponents(rng, weights, n, have_past=False)
        seed = (cfg.seed * 1_000_003 + rollout) % (2**63)
        batch, stats = collector.collect(policy, None, kinds,
                                         rng.integers(0, 2, n),
                                         rollout_length(cfg), reset_seed=seed,
                                         agent_seed=seed, gamma=1.0, lam=1.0)
        rollout += 1
        yield batch, stats.env_steps


def available_memory() -> int | None:
    """Bytes of memory the system can still give (``MemAvailable``), None where unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def join(parts: list[np.ndarray]) -> np.ndarray:
    """``np.concatenate(parts)``, emptying ``parts`` as it copies them: at most one part
    exists twice at any time (the parts of a collection hold gigabytes)."""
    out = np.empty((sum(len(a) for a in parts), *parts[0].shape[1:]), parts[0].dtype)
    at = 0
    parts.reverse()
    while parts:
        a = parts.pop()
        out[at:at + len(a)] = a
        at += len(a)
    return out


def check_memory(cfg: StageConfig, held: int, kept: int, moves: int,
                 free: int | None = None) -> None:
    """``ConfigError`` when ``fit.decisions`` decisions would not fit in memory, judged
    from the first ones collected (``held`` bytes for ``kept`` decisions with ``moves``
    legal moves in all) against what is free now (``free``, default: the system's
    ``MemAvailable``), with a quarter to spare for the targets and the fit's minibatches.
    Rules with long hands have many more moves a decision (scopone scientifico about 10,
    scopa about 3): their fitting stages can hold fewer."""
    free = available_memory() if free is None else free
    if free is None or kept == 0:
        return
    per = held / kept
    need = 1.25 * per * cfg.fit.decisions
    if need > free + held:
        fits = int((free + held) / 1.25 / per) // 10_000 * 10_000
        raise ConfigError(
            f"config key 'fit.decisions' ({cfg.fit.decisions:,}) needs about "
            f"{need / 2**30:.1f} GB of memory under these rules ({per / 1024:.1f} KB a "
            f"decision, {moves / kept:.1f} legal moves each), and {free / 2**30:.1f} GB "
            f"are free: lower stage {cfg.name!r}'s fit.decisions, to {max(fits, 10_000):,} "
            f"or fewer")


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


class FittingStage(Stage):
    """Collect, then fit epoch by epoch (module docstring). A subclass sets ``KIND``
    (also the TensorBoard prefix), builds
    ``self.net`` before calling ``__init__`` here, and implements ``collect``, ``step``,
    ``score``, ``policy_parts`` and ``restore``."""

    CPU_ONLY = True
    KEEP_COLLECTED: type | None = None  # the collection's dataclass, to keep it for a resume
    net: torch.nn.Module

    def __init__(self, cfg: StageConfig, run_dir: Path, **kw: Any) -> None:
        super().__init__(cfg, run_dir, **kw)
        f = cfg.fit
        self.epochs, self.batch, self.lr, self.holdout = f.epochs, f.batch, f.lr, f.holdout
        self.optimizer = torch.optim.Adam(self.trainable(), lr=self.lr)
        self.per_epoch = 0  # minibatches an epoch, once the decisions are collected

    # -- what a stage defines --------------------------------------------------------
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
        """Held-out figures of decisions ``idx`` (TensorBoard ``KIND/heldout_NAME``)."""
        raise NotImplementedError

    def minibatches(self, data: Any, train_idx: np.ndarray, rng: np.random.Generator
                    ) -> list[np.ndarray]:
        """One epoch's minibatches of ``train_idx``, drawn with ``rng`` (seeded by the
        epoch, so a resume sees the same ones): a random permutation cut in order."""
        order = rng.permutation(train_idx)
        return [order[a:a + self.batch] for a in range(0, len(order), self.batch)]

    # -- the loop ----------------------------------------------------------------------
    def done(self) -> bool:
        return self.counters.epoch >= self.epochs

    def progress_total(self) -> tuple[int, int, str]:
        c = self.counters
        per_epoch = self.per_epoch or math.ceil(max(c.decisions, self.cfg.fit.decisions)
                                                * (1 - self.holdout) / self.batch)
        return per_epoch * self.epochs, c.epoch * per_epoch + c.step, " minibatches"

    def held_out(self, n: int) -> np.ndarray:
        """The held-out decisions of ``n`` collected: the last ``holdout`` share."""
        return np.arange(n - max(1, int(n * self.holdout)), n)

    def loop(self) -> str | None:
        """Collect the data (or read back the kept collection), then fit the remaining
        minibatches."""
        c = self.counters
        t0 = time.perf_counter()
        kept = self.read_collected()
        if kept is not None:
            data, env_steps, seconds = kept
            self.say(f"read back the kept collection ({len(data):,} decisions, collected in "
                     f"{seconds:.0f} s): {time.perf_counter() - t0:.0f} s")
        else:
            data, env_steps = self.collect(self.halted)
            seconds = time.perf_counter() - t0
            self.say(f"collection {'stopped' if data is None else 'done'}: "
                     f"{seconds:.0f} s, {env_steps:,} env steps")
            if data is not None:
                self.keep_collected(data, env_steps, seconds)
        if c.update == 0:
            c.collect_seconds, c.env_steps = seconds, env_steps
        if data is None:
            return self.halted()
        why = self._fit(data)
        if why is None:
            self.collected_path.unlink(missing_ok=True)  # the fit is done: not needed
        return why

    # -- the kept collection -----------------------------------------------------------
    @property
    def collected_path(self) -> Path:
        return self.run_dir / "collected.npz"

    def keep_collected(self, data: Any, env_steps: int, seconds: float) -> None:
        """Write the collection to ``collected_path`` (atomically: a temporary file, then
        a rename) where the stage keeps it; a failed write (a full disk) costs only the
        resume's time, so it is said and the stage goes on."""
        if not self.KEEP_COLLECTED:
            return
        arrays = {f.name: getattr(data, f.name) for f in dataclasses.fields(data)
                  if getattr(data, f.name) is not None}
        buf = io.BytesIO()
        np.savez(buf, env_steps=np.int64(env_steps), seconds=np.float64(seconds), **arrays)
        try:
            write_atomic(buf.getbuffer(), self.collected_path, "keep the collection in")
        except FileProblem as e:
            self.say(f"could not keep the collection ({e}); a resume will collect it again")

    def read_collected(self) -> tuple[Any, int, float] | None:
        """The kept collection, its env steps and collection seconds; None where there is
        none (or it cannot be read: then it is collected again, as said)."""
        path = self.collected_path
        kind = self.KEEP_COLLECTED
        if kind is None or not path.exists():
            return None
        try:
            with np.load(path, allow_pickle=False) as f:
                data = kind(**{fl.name: f[fl.name] for fl in dataclasses.fields(kind)
                               if fl.name in f.files})
                return data, int(f["env_steps"]), float(f["seconds"])
        except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile) as e:
            self.say(f"cannot read the kept collection {path} ({e}); collecting again")
            return None

    def _fit(self, data: Any) -> str | None:
        """The epochs from where the counters stand; why they stopped early, or None."""
        c = self.counters
        c.decisions = len(data)
        held_idx = self.held_out(len(data))
        train_idx = np.arange(len(data) - len(held_idx))
        self.per_epoch = per_epoch = math.ceil(len(train_idx) / self.batch)
        total = per_epoch * self.epochs
        self.restart_progress(total)
        self.say(f"{len(data):,} decisions ({len(held_idx):,} held out); {self.epochs} "
                 f"epochs of {per_epoch} minibatches")
        log_every = max(1, min(200, per_epoch // 4))  # a few points an epoch at least
        while c.epoch < self.epochs:
            batches = self.minibatches(data, train_idx,
                                       np.random.default_rng(self.cfg.seed + c.epoch))
            losses: list[float] = []
            while c.step < per_epoch:
                why = self.halted()
                if why is not None:
                    return why
                done = c.epoch * per_epoch + c.step
                lr = self.lr * 0.5 * (1 + math.cos(math.pi * done / total))
                for group in self.optimizer.param_groups:
                    group["lr"] = lr
                loss = self.step(data, batches[c.step])
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                self.optimizer.step()
                losses.append(float(loss.detach()))
                c.step += 1
                c.update = done + 1
                if c.step % log_every == 0:
                    self.scalars({f"{self.KIND}/loss": float(np.mean(losses[-log_every:])),
                                  "charts/learning_rate": lr})
                    self.advance()
            c.epoch, c.step = c.epoch + 1, 0
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
        self.scalars({f"{self.KIND}/heldout_{name}": v for name, v in figures.items()})
        self.advance()
        self.record({"epoch": c.epoch, **{f"heldout_{k}": v for k, v in figures.items()},
                     "wall_seconds": c.wall_seconds})
        shown = ", ".join(f"{k.replace('_', ' ')} {v:.3f}" for k, v in figures.items())
        self.say(f"epoch {c.epoch}/{self.epochs}: loss {loss:.4f}, held out: {shown} "
                 f"({c.wall_seconds / 60:.1f} min)")
        self.save("latest")


__all__ = ["FitSection", "FittingStage", "FlatDecisions", "Halted", "length_buckets",
           "play_rollouts"]
