"""The fixed action catalogue of actions.md: move ids, their cards and their text.

Every move is one id in ``0 .. 16203``. For each played card ``c`` in card-id
order: ``place c``, then every set of other cards whose ranks sum to ``rank(c)``
(single same-rank cards included), ordered by set size then by the sorted tuple
of card ids. Ids ``16200 + suit`` are "ace of that suit takes the whole table"
(only legal with ``ace_takes_all``).

A move has three views: the id, ``(card, captured_mask)`` and text (``7d``,
``7d x 3c+4b``, ``1s x all``). Which moves are legal is ``scopa_env.moves``' (from
``scopa_env.rules.capture``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .cards import CODES, FULL_DECK, N_CARDS, RANK, SUIT, card_id, cards_of, mask_of
from .rules.capture import sum_captures

N_ACTIONS = 16204
ACE_ALL_BASE = 16200  # 16200 + suit: ace of that suit takes the whole table


class Move(NamedTuple):
    """A move as card ids. ``capture`` is a bitmask; ``takes_all`` marks the
    ace-takes-all move, whose capture is whatever the table holds."""

    card: int
    capture: int
    takes_all: bool = False


def _build_catalogue() -> tuple[np.ndarray, list[int], dict[int, int], np.ndarray]:
    cards = np.zeros(N_ACTIONS, dtype=np.int8)
    captures: list[int] = []
    # sets of 2+ cards summing to each rank (independent of the played card),
    # ordered by size then by sorted tuple of card ids
    sum_sets = {r: sorted((tuple(cards_of(m)) for m in sum_captures(FULL_DECK, r)),
                          key=lambda s: (len(s), s))
                for r in range(1, 11)}
    aid = 0
    for c in range(N_CARDS):
        r = RANK[c]
        cards[aid] = c
        captures.append(0)
        aid += 1
        for s in [(o,) for o in range(N_CARDS) if RANK[o] == r and o != c] + sum_sets[r]:
            cards[aid] = c
            captures.append(mask_of(s))
            aid += 1
    assert aid == ACE_ALL_BASE, aid
    for suit in range(4):
        cards[ACE_ALL_BASE + suit] = suit * 10
        captures.append(0)
    index = {(int(cards[a]) << N_CARDS) | captures[a]: a for a in range(ACE_ALL_BASE)}
    feats = np.zeros((N_ACTIONS, 2 * N_CARDS), dtype=np.int8)
    feats[np.arange(N_ACTIONS), cards.astype(np.int64)] = 1
    for a in range(ACE_ALL_BASE):
        for o in cards_of(captures[a]):
            feats[a, N_CARDS + o] = 1
    cards.setflags(write=False)
    feats.setflags(write=False)
    return cards, captures, index, feats


ACTION_CARD, ACTION_CAPTURE, _INDEX, ACTION_FEATURES = _build_catalogue()
"""``ACTION_CARD[a]``: played card of id ``a``; ``ACTION_CAPTURE[a]``: captured
bitmask (0 for places and for the four ace-takes-all ids); ``ACTION_FEATURES``:
16204 x 80 int8 table, played card one-hot then captured cards multi-hot (the
ace-takes-all rows hold only the played card: their capture depends on the table)."""
ACTION_CARD_LIST: tuple[int, ...] = tuple(int(c) for c in ACTION_CARD)
"""``ACTION_CARD`` as Python ints (fast indexing in the step function)."""


def action_id(card: int, capture: int = 0, takes_all: bool = False) -> int:
    """``(card, captured_mask)`` to catalogue id; ``ValueError`` if no such move exists."""
    if not 0 <= card < N_CARDS:
        raise ValueError(f"card id {card!r} is out of range 0..39")
    if takes_all:
        if RANK[card] != 1:
            raise ValueError(f"only an ace can take the whole table, not {CODES[card]}")
        return ACE_ALL_BASE + SUIT[card]
    try:
        return _INDEX[(card << N_CARDS) | capture]
    except KeyError:
        took = "+".join(CODES[c] for c in cards_of(capture))
        raise ValueError(
            f"{CODES[card]} x {took} is not a move: the captured ranks must be one card of "
            f"rank {RANK[card]} or sum to {RANK[card]}") from None


def action_move(action: int, table: int | None = None) -> Move:
    """Catalogue id to ``Move``; for ace-takes-all, ``table`` fills in the capture."""
    if isinstance(action, bool) or not isinstance(action, (int, np.integer)) or not (
        0 <= action < N_ACTIONS
    ):
        raise ValueError(f"action {action!r} is not a catalogue id (0..{N_ACTIONS - 1})")
    action = int(action)
    if action >= ACE_ALL_BASE:
        return Move(int(ACTION_CARD[action]), table or 0, True)
    return Move(int(ACTION_CARD[action]), ACTION_CAPTURE[action], False)


def action_text(action: int) -> str:
    """Catalogue id to text: ``7d``, ``7d x 3c+4b``, ``1s x all``."""
    m = action_move(action)
    if m.takes_all:
        return f"{CODES[m.card]} x all"
    if not m.capture:
        return CODES[m.card]
    return f"{CODES[m.card]} x " + "+".join(CODES[c] for c in cards_of(m.capture))


def parse_action(text: str) -> int:
    """Text to catalogue id; a malformed text or a non-move raises ``ValueError``."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"move text {text!r} is empty: expected e.g. '7d' or '7d x 3c+4b'")
    parts = text.strip().split(" x ") if " x " in text else [text.strip()]
    if len(parts) > 2:
        raise ValueError(f"move text {text!r} has more than one ' x '")
    try:
        card = card_id(parts[0])
    except ValueError as e:
        raise ValueError(f"move text {text!r}: {e}") from None
    if len(parts) == 1:
        return action_id(card, 0)
    rest = parts[1].strip()
    if rest == "all":
        try:
            return action_id(card, takes_all=True)
        except ValueError as e:
            raise ValueError(f"move text {text!r}: {e}") from None
    captured = []
    for code in rest.split("+"):
        try:
            captured.append(card_id(code))
        except ValueError as e:
            raise ValueError(f"move text {text!r}: {e}") from None
    if len(set(captured)) != len(captured) or card in captured:
        raise ValueError(f"move text {text!r} names a card twice")
    try:
        return action_id(card, mask_of(captured))
    except ValueError as e:
        raise ValueError(f"move text {text!r}: {e}") from None


_CAPTURE_NP = np.array(ACTION_CAPTURE, dtype=np.uint64).view(np.int64)


def captured(action: int, table: int) -> int:
    """Bitmask of the table cards ``action`` takes (ace takes all: the whole table)."""
    return table if action >= ACE_ALL_BASE else ACTION_CAPTURE[action]


def captured_np(actions: np.ndarray, tables: np.ndarray) -> np.ndarray:
    """``captured`` of many moves: catalogue ids and int64 table masks -> int64 masks."""
    return np.where(actions >= ACE_ALL_BASE, tables, _CAPTURE_NP.take(actions))
