"""Scoring a hand (carte, denari, settebello, primiera, scope, re bello, napola)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .cards import COINS_MASK, RE_BELLO, SETTEBELLO, SUIT_MASK
from .rules import PRIMIERA_TABLES, Rules

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
        pts["carte"] = int(cards[t] > 20)  # more than half of the 40: a 20-20 tie scores nobody
        pts["denari"] = int(coins[t] > 5)  # more than half of the 10 coins
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
