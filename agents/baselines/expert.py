"""``expert``: the traditional wisdom of Scopa players, as a one-move evaluation.

Every legal move gets a score and the best is played (deterministic):

- **What it takes**: the approximate points of the captured cards (``PointModel``:
  1 per scopa and for the settebello, coins, sevens, sixes, aces and plain cards
  by their share of denari, primiera and carte, 0 once a point is settled). Sevens
  and the settebello weigh most: it hunts them.
- **Card counting**: the cards it has not seen (not in its hand, on the table or in
  any pile) are the ones the next opponent may hold, each with probability
  ``opponent hand size / unseen``.
- **What it leaves**: minus the expected best capture the next opponent can make on
  the table left behind (a sweep of that table counts 1 for the scopa): no cheap
  scopa, no exposed seven or settebello. A card whose other copies are all gone
  cannot be taken by its own rank, so this favours putting down those duplicates;
  a small bonus breaks ties in their favour, and a small penalty keeps sevens in
  hand when one is put down.
- **Last capture**: once the deck is empty, whoever captures last takes the table,
  so a capture also earns part of the value of the cards it leaves (all of it when
  nobody can play after it).

``expert_actions(env, games)`` is the batched form: the same scores, computed with the
same operations in the same order (a pile's value summed card by card in ascending card
id, the opponent's reply values sorted and folded card by card), so the moves, ties
included, are those of the per-game agent, for many games of a ``VectorScopaEnv`` at
once (``agents.baselines.batching``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from scopa_env.bitsets import popcount
from scopa_env.cards import N_CARDS, RANK, SETTEBELLO, cards_of
from scopa_env.catalogue import captured
from scopa_env.moves import ACE_ALL_BASE, card_moves
from scopa_env.observation import InfoSet
from scopa_env.rules.capture import is_scopa_np

from ..base import BaseAgent
from .values import PointModel, is_last_play, played_card, rank_counts, table_after

if TYPE_CHECKING:
    from scopa_env.vector import VectorScopaEnv

    from .batching import Batch, Unseen

SEVEN = 7  # the rank it keeps in hand and hunts
DEAD_RANK_BONUS = 0.05
SEVEN_PLACE_PENALTY = 0.1
LAST_CAPTURE_SHARE = 0.5


class ExpertAgent(BaseAgent):
    """Heuristic player: counts cards, avoids giving sweeps, hunts sevens, last capture."""

    name = "expert"
    summary = "card counting, no cheap scopa for the opponent, hunts sevens and " \
              "the settebello, dead-rank duplicates, last capture"

    def scores(self, info: InfoSet) -> list[float]:
        """The score of every legal move (in ``info.legal_actions`` order)."""
        rules, table, legal = info.rules, info.table, info.legal_actions
        model = PointModel(info)
        last = is_last_play(info)
        unseen_ranks = rank_counts(info.unseen)
        p = info.players
        nxt = (info.seat + 1) % p
        after_me = [(info.seat + k) % p for k in range(1, p)]
        reply_hand = info.hand_sizes[nxt]
        if reply_hand == 0 and info.deck_count > 0:
            reply_hand = rules.hand_size  # I play the deal's last card: a new deal follows
        others_left = sum(info.hand_sizes[s] for s in after_me)
        out = []
        for a in legal:
            card = played_card(a)
            cap = captured(a, table)
            after = table_after(a, table)
            v = model.move_value(a, table, rules, last)
            if not last and reply_hand:
                v -= self.expected_reply(after, info.unseen, reply_hand, model, info)
            if cap and info.deck_count == 0 and after:
                share = 1.0 if others_left == 0 and info.hand_sizes[info.seat] == 1 else \
                    LAST_CAPTURE_SHARE
                v += share * model.pile_value(after)
            if not cap:
                if unseen_ranks[RANK[card]] == 0:
                    v += DEAD_RANK_BONUS
                if RANK[card] == SEVEN:
                    v -= SEVEN_PLACE_PENALTY
            out.append(v)
        return out

    @staticmethod
    def expected_reply(table: int, unseen: int, hand: int, model: PointModel,
                       info: InfoSet) -> float:
        """Expected value of the next opponent's best capture on ``table``, each unseen
        card held with probability ``hand / unseen`` (independently)."""
        if not table or not unseen:
            return 0.0
        n = unseen.bit_count()
        p = min(1.0, hand / n)
        rules = info.rules
        values = []
        cache: dict[tuple[int, int], float] = {}
        for c in cards_of(unseen):
            kind = (RANK[c], 2 if c == SETTEBELLO else int(c < 10))
            v = cache.get(kind)
            if v is None:
                v = 0.0
                for a in card_moves(c, table, rules):
                    if captured(a, table):
                        v = max(v, model.move_value(a, table, rules))
                cache[kind] = v
            if v > 0:
                values.append(v)
        values.sort(reverse=True)
        total, miss = 0.0, 1.0
        for v in values:
            total += v * p * miss
            miss *= 1.0 - p
        return total


# -- the batched form -----------------------------------------------------------------------
def expert_actions(env: VectorScopaEnv, games: np.ndarray) -> np.ndarray:
    """``ExpertAgent().act(env.info_set(g))`` for every game of ``games``."""
    from .batching import (
        BIT,
        RANK0,
        batch,
        card_value_base,
        card_values,
        pile_values,
        unseen_by_rank,
    )

    b = batch(env, games)
    rules, values = env.rules, card_values(env.rules)
    n, g, p = len(games), b.game, env.players
    rows = np.arange(n)
    # per game: PointModel's case, the next seat's hand, the last-capture share
    base = card_value_base(b.own, b.other)
    reply_hand = b.sizes[rows, (b.seat + 1) % p]
    reply_hand = np.where((reply_hand == 0) & (b.deck > 0), rules.hand_size, reply_hand)
    mine = b.sizes[rows, b.seat]
    share = np.where((b.sizes.sum(1) == mine) & (mine == 1), 1.0, LAST_CAPTURE_SHARE)
    unseen = unseen_by_rank(b.unseen)
    # what the move takes
    v = np.zeros(len(g))
    ci = np.flatnonzero(b.cap)
    gc = g.take(ci)
    sweeps = is_scopa_np(np.ones(len(ci), bool), b.after.take(ci),
                         b.ids.take(ci) >= ACE_ALL_BASE, b.last.take(gc), rules.last_play_scopa)
    v[ci] = pile_values(b.cap.take(ci) | BIT.take(b.card.take(ci)), base.take(gc),
                        values) + np.where(sweeps, 1.0, 0.0)
    # minus the next opponent's expected best capture on the table it leaves
    ri = np.flatnonzero((b.count.take(g) > 1) & ~b.last.take(g) & (reply_hand.take(g) > 0)
                        & (b.after != 0) & (b.unseen.take(g) != 0))
    if len(ri):
        prob = np.minimum(1.0, reply_hand / np.maximum(popcount(b.unseen), 1))
        v[ri] = v[ri] - _expected_replies(env, b, ri, base, prob, unseen, values)
    # last capture: a share of what the capture leaves on the table
    li = np.flatnonzero((b.cap != 0) & (b.deck.take(g) == 0) & (b.after != 0))
    if len(li):
        gl = g.take(li)
        v[li] = v[li] + share.take(gl) * pile_values(b.after.take(li), base.take(gl),
                                                     values)
    # a place: put down dead-rank duplicates, keep sevens
    pi = np.flatnonzero(b.cap == 0)
    rank0 = RANK0.take(b.card.take(pi))
    gp = g.take(pi)
    dead = ~unseen.coin[gp, rank0] & (unseen.others[gp, rank0] == 0)
    vp = v.take(pi)
    vp = np.where(dead, vp + DEAD_RANK_BONUS, vp)
    v[pi] = np.where(rank0 == SEVEN - 1, vp - SEVEN_PLACE_PENALTY, vp)
    score = np.full((n, b.width), -np.inf)
    score[g, b.col] = v
    return env.legal_ids[games, score.argmax(1)]


def _expected_replies(env: VectorScopaEnv, b: Batch, mv: np.ndarray, base: np.ndarray,
                      prob: np.ndarray, unseen: Unseen, card_value: np.ndarray) -> np.ndarray:
    """``ExpertAgent.expected_reply`` of the table each move ``mv`` leaves: every unseen
    card's best capture value (its kind's, valued with the kind's lowest card as the
    per-game cache does), sorted descending and folded card by card."""
    from .batching import BIT, pile_values, reply_moves

    g = b.game.take(mv)
    player = unseen.best.take(g, axis=0)
    row, rank0, cap, sweeps = reply_moves(env, player, b.after.take(mv), b.after_rm.take(mv))
    # value each capture for the coin and for the lowest other card of its rank
    gr = g.take(row)
    other = unseen.lowest[gr, rank0]
    ci, oi = np.flatnonzero(unseen.coin[gr, rank0]), np.flatnonzero(other >= 0)
    at = np.concatenate([row.take(ci) * 20 + rank0.take(ci),
                         row.take(oi) * 20 + 10 + rank0.take(oi)])
    cards = np.concatenate([rank0.take(ci), other.take(oi)])
    sel = np.concatenate([ci, oi])
    values = (pile_values(cap.take(sel) | BIT.take(cards), base.take(gr.take(sel)),
                          card_value) + np.where(sweeps.take(sel), 1.0, 0.0))
    kind_value = np.zeros(len(mv) * 20)
    np.maximum.at(kind_value, at, values)
    # one value per unseen card (the coin, then the other cards of each rank), sorted
    # descending and folded; zeros come last and add nothing
    kind_value = kind_value.reshape(-1, 20)
    total = np.zeros(len(mv))
    some = np.flatnonzero(kind_value.max(1) > 0)
    kind_value, g = kind_value.take(some, axis=0), g.take(some)
    per_card = np.empty((len(some), N_CARDS))
    per_card[:, :10] = np.where(unseen.coin.take(g, axis=0), kind_value[:, :10], 0.0)
    others = unseen.others.take(g, axis=0)
    for k in range(1, 4):
        per_card[:, 10 * k:10 * k + 10] = np.where(others >= k, kind_value[:, 10:], 0.0)
    per_card.sort(axis=1)
    p = prob.take(g)
    q = 1.0 - p
    fold, miss = np.zeros(len(some)), np.ones(len(some))
    for j in range(int((per_card > 0).sum(1).max(initial=0))):
        fold = fold + per_card[:, N_CARDS - 1 - j] * p * miss  # total += v * p * miss
        miss = miss * q  # miss *= 1.0 - p
    total[some] = fold
    return total


__all__ = ["ExpertAgent", "expert_actions"]
