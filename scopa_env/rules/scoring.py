"""Scoring a hand (carte, denari, settebello, primiera, scope, re bello, napola): the
per-game form (``score_hand``, Python ints) and the array form (``score_hands_np``, one
row per team of many games) side by side, with the majorities as named constants.

Both forms score with the same thresholds: a team takes carte with ``CARTE_MAJORITY``
cards or more (more than half of the 40: a 20-20 tie scores nobody) and denari with
``DENARI_MAJORITY`` coins or more (more than half of the 10); ``carte_open`` /
``denari_open`` say whether neither pile has reached it yet (the point is still open).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..bitsets import popcount
from ..cards import COINS_MASK, N_CARDS, RE_BELLO, SETTEBELLO, SUIT_MASK
from .options import PRIMIERA_TABLES, Rules

CARTE_MAJORITY = N_CARDS // 2 + 1  # 21 cards of 40 take the carte point
DENARI_MAJORITY = 10 // 2 + 1  # 6 coins of 10 take the denari point
POINT_KEYS = ("carte", "denari", "settebello", "primiera", "scope", "re_bello", "napola", "total")
COUNT_KEYS = ("cards", "coins", "settebello", "primiera", "scope")
"""A score entry's counts, in the record's order, before its ``points``."""


def _best_in_suit(table: tuple[int, ...]) -> tuple[int, ...]:
    """For every 10-bit suit mask, the best primiera value among its cards (0 if empty)."""
    out = [0] * 1024
    for m in range(1, 1024):
        out[m] = max(table[r] for r in range(10) if m >> r & 1)
    return tuple(out)


BEST_IN_SUIT = {name: _best_in_suit(t) for name, t in PRIMIERA_TABLES.items()}
"""Per primiera table: the best value among the cards of each 10-bit suit mask."""


BEST_IN_SUIT_NP = {name: np.array(t, dtype=np.int64) for name, t in BEST_IN_SUIT.items()}
"""``BEST_IN_SUIT`` as arrays (the array form's lookup)."""


def carte_open(*piles: int) -> bool:
    """Whether no pile has the carte majority yet."""
    return all(p.bit_count() < CARTE_MAJORITY for p in piles)


def denari_open(*piles: int) -> bool:
    """Whether no pile has the denari majority yet."""
    return all((p & COINS_MASK).bit_count() < DENARI_MAJORITY for p in piles)


def primiera(pile: int, rules: Rules) -> int | None:
    """The pile's primiera sum, or ``None`` when it has none (a suit missing and
    ``primiera_requires_all_suits``)."""
    best = BEST_IN_SUIT[rules.primiera_table]
    total = 0
    for s in range(4):
        suit_cards = (pile & SUIT_MASK[s]) >> (10 * s)
        if not suit_cards and rules.primiera_requires_all_suits:
            return None
        total += best[suit_cards]
    return total


def napola_run(pile: int) -> int:
    """Length of the run of coins from the ace (0 unless ace, 2 and 3 are all there)."""
    coins = pile & COINS_MASK
    run = 0
    while run < 10 and coins >> run & 1:
        run += 1
    return run if run >= 3 else 0


NAPOLA_NP = np.array([napola_run(m) for m in range(1024)], dtype=np.int64)
"""``napola_run`` of every 10-bit coins mask (the array form's lookup)."""


def score_hand(piles: list[int], scope: list[int], rules: Rules) -> list[dict[str, Any]]:
    """One score entry per team, in the record's layout (see game-record.md)."""
    n = len(piles)
    cards = [p.bit_count() for p in piles]
    coins = [(p & COINS_MASK).bit_count() for p in piles]
    prim = [primiera(p, rules) for p in piles]
    entries = []
    for t in range(n):
        others = [o for o in range(n) if o != t]
        pts = dict.fromkeys(POINT_KEYS, 0)
        pts["carte"] = int(cards[t] >= CARTE_MAJORITY)
        pts["denari"] = int(coins[t] >= DENARI_MAJORITY)
        pts["settebello"] = int(bool(piles[t] >> SETTEBELLO & 1))
        pts["primiera"] = int(prim[t] is not None
                              and all(prim[o] is None or prim[t] > prim[o] for o in others))
        pts["scope"] = scope[t]
        if rules.re_bello:
            pts["re_bello"] = int(bool(piles[t] >> RE_BELLO & 1))
        if rules.napola:
            pts["napola"] = napola_run(piles[t])
        pts["total"] = sum(pts[k] for k in POINT_KEYS[:-1])
        entries.append(score_entry((cards[t], coins[t], int(bool(piles[t] >> SETTEBELLO & 1)),
                                    prim[t], scope[t]), pts))
    return entries


def score_entry(counts: Sequence[int | None], points: dict[str, int]) -> dict[str, Any]:
    """One team's score entry of a record: ``counts`` by ``COUNT_KEYS``, then the points
    by ``POINT_KEYS``."""
    return {**dict(zip(COUNT_KEYS, counts, strict=True)), "points": points}


# -- the array form -----------------------------------------------------------------------
N_COUNTS = len(COUNT_KEYS)
POINT_INDEX = {k: i for i, k in enumerate(POINT_KEYS)}
SCORE_ROW = N_COUNTS + len(POINT_KEYS)
"""A team's score entry as one int64 row: its counts by ``COUNT_KEYS`` (primiera -1 where
the team has none), then its points by ``POINT_KEYS``."""
_SUIT_SHIFT = np.array([10 * s for s in range(4)], dtype=np.uint64)


def score_hands_np(piles: np.ndarray, scope: np.ndarray, rules: Rules) -> np.ndarray:
    """``score_hand`` of many hands at once: ``piles`` (G, 2) uint64 and ``scope`` (G, 2)
    int64 -> ``(G, 2, SCORE_ROW)`` int64 score rows."""
    u64 = np.uint64
    cards = popcount(piles)
    coins = popcount(piles & u64(COINS_MASK))
    sette = ((piles >> u64(SETTEBELLO)) & u64(1)).astype(np.int64)
    suits = ((piles[..., None] >> _SUIT_SHIFT) & u64(SUIT_MASK[0])).astype(np.int64)
    prim = BEST_IN_SUIT_NP[rules.primiera_table][suits].sum(-1)
    has = (prim >= 0) if not rules.primiera_requires_all_suits else (suits != 0).all(-1)
    prim = np.where(has, prim, -1)
    out = np.zeros(piles.shape + (SCORE_ROW,), np.int64)
    out[..., :N_COUNTS] = np.stack([cards, coins, sette, prim, scope], -1)  # COUNT_KEYS
    other = slice(None, None, -1)
    pts = out[..., N_COUNTS:]
    pts[..., POINT_INDEX["carte"]] = cards >= CARTE_MAJORITY
    pts[..., POINT_INDEX["denari"]] = coins >= DENARI_MAJORITY
    pts[..., POINT_INDEX["settebello"]] = sette
    pts[..., POINT_INDEX["primiera"]] = has & (~has[:, other] | (prim > prim[:, other]))
    pts[..., POINT_INDEX["scope"]] = scope
    if rules.re_bello:
        pts[..., POINT_INDEX["re_bello"]] = (piles >> u64(RE_BELLO)) & u64(1)
    if rules.napola:
        pts[..., POINT_INDEX["napola"]] = NAPOLA_NP[(piles & u64(COINS_MASK)).astype(np.int64)]
    pts[..., POINT_INDEX["total"]] = pts[..., :POINT_INDEX["total"]].sum(-1)
    return out


def carte_open_np(*piles: np.ndarray) -> np.ndarray:
    """``carte_open`` of many games (piles as uint64 or int64 arrays)."""
    return np.logical_and.reduce([popcount(p) < CARTE_MAJORITY for p in piles])


def denari_open_np(*piles: np.ndarray) -> np.ndarray:
    """``denari_open`` of many games."""
    return np.logical_and.reduce([popcount(p & COINS_MASK) < DENARI_MAJORITY for p in piles])
