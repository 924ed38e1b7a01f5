"""Rollouts from the batched environment, with an opponent pool, and GAE.

Scopa is turn-based: in each game only the seat to move acts. Every (game, seat)
controlled by the learner is one *stream* of that seat's own decisions; the reward a
seat receives from anyone's move is credited to the seat's latest decision, and the
successor of a decision is the same seat's next decision (its value bootstraps the
advantage). In 4-player games the partners share the policy and, through the
environment's team reward, the reward.

Each rollout deals fresh games (``env.reset(seed=...)`` with a seed derived from the
run seed and the update number), assigns each game an opponent from the pool (the
current policy — then both sides are learner seats —, a past snapshot, or a baseline
agent, by the configured weights), and plays ``rollout_steps`` moves per game. Open
decisions at the end are bootstrapped by playing on until each open seat moves again
(those extra moves are not trained on); with one-hand episodes the rollout length is a
whole number of hands, so nothing is left open.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import torch

from scopa_env.observation import OBS_DIM
from scopa_env.play import has_reset, start_deal
from scopa_policy.features import Candidates
from scopa_policy.network import PolicyNet

SELF, PAST = "self", "past"


class Teacher(Protocol):
    """Exact move values for some decisions (``agents.baselines.endgame.EndgameSolver``)."""

    def label_moves(self, obs: np.ndarray, ids: np.ndarray, valid: np.ndarray
                    ) -> np.ndarray: ...

    def clear(self) -> None: ...


# (kind, env, games, rng) -> the baseline's catalogue ids for the seat to move in games,
# or None where the kind has no batched form (then per-game agents play)
BatchedBaseline = Callable[[str, Any, np.ndarray, np.random.Generator], np.ndarray | None]


@dataclass
class Batch:
    """Learner decisions of one rollout, flat: T decisions and their M legal moves.

    Decision ``t``'s legal moves are rows ``move_start[t] : move_start[t] +
    move_count[t]`` of ``feats`` (their move features, in legal-list order);
    ``actions[t]`` is the index of the chosen move in that list."""

    obs: torch.Tensor  # (T, 216)
    feats: torch.Tensor  # (M, ACTION_DIM)
    move_start: torch.Tensor  # (T,) int64
    move_count: torch.Tensor  # (T,) int64
    actions: torch.Tensor  # (T,) index into the legal list
    logprobs: torch.Tensor  # (T,)
    values: torch.Tensor  # (T,)
    advantages: torch.Tensor  # (T,)
    returns: torch.Tensor  # (T,)
    # the exact teacher's targets (``endgame_coef``): decisions of the last deal of a
    # 2-player hand with a choice are ``taught``; ``move_regret`` (M,) is each of their
    # moves' loss in hand points against the best one (0 for the best; 0 elsewhere)
    taught: torch.Tensor  # (T,) bool
    move_regret: torch.Tensor  # (M,)
    # each decision's round so far (``VectorScopaEnv.round_rows``: the others' moves a
    # search reads); (T, 0) unless the collector keeps them (``keep_rounds``)
    rounds: torch.Tensor  # (T, W) int64

    def __len__(self) -> int:
        return int(self.obs.shape[0])

    def candidates(self, idx: torch.Tensor) -> Candidates:
        """The legal moves of decisions ``idx`` (a minibatch)."""
        return Candidates.gather(self.feats, self.move_start[idx], self.move_count[idx])

    def padded(self, per_move: torch.Tensor, idx: torch.Tensor, cand: Candidates
               ) -> torch.Tensor:
        """A per-move array (M,) for decisions ``idx`` laid out like their logits
        (len(idx), cand.width), zeros where a decision has fewer moves."""
        out = torch.zeros((len(idx), cand.width), dtype=per_move.dtype,
                          device=per_move.device)
        out[cand.row, cand.col] = per_move[self.move_start[idx][cand.row] + cand.col]
        return out

    def to(self, device: torch.device) -> Batch:
        return Batch(**{k: v.to(device) for k, v in self.__dict__.items()})


@dataclass
class RolloutStats:
    env_steps: int = 0
    seconds: float = 0.0
    policy_seconds: float = 0.0  # move features + policy forward (learner and past)
    opponent_seconds: float = 0.0  # baseline agents choosing moves
    teacher_seconds: float = 0.0  # the exact teacher solving the learner's last deals
    episodes: int = 0
    # per opponent kind: learner side's (own points, other points) per finished hand
    hand_points: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    episode_returns: dict[str, list[float]] = field(default_factory=dict)


def best_per_decision(values: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    """The best of each decision's move ``values`` (M,) (NaN: unknown, left out);
    ``owner`` (M,) names each move's decision among ``n``; -inf where none is known."""
    known = ~np.isnan(values)
    best = np.full(n, -np.inf)
    np.maximum.at(best, owner[known], values[known])
    return best


