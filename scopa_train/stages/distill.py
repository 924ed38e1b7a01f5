"""Stage kind ``distill`` (earlier ``suit_distill``): search distillation and expert
iteration; at its core, teach the policy network to play alike in every suit view. Its
config section (``DistillSection``, with the ``fit`` section of every fitting kind), its
checks, its targets and its stage (``DistillStage``).

Cups, swords and clubs play alike (``scopa_env.suit_maps``), but a network trained by PPO
on card one-hots scores the 6 renamings of a decision differently: the PPO network of
stage 2 chooses another move in about 1 decision in 9 when its scores are averaged over
the 6 views, and the average plays better (BENCHMARKS.md). This stage distils that
average back into one network:

1. **Decisions.** The ``init_from`` policy plays rollouts as in PPO (the config's
   opponent pool, its moves sampled, ``play_rollouts``) until ``fit.decisions``
   learner decisions with a choice are kept; where the checkpoint has a last-deal scorer,
   the decisions it plays (2 players, deck empty) are left out.
2. **Targets.** The ``init_from`` network's logits averaged over the 6 suit views of
   each decision (the teacher, fixed).
3. **Fit.** The student starts as the teacher; each minibatch shows it every decision
   under a random suit view (seeded by the minibatch) and fits the softmax of the
   averaged logits (cross-entropy over the legal moves), Adam with a cosine learning
   rate, ``fit.epochs`` passes. After each epoch the held-out share is scored in
   one view: how often the student's best move is the averaged teacher's, and the
   cross-entropy.

Optionally (``distill.search``, e.g. ``pimc:worlds=48,depth=8``) a search agent scores
``distill.search_decisions`` of the collected decisions, drawn at random, before the
fit (``scopa_train.search_labels``); their targets become the averaged logits plus
``distill.search_beta`` x its move values in points (``add_search_values``), and the
held-out share is also scored by the points a decision loses by those values
(``search_regret``: the value of the search's best move minus that of the network's).
**Expert iteration** (``distill.search: self:search=on[,worlds=N,...]``): the search is
the stage's own starting network searching at play time (``scopa_policy.search``, written
to ``search_teacher.pt`` in the run directory), so the network learns the choices its
search makes; the search leaves its sure calls (and the last deal) to the network, whose
targets stay its own there (``filled``).
The values scored so far are kept in ``search_values.npz`` in the run directory, so a run
stopped while scoring goes on from there when resumed, and a new run may start from an
earlier run's values (``distill.search_values``) to fit the same decisions otherwise.

The policy file holds the student as the PPO network (its value head is the teacher's,
untrained here) and the ``init_from`` checkpoint's last-deal scorer unchanged. Loop,
checkpoints, stops and resume: ``scopa_train.stages.fitting`` (a training checkpoint also
holds the teacher, so that a resumed run collects the same decisions).
"""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from scopa_env.observation import DECK_COUNT
from scopa_env.suit_maps import SUIT_PERMUTATIONS, permute_obs_rows
from scopa_policy.checkpoint import (
    CheckpointError,
    build_last_deal,
    build_model,
    load_checkpoint,
    policy_checkpoint,
    save_atomic,
    write_atomic,
)
from scopa_policy.features import SUIT_VIEW_COLUMNS, Candidates
from scopa_policy.last_deal_net import LastDealNet
from scopa_policy.network import PolicyNet
from scopa_policy.symmetry import decision_table

from ..config import StageConfig
from ..framework import Log, init_path
from ..search_labels import is_self, search_agent, search_values, self_spec
from ..settings import ConfigError, setting
from . import StageKind
from .fitting import (
    FitSection,
    FittingStage,
    FlatDecisions,
    Halted,
    check_memory,
    join,
    play_rollouts,
)

VIEWS = len(SUIT_PERMUTATIONS)
SEARCH_CACHE = "search_values.npz"  # in the run directory: the search's values so far
SEARCH_TEACHER = "search_teacher.pt"  # in the run directory: the network that searches (self:)


