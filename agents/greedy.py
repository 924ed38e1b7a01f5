"""``greedy``: the best immediate capture, else the least helpful card to put down.

- If some legal move captures, play the capture with the highest value, compared in
  this order: scopa, settebello, number of coins, primiera value of the cards
  (played card included), number of cards.
- Otherwise put down the card whose resulting table gives the opponent the least:
  for each card, the best capture (same order) that any unseen card could make on
  the new table; ties keep the more valuable cards in hand (put down the one with
  the lowest value as a capture of itself: not the settebello, not a coin, low
  primiera value).
Deterministic: it never uses its RNG.
"""

from __future__ import annotations

from scopa_env.cards import RANK, SETTEBELLO
from scopa_env.observation import InfoSet
from scopa_env.rules import Rules

from .base import BaseAgent
from .values import best_reply_key, greedy_key, is_last_play, played_card, table_after

_NONE = (0, 0, 0, 0, 0)


class GreedyAgent(BaseAgent):
    """Best immediate capture; with none, the card that gives the opponent least."""

    name = "greedy"
    summary = "best immediate capture (scopa, settebello, coins, primiera, cards); " \
              "else the card that gives the opponent least"

    def act(self, info: InfoSet) -> int:
        legal = info.legal_actions
        if len(legal) == 1:
            return legal[0]
        rules, table = info.rules, info.table
        last = is_last_play(info)
        keys = [greedy_key(a, table, rules, last) for a in legal]
        best = max(keys)
        if best != _NONE:
            return legal[keys.index(best)]

        def place_cost(a: int) -> tuple:
            return (best_reply_key(table_after(a, table), info.unseen, rules),
                    keep_value(played_card(a), rules), a)

        return min(legal, key=place_cost)


def keep_value(card: int, rules: Rules) -> tuple[int, int, int]:
    """How much a card is worth keeping: (settebello, coin, primiera value)."""
    return (int(card == SETTEBELLO), int(card < 10), rules.primiera_values[RANK[card] - 1])