class _Store:
    """Learner decisions in arrays of a fixed capacity, added one env step at a time
    (so each step's decisions are a contiguous range), with stream links: the index
    of the same seat's next decision and that decision's value."""

    def __init__(self, capacity: int, obs_dim: int, round_width: int = 0) -> None:
        self.obs = np.zeros((capacity, obs_dim), np.float32)
        self.rounds = np.zeros((capacity, round_width), np.int64)
        self.actions = np.zeros(capacity, np.int64)
        self.logprobs = np.zeros(capacity, np.float32)
        self.values = np.zeros(capacity, np.float32)
        self.move_count = np.zeros(capacity, np.int64)
        self.rewards = np.zeros(capacity, np.float64)
        self.dones = np.zeros(capacity, bool)
        self.next_idx = np.full(capacity, -1, np.int64)
        self.next_value = np.zeros(capacity, np.float64)
        self.feats: list[torch.Tensor] = []
        # (first move's row in the flat move store, exact values of the moves from there)
        self.move_values: list[tuple[int, np.ndarray]] = []
        self.m = 0  # moves stored
        self.step_ends: list[int] = []  # decisions stored after each rollout step
        self.n = 0

    def add(self, obs: np.ndarray, cand: Candidates, actions: np.ndarray,
            logprobs: np.ndarray, values: np.ndarray,
            move_values: np.ndarray | None = None) -> np.ndarray:
        """Store k decisions; ``move_values`` (M,): the exact teacher's value of each
        move in points (NaN for decisions it does not teach)."""
        k = len(actions)
        sl = slice(self.n, self.n + k)
        self.obs[sl], self.actions[sl] = obs, actions
        self.logprobs[sl], self.values[sl] = logprobs, values
        self.move_count[sl] = np.bincount(cand.row.numpy(), minlength=k)
        self.feats.append(cand.feats)
        if move_values is not None:
            self.move_values.append((self.m, move_values))
        self.n += k
        self.m += len(cand.row)
        return np.arange(sl.start, sl.stop)

    def end_step(self) -> None:
        self.step_ends.append(self.n)

    def finish(self, gamma: float, lam: float, reward_scale: float = 1.0) -> Batch:
        """GAE over the streams, vectorised per rollout step: successors are always
        stored at a later step, so steps are processed last to first. A taught decision's
        value target is its exact value (x ``reward_scale``) instead of the GAE return."""
        n = self.n
        values = self.values[:n].astype(np.float64)
        nonterminal = 1.0 - self.dones[:n]
        delta = self.rewards[:n] + gamma * nonterminal * self.next_value[:n] - values
        nxt = self.next_idx[:n]
        adv = np.zeros(n + 1, np.float64)  # adv[n] = 0: "no successor" (index -1)
        ends = [0, *self.step_ends]
        for a, b in zip(reversed(ends[:-1]), reversed(ends[1:]), strict=True):
            if b > a:
                adv[a:b] = delta[a:b] + gamma * lam * nonterminal[a:b] * adv[nxt[a:b]]
        adv = adv[:n]
        count = self.move_count[:n]
        returns = adv + values
        taught = np.zeros(n, bool)
        regret = np.zeros(self.m)
        if self.move_values:
            mv = np.full(self.m, np.nan)
            for start, vals in self.move_values:
                mv[start:start + len(vals)] = vals
            owner = np.repeat(np.arange(n), count)  # each move's decision
            best = best_per_decision(mv, owner, n)
            taught = best > -np.inf
            returns[taught] = best[taught] * reward_scale
            regret = np.where(np.isnan(mv), 0.0, best[owner] - mv)
        return Batch(
            obs=torch.from_numpy(self.obs[:n]),
            # numpy's copy: torch.cat spreads it over threads and waits for the slowest
            feats=(torch.from_numpy(np.concatenate([f.numpy() for f in self.feats]))
                   if self.feats else torch.zeros((0, 0))),
            move_start=torch.from_numpy(np.cumsum(count) - count),
            move_count=torch.from_numpy(count.copy()),
            actions=torch.from_numpy(self.actions[:n].copy()),
            logprobs=torch.from_numpy(self.logprobs[:n].copy()),
            values=torch.from_numpy(self.values[:n].copy()),
            advantages=torch.from_numpy(adv.astype(np.float32)),
            returns=torch.from_numpy(returns.astype(np.float32)),
            taught=torch.from_numpy(taught),
            move_regret=torch.from_numpy(regret.astype(np.float32)),
            rounds=torch.from_numpy(self.rounds[:n].copy()))


