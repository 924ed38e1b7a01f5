"""Move features: what a network reads about each legal move, as numpy arrays.

The action space has 16,204 ids but a decision has only a few legal ones (actions.md),
so a network needs no output unit per id. Instead every legal id is described by
features: the played card and the captured cards from ``ACTION_FEATURES`` plus derived
ones computed against the current table (the cards left on the table, whether the move
is a scopa, which coins / settebello / primiera cards it takes, the rank sum it leaves,
and the replies it allows: for each rank, whether a card of that rank could capture on
the table left or sweep it for a scopa, weighted by the unseen cards of that rank).
They read only the observation (``scopa_env.observation``) and the id: nothing hidden.

For the ace-takes-all ids (16200..16203) the catalogue row holds only the played card:
their captured set is built here from the table in the observation.

The kit's policy network scores moves by these features (``scopa_policy.features``
adds its torch side); the Gymnasium environments' ``moves="legal"`` interface puts them
in the observation, one row per legal move (``legal_move_inputs``).
"""

from __future__ import annotations

import numpy as np

from .cards import COINS_MASK, N_CARDS, RANK, SETTEBELLO, cards_of
from .moves import ACE_ALL_BASE, ACTION_FEATURES
from .observation import OBS_DIM, TABLE, UNSEEN

SUM_BUCKETS = 12  # rank sum left on the table: 0..10, then "more than 10"
REPLY_DIM = 41
MOVE_LAYOUT: tuple[tuple[str, int], ...] = (
    ("card", N_CARDS),  # the played card, one-hot
    ("capture", N_CARDS),  # the captured cards
    ("after", N_CARDS),  # the cards on the table after the move
    ("scalars", 7),  # SCALAR_NAMES
    ("sum_after", SUM_BUCKETS),  # one-hot rank sum left on the table
    ("taken_by_rank", 10),  # cards taken (captured and capturing) of each rank / 4
    ("played_rank", 10),  # one-hot
    ("played_suit", 4),  # one-hot
    ("reply", REPLY_DIM))  # what the replies can do (``_reply_threats``)
"""The move features' parts in order, with their sizes: the one definition of the columns."""
SCALAR_NAMES = ("captures", "scopa", "takes_all", "taken / 5", "coins taken / 5",
                "settebello taken", "cards left on the table / 10")
COLUMNS: dict[str, slice] = {}
_at = 0
for _name, _size in MOVE_LAYOUT:
    COLUMNS[_name] = slice(_at, _at + _size)
    _at += _size
ACTION_DIM = _at
assert COLUMNS["scalars"].stop - COLUMNS["scalars"].start == len(SCALAR_NAMES)
# ACTION_FEATURES (the catalogue's own columns): the played card, then the captured cards
_CAT_CARD, _CAT_CAPTURE = slice(0, N_CARDS), slice(N_CARDS, 2 * N_CARDS)
_COINS = cards_of(COINS_MASK)

