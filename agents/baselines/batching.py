"""What the batched baselines share (``greedy_actions`` in ``agents.baselines.greedy``,
``expert_actions`` in ``agents.baselines.expert``, ``random_actions`` here): the information sets
and legal moves of many games of a ``VectorScopaEnv`` as arrays, the opponents' replies,
pile values. Numpy array code, no Python loop over games.

How it works:

- **Moves.** Each legal move of the chosen games is one row (game, id), a game's rows in
  ascending id order (``env.legal_ids``). A game plays its first row with the best score,
  as the per-game agents do.
- **Replies.** What an opponent could capture on the table a move leaves comes from the
  environment's own move generator, ``VectorScopaEnv.card_moves`` (captures only), fed
  one (move, rank) row for each rank among the unseen cards: cards of one rank take the
  same sets (an unseen card is never on the table), so they differ only by their own
  value as a coin, the settebello or a plain card, added per card kind afterwards (the
  expert values a kind with its lowest unseen card, as its per-game cache does).
- **Pile values** (``pile_values``) are ``PointModel.pile_value`` summed card by card in
  ascending card id, with the card values read off ``PointModel`` itself
  (``card_values``), so the floats, and hence the ties, are those of the per-game agents.

Card sets are int64 masks here (the 40 card bits; ``table_rm`` the rank-major ones).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from scopa_env.bitsets import popcount
from scopa_env.cards import FULL_DECK, N_CARDS, RANK
from scopa_env.catalogue import captured_np
from scopa_env.moves import ACE_ALL_BASE
from scopa_env.observation import InfoSet
from scopa_env.rules import Rules
from scopa_env.rules.capture import is_scopa_np
from scopa_env.rules.scoring import carte_open_np, denari_open_np
from scopa_env.vector import VectorScopaEnv
from scopa_env.vector_tables import ACT_CARD, ACT_TOGGLE, ACT_TOGGLE_RM, CARD_BIT

from .values import PointModel

_TOGGLE = ACT_TOGGLE.view(np.int64)  # per id: the table bits it flips
BIT = CARD_BIT.view(np.int64)
RANK0 = np.array(RANK, np.int64) - 1
_SHIFTS = np.arange(N_CARDS, dtype=np.int64)
ID_BITS = 14  # catalogue ids fit in 14 bits
ID_MASK = (1 << ID_BITS) - 1


@lru_cache(maxsize=16)
def card_values(rules: Rules) -> np.ndarray:
    """``PointModel``'s card values of ``rules``, read off one model per (carte open,
    denari open) case: ``(4 * 40,)``, the case's row at ``(2 * carte_open + denari_open)
    * 40``."""
    values = np.zeros((4, N_CARDS))
    for carte_open in (False, True):
        for denari_open in (False, True):
            own = (0 if denari_open else 0b111111) | (0 if carte_open else (1 << 21) - 1 << 10)
            info = InfoSet(rules=rules, seat=0, dealer=0, hand=0, table=0, own_pile=own,
                           other_pile=0, unseen=0, hand_sizes=(0,) * rules.players,
                           deck_count=0, match_score=(0, 0), scope=(0, 0), last_capture=None,
                           legal_actions=())
            model = PointModel(info)
            assert (model.carte_open, model.denari_open) == (carte_open, denari_open)
            values[2 * carte_open + denari_open] = model.card_value
    return values.reshape(-1)


def card_value_base(own: np.ndarray, other: np.ndarray) -> np.ndarray:
    """Each game's row offset into ``card_values``: ``PointModel``'s case of its piles."""
    return (2 * carte_open_np(own, other) + denari_open_np(own, other)) * N_CARDS


@dataclass
class Batch:
    """The information sets of the seats to move in ``games`` (G) as arrays, and their
    legal moves (M rows, each game's in ascending id order)."""

    seat: np.ndarray
    own: np.ndarray
    other: np.ndarray
    unseen: np.ndarray
    sizes: np.ndarray  # (G, players) hand sizes by absolute seat
    deck: np.ndarray  # cards left in the deck
    last: np.ndarray  # the seat plays the hand's last card
    count: np.ndarray  # legal moves per game
    width: int  # columns of the (G, width) per-move score matrices
    game: np.ndarray  # (M,) the move's game (index into games)
    col: np.ndarray  # (M,) its column in env.legal_ids
    ids: np.ndarray  # (M,) catalogue id
    card: np.ndarray  # (M,) played card
    cap: np.ndarray  # (M,) captured cards (0: a place)
    after: np.ndarray  # (M,) the table it leaves
    after_rm: np.ndarray  # (M,) the same, rank-major


def batch(env: VectorScopaEnv, games: np.ndarray) -> Batch:
    """The seats to move in ``games`` and their legal moves, as ``env.info_set`` has them."""
    rows = np.arange(len(games))
    seat = env.to_move.take(games)
    team = seat % 2
    hands = env.hands[games].view(np.int64)
    piles = env.piles[games].view(np.int64)
    hand = hands[rows, seat]
    table = env.table[games].view(np.int64)
    own, other = piles[rows, team], piles[rows, 1 - team]
    sizes = popcount(hands)
    deck = N_CARDS - env.deck_pos.take(games)
    valid = env.legal_valid[games]
    game, col = np.nonzero(valid)
    ids = env.legal_ids[games[game], col]
    takes_all = ids >= ACE_ALL_BASE
    tab = table.take(game)
    cap = captured_np(ids, tab)
    after = np.where(takes_all, 0, tab ^ _TOGGLE.take(ids))
    after_rm = np.where(takes_all, 0, env.table_rm.take(games).take(game) ^ ACT_TOGGLE_RM.take(ids))
    return Batch(seat=seat, own=own, other=other,
                  unseen=FULL_DECK & ~(hand | table | own | other), sizes=sizes, deck=deck,
                  last=(deck == 0) & (sizes.sum(1) == 1), count=valid.sum(1),
                  width=valid.shape[1], game=game, col=col, ids=ids, card=ACT_CARD.take(ids),
                  cap=cap, after=after, after_rm=after_rm)


class Unseen(NamedTuple):
    """The unseen cards of each game by rank (G, 10), in the kinds the replies use."""

    coin: np.ndarray  # the rank's coin is unseen
    lowest: np.ndarray  # the lowest unseen other card of the rank (-1: none)
    others: np.ndarray  # how many other cards of the rank are unseen

    @property
    def best(self) -> np.ndarray:
        """The unseen card of each rank that takes most: its coin, else the lowest other."""
        return np.where(self.coin, _SHIFTS[:10], self.lowest)


def unseen_by_rank(unseen: np.ndarray) -> Unseen:
    bits = (unseen[:, None] >> _SHIFTS[None, :]) & 1  # (G, 40)
    s1, s2, s3 = bits[:, 10:20], bits[:, 20:30], bits[:, 30:40]
    r = _SHIFTS[:10]
    lowest = np.where(s1 == 1, r + 10, np.where(s2 == 1, r + 20, np.where(s3 == 1, r + 30, -1)))
    return Unseen(bits[:, :10] == 1, lowest, s1 + s2 + s3)


def reply_moves(env: VectorScopaEnv, player: np.ndarray, after: np.ndarray,
                 after_rm: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The captures an opponent could make on each table ``after`` (R tables) with the card
    ``player[row, rank - 1]`` of each rank (-1: none): per capture ``(table row, rank - 1,
    captured cards, whether it sweeps for a scopa)``, from ``env.card_moves``."""
    row, rank0 = np.nonzero(player >= 0)
    row, ids = env.card_moves(row, player[row, rank0], after_rm, captures_only=True)
    tab = after.take(row)
    takes_all = ids >= ACE_ALL_BASE
    cap = captured_np(ids, tab)
    sweeps = is_scopa_np(cap != 0, tab & ~cap, takes_all)
    return row, RANK0.take(ACT_CARD.take(ids)), cap, sweeps


def pile_values(masks: np.ndarray, base: np.ndarray, card_value: np.ndarray) -> np.ndarray:
    """``PointModel.pile_value`` of each non-empty mask (card values from offset ``base``
    of ``card_value``): summed one card at a time in ascending card id, as Python's
    ``sum`` does, so the floats are the same."""
    out = np.zeros(len(masks))
    if not len(masks):
        return out
    # rows by size, biggest first: those with a k-th card are the first left[k]
    size = popcount(masks)
    order = np.argsort((-size).astype(np.int16), kind="stable")
    left = np.bincount(size, minlength=N_CARDS + 1)[::-1].cumsum()[::-1]
    m, base = masks.take(order), base.take(order)
    acc = card_value.take(base + popcount((m & -m) - 1))  # 0 + the lowest card's value
    for k in range(2, int(size.max()) + 1):  # + the k-th lowest card's value
        m = m[:left[k]]
        m = m ^ (m & -m)
        acc[:left[k]] += card_value.take(base[:left[k]] + popcount((m & -m) - 1))
    out[order] = acc
    return out


# -- random -------------------------------------------------------------
def random_actions(env: VectorScopaEnv, games: np.ndarray,
                   rng: np.random.Generator | None = None) -> np.ndarray:
    """A uniform legal id for every game of ``games``."""
    rng = np.random.default_rng() if rng is None else rng
    count = env.legal_valid[games].sum(1)
    pick = (rng.random(len(games)) * count).astype(np.int64)
    return env.legal_ids[games, np.minimum(pick, count - 1)]


__all__ = ["Batch", "Unseen", "batch", "card_value_base", "card_values", "pile_values",
           "random_actions", "reply_moves", "unseen_by_rank"]
