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

The encoding is written here in both forms, side by side: ``encode_info`` (one
information set) and the array form for many games at once (``card_sets_np``,
``position_scalars_np``, ``add_score_scalars_np``: ``VectorScopaEnv.observe``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .cards import FULL_DECK, N_CARDS
from .game import GameState, RoundStart
from .rules import Rules

LAYOUT: tuple[tuple[str, int], ...] = (
    ("hand", N_CARDS), ("table", N_CARDS), ("own_pile", N_CARDS), ("other_pile", N_CARDS),
    ("unseen", N_CARDS), ("hand_sizes", 4), ("deck_count", 1), ("match_score", 2),
    ("scope", 2), ("seat_from_dealer", 4), ("last_capture", 3))
"""The observation's parts in order, with their sizes: the one definition of the layout
(the table above, the encoders here and in ``scopa_env.vector``, the move features)."""


def _slices(layout: tuple[tuple[str, int], ...]) -> dict[str, slice]:
    out, at = {}, 0
    for name, size in layout:
        out[name] = slice(at, at + size)
        at += size
    return out


SLICES = _slices(LAYOUT)
OBS_DIM = sum(size for _, size in LAYOUT)
HAND, TABLE, OWN_PILE, OTHER_PILE, UNSEEN = (
    SLICES[k] for k in ("hand", "table", "own_pile", "other_pile", "unseen"))
HAND_SIZES = SLICES["hand_sizes"]  # by seat relative to the observer (0 = itself)
DECK_COUNT = SLICES["deck_count"]
MATCH_SCORE = SLICES["match_score"]  # (own team, other team)
SCOPE = SLICES["scope"]  # (own team, other team)
SEAT_FROM_DEALER = SLICES["seat_from_dealer"]  # one-hot (seat - dealer) mod players
LAST_CAPTURE = SLICES["last_capture"]  # one-hot: own team, other team, nobody yet
CARD_SETS = slice(HAND.start, UNSEEN.stop)
"""The five card sets, back to back (bit ``i`` of a set's mask = its column ``i``)."""
SCALARS = slice(CARD_SETS.stop, OBS_DIM)
"""Everything after the card sets."""
DECK_SCALE = N_CARDS  # deck count / 40
SCOPE_SCALE = 10  # scope this hand / 10
NOBODY = 2  # LAST_CAPTURE's column when nobody has captured yet this hand
MATCH_SCORE_CAP = 10.0
"""Where the environments' match-score features saturate (10 x target_score: tied
matches go on, so a score has no bound; no match gets near this)."""


def _obs_high() -> np.ndarray:
    high = np.ones(OBS_DIM, np.float32)  # card sets, sizes, counts, one-hots: 0..1
    high[SCOPE] = (N_CARDS - 1) / SCOPE_SCALE  # at most one scopa per move of a hand
    high[MATCH_SCORE] = MATCH_SCORE_CAP
    return high


OBS_HIGH = _obs_high()
"""The upper bounds of the observation's features (the lower ones are 0): the finite
``Box`` of the Gymnasium and PettingZoo environments, which clip to it (``bounded``)."""


def bounded(obs: np.ndarray) -> np.ndarray:
    """``obs`` clipped (in place) to ``OBS_HIGH``: only a match score past
    ``MATCH_SCORE_CAP`` x target changes."""
    return np.minimum(obs, OBS_HIGH, out=obs)


def within(part: slice, whole: slice) -> slice:
    """``part``'s columns counted from the start of ``whole`` (for an array holding
    only that block, e.g. ``SCALARS``)."""
    return slice(part.start - whole.start, part.stop - whole.start)


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
    # The current round's public history, as the single-game engine keeps it
    # (``GameState.round_moves`` / ``round_start``: absolute seats and teams): the moves
    # played since the round's deal and the public position before the first
    # (``VectorScopaEnv`` keeps them per game too). Empty for a position made without
    # them (a search's scratch state): nothing is read from the others' moves then.
    round_moves: tuple[tuple[int, int], ...] = field(default=(), compare=False)
    round_start: RoundStart | None = field(default=None, compare=False)

    @property
    def team(self) -> int:
        return self.seat % 2

    @property
    def players(self) -> int:
        return self.rules.players


def info_set(s: GameState, seat: int) -> InfoSet:
    """The information set of ``seat`` in the single-game state ``s`` (legal moves
    filled in when it is to move)."""
    legal = tuple(s.legal_actions()) if seat == s.to_move else ()
    return make_info_set(s.rules, seat=seat, dealer=s.dealer, hands=s.hands, table=s.table,
                         piles=s.piles, deck_count=s.deck_count, match_score=s.match_score,
                         scope=s.scope, last_capture_team=s.last_capture_team,
                         legal_actions=legal, round_moves=s.round_moves,
                         round_start=s.round_start)


def make_info_set(rules: Rules, *, seat: int, dealer: int, hands: Sequence[int], table: int,
                  piles: Sequence[int], deck_count: int, match_score: Sequence[int],
                  scope: Sequence[int], last_capture_team: int | None,
                  legal_actions: tuple[int, ...],
                  round_moves: tuple[tuple[int, int], ...] = (),
                  round_start: RoundStart | None = None) -> InfoSet:
    """A seat's information set from a position's parts (per-seat hands, per-team piles,
    scores and scope, the last capturing team): what both engines' ``info_set`` share."""
    team = seat % 2
    hand, own, other = int(hands[seat]), int(piles[team]), int(piles[1 - team])
    table = int(table)
    last = None if last_capture_team is None else int(last_capture_team != team)
    return InfoSet(
        rules=rules, seat=seat, dealer=dealer, hand=hand, table=table, own_pile=own,
        other_pile=other, unseen=FULL_DECK & ~(hand | table | own | other),
        hand_sizes=tuple(int(h).bit_count() for h in hands), deck_count=deck_count,
        match_score=(int(match_score[team]), int(match_score[1 - team])),
        scope=(int(scope[team]), int(scope[1 - team])), last_capture=last,
        legal_actions=legal_actions, round_moves=round_moves, round_start=round_start)


def encode(s: GameState, seat: int) -> np.ndarray:
    """The seat's observation vector in the single-game state ``s`` (layout: ``LAYOUT``):
    ``encode_info`` of its information set, without building one (the AEC and Gymnasium
    environments call it at every step)."""
    team = seat % 2
    last = s.last_capture_team
    return _encode(s.rules, seat, s.dealer, s.hands[seat], s.table, s.piles[team],
                   s.piles[1 - team], [h.bit_count() for h in s.hands], s.deck_count,
                   s.match_score[team], s.match_score[1 - team], s.scope[team],
                   s.scope[1 - team], NOBODY if last is None else int(last != team))


def encode_info(info: InfoSet) -> np.ndarray:
    """The observation vector of an information set (layout: ``LAYOUT``)."""
    return _encode(info.rules, info.seat, info.dealer, info.hand, info.table, info.own_pile,
                   info.other_pile, info.hand_sizes, info.deck_count, *info.match_score,
                   *info.scope, NOBODY if info.last_capture is None else info.last_capture)


_TAIL_ZEROS = [0.0] * (OBS_DIM - SCALARS.start)


def _encode(rules: Rules, seat: int, dealer: int, hand: int, table: int, own: int,
            other: int, hand_sizes: Sequence[int], deck_count: int, own_score: int,
            other_score: int, own_scope: int, other_scope: int, last: int) -> np.ndarray:
    """The observation vector from its parts: the card sets, the hand sizes by absolute
    seat, the counts, and ``last`` the ``LAST_CAPTURE`` column (0 own team, 1 the other,
    ``NOBODY``). The scalars are written as one list: a few microseconds a vector."""
    unseen = FULL_DECK & ~(hand | table | own | other)
    bits = (hand << HAND.start | table << TABLE.start | own << OWN_PILE.start
            | other << OTHER_PILE.start | unseen << UNSEEN.start)
    o = np.empty(OBS_DIM, np.float32)
    o[CARD_SETS] = np.unpackbits(np.frombuffer(bits.to_bytes(CARD_SETS.stop // 8, "little"),
                                               np.uint8), bitorder="little")
    p, size, target = rules.players, rules.hand_size, rules.target_score
    tail = _TAIL_ZEROS.copy()
    for k in range(p):
        tail[_S_HAND_SIZES.start + k] = hand_sizes[(seat + k) % p] / size
    tail[_S_DECK_COUNT] = deck_count / DECK_SCALE
    tail[_S_MATCH_SCORE.start] = own_score / target
    tail[_S_MATCH_SCORE.start + 1] = other_score / target
    tail[_S_SCOPE.start] = own_scope / SCOPE_SCALE
    tail[_S_SCOPE.start + 1] = other_scope / SCOPE_SCALE
    tail[_S_SEAT_FROM_DEALER.start + (seat - dealer) % p] = 1.0
    tail[_S_LAST_CAPTURE.start + last] = 1.0
    o[SCALARS] = tail
    return o


def card_mask(block: np.ndarray) -> int:
    """The bitmask of a 40-entry 0/1 card block."""
    bits = np.packbits(block > 0.5, bitorder="little")
    return int.from_bytes(bits.tobytes(), "little")


def decode_info(obs: np.ndarray, rules: Rules, legal_actions: tuple[int, ...] = ()
                ) -> InfoSet:
    """The information set an observation vector encodes (``encode_info``'s inverse), with
    ``legal_actions`` (the observation does not hold them). Seats are numbered from the
    dealer (dealer 0): the vector holds only the seat's place after the dealer, so
    ``encode_info(decode_info(o, rules))`` is ``o`` while ``seat`` and ``dealer`` may
    differ from those of the information set that made ``o``."""
    obs = np.asarray(obs)
    if obs.shape != (OBS_DIM,):
        raise ValueError(f"an observation has {OBS_DIM} entries, got shape {obs.shape}")
    p = rules.players
    seat = int(np.argmax(obs[SEAT_FROM_DEALER][:p]))
    rel = np.rint(obs[HAND_SIZES][:p] * rules.hand_size).astype(int)
    sizes = tuple(int(rel[(s - seat) % p]) for s in range(p))
    last = int(np.argmax(obs[LAST_CAPTURE]))
    return InfoSet(
        rules=rules, seat=seat, dealer=0, hand=card_mask(obs[HAND]),
        table=card_mask(obs[TABLE]), own_pile=card_mask(obs[OWN_PILE]),
        other_pile=card_mask(obs[OTHER_PILE]), unseen=card_mask(obs[UNSEEN]),
        hand_sizes=sizes, deck_count=round(float(obs[DECK_COUNT][0]) * DECK_SCALE),
        match_score=tuple(round(float(x) * rules.target_score) for x in obs[MATCH_SCORE]),
        scope=tuple(round(float(x) * SCOPE_SCALE) for x in obs[SCOPE]),
        last_capture=None if last == NOBODY else last, legal_actions=tuple(legal_actions))


# -- the array form -----------------------------------------------------------------------
N_SCALARS = SCALARS.stop - SCALARS.start
_S_HAND_SIZES, _S_MATCH_SCORE, _S_SCOPE, _S_SEAT_FROM_DEALER, _S_LAST_CAPTURE = (
    within(part, SCALARS) for part in (HAND_SIZES, MATCH_SCORE, SCOPE, SEAT_FROM_DEALER,
                                       LAST_CAPTURE))
_S_DECK_COUNT = within(DECK_COUNT, SCALARS).start
_CARD_WORDS = -(-CARD_SETS.stop // 64)  # 64-bit words holding the card sets
_U64 = np.uint64


def card_sets_np(out: np.ndarray, hand: np.ndarray, table: np.ndarray, own: np.ndarray,
                 other: np.ndarray) -> None:
    """Write the ``CARD_SETS`` columns of ``out`` (N, OBS_DIM) from uint64 masks (N,):
    hand, table, the piles (own team's, other team's) and the unseen cards."""
    unseen = _U64(FULL_DECK) & ~(hand | table | own | other)
    # the five 40-bit card sets back to back in 64-bit words, unpacked to columns
    words = np.zeros((len(hand), _CARD_WORDS), _U64)
    for part, mask in ((HAND, hand), (TABLE, table), (OWN_PILE, own),
                       (OTHER_PILE, other), (UNSEEN, unseen)):
        w, bit = divmod(part.start, 64)
        words[:, w] |= mask << _U64(bit)
        if bit + N_CARDS > 64:
            words[:, w + 1] |= mask >> _U64(64 - bit)
    out[:, CARD_SETS] = np.unpackbits(words.view(np.uint8)[:, :CARD_SETS.stop // 8],
                                      axis=1, bitorder="little")


def position_scalars_np(rules: Rules, sizes: np.ndarray, deck_count: np.ndarray,
                        seat_from_dealer: np.ndarray) -> np.ndarray:
    """``(N, N_SCALARS)`` ``SCALARS`` columns holding the hand sizes (``sizes`` (N,
    players), by seat relative to the observer), the deck count and the seat from the
    dealer ((seat - dealer) mod players); the other columns 0."""
    n, p = len(deck_count), rules.players
    tail = np.zeros((n, N_SCALARS), np.float32)
    tail[:, _S_HAND_SIZES.start:_S_HAND_SIZES.start + p] = sizes / rules.hand_size
    tail[:, _S_DECK_COUNT] = deck_count / DECK_SCALE
    tail[np.arange(n), _S_SEAT_FROM_DEALER.start + seat_from_dealer] = 1
    return tail


def add_score_scalars_np(tail: np.ndarray, rules: Rules, match_score: tuple[np.ndarray, np.ndarray],
                         scope: tuple[np.ndarray, np.ndarray], last_capture: np.ndarray) -> None:
    """Fill ``tail``'s (N, N_SCALARS) match score and scope columns from (own team, other
    team) pairs of (N,) arrays, and the last capture's one-hot from ``last_capture`` (N,):
    0 own team, 1 other team, ``NOBODY``."""
    own_ms, own_sc = _S_MATCH_SCORE.start, _S_SCOPE.start
    tail[:, own_ms] = match_score[0] / rules.target_score
    tail[:, own_ms + 1] = match_score[1] / rules.target_score
    tail[:, own_sc] = scope[0] / SCOPE_SCALE
    tail[:, own_sc + 1] = scope[1] / SCOPE_SCALE
    tail[np.arange(len(tail)), _S_LAST_CAPTURE.start + last_capture] = 1

