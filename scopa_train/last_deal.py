"""Stage ``algo: last_deal``: teach a last-deal scorer the exact values of the last deal.

The policy of ``init_from`` (a PPO run) plays rollouts as in training (the config's
opponent pool, its moves sampled); every decision of its last deals with a choice is
solved exactly (``agents.endgame``), until ``last_deal_decisions`` are collected. A
``LastDealNet`` (``scopa_policy.last_deal``) is then fitted to them for
``last_deal_epochs`` passes: the likelihood of the set of best moves (ties free) plus
``last_deal_regret_coef`` x the expected points lost, Adam with a cosine learning rate.
A held-out share (the last deals collected) is scored after every epoch: how often the
argmax is a best move, and the points it loses.

The run writes what a PPO run does: ``checkpoints/latest.pt`` (every epoch and on a
stop), ``final.pt``, ``policy.pt`` (the PPO network with the scorer beside it) and
TensorBoard scalars under ``last_deal/``. A stopped run resumes (``--resume``) at the
minibatch it stopped at; the positions are collected again first, the same ones (the
collection is seeded and its policy is fixed).
"""

from __future__ import annotations

import json
import math
import random
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml

from agents.endgame import EndgameSolver
from scopa_policy.checkpoint import policy_checkpoint, save_atomic
from scopa_policy.features import action_inputs_np
from scopa_policy.last_deal import LastDealConfig, LastDealNet, tokens
from scopa_policy.network import PolicyNet, count_parameters

from .config import TrainConfig
from .rollout import PAST, SELF, RolloutCollector, best_per_decision, sample_opponents


@dataclass
class Positions:
    """Solver-labelled last-deal decisions, flat: decision ``i``'s legal moves are
    ``ids[start[i]:start[i] + count[i]]`` with exact values (hand margins) ``values``."""

    obs: np.ndarray  # (N, 216) float32
    ids: np.ndarray  # (M,) int64
    values: np.ndarray  # (M,) float32
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


class RecordingTeacher:
    """The exact teacher of the rollouts, keeping every decision it labels."""

    def __init__(self, solver: EndgameSolver) -> None:
        self.solver = solver
        self.obs: list[np.ndarray] = []
        self.ids: list[np.ndarray] = []
        self.values: list[np.ndarray] = []
        self.count: list[np.ndarray] = []
        self.decisions = 0

    @property
    def seconds(self) -> float:
        return self.solver.seconds

    def label_moves(self, obs: np.ndarray, ids: np.ndarray, valid: np.ndarray) -> np.ndarray:
        vals = self.solver.label_moves(obs, ids, valid)
        row, col = np.nonzero(valid)
        known = ~np.isnan(vals)
        taught = np.flatnonzero(np.bincount(row[known], minlength=len(obs)))
        if len(taught):
            self.obs.append(obs[taught].astype(np.float32))
            self.ids.append(ids[row[known], col[known]].astype(np.int64))
            self.values.append(vals[known].astype(np.float32))
            self.count.append(valid[taught].sum(1).astype(np.int64))
            self.decisions += len(taught)
        return vals

    def clear(self) -> None:
        self.solver.clear()

    def positions(self) -> Positions:
        count = np.concatenate(self.count)
        return Positions(np.concatenate(self.obs), np.concatenate(self.ids),
                         np.concatenate(self.values), np.cumsum(count) - count, count)


