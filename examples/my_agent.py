"""A complete agent of your own, benchmarked with the kit's commands (docs/agents.md).

    scopa eval py:examples/my_agent.py:MyAgent greedy --hands 200 --workers 2
    scopa eval py:examples/my_agent.py:MyAgent,cards_weight=0.5 expert --hands 1000
    scopa ladder random greedy py:examples/my_agent.py:MyAgent --hands 500 --out my_ladder

``MyAgent`` scores each legal move by what it captures now (a scopa, the settebello,
coins, cards) and, when it captures nothing, by the most the next player could take
from the table it leaves. It caches that look-ahead for the current deal, which shows
the optional ``reset()``: the kit calls it before every deal the agent plays.
"""

from __future__ import annotations

import random

from scopa_env.cards import RANK, SETTEBELLO, cards_of
from scopa_env.moves import action_move, legal_actions
from scopa_env.observation import InfoSet


class MyAgent:
    """Capture the most valuable set now; with nothing to take, give the least away.

    ``cards_weight`` (a spec parameter: ``py:examples/my_agent.py:MyAgent,cards_weight=2``)
    is the value of each captured card, against 3 for a coin and 5 for the settebello."""

    def __init__(self, seed: int | None = None, cards_weight: float = 1.0) -> None:
        self.rng = random.Random(seed)  # breaks ties, so the agent is reproducible
        self.cards_weight = float(cards_weight)
        self.memo: dict[tuple[int, int], float] = {}  # this deal's look-ahead results

    def reset(self) -> None:
        """A new deal starts (called by the kit before the agent's first move in it)."""
        self.memo.clear()

    def act(self, info: InfoSet) -> int:
        """One of ``info.legal_actions``: the catalogue id of the move to play."""
        legal = info.legal_actions
        if len(legal) == 1:
            return legal[0]
        scores = [self.score(info, a) for a in legal]
        best = max(scores)
        return self.rng.choice([a for a, s in zip(legal, scores, strict=True) if s == best])

    def score(self, info: InfoSet, action: int) -> float:
        move = action_move(action, info.table)
        taken = move.capture | (1 << move.card) if move.capture else 0
        if taken:
            value = self.cards_weight * len(cards_of(taken))
            value += 3 * len(cards_of(taken & 0x3FF))  # coins are card ids 0..9
            value += 5 * bool(taken >> SETTEBELLO & 1)
            if move.capture == info.table and info.deck_count > 0:
                value += 10  # a scopa (simplified: not counted once the deck is empty)
            return value
        # nothing captured: the card joins the table; the next player may take from it
        return -self.exposure(info, info.table | 1 << move.card) - 0.1 * RANK[move.card]

    def exposure(self, info: InfoSet, table: int) -> float:
        """The most that one card we have not seen could capture from ``table``."""
        key = (table, info.unseen)
        if key not in self.memo:
            worst = 0.0
            for card in cards_of(info.unseen):
                for reply in legal_actions(1 << card, table, info.rules):
                    capture = action_move(reply, table).capture
                    if capture:
                        worst = max(worst, len(cards_of(capture)) + 1 + 10 * (capture == table))
            self.memo[key] = worst
        return self.memo[key]