def policy_step(net: PolicyNet, obs: np.ndarray, ids: np.ndarray, valid: np.ndarray,
                sample: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray, Candidates]:
    """Batched forward on the network's device: (chosen index into each legal list, its
    log-prob, value, the decisions' candidates with their move features on the CPU)."""
    device = next(net.parameters()).device
    cand = Candidates.from_padded(obs, ids, valid)
    with torch.inference_mode():
        logits, value = net.forward_moves(torch.from_numpy(obs).to(device), cand.to(device))
        logp_all = torch.log_softmax(logits, -1)
        if sample:
            choice = torch.multinomial(logp_all.exp(), 1).squeeze(-1)
        else:
            choice = logits.argmax(-1)
        logp = logp_all.gather(1, choice[:, None]).squeeze(1)
    return choice.cpu().numpy(), logp.cpu().numpy(), value.cpu().numpy(), cand


def learner_moves(net: PolicyNet, store: _Store, last: np.ndarray, games: np.ndarray,
                  seats: np.ndarray, obs: np.ndarray, ids: np.ndarray, valid: np.ndarray,
                  draining: bool, teacher: Teacher | None = None) -> np.ndarray:
    """The learner's moves in ``games`` (``seats[j]`` to move in ``games[j]``), sampled
    from the policy. Each decision is the successor of the same seat's open one: it
    gives that one its next value and, unless ``draining`` (past the rollout's end, only
    bootstrapping), is stored as the seat's new open decision, with the ``teacher``'s
    exact move values where it has them."""
    choice, logp, value, cand = policy_step(net, obs[games], ids[games], valid[games])
    prev = last[games, seats]
    linked = prev >= 0
    store.next_value[prev[linked]] = value[linked]
    if draining:
        last[games, seats] = -1
    else:
        taught = (None if teacher is None
                  else teacher.label_moves(obs[games], ids[games], valid[games]))
        new = store.add(obs[games], cand, choice, logp, value, taught)
        store.next_idx[prev[linked]] = new[linked]
        last[games, seats] = new
    return ids[games, choice]


def policy_moves(net: PolicyNet, games: np.ndarray, obs: np.ndarray, ids: np.ndarray,
                 valid: np.ndarray) -> np.ndarray:
    """Moves sampled from a policy that is not learning (a past snapshot) in ``games``."""
    choice, _, _, _ = policy_step(net, obs[games], ids[games], valid[games])
    return ids[games, choice]


def credit_rewards(store: _Store, last: np.ndarray, out: Any, reward_scale: float
                   ) -> np.ndarray:
    """Credit each seat's reward of this env step (``out``) to its open decision, scaled;
    an episode's end closes its games' open decisions (terminal: no successor value).
    Returns the step's rewards (N, players)."""
    rewards = np.asarray(out.rewards, np.float64)
    open_ = last >= 0
    store.rewards[last[open_]] += rewards[open_] * reward_scale
    ended = np.flatnonzero(np.asarray(out.terminated))
    if len(ended):
        closing = last[ended]
        closing = closing[closing >= 0]
        store.dones[closing] = True
        store.next_value[closing] = 0.0
        last[ended] = -1
    return rewards


