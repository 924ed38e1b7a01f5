"""``pimc``: perfect-information Monte Carlo search (``pimc:worlds=12,depth=5``).

For each move:
1. **Sample worlds.** Deal the cards the seat has not seen (``info.unseen``: the
   other hands and the rest of the deck) into the other seats' hands (by their known
   sizes) and the deck order (``agents.worlds``: at random, ``sampler=uniform``, or
   weighted by the others' moves this round, ``sampler=policy``); the seat's hand, the
   table, both piles, the scope counts and who captured last are as the seat knows them. ``worlds``
   samples are drawn; identical ones are merged (weighted), so that at the end of a
   2-player hand, where every card is known, one search does.
2. **Search each world** with alpha-beta (negamax: the two sides alternate at every
   ply in 2- and 4-player games alike, so a perfect-information world is a two-team
   zero-sum game) to ``depth`` plies, using the engine's ``apply`` as the step
   function (``deal_next=False``: the search stops at the end of the hand, scored
   exactly by the engine). Captures are searched first (sweeps, then larger ones).
3. **Leaf evaluation**: the expected hand points difference from the piles so far:
   scope exactly, the settebello, and carte, denari and primiera from a model where
   each card not yet captured goes to either side with probability 1/2.
4. **Average** each root move's value over the worlds and play the best (ties: the
   earlier legal id).
Only the root's legal moves and the information set are used: the sampled worlds
come from ``info.unseen`` and the agent's own RNG.
"""

from __future__ import annotations

import math

from scopa_env.cards import COINS_MASK, N_CARDS, RE_BELLO, SETTEBELLO, SUIT_MASK
from scopa_env.game import GameState, apply
from scopa_env.moves import ACE_ALL_BASE, ACTION_CAPTURE, legal_actions
from scopa_env.observation import InfoSet
from scopa_env.rules import Rules
from scopa_env.rules.scoring import CARTE_MAJORITY, DENARI_MAJORITY, napola_run

from ..base import BaseAgent
from ..worlds import WorldSampler, check_sampler, make_sampler

INF = float("inf")
PRIMIERA_SCALE = 6.0  # primiera sum difference worth tanh(1) ~ 0.76 of the point

# ---------------------------------------------------------------- leaf model


def _pairs_distribution(r: int) -> list[float]:
    """P(X = x) for the number X of ``r`` remaining cards one side gets, the cards
    going in pairs (plus a single one when ``r`` is odd) to either side with
    probability 1/2."""
    n = r // 2
    dist = [0.0] * (r + 1)
    for y in range(n + 1):
        p = math.comb(n, y) / 2 ** n
        if r % 2:
            dist[2 * y] += p / 2
            dist[2 * y + 1] += p / 2
        else:
            dist[2 * y] += p
    return dist


def _carte_table() -> list[list[float]]:
    """CARTE[a][b]: P(side A ends with the carte majority) - P(side B does), A holding a and B
    b cards (``_pairs_distribution`` for the rest)."""
    out = [[0.0] * (N_CARDS + 1) for _ in range(N_CARDS + 1)]
    for a in range(N_CARDS + 1):
        for b in range(N_CARDS + 1 - a):
            r = N_CARDS - a - b
            dist = _pairs_distribution(r)
            pa = sum(p for x, p in enumerate(dist) if a + x >= CARTE_MAJORITY)
            pb = sum(p for x, p in enumerate(dist) if b + r - x >= CARTE_MAJORITY)
            out[a][b] = pa - pb
    return out


def _denari_table() -> list[list[float]]:
    """DENARI[a][b]: P(A ends with the denari majority) - P(B does), each remaining coin going
    to either side with probability 1/2."""
    out = [[0.0] * 11 for _ in range(11)]
    for a in range(11):
        for b in range(11 - a):
            r = 10 - a - b
            pa = sum(math.comb(r, k) for k in range(r + 1)
                     if a + k >= DENARI_MAJORITY) / 2 ** r
            pb = sum(math.comb(r, k) for k in range(r + 1)
                     if b + (r - k) >= DENARI_MAJORITY) / 2 ** r
            out[a][b] = pa - pb
    return out


CARTE = _carte_table()
DENARI = _denari_table()


class LeafModel:
    """Expected hand points difference (side 0 minus side 1) from the two piles."""

    def __init__(self, rules: Rules):
        self.rules = rules
        self.values = rules.primiera_values
        self._suit: dict[int, float] = {}
        self._cache: dict[tuple[int, int], float] = {}

    def _suit_diff(self, a: int, b: int) -> float:
        """Expected best primiera value in one suit, A minus B (10-bit suit masks),
        each remaining card going to either side with probability 1/2."""
        key = a << 10 | b
        got = self._suit.get(key)
        if got is not None:
            return got
        vals = self.values
        rest = sorted((vals[r] for r in range(10) if not (a | b) >> r & 1), reverse=True)
        best_a = max((vals[r] for r in range(10) if a >> r & 1), default=0)
        best_b = max((vals[r] for r in range(10) if b >> r & 1), default=0)

        def expect(best: int) -> float:
            e, p = 0.0, 1.0
            for v in rest:
                if v <= best:
                    break
                e += v * p * 0.5
                p *= 0.5
            return e + best * p

        got = self._suit[key] = expect(best_a) - expect(best_b)
        return got

    def value(self, p0: int, p1: int) -> float:
        key = (p0, p1)
        got = self._cache.get(key)
        if got is not None:
            return got
        v = float((p0 >> SETTEBELLO & 1) - (p1 >> SETTEBELLO & 1))
        v += CARTE[p0.bit_count()][p1.bit_count()]
        v += DENARI[(p0 & COINS_MASK).bit_count()][(p1 & COINS_MASK).bit_count()]
        diff = 0.0
        for s in range(0, N_CARDS, 10):
            diff += self._suit_diff(p0 >> s & SUIT_MASK[0], p1 >> s & SUIT_MASK[0])
        v += math.tanh(diff / PRIMIERA_SCALE)
        rules = self.rules
        if rules.re_bello:
            v += (p0 >> RE_BELLO & 1) - (p1 >> RE_BELLO & 1)
        if rules.napola:
            v += napola_run(p0) - napola_run(p1)
        if len(self._cache) > 1 << 16:
            self._cache.clear()
        self._cache[key] = v
        return v


