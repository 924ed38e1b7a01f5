"""Lookup tables for the vectorised environment, all derived from the engine's own
catalogue (``catalogue.action_id``), deck (``cards``) and capture rules
(``rules.capture``: its sum patterns and, for every key, its answer ``legal_patterns``).

Legal moves are generated per (game, hand card) row. Everything a played card ``c``
of rank ``r`` may do is one of a few *patterns*:

- place it (nothing on the table it can take);
- take one table card of rank ``r`` (same-rank priority), a pattern per card;
- a sum capture: a *rank partition* of ``r`` (a multiset of lower ranks, two or more
  parts, each rank at most four times), e.g. 7 = 3 + 4 or 7 = 1 + 1 + 5;
- ace takes all (with ``ace_takes_all``), a pattern per ace.

Which patterns apply depends only on how many table cards each rank has (capped at
the most a partition of ``r`` can use) and whether the table holds rank ``r`` (or,
for an ace, any other rank). That is a small integer, the card's *key*, read off
the rank-major table mask (bit ``4 * (rank - 1) + suit``) with three 12-bit and one
4-bit lookup (``RANK_KEY12``); ``card_lut`` maps each key to its patterns: the answer
of ``rules.capture.legal_patterns`` for a table of that key under the rules' options. A
pattern then expands into the table's card sets: for each of its ranks (*slots*, at
most four), every choice of ``m`` of the table's suits of that rank. The catalogue id of such a set
is ``PLACE_ID[c] + GROUP_POS[PAT_GROUP[p] + index]``, where ``index`` is the set's
mixed-radix position among all suit choices of the pattern (``PAT_RADIX``).
"""

from __future__ import annotations

from functools import cache
from itertools import combinations, product

import numpy as np

from .cards import N_CARDS, RANK, SUIT
from .catalogue import _INDEX, ACE_ALL_BASE, ACTION_CAPTURE, ACTION_CARD, N_ACTIONS, action_id
from .rules.capture import TAKE_ALL, TAKE_SAME, legal_patterns, rank_partitions

U64 = np.uint64
CARD_BIT = np.array([1 << c for c in range(N_CARDS)], dtype=U64)
"""Card id -> its bit in a card-id mask."""
RM_BIT = np.array([1 << (4 * (RANK[c] - 1) + SUIT[c]) for c in range(N_CARDS)], dtype=np.int64)
"""Card id -> its bit in a rank-major mask (int64: the masks stay below 2**40)."""
RANK_NP = np.array(RANK, dtype=np.int64)


def to_rank_major(mask: int) -> int:
    """A card-id mask in rank-major bit order."""
    out = 0
    for c in range(N_CARDS):
        if mask >> c & 1:
            out |= 1 << (4 * (RANK[c] - 1) + SUIT[c])
    return out


ACT_CARD = ACTION_CARD.astype(np.int64)
ACT_CAPTURE = np.array(ACTION_CAPTURE, dtype=U64)
ACT_CAPTURE_RM = np.zeros(N_ACTIONS, np.int64)
for _c in range(N_CARDS):
    ACT_CAPTURE_RM |= (ACT_CAPTURE >> U64(_c) & U64(1)).astype(np.int64) * RM_BIT[_c]
PLACE_ID = np.array([action_id(c, 0) for c in range(N_CARDS)], dtype=np.int64)

POP4 = np.array([bin(x).count("1") for x in range(16)], dtype=np.int64)
CHOOSE = np.array([[len(list(combinations(range(n), m))) for m in range(5)] for n in range(5)],
                  dtype=np.int64)
"""``CHOOSE[n, m]``: ways to pick ``m`` of ``n`` suits."""
TABLE_SUBSETS = np.zeros((16, 5, 6), dtype=np.int64)
"""``TABLE_SUBSETS[nibble, m, j]``: the j-th ``m``-suit subset of the nibble."""
for _n in range(16):
    for _m in range(5):
        _subs = [x for x in range(16) if x & ~_n == 0 and POP4[x] == _m]
        TABLE_SUBSETS[_n, _m, :len(_subs)] = _subs
TABLE_SUBSETS = TABLE_SUBSETS.reshape(-1)
SUBSET_INDEX = np.zeros(16, dtype=np.int64)
"""``SUBSET_INDEX[sub]``: index of the suit subset among all subsets of its size."""
for _m in range(5):
    for _j, _x in enumerate(x for x in range(16) if POP4[x] == _m):
        SUBSET_INDEX[_x] = _j