def tally(stats: RolloutStats, out: Any, kinds: np.ndarray, report_team: np.ndarray,
          ep_return: np.ndarray) -> None:
    """Add this env step's finished episodes (returns, which are then reset) and hands
    (the reported learner side's points and the other side's) to ``stats``, by
    opponent kind."""
    ended = np.flatnonzero(np.asarray(out.terminated))
    if len(ended):
        stats.episodes += len(ended)
        for kind in np.unique(kinds[ended]).tolist():
            sel = ended[kinds[ended] == kind]
            stats.episode_returns.setdefault(kind, []).extend(ep_return[sel].tolist())
        ep_return[ended] = 0.0
    over = np.flatnonzero(np.asarray(out.hand_over))
    if len(over):
        pts = np.asarray(out.hand_points)[over]
        team = report_team[over]
        own, other = pts[np.arange(len(over)), team], pts[np.arange(len(over)), 1 - team]
        for kind in np.unique(kinds[over]).tolist():
            sel = kinds[over] == kind
            stats.hand_points.setdefault(kind, []).extend(
                zip(own[sel].tolist(), other[sel].tolist(), strict=True))


class RolloutCollector:
    """Plays rollouts in a ``VectorScopaEnv`` for the current policy.

    ``make_baseline(spec, seed)`` builds a per-game agent (``act(info)``);
    ``batched`` (optional) plays a baseline kind for many games at once and returns
    None for kinds it does not know, which then fall back to per-game agents."""

    def __init__(self, env: Any, reward_scale: float, make_baseline: Any,
                 batched: BatchedBaseline | None = None, teacher: Teacher | None = None,
                 keep_rounds: bool = False) -> None:
        self.env = env
        self.keep_rounds = keep_rounds  # keep each decision's round row (Batch.rounds)
        self.teacher = teacher  # exact move values for the learner's decisions it knows
        self.players: int = env.players
        self.reward_scale = reward_scale
        self.make_baseline = make_baseline  # (spec, seed) -> agent with .act(info)
        self.batched = batched

    def collect(self, net: PolicyNet, past_net: PolicyNet | None, kinds: list[str],
                learner_team: np.ndarray, steps: int, reset_seed: int, agent_seed: int,
                gamma: float, lam: float) -> tuple[Batch, RolloutStats]:
        """One rollout. ``kinds[i]``: opponent kind of game ``i``; ``learner_team[i]``:
        the learner's team there (ignored for self-play games, where both are)."""
        t0 = time.perf_counter()
        env, n, p = self.env, self.env.num_envs, self.players
        env.reset(seed=reset_seed)
        kinds_arr = np.asarray(kinds)
        seats = np.arange(p)
        learner = np.where((kinds_arr == SELF)[:, None], True,
                           (seats[None, :] % 2) == np.asarray(learner_team)[:, None])
        baseline_kinds = sorted(set(kinds) - {SELF, PAST})
        baseline_games = {k: np.flatnonzero(kinds_arr == k) for k in baseline_kinds}
        agent_rng = np.random.default_rng(agent_seed)
        per_game: dict[int | str, Any] = {}  # baselines without a batched form
        # the learner seat whose reward is reported for each game (lowest learner seat)
        report_seat = np.argmax(learner, axis=1)
        report_team = report_seat % 2
        width = env.round_width if self.keep_rounds else 0
        store = _Store(n * steps, OBS_DIM, width)
        last = np.full((n, p), -1, np.int64)  # open decision of each (game, seat)
        stats = RolloutStats()
        ep_return = np.zeros(n)
        rows = np.arange(n)
        t = 0
        while True:
            draining = t >= steps
            if draining and not (last >= 0).any():
                break
            if t >= steps + 64 * p:  # a seat that never moves again: bootstrap with 0
                break
            obs = np.asarray(env.observe(), np.float32)
            ids = np.asarray(env.legal_ids, np.int64)
            valid = np.asarray(env.legal_valid, bool)
            seat = np.asarray(env.to_move, np.int64)
            is_learner = learner[rows, seat]
            actions = np.zeros(n, np.int64)
            tp = time.perf_counter()
            li = np.flatnonzero(is_learner)
            if len(li):
                if width and not draining:  # learner_moves stores li's decisions in order
                    store.rounds[store.n:store.n + len(li)] = env.round_rows(li)
                taught_before = getattr(self.teacher, "seconds", 0.0)
                actions[li] = learner_moves(net, store, last, li, seat[li], obs, ids, valid,
                                            draining, self.teacher)
                spent = getattr(self.teacher, "seconds", 0.0) - taught_before
                stats.teacher_seconds += spent
                tp += spent  # policy_seconds leaves the teacher out
            if not draining:
                store.end_step()
            pi = np.flatnonzero(~is_learner & (kinds_arr == PAST))
            if len(pi):
                assert past_net is not None
                actions[pi] = policy_moves(past_net, pi, obs, ids, valid)
            to = time.perf_counter()
            stats.policy_seconds += to - tp
            for kind, games in baseline_games.items():
                g = games[~is_learner[games]]
                if len(g):
                    actions[g] = self._baseline_moves(kind, g, agent_seed, agent_rng, per_game)
            stats.opponent_seconds += time.perf_counter() - to
            out = env.step(actions)
            t += 1
            stats.env_steps += n
            rewards = credit_rewards(store, last, out, self.reward_scale)
            ep_return += rewards[rows, report_seat]
            tally(stats, out, kinds_arr, report_team, ep_return)
        batch = store.finish(gamma, lam, self.reward_scale)
        if self.teacher is not None:
            self.teacher.clear()
        stats.seconds = time.perf_counter() - t0
        return batch, stats

    def _baseline_moves(self, kind: str, games: np.ndarray, agent_seed: int,
                        rng: np.random.Generator, per_game: dict[int | str, Any]
                        ) -> np.ndarray:
        """The moves of baseline ``kind`` in ``games`` (its seat to move in each)."""
        if self.batched is not None:
            moves = self.batched(kind, self.env, games, rng)
            if moves is not None:
                return moves
        shared = per_game.get(kind)
        if shared is None:
            shared = per_game[kind] = self.make_baseline(kind, agent_seed)
        if not has_reset(shared):  # no state between moves: one instance plays every game
            infos = [self.env.info_set(i) for i in games.tolist()]
            batch = getattr(shared, "act_batch", None)
            return np.asarray(batch(infos) if batch is not None
                              else [shared.act(info) for info in infos], np.int64)
        out = np.zeros(len(games), np.int64)
        for j, i in enumerate(games.tolist()):  # an agent with reset(): one per game
            agent, dealt = per_game.get(i) or (
                self.make_baseline(kind, agent_seed * 100_003 + i), None)
            deal = (int(self.env.match_seeds[i]), int(self.env.hand_index[i]))
            if deal != dealt:
                start_deal([agent])  # its reset() before each deal
            per_game[i] = (agent, deal)
            out[j] = agent.act(self.env.info_set(i))
        return out


