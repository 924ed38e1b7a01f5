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

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from scopa_env.observation import info_set

from .network import PolicyNet

SELF, PAST = "self", "past"


@dataclass
class Batch:
    """Learner decisions of one rollout, flat (T transitions), padded to width L."""

    obs: torch.Tensor  # (T, 216)
    ids: torch.Tensor  # (T, L) legal catalogue ids (padding: 0)
    valid: torch.Tensor  # (T, L) bool
    actions: torch.Tensor  # (T,) index into the legal list
    logprobs: torch.Tensor  # (T,)
    values: torch.Tensor  # (T,)
    advantages: torch.Tensor  # (T,)
    returns: torch.Tensor  # (T,)

    def __len__(self) -> int:
        return int(self.obs.shape[0])


@dataclass
class RolloutStats:
    env_steps: int = 0
    seconds: float = 0.0
    episodes: int = 0
    # per opponent kind: learner side's (own points, other points) per finished hand
    hand_points: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    episode_returns: dict[str, list[float]] = field(default_factory=dict)


def env_info_set(env: Any, i: int) -> Any:
    """The information set of the seat to move in game ``i`` (for baseline agents)."""
    if hasattr(env, "info_set"):
        return env.info_set(i)
    state = env.states[i]
    return info_set(state, state.to_move)


class _Store:
    """Growing per-step arrays of learner transitions plus stream links."""

    def __init__(self) -> None:
        self.obs: list[np.ndarray] = []
        self.ids: list[np.ndarray] = []
        self.valid: list[np.ndarray] = []
        self.actions: list[np.ndarray] = []
        self.logprobs: list[np.ndarray] = []
        self.values: list[np.ndarray] = []
        self.n = 0
        self.rewards: list[float] = []
        self.dones: list[bool] = []
        self.next_idx: list[int] = []
        self.next_value: list[float] = []

    def add(self, obs: np.ndarray, ids: np.ndarray, valid: np.ndarray, actions: np.ndarray,
            logprobs: np.ndarray, values: np.ndarray) -> np.ndarray:
        k = len(actions)
        self.obs.append(obs)
        self.ids.append(ids)
        self.valid.append(valid)
        self.actions.append(actions)
        self.logprobs.append(logprobs)
        self.values.append(values)
        idx = np.arange(self.n, self.n + k)
        self.n += k
        self.rewards += [0.0] * k
        self.dones += [False] * k
        self.next_idx += [-1] * k
        self.next_value += [0.0] * k
        return idx

    def finish(self, gamma: float, lam: float) -> Batch:
        values = np.concatenate(self.values).astype(np.float64)
        rewards = np.asarray(self.rewards, np.float64)
        dones = np.asarray(self.dones, bool)
        nxt = np.asarray(self.next_idx, np.int64)
        next_value = np.asarray(self.next_value, np.float64)
        adv = np.zeros(self.n, np.float64)
        for i in range(self.n - 1, -1, -1):  # successors always come later
            nonterminal = 0.0 if dones[i] else 1.0
            delta = rewards[i] + gamma * nonterminal * next_value[i] - values[i]
            later = adv[nxt[i]] if nxt[i] >= 0 else 0.0
            adv[i] = delta + gamma * lam * nonterminal * later
        width = max(a.shape[1] for a in self.ids)
        ids = np.zeros((self.n, width), np.int64)
        valid = np.zeros((self.n, width), bool)
        row = 0
        for a, v in zip(self.ids, self.valid, strict=True):
            ids[row:row + len(a), :a.shape[1]] = a
            valid[row:row + len(a), :a.shape[1]] = v
            row += len(a)
        return Batch(
            obs=torch.from_numpy(np.concatenate(self.obs)),
            ids=torch.from_numpy(ids), valid=torch.from_numpy(valid),
            actions=torch.from_numpy(np.concatenate(self.actions).astype(np.int64)),
            logprobs=torch.from_numpy(np.concatenate(self.logprobs).astype(np.float32)),
            values=torch.from_numpy(values.astype(np.float32)),
            advantages=torch.from_numpy(adv.astype(np.float32)),
            returns=torch.from_numpy((adv + values).astype(np.float32)))


