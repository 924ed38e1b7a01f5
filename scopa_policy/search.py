"""Search with the network: determinized network rollouts (``pretrained:search=on``).

At a decision with more than one legal move (outside the last deal of a 2-player hand,
which the exact solver plays, ``endgame=exact``), ``SearchAgent``:

1. **Samples worlds.** ``worlds`` deals of the cards the seat has not seen, consistent
   with its information set (``agents.baselines.pimc.sample_worlds``: the seat's RNG and
   ``info.unseen``, never a hidden card); identical deals are merged, weighted.
2. **Rolls each move out in each world.** The move is applied, then every seat plays the
   policy network's greedy (argmax) move on its *own* information set in that world (the
   observation of the seat to move: the rollout policy does not see the sampled hands
   of the others), to the end of the hand (``horizon=end``) or for ``horizon`` plies,
   where the network's value head estimates the rest. Every move is rolled out in the
   same worlds (common random numbers). All rollouts of a batch of decisions advance
   together in one ``scopa_env.vector.VectorScopaEnv``, one network pass per ply.
3. **Chooses** the move of the best mean hand margin for the seat's team (the engine's
   score), plus ``prior`` x the network's log-probability of the move; ties go to the
   network's preferred move.

``gap=G`` searches only the network's close calls (its best two logits less than ``G``
apart; the other decisions play the network's move) and ``top=K`` rolls out only the
network's ``K`` best moves. The rollouts' network runs in float32 (``precision``);
``reference_margins`` is the same rollout one game at a time with the single-game
engine, the reference that the batched path is tested equal to.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

import numpy as np

from agents.baselines.pimc import sample_worlds
from scopa_env.game import GameState, apply
from scopa_env.observation import InfoSet, encode, encode_info, info_set
from scopa_env.rules import Rules
from scopa_env.vector import VectorScopaEnv

from .modes import SearchParams
from .network import PolicyNet, one_blas_thread

DEFAULT_REWARD_SCALE = 0.25  # the shipped weights' value head: hand margin x 0.25


class RootPolicy(Protocol):
    """What the search needs of the network agent (``scopa_policy.agent.PolicyAgent``)."""

    net: PolicyNet
    meta: dict[str, Any]

    def act(self, info: InfoSet) -> int: ...

    def logits(self, info: InfoSet) -> np.ndarray: ...


class RolloutPolicy:
    """The policy network's greedy move and its value head for many decisions at once, in
    numpy of ``dtype`` (float32: about twice as fast as the agent's float64)."""

    def __init__(self, net: PolicyNet, value_scale: float = DEFAULT_REWARD_SCALE,
                 dtype: type = np.float32) -> None:
        from .features import action_inputs_np

        self._feats = action_inputs_np
        scorer = net.numpy_scorer()
        self.dtype = dtype

        def cast(wb: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
            return wb[0].astype(dtype), wb[1].astype(dtype)

        self.encoder = [cast(x) for x in scorer.encoder]
        self.state, self.action = cast(scorer.state), cast(scorer.action)
        self.hidden, self.out = cast(scorer.hidden), cast(scorer.out)
        w = net.value_head.weight.detach().cpu().double().numpy().T
        b = net.value_head.bias.detach().cpu().double().numpy()
        self.value_w = (w / value_scale).astype(dtype)
        self.value_b = (b / value_scale).astype(dtype)

    def _embed(self, obs: np.ndarray) -> np.ndarray:
        h = np.asarray(obs, self.dtype)
        for w, b in self.encoder:
            h = np.maximum(h @ w + b, 0)
        return h

    def picks(self, obs: np.ndarray, ids: np.ndarray, valid: np.ndarray) -> np.ndarray:
        """The first best legal id (B,) of each decision: observations ``obs`` (B, 216),
        legal ids ``ids`` (B, L) padded, ``valid`` (B, L)."""
        row, col = np.nonzero(valid)
        flat = ids[row, col]
        with one_blas_thread():
            h = self._embed(obs)
            pre = (h @ self.state[0] + self.state[1])[row]
            pre += self._feats(obs, flat, row).astype(self.dtype) @ self.action[0] + self.action[1]
            z = np.maximum(np.maximum(pre, 0) @ self.hidden[0] + self.hidden[1], 0)
            score = (z @ self.out[0] + self.out[1])[:, 0]
        table = np.full(valid.shape, -np.inf, self.dtype)
        table[row, col] = score
        return ids[np.arange(len(ids)), table.argmax(1)]

    def values(self, obs: np.ndarray) -> np.ndarray:
        """The value head (B,) of observations (B, 216), in hand points for the observer's
        team (divided by the training's reward scale)."""
        with one_blas_thread():
            return (self._embed(obs) @ self.value_w + self.value_b)[:, 0].astype(np.float64)


def value_scale(meta: dict[str, Any]) -> float:
    """The reward scale a checkpoint's value head was trained with (its config's
    ``reward_scale``; the shipped weights' 0.25 when it does not say)."""
    cfg = meta.get("config") or {}
    scale = cfg.get("reward_scale", (cfg.get("ppo") or {}).get("reward_scale"))
    return float(scale) if scale else DEFAULT_REWARD_SCALE


@lru_cache(maxsize=32)
def _env(rules: Rules, n: int) -> VectorScopaEnv:
    """A vector environment of ``n`` games for rollouts (built once per process and
    size: building one costs about 10 ms; ``load_states`` overwrites every game)."""
    return VectorScopaEnv(n, rules=rules, reward="points", episode="hand", seed=0,
                          records=False)


def _size(n: int) -> int:
    """The environment size that holds ``n`` rollouts: a multiple of 16 (or of 128
    above 512), so that few sizes are built."""
    step = 16 if n <= 512 else 128
    return -(-n // step) * step


def rollout_margins(policy: RolloutPolicy, states: Sequence[GameState], teams: Sequence[int],
                    horizon: int | None = None) -> np.ndarray:
    """The hand margin (team ``teams[i]``'s points minus the other's) of each state
    played on by ``policy`` for every seat, each on its own information set: to the end
    of the hand, or for ``horizon`` plies and then the value head of the seat to move.
    All states advance together (one vector environment, one network pass a ply); the
    states (same rules, hands not over) are not changed."""
    n = len(states)
    out = np.zeros(n)
    if not n:
        return out
    size = _size(n)
    env = _env(states[0].rules, size)
    env.load_states(range(size), [states[i] if i < n else states[0] for i in range(size)])
    team = np.zeros(size, np.int64)
    team[:n] = teams
    live = np.zeros(size, bool)
    live[:n] = True
    rows = np.arange(size)
    plies = 0
    while live.any():
        if horizon is not None and plies >= horizon:
            at = np.flatnonzero(live)
            v = policy.values(env.observe()[at])
            out[at] = np.where(env.to_move[at] % 2 == team[at], v, -v)
            break
        ids, valid = env.legal_ids, env.legal_valid
        pick = ids[:, 0].copy()
        choose = np.flatnonzero(live & (env.legal_count > 1))
        if len(choose):
            pick[choose] = policy.picks(env.observe()[choose], ids[choose], valid[choose])
        res = env.step(pick)
        ended = np.flatnonzero(live & res.hand_over)
        if len(ended):
            pts = res.hand_points[ended]
            t = team[ended]
            out[ended] = pts[rows[:len(ended)], t] - pts[rows[:len(ended)], 1 - t]
            live[ended] = False
        plies += 1
    return out[:n]


def reference_margins(policy: RolloutPolicy, states: Sequence[GameState],
                      teams: Sequence[int], horizon: int | None = None) -> np.ndarray:
    """``rollout_margins`` one game and one decision at a time, with the single-game
    engine (``apply``, ``info_set``): the reference the batched path equals."""
    out = []
    for st, team in zip(states, teams, strict=True):
        s = st.copy()
        plies = 0
        while True:
            if horizon is not None and plies >= horizon:
                v = float(policy.values(encode(s, s.to_move)[None])[0])
                out.append(v if s.to_move % 2 == team else -v)
                break
            legal = s.legal_actions()
            a = legal[0]
            if len(legal) > 1:
                info = info_set(s, s.to_move)
                ids = np.asarray(legal, np.int64)[None]
                a = int(policy.picks(encode_info(info)[None], ids, np.ones(ids.shape, bool))[0])
            res = apply(s, a, False, None, False)
            plies += 1
            if res.hand is not None:
                pts = [e["points"]["total"] for e in res.hand.score]
                out.append(float(pts[team] - pts[1 - team]))
                break
    return np.asarray(out)


def log_probs(logits: np.ndarray) -> np.ndarray:
    """Log-softmax of one decision's logits."""
    top = logits.max()
    return logits - top - np.log(np.exp(logits - top).sum())


@dataclass
class _Plan:
    """One searched decision: the moves rolled out (places in ``legal_actions``), the
    worlds' weights and where its rollouts sit in the batch."""

    info: InfoSet
    logits: np.ndarray
    moves: list[int]
    weights: list[int]
    start: int
    terminal: dict[int, float]  # rollout place -> margin, for moves that end the hand


class SearchAgent:
    """The network with determinized rollouts at play time (module docstring).

    ``policy_for(rules)``: the network agent playing ``rules`` (``PolicyAgent``; it plays
    every decision the search does not: lone moves, the network's sure calls under
    ``gap``, and, with ``endgame="exact"``, the last deal of a 2-player hand);
    ``fingerprint(rules)``: its weights' digest (``PolicyAgent.fingerprint``), for
    ``fingerprint``; ``precision``: the rollouts' float type."""

    def __init__(self, policy_for: Callable[[Rules], RootPolicy], params: SearchParams,
                 seed: int | None = None, spec: str = "search",
                 precision: type = np.float32,
                 fingerprint: Callable[..., str] | None = None) -> None:
        self.policy_for = policy_for
        self._inner_fingerprint = fingerprint
        self.params = params
        self.spec = spec
        self.rng = random.Random(seed)
        self.precision = precision
        self._rollout: dict[int, RolloutPolicy] = {}
        self.searched = 0  # decisions searched
        self.rollouts = 0  # rollouts played

    def rollout_policy(self, policy: RootPolicy) -> RolloutPolicy:
        got = self._rollout.get(id(policy.net))
        if got is None:
            got = self._rollout[id(policy.net)] = RolloutPolicy(
                policy.net, value_scale(policy.meta), self.precision)
        return got

    def _searches(self, info: InfoSet) -> bool:
        """Whether the decision is searched (before the ``gap`` test): a choice, and not
        the last deal of a 2-player hand (every card known: the network agent's)."""
        return len(info.legal_actions) > 1 and not (info.players == 2 and not info.deck_count)

    def act(self, info: InfoSet) -> int:
        return self.act_batch([info])[0]

    def act_batch(self, infos: list[InfoSet]) -> list[int]:
        """One legal id per information set; the searched decisions of each rule set
        roll out together."""
        out: list[int | None] = [None] * len(infos)
        groups: dict[Rules, list[int]] = {}
        for k, info in enumerate(infos):
            if not info.legal_actions:
                raise ValueError(f"seat {info.seat} has no legal move to choose from")
            if self._searches(info):
                groups.setdefault(info.rules, []).append(k)
            else:
                out[k] = int(self.policy_for(info.rules).act(info))
        for rules, ks in groups.items():
            for k, a in zip(ks, self._search(rules, [infos[k] for k in ks]), strict=True):
                out[k] = a
        return [int(a) for a in out if a is not None]

    def move_values(self, info: InfoSet) -> np.ndarray:
        """The mean rolled-out margin of every legal move (NaN for moves ``top`` leaves
        out), in ``info.legal_actions`` order, from this agent's next worlds."""
        policy = self.policy_for(info.rules)
        plan, margins = self._roll(policy, [info])
        return self._means(plan[0], margins)

    def _roll(self, policy: RootPolicy, infos: list[InfoSet]
              ) -> tuple[list[_Plan], np.ndarray]:
        p = self.params
        plans: list[_Plan] = []
        states: list[GameState] = []
        teams: list[int] = []
        for info in infos:
            logits = np.asarray(policy.logits(info), np.float64)
            order = np.argsort(-logits, kind="stable")
            moves = sorted(order[:p.top].tolist()) if p.top else list(range(len(logits)))
            worlds = sample_worlds(info, p.worlds, self.rng)
            plan = _Plan(info, logits, moves, [w for _, w in worlds], len(states), {})
            for world, _ in worlds:
                for m in moves:
                    s = world.copy()
                    res = apply(s, int(info.legal_actions[m]), False, None, False)
                    if res.hand is not None:
                        pts = [e["points"]["total"] for e in res.hand.score]
                        plan.terminal[len(states)] = float(pts[info.team] - pts[1 - info.team])
                        s = world  # a placeholder rollout (its margin is replaced)
                    states.append(s)
                    teams.append(info.team)
            plans.append(plan)
        margins = rollout_margins(self.rollout_policy(policy), states, teams, p.horizon)
        for plan in plans:
            for at, v in plan.terminal.items():
                margins[at] = v
        self.rollouts += len(states)
        return plans, margins

    @staticmethod
    def _means(plan: _Plan, margins: np.ndarray) -> np.ndarray:
        k = len(plan.moves)
        m = margins[plan.start:plan.start + k * len(plan.weights)].reshape(-1, k)
        w = np.asarray(plan.weights, np.float64)
        out = np.full(len(plan.logits), np.nan)
        out[plan.moves] = w @ m / w.sum()
        return out

    def _search(self, rules: Rules, infos: list[InfoSet]) -> list[int]:
        policy = self.policy_for(rules)
        p = self.params
        picks: list[int | None] = [None] * len(infos)
        todo = []
        for j, info in enumerate(infos):
            if math.isfinite(p.gap):
                logits = np.asarray(policy.logits(info), np.float64)
                top2 = np.sort(logits)[-2:]
                if top2[1] - top2[0] >= p.gap:
                    picks[j] = int(info.legal_actions[int(np.argmax(logits))])
                    continue
            todo.append(j)
        if todo:
            plans, margins = self._roll(policy, [infos[j] for j in todo])
            self.searched += len(plans)
            for j, plan in zip(todo, plans, strict=True):
                score = self._means(plan, margins) + p.prior * log_probs(plan.logits)
                score = np.where(np.isnan(score), -np.inf, score)
                best = np.flatnonzero(score == score.max())
                pick = best[int(np.argmax(plan.logits[best]))]  # ties: the network's choice
                picks[j] = int(plan.info.legal_actions[pick])
        return [int(a) for a in picks if a is not None]

    def fingerprint(self, rules: Rules | None = None) -> str:
        """A digest of the search settings and the network agent's fingerprint."""
        h = hashlib.sha256(f"search {self.params} {self.precision.__name__}".encode())
        if self._inner_fingerprint is not None:
            h.update(self._inner_fingerprint(rules).encode())
        return h.hexdigest()[:16]

    def __repr__(self) -> str:
        return f"<SearchAgent {self.spec}>"


__all__ = ["RolloutPolicy", "SearchAgent", "SearchParams", "log_probs",
           "reference_margins", "rollout_margins", "value_scale"]