def sample_opponents(rng: np.random.Generator, weights: dict[str, float], n: int,
                     have_past: bool) -> list[str]:
    kinds = [k for k, w in weights.items() if w > 0 and (k != PAST or have_past)]
    if not kinds:
        kinds = [SELF]
    w = np.array([weights[k] for k in kinds], np.float64)
    picks = rng.choice(len(kinds), size=n, p=w / w.sum())
    return [kinds[j] for j in picks]



def rollout_length(cfg: Any) -> int:
    """Moves per game per rollout of a stage config: ``rollouts.rollout_steps``, rounded
    up to whole hands with one-hand episodes (every hand of a rule set has exactly
    40 - table_size moves)."""
    r = cfg.rollouts
    if r.episode != "hand":
        return r.rollout_steps
    per_hand = 40 - cfg.make_rules().table_size
    return per_hand * max(1, math.ceil(r.rollout_steps / per_hand))


def batched_baseline(kind: str, env: Any, games: np.ndarray, rng: np.random.Generator
                     ) -> np.ndarray | None:
    """Baseline moves as array code over the vector env (``agents.baselines.vector_moves``), or None
    for a kind without a batched form (then per-game agents play)."""
    from agents.baselines.vector_moves import BATCHED, batched_actions

    return batched_actions(kind, env, games, rng) if kind in BATCHED else None


def make_teacher(cfg: Any) -> Teacher | None:
    """The exact last-deal teacher of a stage config when ``ppo.endgame_coef`` > 0."""
    if cfg.kind != "ppo" or cfg.ppo.endgame_coef <= 0:
        return None
    from agents.baselines.endgame import EndgameSolver

    return EndgameSolver(cfg.make_rules())
