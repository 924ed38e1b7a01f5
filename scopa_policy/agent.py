"""Learned agents: a trained policy network (a checkpoint of ``train.py``) as an agent.

``load_policy_agent(path)`` turns any checkpoint — a training checkpoint, a run
directory (its ``checkpoints/latest.pt``) or a policy-only file — into an agent. The
agent encodes the seat's information set (``encode_info``), scores the legal catalogue
ids and plays the best one (or samples from the policy with ``sample=True``).

``load_policy_agent(None)`` is the shipped ``pretrained`` agent: one weights file per
rule set in ``scopa_policy/pretrained/`` (``default.pt``: 2-player scopa; ``team4.pt``:
4-player scopa in teams), each holding the rules it was trained for. It plays every game
with the closest weights (``choose_weights``): those whose rules equal the game's in
every option the network sees, that shapes the deal or changes the moves (all but
``SILENT`` and ``PLAYS_ACROSS``), the fewest ``PLAYS_ACROSS`` options differing; it says
once on stderr which weights play and what differs, and refuses, with a message naming
the rule sets it has, a game no weights fit.

A checkpoint with a last-deal scorer (``scopa_policy.last_deal_net``, trained by the
``last_deal`` stage kind) plays the decisions of a 2-player last deal (deck empty) with
it, and every other decision with the policy network; the shipped 2-player weights have
one. ``act_batch`` scores all decisions with a choice in one set of products (the moves
``act`` would choose, one decision at a time). ``endgame="exact"`` (the spec
``pretrained:endgame=exact``) plays the last deal of a 2-player hand exactly
(``agents.baselines.endgame``): a separate agent, not the network alone.
"""

from __future__ import annotations

import hashlib
import os
import sys
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.baselines.endgame import EndgameSolver, position_from_obs
from agents.move_analysis import MoveAnalysis, forced
from scopa_env.observation import InfoSet, encode_info
from scopa_env.rules import Rules

from .checkpoint import (
    CheckpointError,
    build_last_deal,
    build_model,
    checkpoint_file,
    load_checkpoint,
)
from .last_deal_net import LastDealNet
from .modes import DEFAULT_SUITS, SearchParams, check_modes
from .network import PolicyNet
from .search import SearchAgent, value_scale
from .symmetry import CloseCalls, SuitAveraged

PRETRAINED_DIR = Path(__file__).resolve().parent / "pretrained"
PRETRAINED = PRETRAINED_DIR / "default.pt"  # the 2-player weights
# Which weights play which rules. The network reads the observation (``encode_info``: the
# rules enter it only by ``players``, ``hand_size`` and ``target_score``) and the legal
# moves' features (``scopa_policy.features``: no rules at all); the legal moves depend on
# ``ace_takes_all`` and ``capture_rule``, the deal on ``players``, ``hand_size``,
# ``table_size`` (and ``redeal_three_kings``), the score on the rest (docs/agents.md).
SILENT = frozenset({"name", "target_score"})
"""Options any weights play without a word: the rule set's label (its options are all
explicit) and the match length (the observation holds the scores over the target)."""
PLAYS_ACROSS = frozenset({"redeal_three_kings", "last_play_scopa", "primiera_table",
                          "primiera_requires_all_suits", "re_bello", "napola"})
"""Options that change only how often an opening table is dealt again or what a hand
scores, neither the observation nor the moves: weights trained with another value play
them, and say so once. Every other option (the deal's shape, the capture rules, and any
option added later) must equal the weights' own."""
SAID_ENV = "SCOPA_PRETRAINED_SAID"
"""The environment variable that holds the rule sets whose choice of weights was said
(digests): once per rule set in a process and in the worker processes it starts."""