# -- the config section and its checks -------------------------------------------------
@dataclass
class DistillSection:
    search: str = setting("", "a search agent whose move values (points) join the targets of "
                          "some decisions outside the last deal, e.g. pimc:worlds=48,depth=8, "
                          "or self:search=on[,worlds=N,...], the stage's own network searching "
                          "(expert iteration) ('': none; scopa_train.search_labels)")
    search_decisions: int = setting(0, "collected decisions (drawn at random) that the search "
                                    "scores", lo=0)
    search_beta: float = setting(16.0, "a scored decision's target: the averaged logits + this x "
                                 "the search values", lo=0, hi=1e6)
    search_workers: int = setting(0, "worker processes scoring them (0: one per CPU core)", lo=0,
                                  hi=256)
    search_values: str = setting("", "an earlier run's search values (its search_values.npz, or "
                                 "its run directory) to reuse: where it scored the same decisions "
                                 "nothing is scored again ('': score them)")


def search_values_file(path: str) -> Path:
    """The search-values file ``distill.search_values`` names: the file, or the
    ``search_values.npz`` of a run directory."""
    p = Path(path)
    return p / "search_values.npz" if p.is_dir() else p


def check(cfg: StageConfig) -> None:
    """A search named where decisions are scored; a search that can be made; values to
    reuse that exist."""
    d = cfg.distill
    if d.search_decisions and not d.search:
        raise ConfigError(f"config key 'distill.search_decisions' is {d.search_decisions} but "
                          "'distill.search' names no search agent")
    if d.search:
        try:
            if is_self(d.search):  # the stage's network, written when the stage starts
                self_spec(d.search, "network.pt")
            else:
                search_agent(d.search, 0)
        except ValueError as e:
            raise ConfigError(f"config key 'distill.search': {e}") from None
    if d.search_values:
        if not d.search_decisions:
            raise ConfigError("config key 'distill.search_values' is set but "
                              "'distill.search_decisions' is 0: nothing is scored")
        if not search_values_file(d.search_values).is_file():
            raise ConfigError(f"config key 'distill.search_values': no file "
                              f"{search_values_file(d.search_values)}")


# -- the decisions and their targets ---------------------------------------------------
@dataclass
class Decisions(FlatDecisions):
    """Learner decisions with a choice, flat: decision ``i``'s legal moves have features
    ``feats[start[i]:start[i] + count[i]]`` and the teacher's suit-averaged logits
    ``target`` there."""

    feats: np.ndarray  # (M, ACTION_DIM) float32
    target: np.ndarray  # (M,) float32
    search: np.ndarray | None = None  # (M,) the search's move values; NaN where unscored
    # (N, W) each decision's round row (VectorScopaEnv.round_rows: the others' moves this
    # round, what a search reading the table weights its worlds by); None: not kept
    rounds: np.ndarray | None = None


def view_inputs(data: FlatDecisions, feats: np.ndarray, idx: np.ndarray, views: np.ndarray
                ) -> tuple[torch.Tensor, Candidates, np.ndarray]:
    """Decisions ``idx`` of ``data`` (move features ``feats``) seen under suit views
    ``views`` (len(idx),): observations, their candidates, and the flat move index of
    each candidate."""
    moves, row, col = data.moves(idx)
    obs = permute_obs_rows(data.obs[idx], views)
    view_feats = feats[moves[:, None], SUIT_VIEW_COLUMNS[views[row]]]
    cand = Candidates(torch.from_numpy(view_feats), torch.from_numpy(row),
                      torch.from_numpy(col), int(data.count[idx].max()))
    return torch.from_numpy(obs), cand, moves


def averaged_logits(net: PolicyNet, data: FlatDecisions, feats: np.ndarray,
                    chunk: int = 8192) -> np.ndarray:
    """The network's logits (M,) of every move of ``data``'s decisions (features
    ``feats`` (M, ACTION_DIM)), averaged over the 6 suit views of its decision."""
    out = np.empty(len(feats), np.float32)
    with torch.no_grad():
        for a in range(0, len(data), chunk):
            idx = np.arange(a, min(a + chunk, len(data)))
            total = 0.0
            for k in range(VIEWS):
                obs, cand, moves = view_inputs(data, feats, idx, np.full(len(idx), k))
                logits, _ = net.forward_moves(obs, cand)
                total = total + logits[cand.row, cand.col].double().numpy()
            out[moves] = total / VIEWS
    return out


