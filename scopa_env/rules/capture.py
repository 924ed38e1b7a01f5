"""Captures: which captures are legal, what a move does to the position, the scopa
predicate and the leftover table; the per-game form and the array form side by side.

Which captures are legal is decided here alone (``legal_patterns``, on the table's
count of each rank; ``legal_captures``, the same on the table's cards): a card takes a
table card of its own rank when there is one (same-rank priority); otherwise an ace
with ``ace_takes_all`` takes the whole table; otherwise it takes any set of two or more
table cards whose ranks sum to its own (``capture_rule="fewest"``: only the sets of the
fewest cards); with nothing to take it is laid on the table. The sums are searched once,
over ranks (``rank_partitions``), and a rank pattern becomes card sets by choosing suits
among the table's cards. The per-game move generator (``scopa_env.moves``) and the
vector engine's lookup tables (``scopa_env.vector_tables``) both ask these functions.

A capture takes its cards (an ace playing ``ace_takes_all`` takes the whole table); it
*sweeps* for a scopa when it leaves the table empty, except an ace taking all and, unless
``last_play_scopa``, the last play of the hand (``play_card`` is the move itself on a
bitset position). At the hand's end the cards left on the table go to the team that
captured last (to nobody if nobody captured).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from ..cards import RANK, RANK_MASK, cards_of, mask_of

Pattern = tuple[tuple[int, int], ...]
"""A capture by ranks: ``((rank, how many cards of it), ...)``, ranks ascending."""
TAKE_SAME = -1
"""``legal_patterns``' answer when the card must take a table card of its own rank."""
TAKE_ALL = -2
"""``legal_patterns``' answer when an ace takes the whole table (``ace_takes_all``)."""
ALL_CARDS = -1
"""``legal_captures``' answer for an ace taking the whole table: every card (``-1`` as
a bitmask), i.e. whatever the table holds."""