def _policy_step(net: PolicyNet, obs: np.ndarray, ids: np.ndarray, valid: np.ndarray,
                 sample: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Batched forward: (chosen index into the legal list, its log-prob, value)."""
    with torch.no_grad():
        o = torch.from_numpy(obs)
        logits, value = net(o, torch.from_numpy(ids), torch.from_numpy(valid))
        logp_all = torch.log_softmax(logits, -1)
        if sample:
            choice = torch.multinomial(logp_all.exp(), 1).squeeze(-1)
        else:
            choice = logits.argmax(-1)
        logp = logp_all.gather(1, choice[:, None]).squeeze(1)
    return choice.numpy(), logp.numpy(), value.numpy()


class RolloutCollector:
    """Plays rollouts in a ``VectorScopaEnv`` for the current policy."""

    def __init__(self, env: Any, reward_scale: float, make_baseline: Any) -> None:
        self.env = env
        self.players: int = env.players
        self.reward_scale = reward_scale
        self.make_baseline = make_baseline  # (spec, seed) -> agent with .act(info)

    def collect(self, net: PolicyNet, past_net: PolicyNet | None, kinds: list[str],
                learner_team: np.ndarray, steps: int, reset_seed: int, agent_seed: int,
                gamma: float, lam: float) -> tuple[Batch, RolloutStats]:
        """One rollout. ``kinds[i]``: opponent kind of game ``i``; ``learner_team[i]``:
        the learner's team there (ignored for self-play games, where both are)."""
        import time

        t0 = time.perf_counter()
        env, n, p = self.env, self.env.num_envs, self.players
        env.reset(seed=reset_seed)
        seats = np.arange(p)
        learner = np.zeros((n, p), bool)
        for i, k in enumerate(kinds):
            learner[i] = True if k == SELF else (seats % 2 == learner_team[i])
        kinds_arr = np.asarray(kinds)
        baselines: dict[int, Any] = {
            i: self.make_baseline(k, agent_seed * 100_003 + i)
            for i, k in enumerate(kinds) if k not in (SELF, PAST)}
        # the learner seat whose reward is reported for each game (lowest learner seat)
        report_seat = np.argmax(learner, axis=1)
        store = _Store()
        last = np.full((n, p), -1, np.int64)  # open transition of each (game, seat)
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
            li = np.flatnonzero(is_learner)
            if len(li):
                choice, logp, value = _policy_step(net, obs[li], ids[li], valid[li])
                actions[li] = ids[li, choice]
                prev = last[li, seat[li]]
                if draining:
                    for j in range(len(li)):
                        if prev[j] >= 0:
                            store.next_value[prev[j]] = float(value[j])
                    last[li, seat[li]] = -1
                else:
                    new = store.add(obs[li], ids[li], valid[li], choice, logp, value)
                    for j in np.flatnonzero(prev >= 0):
                        store.next_idx[prev[j]] = int(new[j])
                        store.next_value[prev[j]] = float(value[j])
                    last[li, seat[li]] = new
            pi = np.flatnonzero(~is_learner & (kinds_arr == PAST))
            if len(pi):
                assert past_net is not None
                choice, _, _ = _policy_step(past_net, obs[pi], ids[pi], valid[pi])
                actions[pi] = ids[pi, choice]
            for i in np.flatnonzero(~is_learner & (kinds_arr != PAST)):
                actions[i] = baselines[int(i)].act(env_info_set(env, int(i)))
            out = env.step(actions)
            t += 1
            stats.env_steps += n
            rewards = np.asarray(out.rewards, np.float64)
            open_ = last >= 0
            if open_.any():
                _credit(store.rewards, last[open_], rewards[open_] * self.reward_scale)
            ep_return += rewards[rows, report_seat]
            for i in np.flatnonzero(np.asarray(out.terminated)):
                for s in range(p):
                    j = last[i, s]
                    if j >= 0:
                        store.dones[j] = True
                        store.next_value[j] = 0.0
                last[i] = -1
                stats.episodes += 1
                stats.episode_returns.setdefault(kinds[i], []).append(float(ep_return[i]))
                ep_return[i] = 0.0
            for i in np.flatnonzero(np.asarray(out.hand_over)):
                team = int(report_seat[i]) % 2
                pts = out.hand_points[i]
                stats.hand_points.setdefault(kinds[i], []).append(
                    (int(pts[team]), int(pts[1 - team])))
        batch = store.finish(gamma, lam)
        stats.seconds = time.perf_counter() - t0
        return batch, stats


def _credit(rewards: list[float], idx: np.ndarray, values: np.ndarray) -> None:
    for j, v in zip(idx.tolist(), values.tolist(), strict=True):
        rewards[j] += v


def sample_opponents(rng: np.random.Generator, weights: dict[str, float], n: int,
                     have_past: bool) -> list[str]:
    kinds = [k for k, w in weights.items() if w > 0 and (k != PAST or have_past)]
    if not kinds:
        kinds = [SELF]
    w = np.array([weights[k] for k in kinds], np.float64)
    picks = rng.choice(len(kinds), size=n, p=w / w.sum())
    return [kinds[j] for j in picks]