MAX_SLOTS = 4  # a partition of 10 into distinct ranks has at most 4 (1+2+3+4)
_SUM_PARTS = [(r, p) for r in range(2, 11) for p in rank_partitions(r)]
N_SUM = len(_SUM_PARTS)
PLACE_PAT = N_SUM  # pattern ids: sums, place, one single per card, ace takes all per ace
SINGLE_PAT = N_SUM + 1
TAKE_ALL_PAT = SINGLE_PAT + N_CARDS
N_PATS = TAKE_ALL_PAT + N_CARDS

_SUIT_CARDS = [[sum(1 << (s * 10 + k - 1) for s in range(4) if x >> s & 1) for x in range(16)]
               for k in range(1, 11)]  # rank k + 1, a nibble of suits -> those cards as a mask
_slots: list[tuple[tuple[int, int], ...]] = []
_groups: list[list[int]] = []
for _r, _p in _SUM_PARTS:
    _slots.append(_p)
    _c0 = _r - 1  # sum sets sit at the same offset for every suit of the played card
    _key0, _place0 = _c0 << N_CARDS, int(PLACE_ID[_c0])
    _groups.append([_INDEX[_key0 | sum(_combo)] - _place0 for _combo in product(
        *[[_SUIT_CARDS[k - 1][x] for x in range(16) if POP4[x] == m] for k, m in _p])])
_slots.append(())
_groups.append([0])
for _c in range(N_CARDS):
    _slots.append(((RANK[_c], 1),))
    _groups.append([action_id(_c, 1 << (_s * 10 + RANK[_c] - 1)) - PLACE_ID[_c]
                    if _s != SUIT[_c] else 0 for _s in range(4)])
for _c in range(N_CARDS):
    _slots.append(())
    _groups.append([ACE_ALL_BASE + SUIT[_c] - PLACE_ID[_c]])

PAT_SIZE = np.array([sum(m for _, m in sl) for sl in _slots], dtype=np.int64)
PAT_NSLOTS = np.array([len(sl) for sl in _slots], dtype=np.int64)
PAT_GROUP = np.concatenate([[0], np.cumsum([len(g) for g in _groups])[:-1]]).astype(np.int64)
GROUP_POS = np.array([x for g in _groups for x in g], dtype=np.int64)
PAT_SHIFT = np.zeros((MAX_SLOTS, N_PATS), dtype=np.int64)
"""Per slot: rank-major shift of the slot rank's nibble."""
PAT_MULT = np.zeros((MAX_SLOTS, N_PATS), dtype=np.int64)
"""Per slot: how many cards of that rank the pattern takes (0: unused slot)."""
PAT_RADIX = np.zeros((MAX_SLOTS, N_PATS), dtype=np.int64)
"""Per slot: weight of its suit choice in the group index (0: unused slot)."""
for _i, _sl in enumerate(_slots):
    _sizes = [int(CHOOSE[4, m]) for _, m in _sl]
    for _j, (_k, _m) in enumerate(_sl):
        PAT_SHIFT[_j, _i], PAT_MULT[_j, _i] = 4 * (_k - 1), _m
        PAT_RADIX[_j, _i] = int(np.prod(_sizes[_j + 1:], dtype=np.int64))

# rank-level keys: for played rank r, the table's count of each rank k < r, capped at
# the most any partition of r uses (CAP[r, k]), in mixed radix (highest rank fastest)
CAP = np.zeros((11, 11), dtype=np.int64)
for _r, _p in _SUM_PARTS:
    for _k, _m in _p:
        CAP[_r, _k] = max(CAP[_r, _k], _m)
CAP_KEY = np.zeros((11, 10, 5), dtype=np.int64)
"""``CAP_KEY[r, k - 1, n]``: rank ``k``'s contribution to the rank-``r`` key with ``n``
cards of rank ``k`` on the table."""
N_COMBOS = np.ones(11, dtype=np.int64)
_COUNTS: dict[int, list[int]] = {}
"""rank -> the packed table counts (``rank_counts``) of each of its rank-level keys"""
for _r in range(2, 11):
    _ranks = [k for k in range(1, _r) if CAP[_r, k] > 0]
    _radix = 1
    for _k in reversed(_ranks):
        CAP_KEY[_r, _k - 1] = np.minimum(np.arange(5), CAP[_r, _k]) * _radix
        _radix *= int(CAP[_r, _k]) + 1
    N_COMBOS[_r] = _radix
    _COUNTS[_r] = (np.array(list(product(*[range(int(CAP[_r, k]) + 1) for k in _ranks])),
                            np.int64).reshape(_radix, len(_ranks))
                   @ np.array([1 << (4 * k - 4) for k in _ranks], np.int64)).tolist()