def collect_positions(policy: PolicyNet, cfg: TrainConfig, log: Callable[[str], None],
                      halted: Callable[[], str | None] = lambda: None
                      ) -> tuple[Positions | None, int]:
    """At least ``cfg.last_deal_decisions`` labelled decisions from the policy's rollouts
    (the config's opponents; ``past`` plays as ``self``) and the env steps played; None
    for the positions when ``halted()`` says why to stop before they are complete."""
    import agents
    from scopa_env.vector import VectorScopaEnv

    from .trainer import batched_baseline, rollout_length

    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    env = VectorScopaEnv(cfg.num_envs, rules=cfg.rules, reward=cfg.reward,
                         episode=cfg.episode, seed=cfg.seed, records=False,
                         **cfg.rules_kwargs)
    teacher = RecordingTeacher(EndgameSolver(cfg.make_rules()))
    collector = RolloutCollector(env, cfg.reward_scale, agents.make_agent, batched_baseline,
                                 teacher=teacher)
    weights: dict[str, float] = {}
    for k, w in cfg.opponents.items():
        kind = SELF if k == PAST else k
        weights[kind] = weights.get(kind, 0.0) + w
    t0, rollout, env_steps = time.perf_counter(), 0, 0
    while teacher.decisions < cfg.last_deal_decisions:
        if halted() is not None:
            return None, env_steps
        kinds = sample_opponents(rng, weights, cfg.num_envs, have_past=False)
        seed = (cfg.seed * 1_000_003 + rollout) % (2**63)
        _, stats = collector.collect(policy, None, kinds, rng.integers(0, 2, cfg.num_envs),
                                     rollout_length(cfg), reset_seed=seed, agent_seed=seed,
                                     gamma=1.0, lam=1.0)
        env_steps += stats.env_steps
        rollout += 1
        if rollout % 20 == 0:
            log(f"collected {teacher.decisions:,} last-deal decisions in {rollout} rollouts, "
                f"{time.perf_counter() - t0:.0f} s")
    return teacher.positions(), env_steps


def best_set_loss(scores: torch.Tensor, regret: torch.Tensor, row: torch.Tensor, n: int,
                  width: int, col: torch.Tensor, regret_coef: float = 0.0) -> torch.Tensor:
    """Mean over decisions of -log P(a best move: ``regret`` 0) (ties share the mass
    freely), plus ``regret_coef`` x the expected regret in points under the scores'
    softmax (each move's ``regret``), which weighs a mistake by what it costs."""
    logits = torch.full((n, width), -1e9, dtype=scores.dtype)
    logits[row, col] = scores
    best = regret < 1e-6
    good = torch.full((n, width), -1e9, dtype=scores.dtype)
    good[row[best], col[best]] = scores[best]
    loss = (torch.logsumexp(logits, 1) - torch.logsumexp(good, 1)).mean()
    if regret_coef:
        p = logits.softmax(1)[row, col]
        loss = loss + regret_coef * (p * regret.to(p.dtype)).sum() / n
    return loss


def _batch(data: Positions, idx: np.ndarray) -> tuple[Any, ...]:
    moves, row, col = data.moves(idx)
    obs = data.obs[idx]
    feats = action_inputs_np(obs, data.ids[moves], row)
    vals = data.values[moves]
    regret = best_per_decision(vals, row, len(idx))[row] - vals
    return obs, feats, row, col, regret, int(data.count[idx].max())


def score_heldout(net: LastDealNet, data: Positions, idx: np.ndarray, chunk: int = 2048
                  ) -> tuple[float, float]:
    """(share of decisions whose argmax move is a best one, mean points it loses)."""
    hits, lost = [], []
    net.eval()
    with torch.no_grad():
        for a in range(0, len(idx), chunk):
            obs, feats, row, col, regret, width = _batch(data, idx[a:a + chunk])
            s = net.scores(torch.from_numpy(obs), torch.from_numpy(feats),
                           torch.from_numpy(row), tokens(obs, feats, row)).numpy()
            n = int(row.max()) + 1
            logits = np.full((n, width), -np.inf)
            logits[row, col] = s
            reg = np.zeros((n, width))
            reg[row, col] = regret
            pick = reg[np.arange(n), logits.argmax(1)]
            hits.append(pick < 1e-6)
            lost.append(pick)
    net.train()
    return float(np.concatenate(hits).mean()), float(np.concatenate(lost).mean())