def collect_decisions(policy: PolicyNet, cfg: StageConfig, skip_last_deal: bool,
                      log: Callable[[str], None], halted: Halted = lambda: None,
                      keep_rounds: bool = False) -> tuple[Decisions | None, int]:
    """At least ``cfg.fit.decisions`` decisions with a choice from the policy's
    rollouts, with their targets, and the env steps played; None for the decisions when
    ``halted()`` says why to stop first. ``skip_last_deal``: leave out 2-player
    decisions with the deck empty (a last-deal scorer plays those); ``keep_rounds``:
    keep each decision's round row (``Decisions.rounds``, for a search to read)."""
    obs, feats, count, rounds = [], [], [], []
    kept, rollout, env_steps = 0, 0, 0
    t0 = time.perf_counter()
    rollouts = play_rollouts(policy, cfg, keep_rounds=keep_rounds)
    while kept < cfg.fit.decisions:
        if halted() is not None:
            return None, env_steps
        batch, steps = next(rollouts)
        env_steps += steps
        rollout += 1
        rows = FlatDecisions(batch.obs.numpy(), batch.move_start.numpy(),
                             batch.move_count.numpy())
        keep = rows.count > 1
        if skip_last_deal:
            keep &= rows.obs[:, DECK_COUNT][:, 0] > 0
        idx = np.flatnonzero(keep)
        obs.append(rows.obs[idx])
        feats.append(batch.feats.numpy()[rows.moves(idx)[0]])
        count.append(rows.count[idx])
        rounds.append(batch.rounds.numpy()[idx])
        kept += len(idx)
        if rollout == 1:
            check_memory(cfg, sum(a.nbytes for a in (*obs, *feats, *count, *rounds)), kept,
                         int(sum(c.sum() for c in count)))
        if rollout % 10 == 0:
            log(f"collected {kept:,} decisions in {rollout} rollouts, "
                f"{time.perf_counter() - t0:.0f} s")
    c = join(count)
    flat = FlatDecisions(join(obs), np.cumsum(c) - c, c)
    f = join(feats)
    target = averaged_logits(policy, flat, f)
    log(f"targets: {len(flat):,} decisions x {VIEWS} suit views, "
        f"{time.perf_counter() - t0:.0f} s")
    return Decisions(flat.obs, flat.start, flat.count, f, target,
                     rounds=join(rounds) if keep_rounds else None), env_steps


def add_search_values(data: Decisions, cfg: StageConfig,
                      log: Callable[[str], None] = print, halted: Halted | None = None,
                      cache: Path | None = None, spec: str | None = None
                      ) -> np.ndarray | None:
    """Add ``distill.search_beta`` x the ``distill.search`` agent's move values to the
    targets of ``distill.search_decisions`` of ``data``'s decisions, drawn at random
    (seeded by the config), and keep the values in ``data.search``: the decisions scored,
    in order; None (``data`` unchanged) when ``halted()`` stopped the scoring, whose
    values so far are kept in ``cache`` (``search_values``). ``spec``: the search agent's
    spec in place of ``distill.search`` (the stage's own network's, ``self:...``)."""
    c, d = cfg, cfg.distill
    spec = spec or d.search
    n = min(d.search_decisions, len(data))
    idx = np.sort(np.random.default_rng([c.seed, 1]).choice(len(data), n, replace=False))
    moves, row, _ = data.moves(idx)
    workers = d.search_workers or os.cpu_count() or 1
    log(f"scoring {n:,} decisions with {spec} ({workers} worker processes)")
    values = search_values(spec, c.make_rules(), data.obs[idx], data.count[idx],
                           c.seed, workers, log, halted=halted, cache=cache,
                           rounds=None if data.rounds is None else data.rounds[idx])
    if values is None:
        return None
    before = _best_moves(data, idx)
    data.target[moves] += np.float32(d.search_beta) * filled(values, row, n).astype(np.float32)
    data.search = np.full(len(data.target), np.nan, np.float32)
    data.search[moves] = values
    searched = scored_decisions(values, row, n)
    moved = (before != _best_moves(data, idx))[searched]
    changed = float(moved.mean()) if len(moved) else 0.0
    log(f"search values added (beta {d.search_beta:g}) to {int(searched.sum()):,} of the "
        f"{n:,} decisions (the others the search left to the network): the target's best "
        f"move changed in {changed:.3f} of them")
    return idx


def scored_decisions(values: np.ndarray, row: np.ndarray, n: int) -> np.ndarray:
    """Which of ``n`` decisions the search scored (some move's value not NaN), from the
    per-move ``values`` (M,), move ``m`` in decision ``row[m]``."""
    scored = np.zeros(n, bool)
    scored[row[~np.isnan(values)]] = True
    return scored