# card-level keys: rank-level key + (table holds rank r) * N_COMBOS[r]; for an ace,
# 10 * (table holds an ace) + number of other ranks on the table
_KEY_SPAN = np.array([20 if RANK[c] == 1 else 2 * int(N_COMBOS[RANK[c]])
                      for c in range(N_CARDS)], dtype=np.int64)
CARD_KEY_BASE = np.concatenate([[0], np.cumsum(_KEY_SPAN)[:-1]]).astype(np.int64)
KEY12_STRIDE = 3 * 4096 + 16
_nib_key = np.zeros((N_CARDS, 10, 16), dtype=np.int64)
_present = (np.arange(16) > 0).astype(np.int64)
for _c in range(N_CARDS):
    _r = RANK[_c]
    for _k in range(1, 11):
        if _r == 1:
            _nib_key[_c, _k - 1] = _present * (10 if _k == 1 else 1)
        elif _k < _r:
            _nib_key[_c, _k - 1] = CAP_KEY[_r, _k - 1][POP4]
        elif _k == _r:
            _nib_key[_c, _k - 1] = _present * N_COMBOS[_r]
_v = np.arange(4096)
RANK_KEY12 = np.zeros((11, KEY12_STRIDE), dtype=np.int32)
"""``key(c) = CARD_KEY_BASE[c] + sum over chunks of RANK_KEY12[rank(c), chunk * 4096 + 12
bits of the rank-major table]`` (ranks 1-3, 4-6, 7-9, then rank 10 in 16 entries)."""
for _r in range(1, 11):
    _c = _r - 1  # the key contributions depend on the rank only
    for _ch in range(3):
        RANK_KEY12[_r, _ch * 4096:(_ch + 1) * 4096] = sum(
            _nib_key[_c, 3 * _ch + _i, (_v >> (4 * _i)) & 15] for _i in range(3))
    RANK_KEY12[_r, 3 * 4096:] = _nib_key[_c, 9, :]
RANK_KEY12 = RANK_KEY12.reshape(-1)
CARD_KEY_ROW = RANK_NP * KEY12_STRIDE
"""Card id -> offset of its rank's row in ``RANK_KEY12``."""


ENTRY_COUNT_BITS = 8


def pack_entry(start: np.ndarray | int, count: np.ndarray | int) -> np.ndarray | int:
    """A ``card_lut`` entry: where a key's patterns start in ``patterns``, how many."""
    return start << ENTRY_COUNT_BITS | count


def entry_start(entry: np.ndarray) -> np.ndarray:
    """The index in ``patterns`` of an entry's first pattern."""
    return entry >> ENTRY_COUNT_BITS


def entry_count(entry: np.ndarray) -> np.ndarray:
    """How many patterns an entry has."""
    return entry & ((1 << ENTRY_COUNT_BITS) - 1)


def _key_counts(r: int) -> list[int]:
    """The packed table counts (``rank_counts``) a card of rank ``r`` stands for at each
    of its card-level keys: a table with that many cards of each rank."""
    if r == 1:  # 10 * (an ace on the table) + how many other ranks are
        return [10 * a + sum(1 << 4 * k for k in range(1, 1 + n))  # ranks 2 .. n + 1
                for a in (0, 1) for n in range(10)]
    return _COUNTS[r] + [c | 1 << (4 * r - 4) for c in _COUNTS[r]]


SUM_PAT_BASE = [0] * 11
"""Rank -> the pattern id of its first sum pattern (``rank_partitions`` order)."""
for _i, (_r, _) in reversed(list(enumerate(_SUM_PARTS))):
    SUM_PAT_BASE[_r] = _i


