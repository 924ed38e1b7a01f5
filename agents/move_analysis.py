"""What an agent thinks of a decision: ``MoveAnalysis``, returned by ``agent.analyse(info)``.

An agent that chooses its moves by scoring them can show those scores: ``analyse(info,
played=None)`` returns the move it plays (``pick``, the same move ``act(info)`` returns
when the agent's random state is the same) and what it weighed, in the order of
``info.legal_actions``. ``values`` are in points (hand points of the seat's team minus
the other team's) when the agent's ``values_in_points`` is true; ``played``, a legal id
the caller wants compared with the agent's choice, is valued too where the agent's play
would leave it unvalued (``deep``: e.g. the search rolls out a move its network ruled
out). The review (``agents.evaluation.match_review``) is built on this method; docs/agents.md
has the protocol.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


def first_best(scores: Sequence[float]) -> int:
    """The place of the first highest score (NaN counts as lowest)."""
    best, at = -math.inf, 0
    for k, s in enumerate(scores):
        if s > best:  # NaN > x is False
            best, at = s, k
    return at


@dataclass(frozen=True)
class MoveAnalysis:
    """One decision as the agent sees it. ``how``: what valued the moves (``forced``: one
    legal move; ``search``, ``exact``, ``network``, or the agent's name for a baseline
    that scores moves, e.g. ``pimc``). ``values``: each legal move's value (NaN: not
    valued; None: no values at all); ``probs``: the network's probability of each move;
    ``value``: the network's estimate of the position in points for the seat's team;
    ``deep``: the moves were valued beyond what the agent computes to play (for a
    ``played`` move other than its choice)."""

    legal: tuple[int, ...]
    pick: int
    how: str
    values: tuple[float, ...] | None = None
    probs: tuple[float, ...] | None = None
    value: float | None = None
    deep: bool = False

    @property
    def move(self) -> int:
        """The legal id the agent plays."""
        return self.legal[self.pick]

    def loss(self, played: int) -> float | None:
        """Points lost by playing ``played`` instead of the agent's choice: 0 for its
        choice, ``values[pick] - values[played]`` where both are valued, else None."""
        k = self.legal.index(played)
        if k == self.pick:
            return 0.0
        if self.values is None or math.isnan(self.values[k]) or math.isnan(self.values[self.pick]):
            return None
        return float(self.values[self.pick] - self.values[k])


def forced(legal: Sequence[int]) -> MoveAnalysis:
    """The analysis of a decision with one legal move."""
    return MoveAnalysis(tuple(int(a) for a in legal), 0, "forced")


__all__ = ["MoveAnalysis", "first_best", "forced"]
