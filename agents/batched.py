"""Batched baselines: the moves of ``random``, ``greedy`` and ``expert`` for many games of a
``VectorScopaEnv`` at once, as numpy array code (no Python loop over games).

``batched_actions(name, env, games)`` gives, for the seat to move in each of ``games``,
the catalogue id that the per-game agent plays on ``env.info_set(g)``: for ``greedy`` and
``expert`` the very same move, ties included; for ``random`` the same distribution (from
a numpy generator, not the agent's own random stream).

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
- **Greedy keys** (``values.greedy_key``) pack into one integer whose order is the
  tuple's; its reply keys keep the best card of each rank (a coin adds to every field).
- **Expert scores** are floats computed with the same operations in the same order as
  ``agents.expert`` (a pile's value summed card by card in ascending card id, each card's
  value from ``PointModel``, the opponent's reply values sorted and folded card by card),
  so the scores, and hence the ties, are bit for bit those of the per-game agent.

Card sets are int64 masks here (the 40 card bits; ``table_rm`` the rank-major ones).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from scopa_env.cards import COINS_MASK, FULL_DECK, N_CARDS, RANK, SETTEBELLO, SUIT
from scopa_env.moves import ACE_ALL_BASE
from scopa_env.observation import InfoSet
from scopa_env.rules import Rules
from scopa_env.vector import VectorScopaEnv, popcount
from scopa_env.vector_tables import ACT_CAPTURE, ACT_CARD, ACT_TOGGLE, ACT_TOGGLE_RM, CARD_BIT

from .expert import DEAD_RANK_BONUS, LAST_CAPTURE_SHARE, SEVEN_PLACE_PENALTY
from .values import PointModel

BATCHED = ("random", "greedy", "expert")
"""The baselines with a batched form."""

_CAPTURE = ACT_CAPTURE.view(np.int64)  # per id: the captured cards (0: place, ace takes all)
_TOGGLE = ACT_TOGGLE.view(np.int64)  # per id: the table bits it flips
_BIT = CARD_BIT.view(np.int64)
_RANK0 = np.array(RANK, np.int64) - 1
_SHIFTS = np.arange(N_CARDS, dtype=np.int64)
_ID_BITS = 14  # catalogue ids fit in 14 bits
_ID_MASK = (1 << _ID_BITS) - 1


@dataclass(frozen=True)
class _Tables:
    """Per-rules lookup tables."""

    card_value: np.ndarray  # (4 * 40,) PointModel card values, row 2 * carte_open + denari_open
    prim_byte: np.ndarray  # (5, 256) primiera value of the cards of each byte of a mask
    keep: np.ndarray  # (40,) greedy keep_value packed: settebello, coin, primiera


@lru_cache(maxsize=16)
def _tables(rules: Rules) -> _Tables:
    """Lookup tables of ``rules``; the card values are ``PointModel``'s own, read off one
    model per (carte open, denari open) case."""
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
    prim = rules.primiera_values
    prim_byte = np.zeros((5, 256), np.int64)
    for k in range(5):
        for byte in range(256):
            prim_byte[k, byte] = sum(prim[RANK[8 * k + i] - 1] for i in range(8)
                                     if byte >> i & 1)
    keep = np.array([(c == SETTEBELLO) << 6 | (SUIT[c] == 0) << 5 | prim[RANK[c] - 1]
                     for c in range(N_CARDS)], np.int64)
    return _Tables(values.reshape(-1), prim_byte, keep)


@dataclass
class _Batch:
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


def _batch(env: VectorScopaEnv, games: np.ndarray) -> _Batch:
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
    cap = np.where(takes_all, tab, _CAPTURE.take(ids))
    after = np.where(takes_all, 0, tab ^ _TOGGLE.take(ids))
    after_rm = np.where(takes_all, 0, env.table_rm.take(games).take(game) ^ ACT_TOGGLE_RM.take(ids))
    return _Batch(seat=seat, own=own, other=other,
                  unseen=FULL_DECK & ~(hand | table | own | other), sizes=sizes, deck=deck,
                  last=(deck == 0) & (sizes.sum(1) == 1), count=valid.sum(1),
                  width=valid.shape[1], game=game, col=col, ids=ids, card=ACT_CARD.take(ids),
                  cap=cap, after=after, after_rm=after_rm)


class _Unseen(NamedTuple):
    """The unseen cards of each game by rank (G, 10), in the kinds the replies use."""

    coin: np.ndarray  # the rank's coin is unseen
    lowest: np.ndarray  # the lowest unseen other card of the rank (-1: none)
    others: np.ndarray  # how many other cards of the rank are unseen

    @property
    def best(self) -> np.ndarray:
        """The unseen card of each rank that takes most: its coin, else the lowest other."""
        return np.where(self.coin, _SHIFTS[:10], self.lowest)


def _unseen_by_rank(unseen: np.ndarray) -> _Unseen:
    bits = (unseen[:, None] >> _SHIFTS[None, :]) & 1  # (G, 40)
    s1, s2, s3 = bits[:, 10:20], bits[:, 20:30], bits[:, 30:40]
    r = _SHIFTS[:10]
    lowest = np.where(s1 == 1, r + 10, np.where(s2 == 1, r + 20, np.where(s3 == 1, r + 30, -1)))
    return _Unseen(bits[:, :10] == 1, lowest, s1 + s2 + s3)


def _reply_moves(env: VectorScopaEnv, player: np.ndarray, after: np.ndarray,
                 after_rm: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The captures an opponent could make on each table ``after`` (R tables) with the card
    ``player[row, rank - 1]`` of each rank (-1: none): per capture ``(table row, rank - 1,
    captured cards, whether it sweeps for a scopa)``, from ``env.card_moves``."""
    row, rank0 = np.nonzero(player >= 0)
    row, ids = env.card_moves(row, player[row, rank0], after_rm, captures_only=True)
    tab = after.take(row)
    cap = np.where(ids >= ACE_ALL_BASE, tab, _CAPTURE.take(ids))
    sweeps = (cap == tab) & (ids < ACE_ALL_BASE)
    return row, _RANK0.take(ACT_CARD.take(ids)), cap, sweeps


