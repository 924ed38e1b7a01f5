"""What a seat cannot see: deals of the unseen cards consistent with its information set.

A *world* is a full ``GameState`` that agrees with everything the seat knows (its hand, the
table, both piles, the scope counts, who captured last, the others' hand sizes) and deals
the cards it has not seen (``info.unseen``) into the other hands and the undealt deck. The
searches (``pimc``, ``pretrained:search=on``, the OpenSpiel bridge's determinizations)
play their moves out in such worlds. Two ways to deal them:

- ``UniformSampler`` (``sampler=uniform``): every consistent deal equally likely, the
  cards shuffled with the agent's RNG (``sample_worlds``).
- ``InferenceSampler`` (``sampler=policy``): reads the table as a player does. The other
  seats' moves this round (``info.round_moves``, public) were chosen knowing their hands:
  a world in which the opponent held a seven when it left the settebello on the table is
  unlikely. ``candidates`` x ``n`` uniform deals are weighted by the likelihood of those
  moves under a model of the others' play (``MoveModel``: the shipped network's policy,
  ``scopa_policy.inference``), and ``n`` worlds are drawn by those weights (sampling
  importance resampling; the undealt deck is shuffled anew for each). Only this round's
  moves say anything about the hands held now: the cards of an earlier round are all
  played and public.

Every world comes from ``info`` and the agent's RNG alone: no hidden card is read.

``make_sampler(name, rules)`` builds one by name (``pimc:sampler=...``): ``uniform`` here,
the others from the ``scopa.samplers`` entry points (``policy`` is registered by
``scopa_policy``, the layer that holds the network: this one never imports it).
"""

from __future__ import annotations

import importlib.metadata
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from scopa_env.cards import FULL_DECK, N_CARDS, cards_of
from scopa_env.game import GameState, apply
from scopa_env.moves import ACTION_CARD_LIST
from scopa_env.observation import InfoSet
from scopa_env.rules import Rules

Worlds = list[tuple[GameState, int]]  # (world, multiplicity), in first-drawn order


def world_template(info: InfoSet) -> GameState:
    """A state with everything the seat knows (the round's public history included, and
    not extended by the moves a search plays in it: ``keep_history=False``); other hands
    and the deck left empty."""
    team = info.seat % 2
    piles = [0, 0]
    piles[team], piles[1 - team] = info.own_pile, info.other_pile
    scope = [0, 0]
    scope[team], scope[1 - team] = info.scope
    score = [0, 0]
    score[team], score[1 - team] = info.match_score
    last = None if info.last_capture is None else (team if info.last_capture == 0 else 1 - team)
    hands = [0] * info.players
    hands[info.seat] = info.hand
    return GameState(rules=info.rules, seed=0, dealer=info.dealer, deck=(),
                     deck_pos=N_CARDS - info.deck_count, hands=hands, table=info.table,
                     piles=piles, scope=scope, last_capture_team=last, to_move=info.seat,
                     match_score=score, round_moves=info.round_moves,
                     round_start=info.round_start, keep_history=False)