def _partitions(rank: int) -> tuple[Pattern, ...]:
    """Multisets of two or more ranks below ``rank`` summing to it, each rank at most
    four times (a deck has four suits): the one search of sums."""
    out: list[Pattern] = []

    def rec(k: int, remaining: int, chosen: Pattern) -> None:
        if remaining == 0:
            if sum(m for _, m in chosen) >= 2:
                out.append(chosen)
            return
        if k >= rank or k > remaining:
            return
        for m in range(min(4, remaining // k), -1, -1):
            rec(k + 1, remaining - m * k, chosen + (((k, m),) if m else ()))

    rec(1, rank, ())
    return tuple(out)


_PARTITIONS = ((),) + tuple(_partitions(r) for r in range(1, 11))


def rank_partitions(rank: int) -> tuple[Pattern, ...]:
    """Every rank pattern of a sum capture by a card of ``rank`` (in a fixed order: bit
    ``i`` of a ``legal_patterns`` answer is the ``i``-th)."""
    return _PARTITIONS[rank]


def rank_counts(table: int) -> int:
    """The table's count of each rank, 4 bits a rank (rank ``k`` at bit ``4 * (k - 1)``):
    the sum over the four suits of each suit's ten bits spread one to a nibble (a card is
    ``suit * 10 + rank - 1``; a count is at most 4, so no nibble overflows)."""
    return (_SPREAD[table & 1023] + _SPREAD[table >> 10 & 1023]
            + _SPREAD[table >> 20 & 1023] + _SPREAD[table >> 30 & 1023])


_SPREAD = tuple(sum((s >> i & 1) << (4 * i) for i in range(10)) for s in range(1024))


def _allows(rank: int) -> tuple[tuple[int, tuple[int, ...]], ...]:
    """For each rank ``k`` below ``rank``: which of ``rank``'s sum patterns (bit ``i``:
    the ``i``-th of ``rank_partitions``) a table with ``n`` cards of rank ``k`` allows,
    ``n = 0 .. 15`` (a 4-bit count)."""
    out = []
    for k in range(1, rank):
        need = [dict(p).get(k, 0) for p in _PARTITIONS[rank]]
        by_n = tuple(sum(1 << i for i, m in enumerate(need) if m <= n) for n in range(5))
        out.append((k, by_n + by_n[4:] * 11))
    return tuple(out)


_ALLOWS = ((),) + tuple(_allows(r) for r in range(1, 11))
# per rank: its sum patterns of each number of cards, fewest first (bitmasks as above)
_BY_SIZE = ((),) + tuple(
    tuple(m for m in (sum(1 << i for i, p in enumerate(_PARTITIONS[r])
                          if sum(c for _, c in p) == n) for n in range(2, 11)) if m)
    for r in range(1, 11))


def legal_patterns(rank: int, counts: int, capture_rule: str = "all",
                   ace_takes_all: bool = False) -> int:
    """The legal captures of a card of ``rank`` on a table holding ``counts`` cards of
    each rank (``rank_counts``), by ranks: ``TAKE_SAME``, it takes a table card of its
    own rank (same-rank priority); ``TAKE_ALL``, an ace takes the whole table; else the
    bitmask of the sum patterns (``rank_partitions``) the table holds (``"fewest"``:
    those of the fewest cards), 0 when there is none and the card is laid."""
    if counts >> (4 * rank - 4) & 15:
        return TAKE_SAME
    if rank == 1:
        return TAKE_ALL if ace_takes_all and counts else 0
    bits = -1
    for k, allows in _ALLOWS[rank]:
        bits &= allows[counts >> (4 * k - 4) & 15]
    if capture_rule == "fewest" and bits:
        bits &= next(m for m in _BY_SIZE[rank] if bits & m)
    return bits


def pattern_captures(pattern: Pattern, table: int) -> list[int]:
    """The card sets (bitmasks) of ``table`` that a rank pattern takes: every choice of
    suits among the table's cards of its ranks."""
    sets = [0]
    for k, m in pattern:
        picks = [mask_of(c) for c in combinations(cards_of(table & RANK_MASK[k]), m)]
        sets = [s | x for s in sets for x in picks]
    return sets


def _sum_captures(rank: int, bits: int, table: int) -> tuple[int, ...]:
    """The card sets of ``table`` of the sum patterns ``bits`` marks."""
    return tuple(s for i, p in enumerate(_PARTITIONS[rank]) if bits >> i & 1
                 for s in pattern_captures(p, table))


def legal_captures(card: int, table: int, capture_rule: str = "all",
                   ace_takes_all: bool = False) -> tuple[int, ...]:
    """The legal captures of playing ``card`` onto ``table`` (``legal_patterns`` on its
    cards): the bitmask of the table cards each takes, ``(ALL_CARDS,)`` for an ace taking
    all, ``()`` when the card is laid on the table."""
    r = RANK[card]
    got = legal_patterns(r, rank_counts(table), capture_rule, ace_takes_all)
    if got == TAKE_ALL:
        return (ALL_CARDS,)
    if got == TAKE_SAME:
        return tuple(1 << c for c in cards_of(table & RANK_MASK[r]))
    return _sum_captures(r, got, table)


def sum_captures(table: int, rank: int) -> tuple[int, ...]:
    """Bitmasks of every set of 2+ table cards whose ranks sum to ``rank`` (the table's
    cards of that rank aside)."""
    return _sum_captures(rank, legal_patterns(rank, rank_counts(table & _BELOW[rank])), table)


_BELOW = (0,) + tuple(sum(RANK_MASK[k] for k in range(1, r)) for r in range(1, 11))


def is_scopa(captures: bool, table_after: int, takes_all: bool, last_play: bool,
             last_play_scopa: bool) -> bool:
    """Whether a move scores a scopa: it captures (``captures``) and leaves the table
    empty (``table_after == 0``), it is not an ace taking all, and it is not the hand's
    last play unless ``last_play_scopa``."""
    return (captures and not table_after and not takes_all
            and (not last_play or last_play_scopa))


def play_card(hand: int, table: int, pile: int, card: int, capture: int, takes_all: bool,
              last_play: bool, last_play_scopa: bool) -> tuple[int, int, int, bool]:
    """The move itself on a bitset position: ``card`` leaves ``hand``; with a ``capture``
    (the table cards it takes, ``takes_all`` for an ace taking all) those cards and the
    card join ``pile`` and its player becomes the last capturer, else the card is laid on
    ``table``. ``last_play``: no other card is left to play this hand. Returns ``(hand,
    table, pile, scopa)``."""
    bit = 1 << card
    if capture:
        table &= ~capture
        return (hand & ~bit, table, pile | capture | bit,
                is_scopa(True, table, takes_all, last_play, last_play_scopa))
    return hand & ~bit, table | bit, pile, False


def give_leftover(piles: list[int], last_capture_team: int | None, table: int) -> None:
    """The hand is over: the table's cards join the last capturing team's pile (in place)."""
    if last_capture_team is not None:
        piles[last_capture_team] |= table


def is_scopa_np(captures: np.ndarray, table_after: np.ndarray,
                takes_all: np.ndarray | None = None, last_play: np.ndarray | None = None,
                last_play_scopa: bool = True) -> np.ndarray:
    """``is_scopa`` of many moves (bool arrays; ``takes_all`` None: no ace takes all;
    ``last_play`` None: no move is a hand's last play)."""
    scopa = captures & (table_after == 0)
    if takes_all is not None:
        scopa &= ~takes_all
    if last_play is not None and not last_play_scopa:
        scopa &= ~last_play
    return scopa


def give_leftover_np(piles: np.ndarray, games: np.ndarray, last_capture_team: np.ndarray,
                     table: np.ndarray) -> None:
    """``give_leftover`` in ``games`` of ``piles`` (N, 2) (in place): ``last_capture_team``
    and ``table`` per game of ``games``, -1 where nobody captured."""
    swept = last_capture_team >= 0
    piles[games[swept], last_capture_team[swept]] |= table[swept]
