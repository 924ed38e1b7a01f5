"""Card counting and move values shared by the rule-based agents.

Everything here reads only an ``InfoSet`` (or plain card masks): no hidden card.
The rules come from the engine: legal moves (``card_moves``), what a capture takes and
the scopa predicate (``scopa_env.rules.capture``), the majorities
(``scopa_env.rules.scoring``).
"""

from __future__ import annotations

from scopa_env.cards import N_CARDS, RANK, RE_BELLO, SETTEBELLO, cards_of
from scopa_env.catalogue import captured
from scopa_env.moves import ACE_ALL_BASE, ACTION_CARD_LIST
from scopa_env.observation import InfoSet
from scopa_env.rules import Rules
from scopa_env.rules.capture import is_scopa
from scopa_env.rules.scoring import carte_open, denari_open

SEVENS = sum(1 << (s * 10 + 6) for s in range(4))


def played_card(action: int) -> int:
    """The card an action plays."""
    return ACTION_CARD_LIST[action]


def table_after(action: int, table: int) -> int:
    """The table once ``action`` is played on it."""
    cap = captured(action, table)
    return table & ~cap if cap else table | 1 << ACTION_CARD_LIST[action]


def is_last_play(info: InfoSet) -> bool:
    """Whether the seat is about to play the last card of the hand."""
    return info.deck_count == 0 and sum(info.hand_sizes) == 1


def sweeps(action: int, table: int, rules: Rules, last_play: bool = False) -> bool:
    """Whether ``action`` scores a scopa: it captures and empties the table (not by an
    ace taking all, and not on the hand's last play unless ``last_play_scopa``)."""
    cap = captured(action, table)
    return is_scopa(bool(cap), table & ~cap, action >= ACE_ALL_BASE, last_play,
                    rules.last_play_scopa)


def rank_counts(mask: int) -> list[int]:
    """How many cards of each rank (index 1..10) a mask holds."""
    counts = [0] * 11
    for c in cards_of(mask):
        counts[RANK[c]] += 1
    return counts


class PointModel:
    """Approximate points a side earns by adding cards to its pile, given the
    piles so far: 1 per scopa and for the settebello; coins, sevens, sixes, aces
    and plain cards by their share of the denari, primiera and carte points,
    dropped to 0 once that point is settled."""

    def __init__(self, info: InfoSet):
        own, other = info.own_pile, info.other_pile
        self.carte_open = carte_open(own, other)
        self.denari_open = denari_open(own, other)
        w = [0.0] * N_CARDS
        for c in range(N_CARDS):
            v = 0.05 if self.carte_open else 0.0
            if c < 10 and self.denari_open:
                v += 0.15
            v += {7: 0.25, 6: 0.12, 1: 0.08}.get(RANK[c], 0.0)
            if c == SETTEBELLO:
                v += 1.0
            if info.rules.re_bello and c == RE_BELLO:
                v += 1.0
            w[c] = v
        self.card_value = w

    def pile_value(self, mask: int) -> float:
        """Value of adding ``mask`` to a pile."""
        w = self.card_value
        return sum(w[c] for c in cards_of(mask))

    def move_value(self, action: int, table: int, rules: Rules, last_play: bool = False
                   ) -> float:
        """Value of a move to the side playing it: captured cards and scopa."""
        cap = captured(action, table)
        if not cap:
            return 0.0
        v = self.pile_value(cap | 1 << ACTION_CARD_LIST[action])
        if sweeps(action, table, rules, last_play):
            v += 1.0
        return v