def filled(values: np.ndarray, row: np.ndarray, n: int) -> np.ndarray:
    """Per-move search values (M,) of ``n`` decisions (move ``m`` in decision
    ``row[m]``) with each NaN replaced: by the lowest value of its decision (a move the
    search did not roll out ranks below those it did), or by 0 where the search scored
    no move of the decision (its target stays the network's own)."""
    gap = np.isnan(values)
    low = np.full(n, np.inf)
    np.minimum.at(low, row[~gap], values[~gap])
    low[np.isinf(low)] = 0.0
    return np.where(gap, low[row], values)


def _best_moves(data: Decisions, idx: np.ndarray) -> np.ndarray:
    """The place of each decision's best target move in its legal list."""
    moves, row, _ = data.moves(idx)
    return decision_table(data.target[moves], row, len(idx)).argmax(1)


def search_regret(values: np.ndarray, row: np.ndarray, col: np.ndarray, n: int, width: int,
                  chosen: np.ndarray) -> np.ndarray:
    """The points each decision the search scored loses by the search's values when
    ``chosen`` (n,) is played: its best value minus the chosen move's (a move left
    unscored counts as the decision's lowest value, as in ``filled``)."""
    scored = scored_decisions(values, row, n)
    table = np.full((n, width), np.nan)
    table[row, col] = filled(values, row, n)
    got = table[np.arange(n), chosen]
    return (np.nanmax(table[scored], 1) - got[scored]).astype(np.float64)


def padded(per_move: np.ndarray, row: np.ndarray, col: np.ndarray, n: int, width: int
           ) -> torch.Tensor:
    """Per-move values laid out (n, width), -1e9 where a decision has fewer moves."""
    out = torch.full((n, width), -1e9)
    out[torch.from_numpy(row), torch.from_numpy(col)] = torch.from_numpy(per_move)
    return out