_R = np.arange(1, 11)
# Subset sums up to 10 of a table depend only on its rank counts, capped where more
# copies cannot matter (at most 10 // r cards of rank r fit in a sum of 10):
_CAPS = np.array([min(4, 10 // r) for r in range(1, 11)])
_RADIX = np.concatenate([[1], np.cumprod(_CAPS[:-1] + 1)]).astype(np.int64)


def _build_reach() -> np.ndarray:
    """``_REACH[index of capped rank counts]``: bit s set when some subset sums to s."""
    size = int(np.prod(_CAPS + 1))
    idx = np.arange(size)
    counts = (idx[:, None] // _RADIX) % (_CAPS + 1)
    reach = np.ones(size, np.int64)
    for r in range(1, 11):
        for j in range(1, int(_CAPS[r - 1]) + 1):
            reach = np.where(counts[:, r - 1] >= j, (reach | (reach << r)) & 0x7FF, reach)
    return reach


_REACH = _build_reach()


def _reply_threats(after_ranks: np.ndarray, sum_after: np.ndarray, n_after: np.ndarray,
                   unseen_ranks: np.ndarray) -> np.ndarray:
    """What a card of each rank could do on the table a move leaves (numpy, any batch
    shape ``S``): ``after_ranks`` (S, 10) rank counts, ``sum_after`` / ``n_after`` (S,),
    ``unseen_ranks`` (S, 10) unseen cards per rank / 4 -> (S, 41): can capture (10),
    can sweep for a scopa (10), both weighted by the unseen cards of that rank (20), and
    whether any unseen card could sweep (1)."""
    reach = _REACH[np.minimum(after_ranks, _CAPS) @ _RADIX]
    cap = ((reach[..., None] >> _R) & 1).astype(np.float32)
    single = (n_after[..., None] == 1) & (after_ranks == 1)
    total = (n_after[..., None] >= 2) & (sum_after[..., None] == _R) & (after_ranks == 0)
    scopa = (single | total).astype(np.float32)
    threat = scopa * unseen_ranks
    return np.concatenate([cap, scopa, cap * unseen_ranks, threat,
                           (threat.sum(-1, keepdims=True) > 0)], -1, dtype=np.float32)


_ACTION_TABLE_NP = ACTION_FEATURES.astype(np.float32)
_RANKS_NP = np.asarray(RANK, np.float32)
_EYE_BUCKETS = np.eye(SUM_BUCKETS, dtype=np.float32)


def action_inputs_np(obs: np.ndarray, ids: np.ndarray, row: np.ndarray | None = None
                     ) -> np.ndarray:
    """Features of candidate moves -> (M, ACTION_DIM) float32, for ``ids`` (M,) catalogue
    ids and ``obs`` either (216,) one decision, (M, 216) one row per move, or (B, 216)
    with ``row`` (M,) the decision of each move."""
    obs = np.atleast_2d(obs)
    table = obs[:, TABLE]
    unseen_ranks = obs[:, UNSEEN].reshape(-1, 4, 10).sum(1) / 4
    if row is not None:
        table, unseen_ranks = table[row], unseen_ranks[row]
    f = _ACTION_TABLE_NP[ids]
    card, capt = f[:, _CAT_CARD], f[:, _CAT_CAPTURE]
    takes_all = (ids >= ACE_ALL_BASE).astype(np.float32)[:, None]
    capt = capt + takes_all * table
    is_cap = (capt.sum(-1, keepdims=True) > 0).astype(np.float32)
    taken = capt + card * is_cap
    after = table - capt + card * (1 - is_cap)
    n_after = after.sum(-1, keepdims=True)
    rank_sum = after @ _RANKS_NP
    sum_after = np.minimum(rank_sum, SUM_BUCKETS - 1).astype(np.int64)
    scopa = is_cap * (n_after == 0) * (1 - takes_all)
    after_ranks = after.reshape(-1, 4, 10).sum(1)
    unseen_ranks = np.broadcast_to(unseen_ranks, after_ranks.shape)
    out = np.empty((len(ids), ACTION_DIM), np.float32)
    out[:, COLUMNS["card"]] = card
    out[:, COLUMNS["capture"]] = capt
    out[:, COLUMNS["after"]] = after
    out[:, COLUMNS["scalars"]] = np.concatenate([
        is_cap, scopa, takes_all, taken.sum(-1, keepdims=True) / 5,
        taken[:, _COINS].sum(-1, keepdims=True) / 5, taken[:, SETTEBELLO:SETTEBELLO + 1],
        n_after / 10], -1)
    out[:, COLUMNS["sum_after"]] = _EYE_BUCKETS[sum_after]
    out[:, COLUMNS["taken_by_rank"]] = taken.reshape(-1, 4, 10).sum(1) / 4
    out[:, COLUMNS["played_rank"]] = card.reshape(-1, 4, 10).sum(1)
    out[:, COLUMNS["played_suit"]] = card.reshape(-1, 4, 10).sum(2)
    out[:, COLUMNS["reply"]] = _reply_threats(after_ranks.round().astype(np.int64),
                                              np.rint(rank_sum).astype(np.int64),
                                              np.rint(n_after[:, 0]).astype(np.int64),
                                              unseen_ranks)
    return out


def legal_move_inputs(obs: np.ndarray, ids: np.ndarray, valid: np.ndarray, slots: int
                      ) -> tuple[np.ndarray, np.ndarray]:
    """The ``moves="legal"`` view of B decisions: ``obs`` (B, 216), their legal ids
    padded (B, L) with ``valid`` (B, L) marking the real ones, in the order the slots
    take them -> the flat observations (B, 216 + slots * ACTION_DIM) float32 (the 216
    columns, then each slot's move features, zeros in an empty slot) and the slot mask
    (B, slots) int8. Moves past ``slots`` are left out."""
    b = len(obs)
    ids, valid = ids[:, :slots], valid[:, :slots]
    out = np.zeros((b, OBS_DIM + slots * ACTION_DIM), np.float32)
    out[:, :OBS_DIM] = obs
    row, col = np.nonzero(valid)
    if len(row):
        feats = action_inputs_np(obs, ids[row, col], row)
        moves = out[:, OBS_DIM:].reshape(b, slots, ACTION_DIM)
        moves[row, col] = feats
    mask = np.zeros((b, slots), np.int8)
    mask[:, :valid.shape[1]] = valid
    return out, mask


def split_legal_observation(obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A ``moves="legal"`` observation (..., 216 + K * ACTION_DIM) -> its 216 columns
    (..., 216) and its slots' move features (..., K, ACTION_DIM)."""
    k = (obs.shape[-1] - OBS_DIM) // ACTION_DIM
    if obs.shape[-1] != OBS_DIM + k * ACTION_DIM or k < 1:
        raise ValueError(f"not a moves='legal' observation: {obs.shape[-1]} columns is not "
                         f"{OBS_DIM} + K x {ACTION_DIM}")
    return obs[..., :OBS_DIM], obs[..., OBS_DIM:].reshape(*obs.shape[:-1], k, ACTION_DIM)


__all__ = ["ACTION_DIM", "COLUMNS", "MOVE_LAYOUT", "REPLY_DIM", "SCALAR_NAMES", "SUM_BUCKETS",
           "action_inputs_np", "legal_move_inputs", "split_legal_observation"]
