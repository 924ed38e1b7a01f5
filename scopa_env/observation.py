"""What one seat may know: the observation vector and the structured information set.

Observation layout (``float32``, ``OBS_DIM`` = 216), "own" = the seat's team:

| slice     | size | content                                                        |
|-----------|------|----------------------------------------------------------------|
| 0:40      | 40   | own hand (1 per card id)                                       |
| 40:80     | 40   | table                                                          |
| 80:120    | 40   | cards captured by own team this hand                           |
| 120:160   | 40   | cards captured by the other team this hand                     |
| 160:200   | 40   | unseen cards (not in own hand, on the table or in any pile)    |
| 200:204   | 4    | hand sizes / hand_size, by seat relative to self (0 = self)   |
| 204       | 1    | cards left in the deck / 40                                    |
| 205:207   | 2    | match score (own, other) / target_score                        |
| 207:209   | 2    | scope this hand (own, other) / 10                              |
| 209:213   | 4    | one-hot (seat - dealer) mod players (1 = plays first)          |
| 213:216   | 3    | one-hot last capturing team: own, other, nobody yet            |

Nothing here depends on hidden cards (other hands, deck order): two states that
differ only there encode identically for the seat.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .cards import FULL_DECK, N_CARDS, cards_of
from .game import GameState, hidden_cards
from .rules import Rules

OBS_DIM = 216
HAND, TABLE, OWN_PILE, OTHER_PILE, UNSEEN = (slice(i * 40, (i + 1) * 40) for i in range(5))
HAND_SIZES = slice(200, 204)
DECK_COUNT = 204
MATCH_SCORE = slice(205, 207)
SCOPE = slice(207, 209)
SEAT_FROM_DEALER = slice(209, 213)
LAST_CAPTURE = slice(213, 216)

@dataclass(frozen=True)
class InfoSet:
    """A seat's information set: everything it may know, nothing it may not.
    Card sets are bitmasks; per-team pairs are (own team, other team)."""

    rules: Rules
    seat: int
    dealer: int
    hand: int
    table: int
    own_pile: int
    other_pile: int
    unseen: int
    hand_sizes: tuple[int, ...]  # by absolute seat
    deck_count: int
    match_score: tuple[int, int]
    scope: tuple[int, int]
    last_capture: int | None  # 0 own team, 1 other team, None nobody yet
    legal_actions: tuple[int, ...]

    @property
    def team(self) -> int:
        return self.seat % 2

    @property
    def players(self) -> int:
        return self.rules.players

    def hand_cards(self) -> list[int]:
        return cards_of(self.hand)

    def table_cards(self) -> list[int]:
        return cards_of(self.table)


def info_set(s: GameState, seat: int) -> InfoSet:
    team = seat % 2
    own, other = s.piles[team], s.piles[1 - team]
    last = None if s.last_capture_team is None else int(s.last_capture_team != team)
    legal = tuple(s.legal_actions()) if seat == s.to_move else ()
    return InfoSet(
        rules=s.rules, seat=seat, dealer=s.dealer, hand=s.hands[seat], table=s.table,
        own_pile=own, other_pile=other, unseen=hidden_cards(s, seat),
        hand_sizes=tuple(h.bit_count() for h in s.hands), deck_count=s.deck_count,
        match_score=(s.match_score[team], s.match_score[1 - team]),
        scope=(s.scope[team], s.scope[1 - team]), last_capture=last, legal_actions=legal)


def encode(s: GameState, seat: int) -> np.ndarray:
    """The seat's observation vector (see the module docstring for the layout)."""
    team = seat % 2
    lc = s.last_capture_team
    return _encode(s.rules, seat, s.dealer, s.hands[seat], s.table, s.piles[team],
                   s.piles[1 - team], [h.bit_count() for h in s.hands], N_CARDS - s.deck_pos,
                   s.match_score[team], s.match_score[1 - team], s.scope[team],
                   s.scope[1 - team], None if lc is None else int(lc != team))


def encode_info(info: InfoSet) -> np.ndarray:
    """The observation vector of an information set (equal to ``encode`` of its state)."""
    return _encode(info.rules, info.seat, info.dealer, info.hand, info.table, info.own_pile,
                   info.other_pile, info.hand_sizes, info.deck_count, info.match_score[0],
                   info.match_score[1], info.scope[0], info.scope[1], info.last_capture)


def _encode(rules: Rules, seat: int, dealer: int, hand: int, table: int, own: int, other: int,
            hand_sizes: Sequence[int], deck_count: int, own_score: int, other_score: int,
            own_scope: int, other_scope: int, last_capture: int | None) -> np.ndarray:
    o = np.zeros(OBS_DIM, dtype=np.float32)
    unseen = FULL_DECK & ~(hand | table | own | other)
    bits = hand | table << 40 | own << 80 | other << 120 | unseen << 160
    o[:200] = np.unpackbits(np.frombuffer(bits.to_bytes(25, "little"), np.uint8),
                            bitorder="little")
    p = rules.players
    for k in range(p):
        o[200 + k] = hand_sizes[(seat + k) % p] / rules.hand_size
    o[DECK_COUNT] = deck_count / 40
    o[205] = own_score / rules.target_score
    o[206] = other_score / rules.target_score
    o[207] = own_scope / 10
    o[208] = other_scope / 10
    o[209 + (seat - dealer) % p] = 1
    o[213 + (2 if last_capture is None else last_capture)] = 1
    return o
