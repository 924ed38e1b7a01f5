"""Move scores averaged over the suit-symmetric views of a decision.

Cups, swords and clubs play alike (``scopa_env.symmetry``), so a decision seen under any
of the 6 permutations of those suits is the same decision. A network that was not built
to ignore the suits' names scores the 6 views a little differently; averaging its scores
over them is an ensemble of 6 for the price of a batch 6 times as large, and it makes the
agent's choice the same in every view (the last-deal scorer loses about 6% fewer points
with it: BENCHMARKS.md).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from scopa_env.symmetry import SUIT_PERMUTATIONS, permute_obs

from .features import SUIT_VIEW_COLUMNS, action_inputs_np


class MoveScorer(Protocol):
    def scores(self, obs: np.ndarray, feats: np.ndarray, row: np.ndarray) -> np.ndarray:
        """Scores (M,) of moves with features ``feats`` (M, ACTION_DIM) of decisions
        ``obs`` (B, 216), ``row`` (M,) naming each move's decision."""
        ...


class SuitAveraged:
    """A numpy scorer (``NumpyScorer``, ``NumpyLastDeal``) whose move scores are the mean
    of its scores over the 6 suit views of each decision, in one call of its ``scores``:
    the move features are computed once and each view's are a permutation of their
    columns (``SUIT_VIEW_COLUMNS``), as each view's observation is of the observation's."""

    def __init__(self, scorer: MoveScorer,
                 views: tuple[int, ...] = tuple(range(len(SUIT_PERMUTATIONS)))) -> None:
        self.scorer = scorer
        self.views = views  # which suit permutations (their places in SUIT_PERMUTATIONS)
        self._columns = SUIT_VIEW_COLUMNS[list(views)]

    def logits_flat(self, obs: np.ndarray, ids: np.ndarray, row: np.ndarray) -> np.ndarray:
        """Scores (M,) of the legal ids (M,) of B decisions ``obs`` (B, 216), ``row``
        (M,) naming each id's decision (``NumpyScorer.logits_flat``'s interface)."""
        obs = np.atleast_2d(obs)
        return self.scores(obs, action_inputs_np(obs, ids, row), row)

    def scores(self, obs: np.ndarray, feats: np.ndarray, row: np.ndarray) -> np.ndarray:
        """The mean over the views of the wrapped scorer's ``scores``, rounded to 1e-8:
        moves that a renaming fixing the decision maps onto each other (5c and 5s in
        hand, every other cup and sword unseen) score exactly alike, and rounding makes
        their float noise, which differs between a batch and one decision, an exact tie
        that the first legal move wins in both."""
        b, v = len(obs), len(self.views)
        all_obs = np.concatenate([permute_obs(obs, k) for k in self.views])
        all_feats = feats[:, self._columns].transpose(1, 0, 2).reshape(-1, feats.shape[1])
        all_row = (row[None, :] + b * np.arange(v)[:, None]).reshape(-1)
        return np.round(self.scorer.scores(all_obs, all_feats, all_row).reshape(v, -1)
                        .mean(0), 8)


__all__ = ["MoveScorer", "SuitAveraged"]