# -- greedy ---------------------------------------------------------------------------------
def _greedy_keys(pile: np.ndarray, scopa: np.ndarray, prim_byte: np.ndarray) -> np.ndarray:
    """``values.greedy_key`` of adding ``pile`` to one's pile (0 for an empty pile), packed
    in one int64 with the same order: scopa, settebello, coins, primiera, cards."""
    prim = prim_byte[0].take(pile & 255)
    for k in range(1, 5):
        prim += prim_byte[k].take(pile >> 8 * k & 255)
    return (scopa.astype(np.int64) << 22 | (pile >> SETTEBELLO & 1) << 21
            | popcount(pile & COINS_MASK) << 17 | prim << 7 | popcount(pile))


def greedy_actions(env: VectorScopaEnv, games: np.ndarray) -> np.ndarray:
    """``GreedyAgent().act(env.info_set(g))`` for every game of ``games``."""
    b = _batch(env, games)
    rules, tables = env.rules, _tables(env.rules)
    n, g = len(games), b.game
    # the best capture: highest key, then the lowest id (``keys.index(max(keys))``)
    scopa = (b.cap != 0) & (b.after == 0) & (b.ids < ACE_ALL_BASE)
    if not rules.last_play_scopa:
        scopa &= ~b.last.take(g)
    key = _greedy_keys(np.where(b.cap != 0, b.cap | _BIT.take(b.card), 0), scopa,
                       tables.prim_byte)
    top = np.full((n, b.width), -1, np.int64)
    top[g, b.col] = key << _ID_BITS | (_ID_MASK - b.ids)
    top = top.max(1)
    pick = _ID_MASK - (top & _ID_MASK)
    # no capture: the place whose table gives the opponent the least, then keep value, id
    placing = ((top >> _ID_BITS) == 0) & (b.count > 1)
    if placing.any():
        mv = np.flatnonzero(placing.take(g))
        reply = _best_reply_keys(env, b, mv, tables.prim_byte)
        cost = np.full((n, b.width), np.iinfo(np.int64).max)
        ids = b.ids.take(mv)
        cost[g.take(mv), b.col.take(mv)] = (reply << 7 | tables.keep.take(b.card.take(mv))
                                            ) << _ID_BITS | ids
        pick = np.where(placing, cost.min(1) & _ID_MASK, pick)
    return pick


