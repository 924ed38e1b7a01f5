"""Legal-move generation on the fixed action catalogue (``scopa_env.catalogue``, whose
names this module also gives: ``N_ACTIONS``, ``action_id``, ``action_text``, ...).

Which captures are legal is ``scopa_env.rules.capture.legal_captures``; this module turns
its answer into catalogue ids and memoises it for search.
"""

from __future__ import annotations

from .cards import CODES, N_CARDS, RANK, RANK_MASK, SUIT, cards_of
from .catalogue import (
    _INDEX,
    ACE_ALL_BASE,
    ACTION_CAPTURE,
    ACTION_CARD,
    ACTION_CARD_LIST,
    ACTION_FEATURES,
    N_ACTIONS,
    Move,
    action_id,
    action_move,
    action_text,
    parse_action,
)
from .rules import Rules
from .rules.capture import ALL_CARDS, legal_captures, sum_captures

_BELOW = (0,) + tuple(sum(RANK_MASK[k] for k in range(1, r)) for r in range(1, 11))


def card_moves(card: int, table: int, rules: Rules) -> list[int]:
    """Legal ids for playing ``card`` onto ``table`` (ascending)."""
    return list(_card_ids(card, table, rules))


def _card_ids(card: int, table: int, rules: Rules) -> tuple[int, ...]:
    """``card_moves``, the memoised tuple itself."""
    r = RANK[card]
    # only same-rank and lower-rank table cards (and, for ace-takes-all, whether the
    # table is empty) can change what this card may do: memoise on those alone
    relevant = table & _RELEVANT[r]
    key = (card, relevant, rules.ace_takes_all and r == 1 and table != 0, rules.capture_rule)
    got = _CARD_CACHE.get(key)
    if got is None:
        if len(_CARD_CACHE) >= _CACHE_MAX:
            _CARD_CACHE.clear()
        got = _CARD_CACHE[key] = _card_moves(card, table, rules)
    return got


def _card_moves(card: int, table: int, rules: Rules) -> tuple[int, ...]:
    """The catalogue ids of ``legal_captures`` (the rules' one decision), ascending."""
    sets = legal_captures(card, table, rules.capture_rule, rules.ace_takes_all)
    if sets == (ALL_CARDS,):
        return (ACE_ALL_BASE + SUIT[card],)
    key = card << N_CARDS
    return tuple(sorted(_INDEX[key | s] for s in sets)) if sets else (_INDEX[key],)


_RELEVANT = (0,) + tuple(_BELOW[r] | RANK_MASK[r] for r in range(1, 11))
_CARD_CACHE: dict[tuple[int, int, bool, str], tuple[int, ...]] = {}
_CACHE_MAX = 1 << 18
_LEGAL_CACHE: dict[tuple[int, int, bool, str], tuple[int, ...]] = {}


def legal_actions(hand: int, table: int, rules: Rules) -> list[int]:
    """Every legal catalogue id for a player holding ``hand`` (ascending).

    Memoised on (hand, table, the two rules options that matter): search calls it
    at every node."""
    key = (hand, table, rules.ace_takes_all, rules.capture_rule)
    got = _LEGAL_CACHE.get(key)
    if got is None:
        out: list[int] = []
        for c in cards_of(hand):
            out.extend(_card_ids(c, table, rules))
        if rules.ace_takes_all:
            out.sort()  # the ace-takes-all ids sit after every card's own ids
        if len(_LEGAL_CACHE) >= _CACHE_MAX:
            _LEGAL_CACHE.clear()
        got = _LEGAL_CACHE[key] = tuple(out)
    return list(got)


__all__ = ["ACE_ALL_BASE", "ACTION_CAPTURE", "ACTION_CARD", "ACTION_CARD_LIST",
           "ACTION_FEATURES", "CODES", "N_ACTIONS", "Move", "SUIT", "action_id", "action_move",
           "action_text", "card_moves", "legal_actions", "parse_action", "sum_captures"]
