"""Dealing: the deal order of a hand, the opening table and the three-kings redeal; the
per-game form (one deck, Python ints) and the array form (many decks at once) side by
side.

A hand deals ``players * hand_size`` cards one at a time from the seat after the dealer,
then ``table_size`` cards face up (the opening table), then a round of hands each time
every hand is empty: ``deal_place`` says where the card at each position of the deal
order goes. With ``redeal_three_kings`` a deal whose opening table holds
``REDEAL_KINGS`` kings or more is shuffled again (the next *attempt*).

A hand can also be dealt card by card from outside (OpenSpiel's chance nodes, a dealer
at a real table): ``deal_odds`` gives each next card's probability under the rules (a
uniform shuffle, conditioned on a deal the three-kings rule keeps), which is the
distribution of ``deal_order``'s seeded shuffles.

Shuffles: ``shuffled_deck`` (numpy's generator seeded with (match seed, hand, attempt),
the per-game engine and ``shuffle="engine"``) and ``hash_decks`` (a counter-based hash of
the same triple, for many games at once: ``shuffle="fast"``); they give different orders.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb
from typing import Any

import numpy as np

from ..cards import FULL_DECK, N_CARDS, RANK, RANK_MASK, card_id, cards_of
from .options import Rules

REDEAL_KINGS = 3  # kings on the opening table that redeal it
KINGS = RANK_MASK[10]
_KING_NP = np.array(RANK, dtype=np.int64) == 10
U64 = np.uint64
_CARD_BIT = np.array([1 << c for c in range(N_CARDS)], dtype=U64)


def first_dealer(players: int) -> int:
    """The dealer of a match's first hand: the last seat."""
    return players - 1


def next_dealer(dealer: Any, players: int) -> Any:
    """The dealer of the next hand (an int, or an array of them)."""
    return (dealer + 1) % players


def first_seat(dealer: Any, players: int) -> Any:
    """The seat dealt to first in each round, and first to play: the one after the
    dealer (an int, or an array of them)."""
    return (dealer + 1) % players


def deal_round(cards: Sequence[int], players: int) -> list[int]:
    """The hands one round deals from ``cards`` (``players * hand_size`` card ids in deal
    order), by seat counted from the first seat: card ``i`` goes to the ``i mod players``-th."""
    hands = [0] * players
    for i, c in enumerate(cards):
        hands[i % players] |= 1 << c
    return hands


TABLE = -1
"""``deal_place``'s answer for a card dealt face up to the table."""


def deal_place(pos: int, dealer: int, rules: Rules) -> int:
    """Where the card at position ``pos`` of a hand's deal order goes: a seat, or
    ``TABLE``. Each round deals its cards in turn from the seat after the dealer (as
    ``deal_round``); the opening table comes after the first round."""
    p, per_round, t = rules.players, rules.players * rules.hand_size, rules.table_size
    if pos >= per_round:
        if pos < per_round + t:
            return TABLE
        pos -= t
    return (first_seat(dealer, p) + pos % p) % p


def _kept_tables(undealt: int, undealt_kings: int, to_come: int, kings_on_table: int) -> int:
    """How many of the ``to_come``-card sets the rest of the opening table may be drawn
    from (out of ``undealt`` cards, ``undealt_kings`` of them kings) leave it with fewer
    than ``REDEAL_KINGS`` kings."""
    most = min(to_come, undealt_kings, REDEAL_KINGS - 1 - kings_on_table)
    return sum(comb(undealt_kings, k) * comb(undealt - undealt_kings, to_come - k)
               for k in range(most + 1))


def deal_odds(dealt: Sequence[int], rules: Rules) -> list[tuple[int, float]]:
    """The next card of a hand's deal order with its probability, given the cards
    ``dealt`` so far in order: uniform over the undealt cards, except that under
    ``redeal_three_kings`` the deal is conditioned on an opening table the rule keeps
    (the distribution of ``deal_order``). Cards of probability 0 are left out."""
    seen = 0
    for c in dealt:
        seen |= 1 << c
    undealt = cards_of(FULL_DECK & ~seen)
    if not undealt:
        return []
    start, pos = rules.players * rules.hand_size, len(dealt)
    if not rules.redeal_three_kings or pos >= start + rules.table_size:
        p = 1.0 / len(undealt)
        return [(c, p) for c in undealt]
    kings_left = (KINGS & ~seen).bit_count()
    on_table = sum(RANK[c] == 10 for c in dealt[start:])
    to_come = rules.table_size - max(0, pos - start)
    n = len(undealt)
    now = _kept_tables(n, kings_left, to_come, on_table) / comb(n, to_come)
    if not now:
        raise ValueError(f"the cards dealt put {on_table} kings on the opening table, which "
                         f"redeal_three_kings redeals: no deal goes on from here")
    to_table = pos >= start
    odds = {}
    for king in {RANK[c] == 10 for c in undealt}:
        after = _kept_tables(n - 1, kings_left - king, to_come - to_table,
                             on_table + (king and to_table)) / comb(n - 1, to_come - to_table)
        odds[king] = after / now / n
    return [(c, odds[RANK[c] == 10]) for c in undealt if odds[RANK[c] == 10] > 0]