def dealt_within(info: InfoSet, depth: int) -> int:
    """How many deck cards get dealt within ``depth`` plies from ``info``'s position."""
    rules = info.rules
    in_hands = sum(info.hand_sizes)
    if depth <= in_hands or not info.deck_count:
        return 0
    per_deal = rules.players * rules.hand_size
    deals = -(-(depth - in_hands) // per_deal)
    return min(info.deck_count, deals * per_deal)


def random_hands(cards: list[int], sizes: list[tuple[int, int]], rng: random.Random,
                 hands: list[int] | None = None) -> list[int]:
    """Deal ``cards`` uniformly at random to the seats of ``sizes`` (``(seat, cards it
    holds)`` pairs), in place into ``hands`` (default: all empty): ``cards`` is shuffled,
    and what is left after the hands (its tail) is the rest in random order."""
    rng.shuffle(cards)
    return _deal_into(cards, sizes,
                      hands if hands is not None else [0] * (1 + max(s for s, _ in sizes)))


def _deal_into(cards: list[int], sizes: list[tuple[int, int]], hands: list[int]) -> list[int]:
    """``cards`` in order into the seats of ``sizes`` (``(seat, cards it holds)``), in place
    into ``hands``."""
    pos = 0
    for seat, size in sizes:
        m = 0
        for c in cards[pos:pos + size]:
            m |= 1 << c
        hands[seat] = m
        pos += size
    return hands


def _unseen_places(info: InfoSet) -> tuple[list[int], list[tuple[int, int]], int]:
    """The unseen cards, the other seats with their hand sizes, and the cards they hold
    together; ``ValueError`` when the counts do not add up."""
    unseen = cards_of(info.unseen)
    others = [(s, info.hand_sizes[s]) for s in range(info.players) if s != info.seat]
    dealt = sum(h for _, h in others)
    if dealt + info.deck_count != len(unseen):
        raise ValueError(f"information set is inconsistent: {len(unseen)} unseen cards for "
                         f"{dealt + info.deck_count} places (other hands and deck)")
    return unseen, others, dealt


def _world(template: GameState, hands: list[int], rest: Sequence[int]) -> GameState:
    """``template`` with the other hands ``hands`` and the undealt deck ``rest`` (the
    dealt part of the deck: the other cards, in card order)."""
    w = template.copy()
    w.hands = hands
    restmask = 0
    for c in rest:
        restmask |= 1 << c
    w.deck = tuple(cards_of(FULL_DECK & ~restmask)) + tuple(rest)
    return w


def sample_worlds(info: InfoSet, n: int, rng: random.Random, depth: int | None = None
                  ) -> Worlds:
    """``n`` uniformly random deals of the unseen cards consistent with ``info``, merged
    when they agree on everything a ``depth``-ply search can reach (the other hands and
    the deck cards dealt within the horizon): ``[(state, multiplicity), ...]`` in
    first-drawn order."""
    template = world_template(info)
    horizon = N_CARDS if depth is None else dealt_within(info, depth)
    unseen, others, dealt = _unseen_places(info)
    found: dict[tuple, list] = {}
    for _ in range(n):
        hands = random_hands(unseen, others, rng, list(template.hands))
        _count(found, template, hands, unseen[dealt:], horizon)
    return [(w, k) for w, k in found.values()]


def _count(found: dict[tuple, list], template: GameState, hands: list[int],
           rest: Sequence[int], horizon: int) -> None:
    """Count the world of ``hands`` and undealt deck ``rest`` in ``found``: merged with an
    earlier one that agrees on the hands and the ``horizon`` next deck cards."""
    key = (tuple(hands), tuple(rest[:horizon]))
    entry = found.get(key)
    if entry is not None:
        entry[1] += 1
    else:
        found[key] = [_world(template, hands, tuple(rest)), 1]


# ---------------------------------------------------------------- reading the others' moves


@dataclass(frozen=True)
class PastDecision:
    """One move of another seat this round, as that seat faced it: ``state`` is the
    position before the move (public parts exact; the hands of one consistent world, so
    that the hand sizes are right), ``action`` the id it played, and ``later`` the cards it
    played from this move on this round (this move's card included): in a world where it
    holds ``h`` now, it held ``h | later`` then."""

    seat: int
    action: int
    state: GameState
    later: int


def past_decisions(info: InfoSet, hands: Sequence[int]) -> list[PastDecision]:
    """The other seats' decisions of this round (``info.round_moves``), replayed from the
    round's public start with the current hands ``hands`` (one consistent world: each
    seat's cards of the round are its hand now plus what it played)."""
    moves = info.round_moves
    start = info.round_start
    if not moves or start is None:
        return []
    played = [0] * info.players
    for seat, action in moves:
        played[seat] |= 1 << ACTION_CARD_LIST[action]
    s = world_template(info)
    s.hands = [int(h) | p for h, p in zip(hands, played, strict=True)]
    s.table, s.piles, s.scope = start.table, list(start.piles), list(start.scope)
    s.last_capture_team = start.last_capture_team
    s.to_move = moves[0][0]
    s.round_moves, s.round_start = (), None  # the decisions' states show no history
    out = []
    later = played.copy()
    for seat, action in moves:
        if seat != info.seat:
            out.append(PastDecision(seat, int(action), s.copy(), later[seat]))
        later[seat] &= ~(1 << ACTION_CARD_LIST[action])
        apply(s, action, False, None, False)
    if s.table != info.table or s.to_move != info.seat:
        raise ValueError("information set is inconsistent: its round's moves do not lead "
                         "to its table")
    return out


class MoveModel(Protocol):
    """A model of the other seats' play: the log-likelihood of their past decisions."""

    def log_likelihood(self, decisions: Sequence[PastDecision], hands: np.ndarray
                       ) -> np.ndarray:
        """For each candidate deal (row of ``hands``, (C, players) uint64: every seat's hand
        now), the summed log-probability of the ``decisions`` (C,)."""
        ...


class WorldSampler(Protocol):
    """A way of dealing worlds: ``n`` draws, merged (``sample_worlds``'s form)."""

    name: str

    def sample(self, info: InfoSet, n: int, rng: random.Random, depth: int | None = None
               ) -> Worlds: ...


class UniformSampler:
    """Every consistent deal equally likely (``sample_worlds``)."""

    name = "uniform"

    def sample(self, info: InfoSet, n: int, rng: random.Random, depth: int | None = None
               ) -> Worlds:
        return sample_worlds(info, n, rng, depth)


class InferenceSampler:
    """Deals weighted by how likely they make the other seats' moves this round under
    ``model`` (module docstring): ``candidates`` x ``n`` uniform deals of the other hands,
    ``n`` of them drawn by systematic resampling, the undealt deck shuffled anew for each.
    Where no other seat has moved this round the worlds are ``sample_worlds``'s."""

    name = "policy"

    def __init__(self, model: MoveModel, candidates: int = 4, recent: int = 3) -> None:
        if candidates < 1:
            raise ValueError(f"sampler candidates must be at least 1, got {candidates}")
        self.model = model
        self.candidates = candidates
        self.recent = recent

    def posterior(self, info: InfoSet, hands: np.ndarray) -> np.ndarray:
        """The normalised weights (C,) of the candidate deals ``hands`` (C, players): the
        likelihood of each other seat's last ``recent`` moves this round (all of them in
        rounds of 3 cards; in scopone's 10-card hands it bounds the cost and keeps the
        weights from resting on a few deals)."""
        decisions = past_decisions(info, [int(h) for h in hands[0]])
        per_seat: dict[int, int] = {}
        kept = []
        for d in reversed(decisions):
            per_seat[d.seat] = per_seat.get(d.seat, 0) + 1
            if per_seat[d.seat] <= self.recent:
                kept.append(d)
        decisions = kept[::-1]
        logw = self.model.log_likelihood(decisions, hands) if decisions else np.zeros(len(hands))
        w = np.exp(logw - logw.max())
        return w / w.sum()

    def sample(self, info: InfoSet, n: int, rng: random.Random, depth: int | None = None
               ) -> Worlds:
        if not any(seat != info.seat for seat, _ in info.round_moves):
            return sample_worlds(info, n, rng, depth)
        template = world_template(info)
        horizon = N_CARDS if depth is None else dealt_within(info, depth)
        unseen, others, dealt = _unseen_places(info)
        # only the other hands: the deck is dealt after resampling
        cands = np.array([_deal_into(rng.sample(unseen, dealt), others, list(template.hands))
                          for _ in range(self.candidates * n)], np.uint64)
        weights = self.posterior(info, cands)
        # systematic resampling: n evenly spaced points on the weights' cumulative sum
        points = (rng.random() + np.arange(n)) / n
        picks = np.minimum(np.searchsorted(np.cumsum(weights), points), len(cands) - 1)
        found: dict[tuple, list] = {}
        for k in picks.tolist():
            hands = [int(h) for h in cands[k]]
            held = 0
            for h in hands:
                held |= h
            rest = [c for c in unseen if not held >> c & 1]
            rng.shuffle(rest)
            _count(found, template, hands, rest, horizon)
        return [(w, k) for w, k in found.values()]


def log_uniform_hands(info: InfoSet) -> float:
    """The log-probability the uniform sampler gives any one deal of the other hands."""
    _, others, _ = _unseen_places(info)
    n = len(cards_of(info.unseen))
    out = 0.0
    for _, size in others:
        out -= math.log(math.comb(n, size))
        n -= size
    return out


SAMPLER_GROUP = "scopa.samplers"


def _registered() -> dict[str, importlib.metadata.EntryPoint]:
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=SAMPLER_GROUP)}


def sampler_names() -> list[str]:
    """The names ``make_sampler`` knows: ``uniform`` and the registered ones."""
    return ["uniform"] + sorted(n for n in _registered() if n != "uniform")


def check_sampler(name: str) -> None:
    """``ValueError`` naming the known samplers unless ``name`` is one."""
    if name not in sampler_names():
        raise ValueError(f"unknown world sampler {name!r}; known: {', '.join(sampler_names())}")


def make_sampler(name: str, rules: Rules) -> WorldSampler:
    """The world sampler ``name`` for games of ``rules`` (an entry point's factory is
    called with ``rules``); ``ValueError`` in one line when it is unknown or cannot be
    built."""
    check_sampler(name)
    if name == "uniform":
        return UniformSampler()
    ep = _registered()[name]
    try:
        return ep.load()(rules)
    except ValueError:
        raise
    except Exception as e:  # a broken plugin: named, in one line
        raise ValueError(f"world sampler {name!r} ({ep.value}) cannot be built: "
                         f"{type(e).__name__}: {e}") from None