# ---------------------------------------------------------------- search

_CAPTURE_SIZE = [m.bit_count() for m in ACTION_CAPTURE]


class _Search:
    """Alpha-beta over one rules configuration (negamax: values for the side to move)."""

    def __init__(self, rules: Rules, leaf: LeafModel):
        self.rules = rules
        self.leaf = leaf
        self.nodes = 0
        self._order: dict[tuple[int, int], list[int]] = {}

    def ordered(self, hand: int, table: int) -> list[int]:
        """Legal moves, sweeps first, then larger captures, then the rest."""
        key = (hand, table)
        moves = self._order.get(key)
        if moves is None:
            moves = legal_actions(hand, table, self.rules)
            if len(moves) > 1:
                tsize = table.bit_count()

                def rank(a: int) -> int:
                    n = tsize if a >= ACE_ALL_BASE else _CAPTURE_SIZE[a]
                    return -(100 if n == tsize and n else n)

                moves.sort(key=rank)
            self._order[key] = moves
        return moves

    def child_value(self, s: GameState, a: int, depth: int) -> float:
        """Exact-window value of playing ``a`` in ``s`` for the side to move in ``s``."""
        self.nodes += 1
        c = s.copy()
        team = s.to_move % 2
        res = apply(c, a, False, None, False)
        if res.hand is not None:
            sc = res.hand.score
            return float(sc[team]["points"]["total"] - sc[1 - team]["points"]["total"])
        if depth <= 1:
            v = self.leaf.value(c.piles[0], c.piles[1]) + c.scope[0] - c.scope[1]
            return v if team == 0 else -v
        return -self.negamax(c, depth - 1, -INF, INF)

    def negamax(self, s: GameState, depth: int, alpha: float, beta: float) -> float:
        """Value of ``s`` for the side to move, searching ``depth`` more plies."""
        seat = s.to_move
        team = seat % 2
        moves = self.ordered(s.hands[seat], s.table)
        self.nodes += len(moves)
        leaf = self.leaf.value
        best = -INF
        last = moves[-1]
        for a in moves:
            # ``s`` is this node's own copy: the last child may reuse it
            c = s if a == last else s.copy()
            res = apply(c, a, False, None, False)
            if res.hand is not None:
                sc = res.hand.score
                v = float(sc[team]["points"]["total"] - sc[1 - team]["points"]["total"])
            elif depth <= 1:
                v = leaf(c.piles[0], c.piles[1]) + c.scope[0] - c.scope[1]
                if team:
                    v = -v
            else:
                v = -self.negamax(c, depth - 1, -beta, -alpha)
            if v > best:
                best = v
                if v > alpha:
                    alpha = v
                    if alpha >= beta:
                        break
        return best


# ---------------------------------------------------------------- agent


class PIMCAgent(BaseAgent):
    """Perfect-information Monte Carlo: sampled worlds, alpha-beta, averaged values."""

    name = "pimc"
    summary = "perfect-information Monte Carlo: sampled deals of the unseen cards, " \
              "alpha-beta to a depth, leaf evaluation, averaged over worlds"
    PARAMS = {
        "worlds": (int, 12, "sampled deals of the unseen cards per move"),
        "depth": (int, 5, "search depth in plies (moves), the root move included"),
        "sampler": (str, "uniform", "how the worlds are dealt: uniform, or policy (weighted "
                                    "by the shipped network's likelihood of the others' "
                                    "moves this round, agents.worlds)"),
    }
    values_in_points = True  # scores: the mean hand margin for the seat's team

    def __init__(self, seed: int | None = None, **params):
        super().__init__(seed=seed, **params)
        self.worlds = int(self.params["worlds"])
        self.depth = int(self.params["depth"])
        if self.worlds < 1 or self.depth < 1:
            raise ValueError(f"pimc: worlds and depth must be at least 1, got "
                             f"worlds={self.worlds}, depth={self.depth}")
        self.sampler = str(self.params["sampler"])
        check_sampler(self.sampler)
        if self.sampler == "uniform":  # the spec as it was before samplers existed
            self.spec = f"{self.name}:worlds={self.worlds},depth={self.depth}"
        self._leaf: dict[Rules, LeafModel] = {}
        self._samplers: dict[Rules, WorldSampler] = {}
        self.nodes = 0

    def scores(self, info: InfoSet) -> list[float]:
        """Average value of every legal move (in ``info.legal_actions`` order)."""
        legal = info.legal_actions
        model = self._leaf.get(info.rules)
        if model is None:
            model = self._leaf[info.rules] = LeafModel(info.rules)
        search = _Search(info.rules, model)
        totals = [0.0] * len(legal)
        sampler = self._samplers.get(info.rules)
        if sampler is None:
            sampler = self._samplers[info.rules] = make_sampler(self.sampler, info.rules)
        for world, weight in sampler.sample(info, self.worlds, self.rng, self.depth):
            for i, a in enumerate(legal):
                totals[i] += weight * search.child_value(world, a, self.depth)
        self.nodes += search.nodes
        return [t / self.worlds for t in totals]
