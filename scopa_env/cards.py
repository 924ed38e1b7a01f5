"""The 40-card Italian deck: card ids, text codes and card sets as bitmasks.

Card id = ``suit_index * 10 + (rank - 1)`` with suits ``d c s b`` (denari, coppe,
spade, bastoni). ``1d`` is 0, the settebello ``7d`` is 6, ``10b`` is 39.
A set of cards is an ``int`` bitmask (bit ``i`` set = card ``i`` present).
"""

from __future__ import annotations

from collections.abc import Iterable

SUITS = "dcsb"
N_CARDS = 40
FULL_DECK = (1 << N_CARDS) - 1
SETTEBELLO = 6  # 7 of coins
RE_BELLO = 9  # king of coins
COINS_MASK = (1 << 10) - 1  # the ten coins, ids 0..9

RANK = tuple(c % 10 + 1 for c in range(N_CARDS))
SUIT = tuple(c // 10 for c in range(N_CARDS))
CODES = tuple(f"{RANK[c]}{SUITS[SUIT[c]]}" for c in range(N_CARDS))
_CODE_TO_ID = {code: c for c, code in enumerate(CODES)}

# cards of each rank, as a bitmask: RANK_MASK[r] for r in 1..10 (index 0 unused)
RANK_MASK = (0,) + tuple(sum(1 << (s * 10 + r - 1) for s in range(4)) for r in range(1, 11))
SUIT_MASK = tuple(((1 << 10) - 1) << (10 * s) for s in range(4))


def card_id(code: str) -> int:
    """Text code (``"7d"``) to card id; raises ``ValueError`` naming a bad code."""
    try:
        return _CODE_TO_ID[code.strip()]
    except (KeyError, AttributeError):
        raise ValueError(
            f"unknown card code {code!r}: expected rank 1-10 then a suit letter "
            f"d/c/s/b, e.g. '7d' or '10b'"
        ) from None


def card_code(card: int) -> str:
    """Card id to text code."""
    if not isinstance(card, int) or not 0 <= card < N_CARDS:
        raise ValueError(f"card id {card!r} is out of range 0..39")
    return CODES[card]


def mask_of(cards: Iterable[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def cards_of(mask: int) -> list[int]:
    """Card ids of a bitmask, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out