def _best_reply_keys(env: VectorScopaEnv, b: _Batch, mv: np.ndarray, prim_byte: np.ndarray
                     ) -> np.ndarray:
    """``values.best_reply_key`` of the table each move ``mv`` leaves against the unseen
    cards, packed as ``_greedy_keys``. A coin adds to the key of whatever its rank takes,
    so each rank is played by its coin when unseen, else by any other unseen card."""
    player = _unseen_by_rank(b.unseen).best.take(b.game.take(mv), axis=0)
    row, rank0, cap, sweeps = _reply_moves(env, player, b.after.take(mv), b.after_rm.take(mv))
    card = player[row, rank0]
    out = np.zeros(len(mv), np.int64)
    np.maximum.at(out, row, _greedy_keys(cap | _BIT.take(card), sweeps, prim_byte))
    return out


# -- expert ---------------------------------------------------------------------------------
def _pile_values(masks: np.ndarray, base: np.ndarray, card_value: np.ndarray) -> np.ndarray:
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


def expert_actions(env: VectorScopaEnv, games: np.ndarray) -> np.ndarray:
    """``ExpertAgent().act(env.info_set(g))`` for every game of ``games``."""
    b = _batch(env, games)
    rules, tables = env.rules, _tables(env.rules)
    n, g, p = len(games), b.game, env.players
    rows = np.arange(n)
    # per game: PointModel's case, the next seat's hand, the last-capture share
    carte_open = (popcount(b.own) <= 20) & (popcount(b.other) <= 20)
    denari_open = ((popcount(b.own & COINS_MASK) <= 5)
                   & (popcount(b.other & COINS_MASK) <= 5))
    base = (2 * carte_open + denari_open) * N_CARDS
    reply_hand = b.sizes[rows, (b.seat + 1) % p]
    reply_hand = np.where((reply_hand == 0) & (b.deck > 0), rules.hand_size, reply_hand)
    mine = b.sizes[rows, b.seat]
    share = np.where((b.sizes.sum(1) == mine) & (mine == 1), 1.0, LAST_CAPTURE_SHARE)
    unseen = _unseen_by_rank(b.unseen)
    # what the move takes
    v = np.zeros(len(g))
    ci = np.flatnonzero(b.cap)
    gc = g.take(ci)
    sweeps = (b.after.take(ci) == 0) & (b.ids.take(ci) < ACE_ALL_BASE)
    if not rules.last_play_scopa:
        sweeps &= ~b.last.take(gc)
    v[ci] = _pile_values(b.cap.take(ci) | _BIT.take(b.card.take(ci)), base.take(gc),
                         tables.card_value) + np.where(sweeps, 1.0, 0.0)
    # minus the next opponent's expected best capture on the table it leaves
    ri = np.flatnonzero((b.count.take(g) > 1) & ~b.last.take(g) & (reply_hand.take(g) > 0)
                        & (b.after != 0) & (b.unseen.take(g) != 0))
    if len(ri):
        prob = np.minimum(1.0, reply_hand / np.maximum(popcount(b.unseen), 1))
        v[ri] = v[ri] - _expected_replies(env, b, ri, base, prob, unseen, tables)
    # last capture: a share of what the capture leaves on the table
    li = np.flatnonzero((b.cap != 0) & (b.deck.take(g) == 0) & (b.after != 0))
    if len(li):
        gl = g.take(li)
        v[li] = v[li] + share.take(gl) * _pile_values(b.after.take(li), base.take(gl),
                                                      tables.card_value)
    # a place: put down dead-rank duplicates, keep sevens
    pi = np.flatnonzero(b.cap == 0)
    rank0 = _RANK0.take(b.card.take(pi))
    gp = g.take(pi)
    dead = ~unseen.coin[gp, rank0] & (unseen.others[gp, rank0] == 0)
    vp = v.take(pi)
    vp = np.where(dead, vp + DEAD_RANK_BONUS, vp)
    v[pi] = np.where(rank0 == 6, vp - SEVEN_PLACE_PENALTY, vp)  # a seven
    score = np.full((n, b.width), -np.inf)
    score[g, b.col] = v
    return env.legal_ids[games, score.argmax(1)]