def shuffled_deck(seed: int, hand_index: int, attempt: int) -> tuple[int, ...]:
    """The deal order of a hand, from (match seed, hand number, redeal attempt)."""
    rng = np.random.default_rng([seed, hand_index, attempt])
    return tuple(int(c) for c in rng.permutation(N_CARDS))


def parse_deck(deck: Any) -> tuple[int, ...]:
    """A deck given as card ids or text codes; checks it is all 40 cards once."""
    cards = tuple(card_id(c) if isinstance(c, str) else int(c) for c in deck)
    if len(cards) != N_CARDS or len(set(cards)) != N_CARDS or not all(
        0 <= c < N_CARDS for c in cards
    ):
        raise ValueError(f"a deck must hold each of the 40 cards exactly once, got {len(cards)} "
                         f"entries with {len(set(cards))} distinct")
    return cards


def opening_table(deck: tuple[int, ...], rules: Rules) -> int:
    """The opening table's cards (a mask): the ``table_size`` cards after the first round."""
    start = rules.players * rules.hand_size
    m = 0
    for c in deck[start:start + rules.table_size]:
        m |= 1 << c
    return m


def needs_redeal(deck: tuple[int, ...], rules: Rules) -> bool:
    """Whether ``redeal_three_kings`` redeals this deal order (three or more kings on
    the opening table)."""
    return rules.redeal_three_kings and \
        (opening_table(deck, rules) & KINGS).bit_count() >= REDEAL_KINGS


def deal_order(seed: int, hand_index: int, rules: Rules) -> tuple[tuple[int, ...], int]:
    """The deal order of hand ``hand_index`` of the match seeded ``seed``: shuffled
    again (the next redeal attempt) as long as the three-kings rule redeals it; with
    the number of redeals."""
    attempt = 0
    deck = shuffled_deck(seed, hand_index, attempt)
    while needs_redeal(deck, rules):
        attempt += 1
        deck = shuffled_deck(seed, hand_index, attempt)
    return deck, attempt


def played_deck(deck: Any, rules: Rules) -> tuple[int, ...]:
    """A given deal order (card ids or codes) checked as one that was played: all 40
    cards once, and not one that the three-kings rule redeals."""
    d = parse_deck(deck)
    if needs_redeal(d, rules):
        raise ValueError("this deck puts three or more kings on the opening table, which "
                         "redeal_three_kings redeals: give the deck of the deal played")
    return d


# -- the array form -----------------------------------------------------------------------
def deal_round_np(cards: np.ndarray, players: int) -> np.ndarray:
    """``deal_round`` of many deals: ``(G, players * hand_size)`` int64 card ids ->
    ``(G, players)`` uint64 hands, by seat counted from the first seat."""
    bits = _CARD_BIT.take(cards)
    dealt = bits[:, :players].copy()
    for j in range(1, cards.shape[1] // players):
        dealt |= bits[:, j * players:(j + 1) * players]
    return dealt


def opening_cards_np(decks: np.ndarray, rules: Rules) -> np.ndarray:
    """The opening table's card ids of many deal orders: ``(G, 40)`` -> ``(G, table_size)``."""
    start = rules.players * rules.hand_size
    return decks[:, start:start + rules.table_size]


def needs_redeal_np(decks: np.ndarray, rules: Rules) -> np.ndarray:
    """``needs_redeal`` of many deal orders ``(G, 40)`` card ids -> ``(G,)`` bool."""
    if not rules.redeal_three_kings or rules.table_size < REDEAL_KINGS:
        return np.zeros(len(decks), bool)
    return _KING_NP[opening_cards_np(decks, rules)].sum(1) >= REDEAL_KINGS


def mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser on a uint64 array (wrapping arithmetic)."""
    x = np.asarray(x, dtype=U64) + U64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> U64(30))) * U64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> U64(27))) * U64(0x94D049BB133111EB)
    return x ^ (x >> U64(31))


def hash_decks(match_seeds: np.ndarray, hand_index: np.ndarray, attempt: np.ndarray
               ) -> np.ndarray:
    """Deal orders ``(G, 40)`` int8 for ``shuffle="fast"``: a permutation keyed by a
    hash of (match seed, hand index, redeal attempt, card)."""
    base = mix64(mix64(np.asarray(match_seeds, dtype=U64))
                 ^ mix64(np.asarray(hand_index, dtype=U64) * U64(0x10001)
                         + np.asarray(attempt, dtype=U64) + U64(0x5EED)))
    keys = mix64(base[:, None] + np.arange(N_CARDS, dtype=U64)[None, :]
                 * U64(0xD1B54A32D192ED03))
    return np.argsort(keys, axis=1, kind="stable").astype(np.int8)


def hash_deal_orders(match_seeds: np.ndarray, hand_index: np.ndarray, rules: Rules
                     ) -> tuple[np.ndarray, np.ndarray]:
    """``deal_order`` of many hands with ``hash_decks``: ``(G, 40)`` deal orders and the
    number of redeals of each."""
    attempts = np.zeros(len(match_seeds), np.int64)
    decks = hash_decks(match_seeds, hand_index, attempts)
    redo = needs_redeal_np(decks, rules)
    while redo.any():
        attempts[redo] += 1
        decks[redo] = hash_decks(match_seeds[redo], hand_index[redo], attempts[redo])
        redo &= needs_redeal_np(decks, rules)
    return decks, attempts