def decision_inputs(infos: list[InfoSet]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The scorers' flat inputs for B decisions: observations (B, 216), every legal id
    (M,) in order, and each id's decision (M,)."""
    obs = np.stack([encode_info(i) for i in infos])
    ids = np.concatenate([np.asarray(i.legal_actions, np.int64) for i in infos])
    row = np.repeat(np.arange(len(infos)), [len(i.legal_actions) for i in infos])
    return obs, ids, row


class PolicyAgent:
    """A policy network as an agent: ``act(info)`` -> one of ``info.legal_actions``.

    ``last_deal`` (optional): the scorer of 2-player last-deal decisions (deck empty),
    in place of ``net`` there. ``endgame="exact"``: in the last deal of a 2-player hand
    (deck empty: the unseen cards are the other hand, nothing is hidden), play a move of
    best exact value (``agents.baselines.endgame``), the networks choosing among equally good ones;
    elsewhere, and with ``endgame="net"`` (the default), the networks alone.
    ``suits``: which scores are averaged over the 6 suit views of the decision
    (``scopa_policy.symmetry``): the last-deal scorer's and, of the policy network's, the
    close calls (``"close"``, the default: ``CloseCalls``), the last-deal scorer's alone
    (``"last_deal"``), every decision's (``"all"``) or none (``"none"``)."""

    def __init__(self, net: PolicyNet, spec: str = "policy", seed: int | None = None,
                 sample: bool = False, meta: dict[str, Any] | None = None,
                 endgame: str = "net", last_deal: LastDealNet | None = None,
                 suits: str = DEFAULT_SUITS) -> None:
        check_modes(endgame, suits)
        self.net = net.eval()
        self.scorer = net.numpy_scorer()
        if suits == "all":
            self.scorer = SuitAveraged(self.scorer)
        elif suits == "close":
            self.scorer = CloseCalls(self.scorer)
        self.last_deal = last_deal.eval() if last_deal is not None else None
        self.last_deal_scorer = None
        if last_deal is not None:
            self.last_deal_scorer = last_deal.numpy_scorer()
            if suits != "none":
                self.last_deal_scorer = SuitAveraged(self.last_deal_scorer)
        self.suits = suits
        self.spec = spec
        self.sample = sample
        self.meta = meta or {}
        self.rng = np.random.default_rng(seed)
        self.endgame = endgame
        self._solvers: dict[Rules, EndgameSolver] = {}

    values_in_points = False  # its scores are logits; the exact values of a last deal aside

    def _exact_values(self, info: InfoSet, obs: np.ndarray) -> np.ndarray | None:
        """The exact values (final hand margins for the mover) of the legal moves of a
        2-player last-deal decision under ``endgame="exact"``, else None; ``obs`` is
        ``encode_info(info)``."""
        if self.endgame != "exact" or info.players != 2 or info.deck_count:
            return None
        solver = self._solvers.get(info.rules)
        if solver is None:
            solver = self._solvers[info.rules] = EndgameSolver(info.rules)
        return np.asarray(solver.move_values(position_from_obs(obs), info.legal_actions),
                          np.float64)

    def _exact(self, info: InfoSet, obs: np.ndarray, logits: np.ndarray,
               values: np.ndarray | None = None) -> np.ndarray:
        """``logits`` with every move of less than the best exact value ruled out, for
        a 2-player last-deal decision under ``endgame="exact"`` (else unchanged);
        ``values``: the exact values when already computed (``_exact_values``)."""
        if values is None:
            values = self._exact_values(info, obs)
        if values is None:
            return logits
        return np.where(values == values.max(), logits, -np.inf)

    def _logits(self, infos: list[InfoSet], obs: np.ndarray, ids: np.ndarray,
                row: np.ndarray) -> np.ndarray:
        """Logits (M,) of the moves ``ids`` of decisions ``infos`` (observations ``obs``
        (B, 216); ``row`` (M,): each move's decision): the last-deal scorer's for the
        decisions of a 2-player last deal when there is one, the policy network's for
        the others."""
        last = np.zeros(len(infos), bool)
        if self.last_deal_scorer is not None:
            last = np.array([i.players == 2 and not i.deck_count for i in infos])
        if not last.any():
            return self.scorer.logits_flat(obs, ids, row)
        out = np.empty(len(ids))
        for part, scorer in ((~last, self.scorer), (last, self.last_deal_scorer)):
            if part.any():
                pick, sub = part[row], np.flatnonzero(part)
                out[pick] = scorer.logits_flat(obs[sub], ids[pick],
                                               np.searchsorted(sub, row[pick]))
        return out

    def _pick(self, legal: tuple[int, ...], logits: np.ndarray) -> int:
        return int(legal[self._pick_index(logits)])

    def _pick_index(self, logits: np.ndarray) -> int:
        """The place of the move played: the best logit, or drawn from the softmax
        (``sample``)."""
        if not self.sample:
            return int(np.argmax(logits))
        p = np.exp(logits.astype(np.float64) - logits.max())  # exp(-inf) = 0
        return int(self.rng.choice(len(logits), p=p / p.sum()))

    def logits(self, info: InfoSet) -> np.ndarray:
        """The scores of ``info.legal_actions`` (in order) that this agent picks its move
        by: the last-deal scorer's in a 2-player last deal when it has one, else the
        policy network's, each averaged over the suit views as ``suits`` says (before
        ``endgame="exact"`` rules any move out)."""
        if not info.legal_actions:
            raise ValueError(f"seat {info.seat} has no legal move to choose from")
        return self._legal_logits(info, encode_info(info))

    def _legal_logits(self, info: InfoSet, obs: np.ndarray) -> np.ndarray:
        ids = np.asarray(info.legal_actions, np.int64)
        return self._logits([info], obs[None], ids, np.zeros(len(ids), np.int64))

    def act(self, info: InfoSet) -> int:
        legal = info.legal_actions
        if not legal:
            raise ValueError(f"seat {info.seat} has no legal move to choose from")
        if len(legal) == 1:
            return int(legal[0])
        obs = encode_info(info)
        return self._pick(legal, self._exact(info, obs, self._legal_logits(info, obs)))

    def act_batch(self, infos: list[InfoSet]) -> list[int]:
        """``act`` for each information set: the decisions with a choice are scored
        together, in one set of products (the same numbers as one at a time)."""
        out: list[int] = []
        todo: list[int] = []
        for k, info in enumerate(infos):
            legal = info.legal_actions
            if not legal:
                raise ValueError(f"seat {info.seat} has no legal move to choose from")
            out.append(int(legal[0]))
            if len(legal) > 1:
                todo.append(k)
        if not todo:
            return out
        chosen = [infos[k] for k in todo]
        obs, ids, row = decision_inputs(chosen)
        logits = self._logits(chosen, obs, ids, row)
        a = 0
        for j, (k, info) in enumerate(zip(todo, chosen, strict=True)):
            n = len(info.legal_actions)
            out[k] = self._pick(info.legal_actions, self._exact(info, obs[j], logits[a:a + n]))
            a += n
        return out

    def analyse(self, info: InfoSet, played: int | None = None) -> MoveAnalysis:
        """The decision as ``act`` makes it (``agents.move_analysis``): the move it plays, the
        network's probability of every move (the softmax of ``logits``) and its value of
        the position in points; in a 2-player last deal under ``endgame="exact"`` the
        moves' exact values (``how="exact"``). ``played`` changes nothing: the network
        values no move in points."""
        legal = info.legal_actions
        if not legal:
            raise ValueError(f"seat {info.seat} has no legal move to choose from")
        if len(legal) == 1:
            return forced(legal)
        obs = encode_info(info)
        logits = self._legal_logits(info, obs)
        exact = self._exact_values(info, obs)
        pick = self._pick_index(self._exact(info, obs, logits, exact))
        z = np.exp(logits - logits.max())
        return MoveAnalysis(tuple(legal), pick, "network" if exact is None else "exact",
                            values=None if exact is None else tuple(exact.tolist()),
                            probs=tuple((z / z.sum()).tolist()),
                            value=self.value(info) / value_scale(self.meta))

    def fingerprint(self, rules: Rules | None = None) -> str:
        """A digest of the weights (and the endgame and suits modes): a ladder replays a
        cached pair when a spec's weights have changed. One weights file plays every
        game, so ``rules`` does not enter it."""
        h = hashlib.sha256(f"{self.endgame} {self.suits}".encode())
        parts = [self.net] + ([self.last_deal] if self.last_deal is not None else [])
        for part in parts:
            for k, v in part.state_dict().items():
                h.update(k.encode())
                h.update(v.detach().cpu().numpy().tobytes())
        return h.hexdigest()[:16]

    def value(self, info: InfoSet) -> float:
        """The network's estimate of the seat's (scaled) return from here."""
        device = next(self.net.parameters()).device
        obs = torch.from_numpy(encode_info(info))[None].to(device)
        with torch.inference_mode():
            return float(self.net.value(obs)[0])


def _blocking(ask: dict[str, Any], trained: dict[str, Any]) -> list[str]:
    """The options of ``ask`` that keep weights trained for ``trained`` from playing it
    (every option but ``SILENT`` and ``PLAYS_ACROSS`` must be the same)."""
    return sorted(k for k in set(ask) | set(trained)
                  if k not in SILENT and k not in PLAYS_ACROSS and ask.get(k) != trained.get(k))


def _describe(rules: dict[str, Any]) -> str:
    return f"{rules.get('name', '?')} with {rules.get('players', '?')} players"


@cache
def shipped_weights() -> tuple[tuple[Path, dict[str, Any]], ...]:
    """The shipped weights files and the rules each was trained for (``default.pt``
    first)."""
    files = sorted(PRETRAINED_DIR.glob("*.pt"), key=lambda p: (p != PRETRAINED, p.name))
    return tuple((p, dict(load_checkpoint(p)["rules"])) for p in files)


@dataclass(frozen=True)
class WeightsChoice:
    """The shipped weights that play a rule set: the file, the rules it was trained for
    and the ``PLAYS_ACROSS`` options in which the game's rules differ from those."""

    path: Path
    trained: dict[str, Any]
    differs: tuple[str, ...]

    def message(self, rules: Rules) -> str:
        """The one line saying which weights play ``rules`` and what differs."""
        ask = rules.to_dict()
        what = ", ".join(f"{k}={ask[k]!r} (trained with {self.trained.get(k)!r})"
                         for k in self.differs)
        return (f"pretrained: the weights {self.path.name} (trained for "
                f"{_describe(self.trained)}) play {_describe(ask)} with {what}: options "
                f"that change neither what the network sees nor its moves")


def choose_weights(rules: Rules) -> WeightsChoice:
    """The closest shipped weights for ``rules``: trained with the same value of every
    option but ``SILENT`` and ``PLAYS_ACROSS``, the fewest ``PLAYS_ACROSS`` options
    differing (the first shipped file among equals); ``CheckpointError`` naming the rule
    sets there are weights for when none fit."""
    shipped = shipped_weights()
    ask = rules.to_dict()
    fits = [WeightsChoice(path, trained, tuple(sorted(
                k for k in PLAYS_ACROSS if ask.get(k) != trained.get(k))))
            for path, trained in shipped if not _blocking(ask, trained)]
    if fits:
        return min(fits, key=lambda c: len(c.differs))
    if not shipped:
        raise CheckpointError(f"the shipped pretrained weights are missing from this "
                              f"installation ({PRETRAINED_DIR} has no .pt file)")
    have = "; ".join(_describe(r) for _, r in shipped)
    diff = ""
    near = [r for _, r in shipped if r.get("players") == rules.players]
    if near:
        best = min(near, key=lambda r: len(_blocking(ask, r)))
        diff = " (differs in " + ", ".join(
            f"{k}={ask.get(k)!r}, trained with {best.get(k)!r}"
            for k in _blocking(ask, best)) + ")"
    raise CheckpointError(f"'pretrained' has no weights for {_describe(ask)}{diff}; it has "
                          f"weights for: {have}. Train a policy for these rules with "
                          f"train.py and play it as ckpt:PATH")


def pretrained_path(rules: Rules, exact: bool = False) -> Path:
    """The shipped weights that play ``rules`` (``choose_weights``); ``exact``: only
    weights trained for ``rules`` themselves (``target_score`` aside), else
    ``CheckpointError``."""
    choice = choose_weights(rules)
    if exact and choice.differs:
        raise CheckpointError(
            f"'pretrained' has no weights trained for {_describe(rules.to_dict())} with "
            f"{', '.join(f'{k}={getattr(rules, k)!r}' for k in choice.differs)} (the "
            f"closest, {choice.path.name}, differs there)")
    return choice.path


def say_choice(rules: Rules, choice: WeightsChoice) -> None:
    """Say on stderr, once per rule set (``SAID_ENV``; any match length), which weights
    play ``rules`` when they were trained with other ``PLAYS_ACROSS`` options."""
    if not choice.differs:
        return
    key = hashlib.sha256(repr(sorted((k, v) for k, v in rules.to_dict().items()
                                     if k != "target_score")).encode()).hexdigest()[:12]
    said = os.environ.get(SAID_ENV, "").split()
    if key in said:
        return
    os.environ[SAID_ENV] = " ".join([*said, key])
    print(choice.message(rules), file=sys.stderr, flush=True)


class PretrainedAgent:
    """The shipped ``pretrained`` agent: the closest shipped policy for the rules of the
    game it plays (see ``choose_weights``), said once where they differ."""

    def __init__(self, seed: int | None = None, sample: bool = False,
                 endgame: str = "net", suits: str = DEFAULT_SUITS) -> None:
        check_modes(endgame, suits)
        self.seed, self.sample, self.endgame, self.suits = seed, sample, endgame, suits
        params = ([f"endgame={endgame}"] if endgame != "net" else []) + (
            [f"suits={suits}"] if suits != DEFAULT_SUITS else [])
        self.spec = "pretrained" + (":" + ",".join(params) if params else "")
        self._agents: dict[Path, PolicyAgent] = {}
        self._by_rules: dict[Rules, PolicyAgent] = {}

    def policy(self, rules: Rules) -> PolicyAgent:
        """The policy agent of the weights for ``rules`` (loaded once)."""
        agent = self._by_rules.get(rules)
        if agent is None:
            choice = choose_weights(rules)
            say_choice(rules, choice)
            path = choice.path
            agent = self._agents.get(path)
            if agent is None:
                agent = self._agents[path] = _load(path, self.spec, self.seed, self.sample,
                                                   self.endgame, self.suits)
            self._by_rules[rules] = agent
        return agent

    def check_rules(self, rules: Rules) -> None:
        """``CheckpointError`` unless some weights play ``rules`` (said once where they
        were trained with other ``PLAYS_ACROSS`` options)."""
        say_choice(rules, choose_weights(rules))

    def fingerprint(self, rules: Rules | None = None) -> str:
        """A digest of the shipped weights file that plays ``rules`` (its name and bytes;
        None: of every shipped file), and the endgame and suits modes: a 4-player ladder
        keeps its pairs when only the 2-player weights change, and a rule set played
        across options replays them when closer weights are shipped."""
        h = hashlib.sha256(f"{self.endgame} {self.suits}".encode())
        paths = ([path for path, _ in shipped_weights()] if rules is None
                 else [pretrained_path(rules)])
        for path in paths:
            h.update(path.name.encode())
            h.update(path.read_bytes())
        return h.hexdigest()[:16]

    values_in_points = False  # as PolicyAgent

    def act(self, info: InfoSet) -> int:
        return self.policy(info.rules).act(info)

    def analyse(self, info: InfoSet, played: int | None = None) -> MoveAnalysis:
        """``PolicyAgent.analyse`` of the weights that play ``info.rules``."""
        return self.policy(info.rules).analyse(info, played)

    def act_batch(self, infos: list[InfoSet]) -> list[int]:
        """``act`` for each information set, each rule set's decisions in one batch."""
        groups: dict[Rules, list[int]] = {}
        for k, info in enumerate(infos):
            groups.setdefault(info.rules, []).append(k)
        out = [0] * len(infos)
        for rules, ks in groups.items():
            for k, a in zip(ks, self.policy(rules).act_batch([infos[k] for k in ks]),
                            strict=True):
                out[k] = a
        return out

    def __repr__(self) -> str:
        return f"<PretrainedAgent {self.spec}>"


@lru_cache(maxsize=16)
def _weights(path: str, stamp: tuple[int, int]
             ) -> tuple[PolicyNet, LastDealNet | None, dict[str, Any]]:
    """The networks and metadata of a checkpoint file, read once per process for each
    (path, modification time and size): the evaluator makes fresh agents for every
    seating, and they share these (nothing mutates them)."""
    ck = load_checkpoint(path)
    meta = {k: ck[k] for k in ("rules", "counters", "config") if k in ck}
    return build_model(ck), build_last_deal(ck), meta


def _load(path: str | Path, spec: str, seed: int | None, sample: bool,
          endgame: str = "net", suits: str = DEFAULT_SUITS) -> PolicyAgent:
    file = checkpoint_file(path)
    try:
        st = file.stat()
        stamp = (st.st_mtime_ns, st.st_size)
    except OSError:
        stamp = (0, 0)  # load_checkpoint names the problem
    net, last_deal, meta = _weights(str(file), stamp)
    return PolicyAgent(net, spec=spec, seed=seed, sample=sample, meta=dict(meta),
                       endgame=endgame, last_deal=last_deal, suits=suits)


def load_policy_agent(path: str | Path | None, seed: int | None = None,
                      sample: bool = False, endgame: str | None = None,
                      suits: str = DEFAULT_SUITS, search: SearchParams | None = None
                      ) -> PolicyAgent | PretrainedAgent | SearchAgent:
    """The agent of a checkpoint file or run directory; ``None``: the shipped
    ``pretrained`` agent (the weights for each game's rules). ``endgame="exact"``: the
    last deal of a 2-player hand is played exactly (``PolicyAgent``); the default is
    ``"exact"`` with ``search`` and ``"net"`` without. ``search``: the network searches
    with rollouts at play time (``scopa_policy.search.SearchAgent``)."""
    if endgame is None:
        endgame = "exact" if search is not None else "net"
    if search is None:
        if path is None:
            return PretrainedAgent(seed=seed, sample=sample, endgame=endgame, suits=suits)
        return _load(path, f"ckpt:{path}", seed, sample, endgame, suits)
    if sample:
        raise ValueError("a searching agent plays its best move: it cannot sample")
    params = [f"endgame={endgame}"] if endgame != "exact" else []
    params += [f"suits={suits}"] if suits != DEFAULT_SUITS else []
    params += ["search=on"] + ([search.spec()] if search.spec() else [])
    if path is None:
        inner = PretrainedAgent(seed=seed, endgame=endgame, suits=suits)
        return SearchAgent(inner.policy, search, seed=seed,
                           spec="pretrained:" + ",".join(params), fingerprint=inner.fingerprint)
    agent = _load(path, f"ckpt:{path}", seed, False, endgame, suits)
    return SearchAgent(lambda rules: agent, search, seed=seed,
                       spec=f"ckpt:{path} (" + ",".join(params) + ")",
                       fingerprint=lambda rules=None: agent.fingerprint(rules))


__all__ = ["PLAYS_ACROSS", "PRETRAINED", "PRETRAINED_DIR", "SAID_ENV", "SILENT", "PolicyAgent",
           "PretrainedAgent", "WeightsChoice", "choose_weights", "decision_inputs",
           "load_policy_agent", "pretrained_path", "say_choice", "shipped_weights"]