class DistillStage(FittingStage):
    """The suit-distillation stage: the student fits the teacher's suit-averaged policy."""

    KIND = "suit_distill"  # TensorBoard tags and progress (the kind is "distill" since)

    def __init__(self, cfg: StageConfig, run_dir: Path, teacher: PolicyNet,
                 last_deal: LastDealNet | None, **kw: Any) -> None:
        self.teacher = teacher.eval()
        self.last_deal = last_deal
        self.net = copy.deepcopy(teacher).train()
        super().__init__(cfg, run_dir, **kw)

    def describe(self) -> str:
        return "the policy network, distilled from its suit-averaged self"

    def collect(self, halted: Halted) -> tuple[Decisions | None, int]:
        skip = self.last_deal is not None and self.cfg.rules.players == 2
        self.say(f"collecting {self.cfg.fit.decisions:,} decisions with a choice"
                 + (" (the last deal left to the last-deal scorer)" if skip else ""))
        d = self.cfg.distill
        data, steps = collect_decisions(self.teacher, self.cfg, skip, self.say, halted,
                                        keep_rounds=d.search_decisions > 0)
        if data is not None and d.search_decisions:
            if halted() is not None:
                return None, steps
            cache = self.run_dir / SEARCH_CACHE
            if d.search_values and not cache.exists():
                source = search_values_file(d.search_values)
                self.say(f"search values: starting from {source}")
                write_atomic(source.read_bytes(), cache)
            spec = d.search
            if is_self(spec):  # expert iteration: the teacher network searches
                ck = policy_checkpoint(self.teacher, self.rules.to_dict(), {},
                                       last_deal=self.last_deal)
                spec = self_spec(spec, save_atomic(ck, self.run_dir / SEARCH_TEACHER))
            if add_search_values(data, self.cfg, self.say, halted, cache, spec) is None:
                return None, steps
        if data is not None:
            alone = self._figures(self.teacher, data, self.held_out(len(data)))
            extra = (f"; it loses {alone['search_regret']:.4f} points a scored decision "
                     f"by the search's values" if "search_regret" in alone else "")
            self.say(f"the teacher alone, one view, plays the averaged teacher's move in "
                     f"{alone['teacher_agreement']:.3f} of held-out decisions{extra}")
        return data, steps

    def step(self, data: Decisions, idx: np.ndarray) -> torch.Tensor:
        c = self.counters  # the views are seeded by the minibatch: a resume draws the same
        rng = np.random.default_rng((self.cfg.seed, c.epoch, c.step))
        obs, cand, moves = view_inputs(data, data.feats, idx,
                                       rng.integers(0, VIEWS, len(idx)))
        logits, _ = self.net.forward_moves(obs, cand)
        target = padded(data.target[moves], cand.row.numpy(), cand.col.numpy(), len(idx),
                        cand.width).softmax(1)
        return -(target * logits.log_softmax(1)).sum(1).mean()

    def _figures(self, net: PolicyNet, data: Decisions, idx: np.ndarray,
                 chunk: int = 8192) -> dict[str, float]:
        """Held-out figures of ``net`` on decisions ``idx``, in the identity view: how
        often its best move is the target's, the cross-entropy, and (where the search
        scored some) the points a scored decision loses by the search's values."""
        hits, ce, regret = [], [], []
        with torch.no_grad():
            for a in range(0, len(idx), chunk):
                sub = idx[a:a + chunk]
                obs, cand, moves = view_inputs(data, data.feats, sub, np.zeros(len(sub), np.int64))
                logits, _ = net.forward_moves(obs, cand)
                row, col = cand.row.numpy(), cand.col.numpy()
                target = padded(data.target[moves], row, col, len(sub), cand.width)
                hits.append((logits.argmax(1) == target.argmax(1)).numpy())
                ce.append(-(target.softmax(1) * logits.log_softmax(1)).sum(1).numpy())
                if data.search is not None:
                    regret.append(search_regret(data.search[moves], row, col, len(sub),
                                                cand.width, logits.argmax(1).numpy()))
        out = {"teacher_agreement": float(np.concatenate(hits).mean()),
               "cross_entropy": float(np.concatenate(ce).mean())}
        if regret and sum(map(len, regret)):
            out["search_regret"] = float(np.concatenate(regret).mean())
        return out

    def score(self, data: Decisions, idx: np.ndarray) -> dict[str, float]:
        return self._figures(self.net, data, idx)

    def policy_parts(self, training: bool) -> dict[str, Any]:
        """The student and the last-deal scorer; a training checkpoint also the teacher."""
        ck = policy_checkpoint(self.net, self.rules.to_dict(), {}, last_deal=self.last_deal)
        if training:
            ck["teacher"] = {"net": dict(ck["net"]), "model": {
                k: v.detach().cpu().clone() for k, v in self.teacher.state_dict().items()}}
        return ck

    def restore(self, ck: dict[str, Any]) -> None:
        self.net.load_state_dict(ck["model"])

    def eval_policy(self) -> tuple[PolicyNet, LastDealNet | None]:
        return self.net, self.last_deal


def check_ready(cfg: StageConfig) -> None:
    """What can fail before the run folder exists: the starting checkpoint."""
    load_checkpoint(init_path(cfg))


def build(cfg: StageConfig, run_dir: Path, log: Log = print, **kw: Any) -> DistillStage:
    """A new stage from the PPO network and the last-deal scorer (if any) of
    ``init_from``."""
    ck = load_checkpoint(init_path(cfg))
    return DistillStage(cfg, run_dir, build_model(ck), build_last_deal(ck), log=log, **kw)


def resume(ck: dict[str, Any], cfg: StageConfig, run_dir: Path, log: Log = print,
           **kw: Any) -> DistillStage:
    """The stage of a training checkpoint (which holds its teacher), where it stopped."""
    if "teacher" not in ck:
        raise CheckpointError(f"checkpoint {ck.get('path')!r} is damaged: a suit_distill "
                              f"training checkpoint holds its teacher network, this one "
                              f"has none")
    teacher = build_model({**ck, **ck["teacher"]})
    stage = DistillStage(cfg, run_dir, teacher, build_last_deal(ck), log=log, **kw)
    stage.load(ck)
    return stage


KIND = StageKind(
    name="distill",
    help="distils into the network its suit-averaged self and, with distill.search, a "
    "search's move values (expert iteration when the search is the network's own: "
    "self:search=on)",
    sections={"fit": FitSection, "distill": DistillSection}, check=check,
    check_ready=check_ready, build=build, resume=resume)
"""The stage kind, as ``scopa_train.stages`` registers it."""

__all__ = ["KIND", "Decisions", "DistillSection", "DistillStage", "add_search_values",
           "averaged_logits", "build", "check", "check_ready", "collect_decisions", "filled",
           "resume", "search_regret", "search_values_file"]
