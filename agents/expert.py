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
"""

from __future__ import annotations

from scopa_env.cards import RANK, SETTEBELLO, cards_of
from scopa_env.moves import card_moves
from scopa_env.observation import InfoSet

from .base import BaseAgent
from .values import PointModel, captured, is_last_play, played_card, rank_counts, table_after

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
                if RANK[card] == 7:
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
