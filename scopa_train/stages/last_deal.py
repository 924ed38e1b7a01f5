"""Stage kind ``last_deal``: teach a last-deal scorer the exact values of the last deal: its
config section (``LastDealSection``, with the ``fit`` section of every fitting kind), its
checks, its loss and its stage (``LastDealStage``).

The policy of ``init_from`` (a PPO run) plays rollouts as in training (the config's
opponent pool, its moves sampled); every decision of its last deals with a choice is
solved exactly (``agents.baselines.endgame``), until ``fit.decisions`` are collected. A
``LastDealNet`` (``scopa_policy.last_deal_net``) is then fitted to them for
``fit.epochs`` passes: the likelihood of the set of best moves (ties free) plus
``last_deal.regret_coef`` x the expected points lost, Adam with a cosine learning rate.
A held-out share (the last deals collected) is scored after every epoch: how often the
argmax is a best move, and the points it loses.

With ``last_deal.ownership_coef`` a training-only head (``OwnershipHead``) reads each
move's last hidden layer and every card token, and predicts which of the cards in play
the mover ends up with when both sides play best after that move (the solver's line,
``EndgameSolver.move_outcomes``); its cross-entropy, times the coefficient, joins the
loss. The head is dropped from the policy file: it only shapes what the scorer learns.

With ``last_deal.suit_augment`` each minibatch's decisions are seen under random
renamings of the plain suits (``scopa_env.suit_maps``).

The loop, checkpoints, stops and resume are ``scopa_train.stages.fitting``'s: the run writes
what a PPO run does (``checkpoints/latest.pt`` every epoch and on a stop, ``final.pt``,
``policy.pt``: the PPO network with the scorer beside it) and TensorBoard scalars under
``last_deal/``. The solved decisions are kept in ``collected.npz`` until the fit ends (3 M
decisions: about 2.8 GB), so that a run stopped while fitting does not solve them again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.baselines.endgame import EndgameSolver, position_from_obs
from scopa_env.cards import N_CARDS
from scopa_env.suit_maps import ACTION_MAPS, CARD_MAPS, SUIT_PERMUTATIONS, permute_obs_rows
from scopa_policy.checkpoint import build_model, load_checkpoint, policy_checkpoint
from scopa_policy.features import action_inputs_np
from scopa_policy.last_deal_net import (
    LastDealConfig,
    LastDealNet,
    Tokens,
    _linear,
    cards_in_play,
    tokens,
)
from scopa_policy.network import PolicyNet

from ..config import StageConfig, needs_two_player_points
from ..framework import Log, init_path
from ..rollout import best_per_decision
from ..settings import ConfigError, setting
from . import StageKind
from .fitting import FitSection, FittingStage, FlatDecisions, length_buckets, play_rollouts


# -- the config section and its checks -------------------------------------------------
@dataclass
class LastDealSection:
    width: int = setting(64, "token width of the last-deal scorer", lo=8, hi=1024)
    layers: int = setting(3, "its transformer layers", lo=1, hi=16)
    heads: int = setting(4, "its attention heads (width must be a multiple)", lo=1, hi=64)
    regret_coef: float = setting(0.0, "weight of the expected points lost (under the scorer's "
                                 "softmax) added to the best-set loss", lo=0, hi=100)
    suit_augment: bool = setting(False, "fit each minibatch's decisions under random "
                                 "permutations of the plain suits (cups, swords and clubs play "
                                 "alike: scopa_env.suit_maps)")
    buckets: int = setting(0, "minibatches drawn together and sorted by the cards in play, so "
                           "that each pads its decisions to fewer tokens (about 1.5 times faster "
                           "at 16); 0 or 1: plain random minibatches", lo=0, hi=1 << 16)
    ownership_coef: float = setting(0.0, "weight of the ownership loss: a training head "
                                    "predicts, from each move's hidden layer, which cards in play "
                                    "the mover ends up with under best play after it", lo=0,
                                    hi=100)


def check(cfg: StageConfig) -> None:
    """2-player hands for points; a width the heads divide."""
    needs_two_player_points(cfg, "stage kind 'last_deal'", "the exact values are hand "
                            "points margins of 2-player last deals")
    if cfg.last_deal.width % cfg.last_deal.heads:
        raise ConfigError(f"config key 'last_deal.width' = {cfg.last_deal.width} must be a "
                          f"multiple of 'last_deal.heads' = {cfg.last_deal.heads}")


# -- the decisions, the loss -----------------------------------------------------------


@dataclass
class Positions(FlatDecisions):
    """Solver-labelled last-deal decisions, flat: decision ``i``'s legal moves are
    ``ids[start[i]:start[i] + count[i]]`` with exact values (hand margins) ``values``
    and, if collected, outcomes ``own``: the mover's final pile (card bitmask) under
    best play after the move."""

    ids: np.ndarray  # (M,) int64
    values: np.ndarray  # (M,) float32
    own: np.ndarray | None = None  # (M,) int64


class RecordingTeacher:
    """The exact teacher of the rollouts, keeping every decision it labels (and with
    ``outcomes``, each move's outcome: ``EndgameSolver.move_outcomes``)."""

    def __init__(self, solver: EndgameSolver, outcomes: bool = False) -> None:
        self.solver = solver
        self.outcomes = outcomes
        self.obs: list[np.ndarray] = []
        self.ids: list[np.ndarray] = []
        self.values: list[np.ndarray] = []
        self.own: list[np.ndarray] = []
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
            if self.outcomes:
                self.own.append(np.concatenate([
                    self.solver.move_outcomes(position_from_obs(obs[b]),
                                              ids[b, valid[b]].tolist())
                    for b in taught.tolist()]).astype(np.int64))
            self.decisions += len(taught)
        return vals

    def clear(self) -> None:
        self.solver.clear()

    def positions(self) -> Positions:
        count = np.concatenate(self.count)
        return Positions(np.concatenate(self.obs), np.cumsum(count) - count, count,
                         np.concatenate(self.ids), np.concatenate(self.values),
                         np.concatenate(self.own) if self.outcomes else None)


def collect_positions(policy: PolicyNet, cfg: StageConfig, log: Callable[[str], None],
                      halted: Callable[[], str | None] = lambda: None,
                      outcomes: bool | None = None) -> tuple[Positions | None, int]:
    """At least ``cfg.fit.decisions`` labelled decisions from the policy's rollouts
    (``play_rollouts``) and the env steps played; None for the positions when
    ``halted()`` says why to stop before they are complete. The moves' outcomes are
    collected with ``outcomes`` (by default: where the ownership loss is on)."""
    if outcomes is None:
        outcomes = cfg.last_deal.ownership_coef > 0
    teacher = RecordingTeacher(EndgameSolver(cfg.make_rules()), outcomes)
    rollouts = play_rollouts(policy, cfg, teacher)
    t0, rollout, env_steps = time.perf_counter(), 0, 0
    while teacher.decisions < cfg.fit.decisions:
        if halted() is not None:
            return None, env_steps
        env_steps += next(rollouts)[1]
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


def _batch(data: Positions, idx: np.ndarray, suits: np.ndarray | None = None
           ) -> tuple[Any, ...]:
    """The inputs and targets of decisions ``idx``: (observations, move features, each
    move's decision and place in it, regrets, the most legal moves of a decision,
    outcomes (M, 40): 1 where the card ends in the mover's pile, None if not
    collected). ``suits``
    (len(idx),): each decision seen under that suit permutation
    (``scopa_env.suit_maps``; exact values are unchanged by it, outcomes renamed)."""
    moves, row, col = data.moves(idx)
    obs, ids = data.obs[idx], data.ids[moves]
    own = None
    if data.own is not None:
        own = ((data.own[moves, None] >> np.arange(N_CARDS)) & 1).astype(np.float32)
    if suits is not None:
        obs = permute_obs_rows(obs, suits)
        ids = ACTION_MAPS[suits[row], ids]
        if own is not None:
            renamed = np.empty_like(own)
            renamed[np.arange(len(own))[:, None], CARD_MAPS[suits[row]]] = own
            own = renamed
    feats = action_inputs_np(obs, ids, row)
    vals = data.values[moves]
    regret = best_per_decision(vals, row, len(idx))[row] - vals
    return obs, feats, row, col, regret, int(data.count[idx].max()), own


OWNERSHIP_RANK = 32


class OwnershipHead(nn.Module):
    """Training-only: the logit that a card in play ends in the mover's pile after a
    move, a bilinear form of the move's last hidden layer and the card's token."""

    def __init__(self, cfg: LastDealConfig) -> None:
        super().__init__()
        self.card = _linear(cfg.width, OWNERSHIP_RANK)
        self.move = _linear(cfg.move_hidden, OWNERSHIP_RANK)

    def forward(self, x: torch.Tensor, hidden: torch.Tensor, row: torch.Tensor
                ) -> torch.Tensor:
        """(M, T) logits from tokens ``x`` (B, T, width) and ``hidden`` (M, move_hidden)
        of moves whose decisions are ``row`` (M,)."""
        return torch.einsum("mtk,mk->mt", self.card(x)[row], self.move(hidden))


def ownership_loss(logits: torch.Tensor, own: np.ndarray, row: np.ndarray, tok: Tokens
                   ) -> torch.Tensor:
    """Mean binary cross-entropy over every (move, card in play) of the head's
    ``logits`` (M, T) against the outcomes ``own`` (M, 40) of ``_batch``."""
    card = tok.card[row]  # (M, T)
    real = card >= 0
    target = own[np.nonzero(real)[0], card[real]]
    return nn.functional.binary_cross_entropy_with_logits(
        logits[torch.from_numpy(real)], torch.from_numpy(target))


def score_heldout(net: LastDealNet, data: Positions, idx: np.ndarray, chunk: int = 2048
                  ) -> tuple[float, float]:
    """(share of decisions whose argmax move is a best one, mean points it loses)."""
    hits, lost = [], []
    with torch.no_grad():
        for a in range(0, len(idx), chunk):
            obs, feats, row, col, regret, width, _ = _batch(data, idx[a:a + chunk])
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
    return float(np.concatenate(hits).mean()), float(np.concatenate(lost).mean())


class LastDealStage(FittingStage):
    """The last-deal stage: collect solved last-deal decisions, fit a ``LastDealNet``."""

    KIND = "last_deal"
    KEEP_COLLECTED = Positions  # minutes of exact solving: kept for a resume

    def __init__(self, cfg: StageConfig, run_dir: Path, policy: PolicyNet, **kw: Any
                 ) -> None:
        self.policy = policy.eval()
        torch.manual_seed(cfg.seed)
        ld = cfg.last_deal
        self.net = LastDealNet(LastDealConfig(ld.width, ld.layers, ld.heads))
        self.ownership = OwnershipHead(self.net.cfg) if ld.ownership_coef else None
        super().__init__(cfg, run_dir, **kw)

    def describe(self) -> str:
        from scopa_policy.network import count_parameters

        return f"a last-deal scorer, {count_parameters(self.net):,} parameters"

    def trainable(self) -> list[nn.Parameter]:
        head = [] if self.ownership is None else list(self.ownership.parameters())
        return list(self.net.parameters()) + head

    def collect(self, halted: Callable[[], str | None]) -> tuple[Positions | None, int]:
        self.say(f"collecting {self.cfg.fit.decisions:,} last-deal decisions")
        return collect_positions(self.policy, self.cfg, self.say, halted)

    def minibatches(self, data: Positions, train_idx: np.ndarray, rng: np.random.Generator
                    ) -> list[np.ndarray]:
        """With ``last_deal.buckets`` above 1, minibatches of decisions with about as
        many cards in play (``length_buckets``); else plain random ones."""
        if self.cfg.last_deal.buckets <= 1:
            return super().minibatches(data, train_idx, rng)
        order = rng.permutation(train_idx)
        return length_buckets(order, cards_in_play(data.obs[order]), self.batch,
                              self.cfg.last_deal.buckets, rng)

    def step(self, data: Positions, idx: np.ndarray) -> torch.Tensor:
        suits = None
        if self.cfg.last_deal.suit_augment:  # seeded by the minibatch: resumes alike
            c = self.counters
            rng = np.random.default_rng((self.cfg.seed, c.epoch, c.step))
            suits = rng.integers(0, len(SUIT_PERMUTATIONS), len(idx))
        obs, feats, row, col, regret, width, own = _batch(data, idx, suits)
        obs_t, row_t = torch.from_numpy(obs), torch.from_numpy(row)
        tok = tokens(obs, feats, row)
        x, hidden = self.net.trunk(obs_t, torch.from_numpy(feats), row_t, tok)
        loss = best_set_loss(self.net.head(hidden), torch.from_numpy(regret), row_t, len(idx),
                             width, torch.from_numpy(col), self.cfg.last_deal.regret_coef)
        if self.ownership is not None:
            loss = loss + self.cfg.last_deal.ownership_coef * ownership_loss(
                self.ownership(x, hidden, row_t), own, row, tok)
        return loss

    def score(self, data: Positions, idx: np.ndarray) -> dict[str, float]:
        rate, lost = score_heldout(self.net, data, idx)
        return {"best_move_rate": rate, "points_lost_per_decision": lost}

    def policy_parts(self, training: bool) -> dict[str, Any]:
        """The PPO network, with the scorer beside it once it has been trained at all
        (always in a training checkpoint, with the ownership head if any)."""
        trained = self.counters.update > 0
        ck = policy_checkpoint(self.policy, self.rules.to_dict(), {},
                               last_deal=self.net if trained or training else None)
        if training and self.ownership is not None:
            ck["ownership_head"] = self.ownership.state_dict()
        return ck

    def eval_policy(self) -> tuple[PolicyNet, LastDealNet]:
        return self.policy, self.net

    def restore(self, ck: dict[str, Any]) -> None:
        started = "ownership_head" in ck
        if started != (self.ownership is not None):
            raise ConfigError(f"'last_deal.ownership_coef' cannot be turned "
                              f"{'off' if started else 'on'} on --resume (the run was started "
                              f"{'with' if started else 'without'} the ownership head): start "
                              f"a new run instead")
        self.net.load_state_dict(ck["last_deal"]["model"])
        if self.ownership is not None:
            self.ownership.load_state_dict(ck["ownership_head"])


def check_ready(cfg: StageConfig) -> None:
    """What can fail before the run folder exists: the starting checkpoint."""
    build_model(load_checkpoint(init_path(cfg)))


def build(cfg: StageConfig, run_dir: Path, log: Log = print, **kw: Any) -> LastDealStage:
    """A new stage for the PPO network of ``init_from`` (its last-deal scorer, if any,
    is replaced)."""
    return LastDealStage(cfg, run_dir, build_model(load_checkpoint(init_path(cfg))), log=log,
                         **kw)


def resume(ck: dict[str, Any], cfg: StageConfig, run_dir: Path, log: Log = print,
           **kw: Any) -> LastDealStage:
    """The stage of a training checkpoint, where it stopped."""
    stage = LastDealStage(cfg, run_dir, build_model(ck), log=log, **kw)
    stage.load(ck)
    return stage


KIND = StageKind(
    name="last_deal", help="fits a last-deal scorer to exact values",
    sections={"fit": FitSection, "last_deal": LastDealSection}, check=check,
    check_ready=check_ready, build=build, resume=resume,
    frozen={"last_deal": ("width", "layers", "heads")})
"""The stage kind, as ``scopa_train.stages`` registers it."""

__all__ = ["KIND", "LastDealSection", "LastDealStage", "OwnershipHead", "Positions",
           "RecordingTeacher", "best_set_loss", "build", "check", "check_ready",
           "collect_positions", "ownership_loss", "resume", "score_heldout"]