class LastDealTrainer:
    """Collect, then fit epoch by epoch; checkpoints and TensorBoard like a PPO run."""

    def __init__(self, cfg: TrainConfig, run_dir: Path, policy: PolicyNet,
                 resume: dict[str, Any] | None = None, log: Callable[[str], None] = print
                 ) -> None:
        self.cfg, self.run_dir, self.policy, self.log = cfg, run_dir, policy.eval(), log
        torch.set_num_threads(cfg.threads())
        random.seed(cfg.seed)
        torch.manual_seed(cfg.seed)
        self.rules = cfg.make_rules()
        self.net = LastDealNet(LastDealConfig(cfg.last_deal_width, cfg.last_deal_layers,
                                              cfg.last_deal_heads))
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=cfg.last_deal_lr)
        self.writer: Any = None
        self.counters: dict[str, Any] = {"epoch": 0, "step": 0, "wall_seconds": 0.0,
                                         "collect_seconds": 0.0, "decisions": 0,
                                         "env_steps": 0, "update": 0}
        if resume is not None:
            self.net.load_state_dict(resume["last_deal"]["model"])
            self.optimizer.load_state_dict(resume["optimizer"])
            self.counters.update(resume["counters"])

    def checkpoint_dict(self, kind: str = "training") -> dict[str, Any]:
        """A training checkpoint, or (``kind="policy"``) the policy file: the PPO network
        with the scorer beside it once the scorer has been trained at all."""
        trained = self.counters["update"] > 0
        ck = policy_checkpoint(self.policy, self.rules.to_dict(),
                               {"counters": dict(self.counters), "config": self.cfg.to_dict()},
                               last_deal=self.net if trained or kind == "training" else None)
        if kind == "training":
            ck.update(kind="training", optimizer=self.optimizer.state_dict(), past_pool=[],
                      rng={}, saved_at=datetime.now().isoformat(timespec="seconds"))
        return ck

    def save(self, tag: str) -> Path:
        from .trainer import save_run_checkpoint

        return save_run_checkpoint(self.checkpoint_dict(), self.run_dir / "checkpoints", tag)

    def train(self) -> dict[str, Any]:
        """Collect the positions, fit the remaining minibatches, save; the outcome."""
        from torch.utils.tensorboard import SummaryWriter

        from .trainer import _StopFlag

        cfg, c = self.cfg, self.counters
        self.writer = SummaryWriter(str(self.run_dir / "tensorboard"))
        self.log(f"run directory: {self.run_dir}  (last-deal scorer, "
                 f"{count_parameters(self.net):,} parameters; collecting "
                 f"{cfg.last_deal_decisions:,} decisions)")
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

            if c["epoch"] >= cfg.last_deal_epochs:  # a finished run: nothing to collect
                return self._finish("finished")
            data, env_steps = collect_positions(self.policy, cfg, self.log, halted)
            self.log(f"collection {'stopped' if data is None else 'done'}: "
                     f"{time.perf_counter() - started:.0f} s, {env_steps:,} env steps")
            if c["epoch"] == 0 and c["step"] == 0:
                c["collect_seconds"], c["env_steps"] = time.perf_counter() - started, env_steps
            reason = halted() if data is None else self._fit(data, halted)
        return self._finish(reason or "finished")

    def _fit(self, data: Positions, halted: Callable[[], str | None]) -> str | None:
        """The epochs from where the counters stand; why they stopped early, or None."""
        cfg, c = self.cfg, self.counters
        c["decisions"] = len(data)
        held = max(1, int(len(data) * cfg.last_deal_holdout))
        train_idx, held_idx = np.arange(len(data) - held), np.arange(len(data) - held,
                                                                     len(data))
        per_epoch = math.ceil(len(train_idx) / cfg.last_deal_batch)
        total = per_epoch * cfg.last_deal_epochs
        self.log(f"{len(data):,} decisions ({held:,} held out); {cfg.last_deal_epochs} "
                 f"epochs of {per_epoch} minibatches")
        while c["epoch"] < cfg.last_deal_epochs:
            order = np.random.default_rng(cfg.seed + c["epoch"]).permutation(train_idx)
            losses: list[float] = []
            while c["step"] < per_epoch:
                why = halted()
                if why is not None:
                    return why
                done = c["epoch"] * per_epoch + c["step"]
                lr = cfg.last_deal_lr * 0.5 * (1 + math.cos(math.pi * done / total))
                for group in self.optimizer.param_groups:
                    group["lr"] = lr
                a = c["step"] * cfg.last_deal_batch
                losses.append(self._step(data, order[a:a + cfg.last_deal_batch]))
                c["step"] += 1
                c["update"] = done + 1
                if c["step"] % 200 == 0:
                    w = self.writer
                    w.add_scalar("last_deal/loss", float(np.mean(losses[-200:])), done + 1)
                    w.add_scalar("charts/learning_rate", lr, done + 1)
                    w.add_scalar("charts/wall_minutes", c["wall_seconds"] / 60, done + 1)
            c["epoch"], c["step"] = c["epoch"] + 1, 0
            self._end_epoch(data, held_idx, float(np.mean(losses)) if losses else float("nan"))
        return None

    def _end_epoch(self, data: Positions, held_idx: np.ndarray, loss: float) -> None:
        """Score the held-out decisions (TensorBoard, evaluations.jsonl, the log); save."""
        c = self.counters
        rate, lost = score_heldout(self.net, data, held_idx)
        self.writer.add_scalar("last_deal/heldout_best_move_rate", rate, c["epoch"])
        self.writer.add_scalar("last_deal/heldout_points_lost_per_decision", lost, c["epoch"])
        with open(self.run_dir / "evaluations.jsonl", "a") as fh:
            fh.write(json.dumps({"epoch": c["epoch"], "heldout_best_move_rate": rate,
                                 "heldout_points_lost": lost,
                                 "wall_seconds": c["wall_seconds"]}) + "\n")
        self.log(f"epoch {c['epoch']}/{self.cfg.last_deal_epochs}: loss {loss:.4f}, held "
                 f"out: best move {rate:.3f}, {lost:.3f} points lost a decision "
                 f"({c['wall_seconds'] / 60:.1f} min)")
        self.save("latest")

    def _finish(self, reason: str) -> dict[str, Any]:
        """``final.pt`` (or ``latest.pt`` when stopped early) and ``policy.pt``."""
        c = self.counters
        final = c["epoch"] >= self.cfg.last_deal_epochs
        path = self.save("final" if final else "latest")
        policy = save_atomic(self.checkpoint_dict("policy"), self.run_dir / "policy.pt")
        self.writer.flush()
        self.writer.close()
        self.log(f"{reason}: {c['epoch']} epochs, {c['wall_seconds'] / 60:.1f} min; "
                 f"checkpoint {path}; policy {policy}")
        return {"reason": reason, "finished": final, "checkpoint": str(path),
                "policy": str(policy), "counters": dict(c), "run_dir": str(self.run_dir)}

    def _step(self, data: Positions, idx: np.ndarray) -> float:
        obs, feats, row, col, regret, width = _batch(data, idx)
        obs_t, row_t = torch.from_numpy(obs), torch.from_numpy(row)
        scores = self.net.scores(obs_t, torch.from_numpy(feats), row_t,
                                 tokens(obs, feats, row))
        loss = best_set_loss(scores, torch.from_numpy(regret), row_t, len(idx), width,
                             torch.from_numpy(col), self.cfg.last_deal_regret_coef)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        return float(loss.detach())


