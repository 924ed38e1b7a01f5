"""Search with the network: determinized network rollouts (``pretrained:search=on``).

At a decision with more than one legal move (outside the last deal of a 2-player hand,
which the exact solver plays, ``endgame=exact``), ``SearchAgent``:

1. **Keeps the sure calls.** Where the network's best two logits are ``gap`` or more
   apart it plays the network's move (``gap=inf``: every decision is searched).
2. **Samples worlds.** ``worlds`` deals of the cards the seat has not seen, consistent
   with its information set (``agents.baselines.pimc.sample_worlds``: the seat's RNG and
   ``info.unseen``, never a hidden card); identical deals are merged, weighted.
3. **Rolls each move out in each world.** Each of the network's ``top`` best moves (0:
   every legal move) is played, then every seat plays the policy network's greedy
   (argmax) move on its *own* information set in that world (the observation of the
   seat to move: the rollout policy does not see the sampled hands of the others), for
   ``horizon`` plies (None: to the end of the hand), where the ``leaf`` estimate takes
   over: ``pimc``'s leaf model of the piles plus the scope so far (``piles``) or the
   network's value head (``net``). Every move is rolled out in the same worlds (common
   random numbers). All rollouts of a batch of decisions advance together in one
   ``scopa_env.vector.VectorScopaEnv``, one network pass a ply (``move_margins``).
4. **Chooses** the move of the best mean hand margin for the seat's team (the engine's
   score), plus ``prior`` x the network's log-probability of the move; ties go to the
   network's preferred move.

The rollouts' network runs in float32 (``precision``); ``reference_margins`` is the
same rollout one game at a time with the single-game engine, the reference that the
batched path is tested equal to. The settings and the measurements that chose their
defaults: ``scopa_policy.modes.SearchParams``, docs/research/2026-12-05-network-search.md.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

import numpy as np

from agents.baselines.pimc import LeafModel
from agents.move_analysis import MoveAnalysis, forced
from agents.worlds import UniformSampler, WorldSampler
from scopa_env.game import GameState, apply
from scopa_env.observation import InfoSet, encode, encode_info, info_set
from scopa_env.rules import Rules
from scopa_env.vector import VectorScopaEnv

from .inference import policy_sampler
from .modes import SearchParams
from .network import PolicyNet, one_blas_thread

DEFAULT_REWARD_SCALE = 0.25  # the shipped weights' value head: hand margin x 0.25


class RootPolicy(Protocol):
    """What the search needs of the network agent (``scopa_policy.agent.PolicyAgent``)."""

    net: PolicyNet
    meta: dict[str, Any]

    def act(self, info: InfoSet) -> int: ...

    def logits(self, info: InfoSet) -> np.ndarray: ...

    def analyse(self, info: InfoSet, played: int | None = None) -> MoveAnalysis: ...


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

    def logits(self, obs: np.ndarray, ids: np.ndarray, valid: np.ndarray) -> np.ndarray:
        """The network's logits (B, L) of each decision's legal moves (-inf in the
        padding): observations ``obs`` (B, 216), legal ids ``ids`` (B, L) padded, ``valid``
        (B, L)."""
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
        return table

    def picks(self, obs: np.ndarray, ids: np.ndarray, valid: np.ndarray) -> np.ndarray:
        """The first best legal id (B,) of each decision (``logits``' arguments)."""
        return ids[np.arange(len(ids)), self.logits(obs, ids, valid).argmax(1)]

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


@lru_cache(maxsize=8)
def _leaf_model(rules: Rules) -> LeafModel:
    """``pimc``'s leaf model of ``rules`` (its caches shared by every search)."""
    return LeafModel(rules)


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


def leaf_margins(leaf: str, policy: RolloutPolicy, model: LeafModel, obs: np.ndarray,
                 mover_team: np.ndarray, piles: np.ndarray, scope: np.ndarray,
                 team: np.ndarray) -> np.ndarray:
    """The estimated hand margins for ``team`` (G,) of G positions cut at the horizon:
    ``leaf="net"``: the network's value head on the observations of the seats to move
    (``obs`` (G, 216), their teams ``mover_team``); ``"piles"``: ``pimc``'s leaf model
    (the expected points of the piles ``piles`` (G, 2), by team) plus the scope so far
    (``scope`` (G, 2))."""
    if leaf == "net":
        v = policy.values(obs)
        return np.where(mover_team == team, v, -v)
    v = np.array([model.value(int(a), int(b)) for a, b in piles.tolist()], np.float64)
    v += scope[:, 0] - scope[:, 1]
    return np.where(team == 0, v, -v)


def rollout_margins(policy: RolloutPolicy, states: Sequence[GameState], teams: Sequence[int],
                    horizon: int | None = None, leaf: str = "net") -> np.ndarray:
    """The hand margin (team ``teams[i]``'s points minus the other's) of each state
    played on by ``policy`` for every seat, each on its own information set: to the end
    of the hand, or for ``horizon`` plies and then the ``leaf`` estimate
    (``leaf_margins``). All states advance together (one vector environment, one
    network pass a ply); the states (same rules, hands not over) are not changed."""
    n = len(states)
    if not n:
        return np.zeros(0)
    env = _loaded(states, [1] * n)
    return _play_out(policy, env, n, np.asarray(teams, np.int64), horizon, leaf)


def _loaded(roots: Sequence[GameState], counts: Sequence[int]) -> VectorScopaEnv:
    """A rollout environment whose first ``sum(counts)`` games are ``counts[i]`` copies of
    ``roots[i]``, in order (each root loaded once, ``load_states``, then copied,
    ``copy_games``); the padding games copy the first."""
    n = sum(counts)
    size = _size(n)
    env = _env(roots[0].rules, size)
    starts = np.cumsum([0] + list(counts[:-1]))
    env.load_states(starts.tolist(), list(roots))
    src = np.repeat(starts, counts)
    env.copy_games(np.arange(size), np.concatenate([src, np.zeros(size - n, np.int64)]))
    return env


def move_margins(policy: RolloutPolicy, roots: Sequence[GameState],
                 moves: Sequence[Sequence[int]], teams: Sequence[int],
                 horizon: int | None = None, leaf: str = "net") -> list[np.ndarray]:
    """For each root state ``roots[i]`` (its seat to move about to play), the margins
    (``len(moves[i])``,) of playing each of ``moves[i]`` and then rolling out
    (``rollout_margins``, the ``horizon`` counted after the move). Each root is loaded
    once and copied for its moves (``VectorScopaEnv.copy_games``); the root move is the
    rollouts' first step."""
    counts = [len(m) for m in moves]
    n = sum(counts)
    if not n:
        return [np.zeros(0) for _ in roots]
    env = _loaded(roots, counts)
    first = np.concatenate([np.asarray(m, np.int64) for m in moves])
    team = np.repeat(np.asarray(teams, np.int64), counts)
    out = _play_out(policy, env, n, team, None if horizon is None else horizon + 1, leaf, first)
    return np.split(out, np.cumsum(counts)[:-1])


def _play_out(policy: RolloutPolicy, env: VectorScopaEnv, n: int, teams: np.ndarray,
              horizon: int | None, leaf: str, first: np.ndarray | None = None) -> np.ndarray:
    """The margins for ``teams`` (n,) of env games ``0..n-1`` (the rest padding) rolled
    out for ``horizon`` plies (None: to the hand's end), the first ply playing ``first``
    (n,) when given."""
    size = env.num_envs
    out = np.zeros(size)
    team = np.zeros(size, np.int64)
    team[:n] = teams
    live = np.zeros(size, bool)
    live[:n] = True
    rows = np.arange(size)
    plies = 0
    while live.any():
        if horizon is not None and plies >= horizon:
            at = np.flatnonzero(live)
            obs = env.observe()[at] if leaf == "net" else None
            out[at] = leaf_margins(leaf, policy, _leaf_model(env.rules), obs,
                                   env.to_move[at] % 2, env.piles[at], env.scope[at], team[at])
            break
        ids, valid = env.legal_ids, env.legal_valid
        pick = ids[:, 0].copy()
        if plies == 0 and first is not None:
            pick[:n] = first
        else:
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
                      teams: Sequence[int], horizon: int | None = None,
                      leaf: str = "net") -> np.ndarray:
    """``rollout_margins`` one game and one decision at a time, with the single-game
    engine (``apply``, ``info_set``): the reference the batched path equals."""
    out = []
    for st, team in zip(states, teams, strict=True):
        s = st.copy()
        plies = 0
        while True:
            if horizon is not None and plies >= horizon:
                out.append(float(leaf_margins(
                    leaf, policy, _leaf_model(s.rules), encode(s, s.to_move)[None],
                    np.array([s.to_move % 2]), np.array([s.piles], np.uint64),
                    np.array([s.scope]), np.array([team]))[0]))
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
    worlds' weights and where its rollouts sit in the batch (world-major)."""

    info: InfoSet
    logits: np.ndarray
    moves: list[int]
    weights: list[int]
    start: int