@cache
def card_lut(capture_rule: str, ace_takes_all: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(entry, patterns)``: for every card-level key, ``entry`` (``pack_entry``) says
    where its patterns are in ``patterns``: the rules' own answer
    (``scopa_env.rules.capture.legal_patterns``) for a table of that key, asked once
    per key and kept (read-only) for the process."""
    flat = [np.array([PLACE_PAT]), SINGLE_PAT + np.arange(N_CARDS),
            TAKE_ALL_PAT + np.arange(N_CARDS)]
    single_at, take_all_at, size = 1, 1 + N_CARDS, 1 + 2 * N_CARDS
    per_card: list[np.ndarray] = []
    for r in range(1, 11):
        got = np.array([legal_patterns(r, c, capture_rule, ace_takes_all)
                        for c in _key_counts(r)], np.int64)
        answers, of_key = np.unique(got, return_inverse=True)
        # each answer's entry: the place, its sum patterns, or TAKE_SAME / TAKE_ALL (the
        # card's own pattern, filled in below); keys with the same answer share it
        entry = np.where(answers == 0, pack_entry(0, 1), answers)
        sums = np.flatnonzero(answers > 0)
        rows, cols = np.nonzero(answers[sums, None] >> np.arange(len(rank_partitions(r))) & 1)
        count = np.bincount(rows, minlength=len(sums))
        entry[sums] = pack_entry(size + np.cumsum(count) - count, count)
        flat.append(SUM_PAT_BASE[r] + cols)
        size += len(cols)
        per_card.append(entry[of_key.reshape(-1)])
    entries = []
    for c in range(N_CARDS):
        e = per_card[RANK[c] - 1]
        entries.append(np.select([e == TAKE_SAME, e == TAKE_ALL],
                                 [pack_entry(single_at + c, 1), pack_entry(take_all_at + c, 1)],
                                 e))
    out = np.concatenate(entries).astype(np.int32), np.concatenate(flat).astype(np.int64)
    for a in out:
        a.setflags(write=False)
    return out


assert N_ACTIONS == ACE_ALL_BASE + 4

ACT_BIT = CARD_BIT[ACT_CARD]
"""Per action: the played card's bit."""
ACT_CAPTURES = ACT_CAPTURE != 0
ACT_TOGGLE = np.where(ACT_CAPTURES, ACT_CAPTURE, ACT_BIT)
"""Per action: the table bits it flips (the captured cards, or the placed card)."""
ACT_TOGGLE_RM = np.where(ACT_CAPTURES, ACT_CAPTURE_RM, RM_BIT[ACT_CARD])
ACT_PILE = np.where(ACT_CAPTURES, ACT_CAPTURE | ACT_BIT, U64(0))
"""Per action: the cards it adds to the mover's team pile."""
ID_BITS = 14  # catalogue ids fit in 14 bits
_ROW_BITS = 18
CARD_INFO = PLACE_ID | CARD_KEY_ROW << ID_BITS | CARD_KEY_BASE << (ID_BITS + _ROW_BITS)
"""Card id -> its place id, ``CARD_KEY_ROW`` and ``CARD_KEY_BASE`` in one int64 (read
them with ``info_place_id``, ``info_key_row`` and ``info_key_base``)."""
assert PLACE_ID.max() < 1 << ID_BITS and CARD_KEY_ROW.max() < 1 << _ROW_BITS


def info_place_id(info: np.ndarray) -> np.ndarray:
    """The card's place id (its catalogue id for placing it) from ``CARD_INFO``."""
    return info & ((1 << ID_BITS) - 1)


def info_key_row(info: np.ndarray) -> np.ndarray:
    """The card's ``CARD_KEY_ROW`` from ``CARD_INFO``."""
    return info >> ID_BITS & ((1 << _ROW_BITS) - 1)


def info_key_base(info: np.ndarray) -> np.ndarray:
    """The card's ``CARD_KEY_BASE`` from ``CARD_INFO``."""
    return info >> (ID_BITS + _ROW_BITS)

PAT_LOC = np.zeros((2, N_PATS, 1024), dtype=np.int32)
"""One suit choice per slot (every slot rank has one table card): the catalogue offset
of pattern ``p`` is ``GROUP_POS[PAT_LOC[0, p, lo] + PAT_LOC[1, p, hi]]``, with ``lo`` /
``hi`` the suits (2 bits a rank) of the table cards of ranks 1-5 / 6-10."""
_digits = np.arange(1024)
for _i in range(N_PATS):
    PAT_LOC[0, _i] = PAT_GROUP[_i]
    for _j in range(MAX_SLOTS):
        if PAT_MULT[_j, _i]:
            _k = int(PAT_SHIFT[_j, _i]) // 4  # rank - 1
            PAT_LOC[_k // 5, _i] += ((_digits >> (2 * (_k % 5))) & 3) * PAT_RADIX[_j, _i]
PAT_LOC = PAT_LOC.reshape(-1)
_SUITS_BITS = 10  # PAT_LOC's last axis: 2 bits a rank, five ranks


def pat_loc(pat: np.ndarray, suits: np.ndarray) -> np.ndarray:
    """``PAT_LOC[0, pat, lo] + PAT_LOC[1, pat, hi]``: the index into ``GROUP_POS`` of
    pattern ``pat`` when each of its ranks has one table card, with ``suits`` the suits
    of the table cards (2 bits a rank, ranks 1-10 from bit 0; ``lo`` ranks 1-5)."""
    row = pat << _SUITS_BITS
    return (PAT_LOC.take(row | suits & ((1 << _SUITS_BITS) - 1))
            + PAT_LOC.take((N_PATS << _SUITS_BITS) + (row | suits >> _SUITS_BITS)))