def _expected_replies(env: VectorScopaEnv, b: _Batch, mv: np.ndarray, base: np.ndarray,
                      prob: np.ndarray, unseen: _Unseen, tables: _Tables) -> np.ndarray:
    """``ExpertAgent.expected_reply`` of the table each move ``mv`` leaves: every unseen
    card's best capture value (its kind's, valued with the kind's lowest card as the
    per-game cache does), sorted descending and folded card by card."""
    g = b.game.take(mv)
    player = unseen.best.take(g, axis=0)
    row, rank0, cap, sweeps = _reply_moves(env, player, b.after.take(mv), b.after_rm.take(mv))
    # value each capture for the coin and for the lowest other card of its rank
    gr = g.take(row)
    other = unseen.lowest[gr, rank0]
    ci, oi = np.flatnonzero(unseen.coin[gr, rank0]), np.flatnonzero(other >= 0)
    at = np.concatenate([row.take(ci) * 20 + rank0.take(ci),
                         row.take(oi) * 20 + 10 + rank0.take(oi)])
    cards = np.concatenate([rank0.take(ci), other.take(oi)])
    sel = np.concatenate([ci, oi])
    values = (_pile_values(cap.take(sel) | _BIT.take(cards), base.take(gr.take(sel)),
                           tables.card_value) + np.where(sweeps.take(sel), 1.0, 0.0))
    kind_value = np.zeros(len(mv) * 20)
    np.maximum.at(kind_value, at, values)
    # one value per unseen card (the coin, then the other cards of each rank), sorted
    # descending and folded; zeros come last and add nothing
    kind_value = kind_value.reshape(-1, 20)
    total = np.zeros(len(mv))
    some = np.flatnonzero(kind_value.max(1) > 0)
    kind_value, g = kind_value.take(some, axis=0), g.take(some)
    per_card = np.empty((len(some), N_CARDS))
    per_card[:, :10] = np.where(unseen.coin.take(g, axis=0), kind_value[:, :10], 0.0)
    others = unseen.others.take(g, axis=0)
    for k in range(1, 4):
        per_card[:, 10 * k:10 * k + 10] = np.where(others >= k, kind_value[:, 10:], 0.0)
    per_card.sort(axis=1)
    p = prob.take(g)
    q = 1.0 - p
    fold, miss = np.zeros(len(some)), np.ones(len(some))
    for j in range(int((per_card > 0).sum(1).max(initial=0))):
        fold = fold + per_card[:, N_CARDS - 1 - j] * p * miss  # total += v * p * miss
        miss = miss * q  # miss *= 1.0 - p
    total[some] = fold
    return total


# -- random and the entry point -------------------------------------------------------------
def random_actions(env: VectorScopaEnv, games: np.ndarray,
                   rng: np.random.Generator | None = None) -> np.ndarray:
    """A uniform legal id for every game of ``games``."""
    rng = np.random.default_rng() if rng is None else rng
    count = env.legal_valid[games].sum(1)
    pick = (rng.random(len(games)) * count).astype(np.int64)
    return env.legal_ids[games, np.minimum(pick, count - 1)]


def batched_actions(name: str, env: VectorScopaEnv, games: np.ndarray,
                    rng: np.random.Generator | None = None) -> np.ndarray:
    """Catalogue ids chosen by the baseline ``name`` ("random" | "greedy" | "expert") for
    the seat to move in each of ``games`` (int array of game indices): the same move as
    the per-game agent's ``act(env.info_set(g))`` (``random``: the same distribution)."""
    games = np.asarray(games, np.int64).reshape(-1)
    if name == "random":
        return random_actions(env, games, rng)
    if name == "greedy":
        return greedy_actions(env, games)
    if name == "expert":
        return expert_actions(env, games)
    raise ValueError(f"no batched form of agent {name!r}; batched agents: "
                     f"{', '.join(BATCHED)}")


__all__ = ["BATCHED", "batched_actions", "random_actions", "greedy_actions", "expert_actions"]
