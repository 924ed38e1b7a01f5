"""``greedy``: the best immediate capture, else the least helpful card to put down.

- If some legal move captures, play the capture with the highest value, compared in
  this order: scopa, settebello, number of coins, primiera value of the cards
  (played card included), number of cards.
- Otherwise put down the card whose resulting table gives the opponent the least:
  for each card, the best capture (same order) that any unseen card could make on
  the new table; ties keep the more valuable cards in hand (put down the one with
  the lowest value as a capture of itself: not the settebello, not a coin, low
  primiera value).
Deterministic: it never uses its RNG.

``greedy_actions(env, games)`` is the batched form: the same moves, ties included, for
many games of a ``VectorScopaEnv`` at once (the keys packed into one int64 each, in the
same order; ``agents.baselines.batching``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from scopa_env.bitsets import popcount
from scopa_env.cards import COINS_MASK, N_CARDS, RANK, SETTEBELLO, cards_of
from scopa_env.catalogue import captured
from scopa_env.moves import ACE_ALL_BASE, ACTION_CARD_LIST, card_moves
from scopa_env.observation import InfoSet
from scopa_env.rules import Rules
from scopa_env.rules.capture import is_scopa_np

from ..base import BaseAgent
from .values import is_last_play, played_card, sweeps, table_after

if TYPE_CHECKING:
    from scopa_env.vector import VectorScopaEnv

    from .batching import Batch

_NONE = (0, 0, 0, 0, 0)


class GreedyAgent(BaseAgent):
    """Best immediate capture; with none, the card that gives the opponent least."""

    name = "greedy"
    summary = "best immediate capture (scopa, settebello, coins, primiera, cards); " \
              "else the card that gives the opponent least"

    def act(self, info: InfoSet) -> int:
        legal = info.legal_actions
        if len(legal) == 1:
            return legal[0]
        rules, table = info.rules, info.table
        last = is_last_play(info)
        keys = [greedy_key(a, table, rules, last) for a in legal]
        best = max(keys)
        if best != _NONE:
            return legal[keys.index(best)]

        def place_cost(a: int) -> tuple:
            return (best_reply_key(table_after(a, table), info.unseen, rules),
                    keep_value(played_card(a), rules), a)

        return min(legal, key=place_cost)


def keep_value(card: int, rules: Rules) -> tuple[int, int, int]:
    """How much a card is worth keeping: (settebello, coin, primiera value)."""
    return (int(card == SETTEBELLO), int(card < 10), rules.primiera_values[RANK[card] - 1])


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


# -- the batched form -----------------------------------------------------------------------
@dataclass(frozen=True)
class _Tables:
    """Per-rules lookup tables of the packed keys."""

    prim_byte: np.ndarray  # (5, 256) primiera value of the cards of each byte of a mask
    keep: np.ndarray  # (40,) keep_value packed: settebello, coin, primiera


@lru_cache(maxsize=16)
def _tables(rules: Rules) -> _Tables:
    prim = rules.primiera_values
    prim_byte = np.zeros((5, 256), np.int64)
    for k in range(5):
        for byte in range(256):
            prim_byte[k, byte] = sum(prim[RANK[8 * k + i] - 1] for i in range(8)
                                     if byte >> i & 1)
    keep = np.array([sette << 6 | coin << 5 | value for sette, coin, value in
                     (keep_value(c, rules) for c in range(N_CARDS))], np.int64)
    return _Tables(prim_byte, keep)


def _greedy_keys(pile: np.ndarray, scopa: np.ndarray, prim_byte: np.ndarray) -> np.ndarray:
    """``greedy_key`` of adding ``pile`` to one's pile (0 for an empty pile), packed
    in one int64 with the same order: scopa, settebello, coins, primiera, cards."""
    prim = prim_byte[0].take(pile & 255)
    for k in range(1, 5):
        prim += prim_byte[k].take(pile >> 8 * k & 255)
    return (scopa.astype(np.int64) << 22 | (pile >> SETTEBELLO & 1) << 21
            | popcount(pile & COINS_MASK) << 17 | prim << 7 | popcount(pile))


def greedy_actions(env: VectorScopaEnv, games: np.ndarray) -> np.ndarray:
    """``GreedyAgent().act(env.info_set(g))`` for every game of ``games``."""
    from .batching import BIT, ID_BITS, ID_MASK, batch

    b = batch(env, games)
    rules, tables = env.rules, _tables(env.rules)
    n, g = len(games), b.game
    # the best capture: highest key, then the lowest id (``keys.index(max(keys))``)
    scopa = is_scopa_np(b.cap != 0, b.after, b.ids >= ACE_ALL_BASE, b.last.take(g),
                        rules.last_play_scopa)
    key = _greedy_keys(np.where(b.cap != 0, b.cap | BIT.take(b.card), 0), scopa,
                       tables.prim_byte)
    top = np.full((n, b.width), -1, np.int64)
    top[g, b.col] = key << ID_BITS | (ID_MASK - b.ids)
    top = top.max(1)
    pick = ID_MASK - (top & ID_MASK)
    # no capture: the place whose table gives the opponent the least, then keep value, id
    placing = ((top >> ID_BITS) == 0) & (b.count > 1)
    if placing.any():
        mv = np.flatnonzero(placing.take(g))
        reply = _best_reply_keys(env, b, mv, tables.prim_byte)
        cost = np.full((n, b.width), np.iinfo(np.int64).max)
        ids = b.ids.take(mv)
        cost[g.take(mv), b.col.take(mv)] = (reply << 7 | tables.keep.take(b.card.take(mv))
                                            ) << ID_BITS | ids
        pick = np.where(placing, cost.min(1) & ID_MASK, pick)
    return pick


def _best_reply_keys(env: VectorScopaEnv, b: Batch, mv: np.ndarray, prim_byte: np.ndarray
                     ) -> np.ndarray:
    """``best_reply_key`` of the table each move ``mv`` leaves against the unseen
    cards, packed as ``_greedy_keys``. A coin adds to the key of whatever its rank takes,
    so each rank is played by its coin when unseen, else by any other unseen card."""
    from .batching import BIT, reply_moves, unseen_by_rank

    player = unseen_by_rank(b.unseen).best.take(b.game.take(mv), axis=0)
    row, rank0, cap, sweeps = reply_moves(env, player, b.after.take(mv), b.after_rm.take(mv))
    card = player[row, rank0]
    out = np.zeros(len(mv), np.int64)
    np.maximum.at(out, row, _greedy_keys(cap | BIT.take(card), sweeps, prim_byte))
    return out


__all__ = ["GreedyAgent", "best_reply_key", "greedy_actions", "greedy_key", "keep_value"]
