"""Move features, torch side: the network's inputs for the legal moves of a batch.

What a move's features are (``MOVE_LAYOUT``, ``action_inputs_np``) is defined once, in
numpy, in ``scopa_env.move_features`` (the Gymnasium environments' ``moves="legal"``
interface shows the same rows); this module adds the torch views: ``action_inputs``,
``Candidates`` (the legal moves of a batch of decisions flat, one feature row per real
move, so that no work is spent on padding) and the suit-view column maps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from scopa_env.cards import N_CARDS
from scopa_env.move_features import (
    ACTION_DIM,
    COLUMNS,
    MOVE_LAYOUT,
    REPLY_DIM,
    SCALAR_NAMES,
    SUM_BUCKETS,
    action_inputs_np,
)
from scopa_env.suit_maps import CARD_MAPS, SUIT_PERMUTATIONS


def action_inputs(obs: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """Features of each candidate move: ``obs`` (B, 216), ``ids`` (B, L) catalogue ids
    (padding may be any valid id) -> (B, L, ACTION_DIM) float32. The features hold no
    parameters: this is ``action_inputs_np`` on one row per candidate move."""
    b, n = ids.shape
    rows = np.repeat(obs.detach().cpu().numpy(), n, axis=0)
    feats = action_inputs_np(rows, ids.reshape(-1).cpu().numpy())
    return torch.from_numpy(feats).reshape(b, n, -1)


@dataclass
class Candidates:
    """The legal moves of B decisions, flat: no work is spent on padding.

    ``feats`` (M, ACTION_DIM) holds one row per legal move, grouped by decision in
    legal-list order; move ``k`` is entry ``col[k]`` of decision ``row[k]``'s legal
    list; ``width`` is the longest legal list."""

    feats: torch.Tensor  # (M, ACTION_DIM) float32
    row: torch.Tensor  # (M,) int64
    col: torch.Tensor  # (M,) int64
    width: int

    @staticmethod
    def from_padded(obs: np.ndarray, ids: np.ndarray, valid: np.ndarray) -> Candidates:
        """From padded legal ids (B, L) and their mask (numpy): features of the real
        entries only."""
        row, col = np.nonzero(valid)
        feats = action_inputs_np(obs, ids[row, col], row)
        return Candidates(torch.from_numpy(feats), torch.from_numpy(row),
                          torch.from_numpy(col), int(valid.shape[1]))

    @staticmethod
    def gather(feats: torch.Tensor, start: torch.Tensor, count: torch.Tensor) -> Candidates:
        """The candidates of decisions whose moves are ``feats[start[b]:start[b] +
        count[b]]`` (a minibatch of a rollout's flat store)."""
        row = torch.repeat_interleave(torch.arange(len(count), device=count.device), count)
        first = torch.cumsum(count, 0) - count
        col = torch.arange(len(row), device=count.device) - first[row]
        width = int(count.max()) if len(count) else 1
        return Candidates(take_rows(feats, start[row] + col), row, col, width)

    def to(self, device: torch.device) -> Candidates:
        return Candidates(self.feats.to(device), self.row.to(device), self.col.to(device),
                          self.width)


def take_rows(t: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """``t[idx]`` for a 1-D ``idx``: the same rows, copied by numpy on the CPU, where
    torch's indexing spreads the copy over its threads and waits for the slowest (several
    times slower when the cores are busy; the learner takes every minibatch this way)."""
    if t.device.type != "cpu" or idx.device.type != "cpu" or t.requires_grad:
        return t[idx]
    return torch.from_numpy(t.numpy()[idx.numpy()])


def _suit_view_columns() -> np.ndarray:
    """(6, ACTION_DIM): ``feats[:, SUIT_VIEW_COLUMNS[k]]`` are the features of the moves
    mapped by suit permutation ``k`` in the mapped observation (``scopa_env.suit_maps``):
    the per-card and per-suit columns move, every other feature counts ranks, coins or
    the settebello and stays."""
    out = np.tile(np.arange(ACTION_DIM), (len(SUIT_PERMUTATIONS), 1))
    for k, perm in enumerate(SUIT_PERMUTATIONS):
        for part in ("card", "capture", "after"):
            start = COLUMNS[part].start
            out[k, start + CARD_MAPS[k]] = start + np.arange(N_CARDS)
        start = COLUMNS["played_suit"].start
        out[k, start + np.asarray(perm)] = start + np.arange(4)
    out.setflags(write=False)
    return out


SUIT_VIEW_COLUMNS = _suit_view_columns()


__all__ = ["ACTION_DIM", "COLUMNS", "MOVE_LAYOUT", "REPLY_DIM", "SCALAR_NAMES",
           "SUM_BUCKETS", "SUIT_VIEW_COLUMNS", "Candidates", "action_inputs",
           "action_inputs_np", "take_rows"]
