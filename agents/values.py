"""Card counting and move values shared by the rule-based agents.

Everything here reads only an ``InfoSet`` (or plain card masks): no hidden card.
The legal moves of a card on a table come from the engine (``card_moves``);
nothing here re-implements a rule beyond what a capture does to the table.
"""

from __future__ import annotations

from scopa_env.cards import COINS_MASK, N_CARDS, RANK, SETTEBELLO, cards_of
from scopa_env.moves import ACE_ALL_BASE, ACTION_CAPTURE, ACTION_CARD_LIST, card_moves
from scopa_env.observation import InfoSet
from scopa_env.rules import Rules

SEVENS = sum(1 << (s * 10 + 6) for s in range(4))


def played_card(action: int) -> int:
    """The card an action plays."""
    return ACTION_CARD_LIST[action]


def captured(action: int, table: int) -> int:
    """Bitmask of the table cards an action takes (ace-takes-all: the whole table)."""
    return table if action >= ACE_ALL_BASE else ACTION_CAPTURE[action]


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
    return (bool(cap) and cap == table and action < ACE_ALL_BASE
            and (not last_play or rules.last_play_scopa))


def rank_counts(mask: int) -> list[int]:
    """How many cards of each rank (index 1..10) a mask holds."""
    counts = [0] * 11
    for c in cards_of(mask):
        counts[RANK[c]] += 1
    return counts


def greedy_key(action: int, table: int, rules: Rules,
               last_play: bool = False) -> tuple[int, int, int, int, int]:
    """The greedy value of a move, compared lexicographically: (scopa, settebello,
    coins, primiera value of the cards, number of cards) of what it puts in the
    pile (the played card included); all zero for a card put on the table."""
    cap = captured(action, table)
    if not cap:
        return (0, 0, 0, 0, 0)
    pile = cap | 1 << ACTION_CARD_LIST[action]
    prim = rules.primiera_values
    return (int(sweeps(action, table, rules, last_play)), pile >> SETTEBELLO & 1,
            (pile & COINS_MASK).bit_count(), sum(prim[RANK[c] - 1] for c in cards_of(pile)),
            pile.bit_count())


def best_reply_key(table: int, cards: int, rules: Rules) -> tuple[int, int, int, int, int]:
    """The best greedy value any one of ``cards`` could take from ``table``."""
    best = (0, 0, 0, 0, 0)
    seen_ranks: set[tuple[int, bool]] = set()
    for c in cards_of(cards):
        # cards of one rank capture the same sets; only their own coin/settebello differ
        kind = (RANK[c], c < 10)
        if kind in seen_ranks and c != SETTEBELLO:
            continue
        seen_ranks.add(kind)
        for a in card_moves(c, table, rules):
            k = greedy_key(a, table, rules)
            if k > best:
                best = k
    return best


class PointModel:
    """Approximate points a side earns by adding cards to its pile, given the
    piles so far: 1 per scopa and for the settebello; coins, sevens, sixes, aces
    and plain cards by their share of the denari, primiera and carte points,
    dropped to 0 once that point is settled."""

    def __init__(self, info: InfoSet):
        own, other = info.own_pile, info.other_pile
        self.carte_open = own.bit_count() <= 20 and other.bit_count() <= 20
        self.denari_open = ((own & COINS_MASK).bit_count() <= 5
                            and (other & COINS_MASK).bit_count() <= 5)
        w = [0.0] * N_CARDS
        for c in range(N_CARDS):
            v = 0.05 if self.carte_open else 0.0
            if c < 10 and self.denari_open:
                v += 0.15
            v += {7: 0.25, 6: 0.12, 1: 0.08}.get(RANK[c], 0.0)
            if c == SETTEBELLO:
                v += 1.0
            if info.rules.re_bello and c == 9:
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