def base_policy(cfg: TrainConfig) -> PolicyNet:
    """The PPO network of ``init_from`` (its last-deal scorer, if any, is replaced)."""
    from scopa_policy.checkpoint import build_model, load_checkpoint

    from .trainer import init_path

    return build_model(load_checkpoint(init_path(cfg)))


def start(cfg: TrainConfig, run_dir: Path, policy: PolicyNet,
          log: Callable[[str], None] = print) -> dict[str, Any]:
    """A new run in ``run_dir`` for the PPO network ``policy`` (``base_policy``)."""
    (run_dir / "config.yaml").write_text(yaml.safe_dump(cfg.to_dict(), sort_keys=False))
    return LastDealTrainer(cfg, run_dir, policy, log=log).train()


def resume(ck: dict[str, Any], cfg: TrainConfig, run_dir: Path,
           log: Callable[[str], None] = print) -> dict[str, Any]:
    from scopa_policy.checkpoint import build_model

    trainer = LastDealTrainer(cfg, run_dir, build_model(ck), resume=ck, log=log)
    log(f"resuming {run_dir} at epoch {trainer.counters['epoch']}, minibatch "
        f"{trainer.counters['step']}")
    return trainer.train()


__all__ = ["Positions", "RecordingTeacher", "collect_positions", "LastDealTrainer",
           "best_set_loss", "score_heldout", "base_policy", "start", "resume"]
