"""Move scores averaged over the suit-symmetric views of a decision.

Cups, swords and clubs play alike (``scopa_env.suit_maps``), so a decision seen under any
of the 6 permutations of those suits is the same decision. A network that was not built
to ignore the suits' names scores the 6 views a little differently; averaging its scores
over them is an ensemble of 6 for the price of a batch 6 times as large, and it makes the
agent's choice the same in every view (the last-deal scorer loses about 6% fewer points
with it: BENCHMARKS.md).

``CloseCalls`` spends that price only where it can change the move: on the decisions
whose one view puts the best two moves within ``CLOSE_GAP`` logits of each other (about
one in seven of the shipped network's decisions), choosing the same move as averaging
every decision in all but about 1 in 250 of them (``benchmarks/close_calls.py``).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from scopa_env.suit_maps import SUIT_PERMUTATIONS, permute_obs_views

from .features import SUIT_VIEW_COLUMNS, action_inputs_np


class MoveScorer(Protocol):
    def scores(self, obs: np.ndarray, feats: np.ndarray, row: np.ndarray) -> np.ndarray:
        """Scores (M,) of moves with features ``feats`` (M, ACTION_DIM) of decisions
        ``obs`` (B, 216), ``row`` (M,) naming each move's decision."""
        ...


class _FromFeatures:
    """``logits_flat`` (``NumpyScorer``'s interface) from a ``scores`` over move features."""

    def scores(self, obs: np.ndarray, feats: np.ndarray, row: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def logits_flat(self, obs: np.ndarray, ids: np.ndarray, row: np.ndarray) -> np.ndarray:
        """Scores (M,) of the legal ids (M,) of B decisions ``obs`` (B, 216), ``row``
        (M,) naming each id's decision (``NumpyScorer.logits_flat``'s interface)."""
        obs = np.atleast_2d(obs)
        return self.scores(obs, action_inputs_np(obs, ids, row), row)


class SuitAveraged(_FromFeatures):
    """A numpy scorer (``NumpyScorer``, ``NumpyLastDeal``) whose move scores are the mean
    of its scores over the 6 suit views of each decision, in one call of its ``scores``:
    the move features are computed once and each view's are a permutation of their
    columns (``SUIT_VIEW_COLUMNS``), as each view's observation is of the observation's."""

    def __init__(self, scorer: MoveScorer,
                 views: tuple[int, ...] = tuple(range(len(SUIT_PERMUTATIONS)))) -> None:
        self.scorer = scorer
        self.views = np.asarray(views)  # which suit permutations (places in SUIT_PERMUTATIONS)
        self._columns = SUIT_VIEW_COLUMNS[self.views]

    def view_scores(self, obs: np.ndarray, feats: np.ndarray, row: np.ndarray
                    ) -> np.ndarray:
        """The wrapped scorer's scores (V, M) of the moves in each of the V views."""
        b, v = len(obs), len(self.views)
        all_feats = feats[:, self._columns].transpose(1, 0, 2).reshape(-1, feats.shape[1])
        all_row = (row[None, :] + b * np.arange(v)[:, None]).reshape(-1)
        return self.scorer.scores(permute_obs_views(obs, self.views), all_feats,
                                  all_row).reshape(v, -1)

    def scores(self, obs: np.ndarray, feats: np.ndarray, row: np.ndarray) -> np.ndarray:
        """The mean over the views of the wrapped scorer's ``scores``, rounded to 1e-8:
        moves that a renaming fixing the decision maps onto each other (5c and 5s in
        hand, every other cup and sword unseen) score exactly alike, and rounding makes
        their float noise, which differs between a batch and one decision, an exact tie
        that the first legal move wins in both."""
        return np.round(self.view_scores(obs, feats, row).mean(0), 8)


CLOSE_GAP = 1.0
"""Logits: a decision whose one view scores its best two moves closer than this is a close
call (``CloseCalls``)."""


def decision_table(scores: np.ndarray, row: np.ndarray, n: int) -> np.ndarray:
    """Scores (M,) laid out per decision (n, at least 2 columns): row ``i`` holds decision
    ``i``'s scores in their order, -inf after them; ``row`` (M,) names each score's
    decision. ``argmax(1)`` is then each decision's first best move."""
    order = np.argsort(row, kind="stable")
    count = np.bincount(row, minlength=n)
    col = np.arange(len(row)) - np.repeat(np.cumsum(count) - count, count)
    table = np.full((n, max(int(count.max(initial=0)), 2)), -np.inf)
    table[row[order], col] = scores[order]
    return table


def top_two_gap(scores: np.ndarray, row: np.ndarray, n: int) -> np.ndarray:
    """Per decision (n,), its best move's score minus the next best (0 when two moves
    share the best score, inf with fewer than two); ``row`` (M,) names each score's decision."""
    table = np.sort(decision_table(scores, row, n), 1)
    gap = np.full(n, np.inf)
    two = table[:, -2] > -np.inf  # scores are finite: -inf is an empty place
    gap[two] = table[two, -1] - table[two, -2]
    return gap


class CloseCalls(_FromFeatures):
    """A numpy scorer averaged over the 6 suit views (as ``SuitAveraged``) only on the
    close calls: decisions whose one view (the identity) scores the best two moves within
    ``gap`` logits of each other. The other decisions keep their one view's scores,
    rounded to 1e-8 like the averages, so that a batch and one decision alone make the
    same choice."""

    def __init__(self, scorer: MoveScorer, gap: float = CLOSE_GAP) -> None:
        self.scorer = scorer
        self.gap = gap
        self.others = SuitAveraged(scorer, tuple(range(1, len(SUIT_PERMUTATIONS))))

    def scores(self, obs: np.ndarray, feats: np.ndarray, row: np.ndarray) -> np.ndarray:
        """One view's scores, and the mean over the 6 views on the close calls."""
        one = self.scorer.scores(obs, feats, row)
        out = np.round(one, 8)
        close = top_two_gap(out, row, len(obs)) < self.gap
        if close.any():
            sub, pick = np.flatnonzero(close), close[row]
            rest = self.others.view_scores(obs[sub], feats[pick],
                                           np.searchsorted(sub, row[pick]))
            out[pick] = np.round((one[pick] + rest.sum(0)) / len(SUIT_PERMUTATIONS), 8)
        return out


__all__ = ["CLOSE_GAP", "CloseCalls", "MoveScorer", "SuitAveraged", "decision_table",
           "top_two_gap"]