class SearchAgent:
    """The network with determinized rollouts at play time (module docstring).

    ``policy_for(rules)``: the network agent playing ``rules`` (``PolicyAgent``; it plays
    every decision the search does not: lone moves, the network's sure calls under
    ``gap``, and, with ``endgame="exact"``, the last deal of a 2-player hand);
    ``fingerprint(rules)``: its weights' digest (``PolicyAgent.fingerprint``), for
    ``fingerprint``; ``precision``: the rollouts' float type."""

    values_in_points = True  # scores: mean rolled-out hand margins (+ prior x log-probability)

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
        self._samplers: dict[int, WorldSampler] = {}
        self.searched = 0  # decisions searched
        self.rollouts = 0  # rollouts played

    def rollout_policy(self, policy: RootPolicy) -> RolloutPolicy:
        got = self._rollout.get(id(policy.net))
        if got is None:
            got = self._rollout[id(policy.net)] = RolloutPolicy(
                policy.net, value_scale(policy.meta), self.precision)
        return got

    def sampler(self, policy: RootPolicy) -> WorldSampler:
        """How this agent deals its worlds (``SearchParams.sampler``) with ``policy``'s
        network as the model of the others' play."""
        p = self.params
        if p.sampler == "uniform":
            return UniformSampler()
        got = self._samplers.get(id(policy.net))
        if got is None:
            got = self._samplers[id(policy.net)] = policy_sampler(
                self.rollout_policy(policy), p.candidates, p.temperature, p.floor)
        return got

    def _searches(self, info: InfoSet) -> bool:
        """Whether the decision is searched (before the ``gap`` test): a choice, and not
        the last deal of a 2-player hand (every card known: the network agent's)."""
        return len(info.legal_actions) > 1 and not (info.players == 2 and not info.deck_count)

    def check_rules(self, rules: Rules) -> None:
        """An error naming the problem unless a network plays ``rules`` (the network
        agent's ``CheckpointError`` for rules no shipped weights fit)."""
        self.policy_for(rules)

    def act(self, info: InfoSet) -> int:
        return self.act_batch([info])[0]

    def act_batch(self, infos: list[InfoSet]) -> list[int]:
        """One legal id per information set; the searched decisions of each rule set
        roll out together."""
        for info in infos:
            if not info.legal_actions:
                raise ValueError(f"seat {info.seat} has no legal move to choose from")
        out: list[int | None] = [None] * len(infos)
        for rules, ks in self._searched_by_rules(infos).items():
            for k, a in zip(ks, self._search(rules, [infos[k] for k in ks]), strict=True):
                out[k] = a
        return [int(self.policy_for(info.rules).act(info)) if a is None else a
                for info, a in zip(infos, out, strict=True)]

    def _searched_by_rules(self, infos: list[InfoSet]) -> dict[Rules, list[int]]:
        """The places of the decisions the agent searches (``_searches``), by rule set."""
        groups: dict[Rules, list[int]] = {}
        for k, info in enumerate(infos):
            if self._searches(info):
                groups.setdefault(info.rules, []).append(k)
        return groups

    def move_values(self, info: InfoSet) -> np.ndarray:
        """The mean rolled-out margin of every legal move (NaN for moves ``top`` leaves
        out), in ``info.legal_actions`` order, from this agent's next worlds (searched
        whatever the ``gap``)."""
        policy = self.policy_for(info.rules)
        plan, margins = self._roll(policy, [info], [np.asarray(policy.logits(info), np.float64)])
        return self._means(plan[0], margins)

    def scores(self, info: InfoSet) -> np.ndarray:
        """What the agent chooses by, for every legal move (``scores_batch``)."""
        return self.scores_batch([info])[0]

    def analyse(self, info: InfoSet, played: int | None = None) -> MoveAnalysis:
        """The decision as ``act`` makes it (``agents.move_analysis``), with the network's
        probabilities and value (``PolicyAgent.analyse``): a searched decision's ``scores``
        (``how="search"``) and the move of the best; where the agent leaves the call to
        the network (its sure calls, a 2-player last deal) the network's analysis (the
        exact values of the last deal under ``endgame="exact"``). ``played``: a legal id
        other than the agent's choice is valued too: it is rolled out with the searched
        moves (the same worlds), and a decision the network would call is searched
        (``deep``), so the search says what the move costs."""
        legal = info.legal_actions
        if not legal:
            raise ValueError(f"seat {info.seat} has no legal move to choose from")
        policy = self.policy_for(info.rules)
        if len(legal) == 1:
            return forced(legal)
        net = policy.analyse(info)
        want = None if played is None else legal.index(played)
        searched = self._searches(info)
        if not searched and (net.values is not None or want is None or want == net.pick):
            return net
        extra = [] if want is None else [want]
        logits, score = self._scores(info.rules, [info], [extra], force=not searched)[0]
        if score is None:  # a sure call of the network
            if want is None or want == net.pick:
                return net
            logits, score = self._scores(info.rules, [info], [extra], force=True)[0]
            searched = False
        assert score is not None
        return MoveAnalysis(tuple(legal), self._choose(logits, score), "search",
                            values=tuple(score.tolist()), probs=net.probs, value=net.value,
                            deep=not searched)

    def scores_batch(self, infos: list[InfoSet]) -> list[np.ndarray]:
        """For each decision, what the agent maximizes over its legal moves, in points:
        the moves' mean rolled-out margins plus ``prior`` x the network's log-probability;
        NaN for the moves ``top`` leaves out, and for every move of a decision the agent
        does not search (one legal move, a 2-player hand's last deal, the network's sure
        calls under ``gap``: the network's own choice stands there). The expert iteration's
        labels (``scopa_train.search_labels``)."""
        out: list[np.ndarray] = [np.full(len(i.legal_actions), np.nan) for i in infos]
        for rules, ks in self._searched_by_rules(infos).items():
            for k, (_, score) in zip(ks, self._scores(rules, [infos[k] for k in ks]),
                                     strict=True):
                if score is not None:
                    out[k] = score
        return out

    def _roll(self, policy: RootPolicy, infos: list[InfoSet], all_logits: list[np.ndarray],
              extra: list[list[int]] | None = None) -> tuple[list[_Plan], np.ndarray]:
        """Roll out ``infos`` (the network's ``all_logits`` of each) in sampled worlds;
        ``extra``: for each, places of moves rolled out beside the network's ``top``."""
        p = self.params
        plans: list[_Plan] = []
        roots: list[GameState] = []
        moves: list[list[int]] = []
        teams: list[int] = []
        for j, (info, logits) in enumerate(zip(infos, all_logits, strict=True)):
            order = np.argsort(-logits, kind="stable")
            keep = sorted(order[:p.top].tolist()) if p.top else list(range(len(logits)))
            if extra is not None and extra[j]:
                keep = sorted(set(keep) | set(extra[j]))
            worlds = self.sampler(policy).sample(info, p.worlds, self.rng)
            plans.append(_Plan(info, logits, keep, [w for _, w in worlds],
                               sum(map(len, moves))))
            ids = [int(info.legal_actions[m]) for m in keep]
            for world, _ in worlds:
                roots.append(world)
                moves.append(ids)
                teams.append(info.team)
        parts = move_margins(self.rollout_policy(policy), roots, moves, teams, p.horizon, p.leaf)
        margins = np.concatenate(parts) if parts else np.zeros(0)
        self.rollouts += len(margins)
        return plans, margins

    @staticmethod
    def _means(plan: _Plan, margins: np.ndarray) -> np.ndarray:
        k = len(plan.moves)
        m = margins[plan.start:plan.start + k * len(plan.weights)].reshape(-1, k)
        w = np.asarray(plan.weights, np.float64)
        out = np.full(len(plan.logits), np.nan)
        out[plan.moves] = w @ m / w.sum()
        return out

    def _scores(self, rules: Rules, infos: list[InfoSet], extra: list[list[int]] | None = None,
                force: bool = False) -> list[tuple[np.ndarray, np.ndarray | None]]:
        """(the network's logits, the score of each move: ``scores_batch``) of each
        decision; the score None where the network is sure (best two logits ``gap`` or
        more apart) unless ``force``. ``extra``: moves rolled out beside the ``top``
        (``_roll``)."""
        policy = self.policy_for(rules)
        p = self.params
        logits = [np.asarray(policy.logits(info), np.float64) for info in infos]
        todo = [j for j, z in enumerate(logits) if force or np.ptp(np.sort(z)[-2:]) < p.gap]
        out: list[tuple[np.ndarray, np.ndarray | None]] = [(z, None) for z in logits]
        if todo:
            plans, margins = self._roll(policy, [infos[j] for j in todo],
                                        [logits[j] for j in todo],
                                        None if extra is None else [extra[j] for j in todo])
            self.searched += len(plans)
            for j, plan in zip(todo, plans, strict=True):
                out[j] = (logits[j], self._means(plan, margins) + p.prior * log_probs(logits[j]))
        return out

    def _search(self, rules: Rules, infos: list[InfoSet]) -> list[int]:
        """The move of the best score of each decision (ties: the network's choice); the
        network's best move where it is sure."""
        return [int(info.legal_actions[self._choose(logits, score)])
                for info, (logits, score) in zip(infos, self._scores(rules, infos), strict=True)]

    @staticmethod
    def _choose(logits: np.ndarray, score: np.ndarray | None) -> int:
        """The place of the move of the best score (ties: the network's choice); the
        network's best move without scores."""
        if score is None:
            return int(np.argmax(logits))
        score = np.where(np.isnan(score), -np.inf, score)
        best = np.flatnonzero(score == score.max())
        return int(best[int(np.argmax(logits[best]))])

    def fingerprint(self, rules: Rules | None = None) -> str:
        """A digest of the search settings and the network agent's fingerprint."""
        h = hashlib.sha256(f"search {self.params} {self.precision.__name__}".encode())
        if self._inner_fingerprint is not None:
            h.update(self._inner_fingerprint(rules).encode())
        return h.hexdigest()[:16]

    def __repr__(self) -> str:
        return f"<SearchAgent {self.spec}>"


__all__ = ["RolloutPolicy", "SearchAgent", "SearchParams", "log_probs", "move_margins",
           "reference_margins", "rollout_margins", "value_scale"]
