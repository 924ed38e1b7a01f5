"""The network as a model of the other seats' play, for reading the table
(``agents.worlds.InferenceSampler``, ``sampler=policy``).

A seat that played move ``a`` this round chose it knowing its hand. In a candidate deal
where it holds ``h`` now, it held ``h | later`` then (``agents.worlds.PastDecision``); the
policy network, on that seat's own observation with that hand, gives ``a`` a probability.
The likelihood of a deal is the product over the round's other-seat moves of

    (1 - floor) * softmax(logits / temperature)[a] + floor / (legal moves)

(``floor`` keeps a move the network finds unlikely from ruling a deal out: the others are
not this network). The observation of each past decision is built once from the public
replay and its hand and unseen columns rewritten per distinct hand; the network scores
every distinct (decision, hand) once, in float32
(``scopa_policy.search.RolloutPolicy``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from agents.worlds import InferenceSampler, PastDecision
from scopa_env.cards import FULL_DECK, N_CARDS
from scopa_env.moves import legal_actions
from scopa_env.observation import HAND, UNSEEN, encode


class MoveScorer(Protocol):
    """What the model needs of the network (``scopa_policy.search.RolloutPolicy``)."""

    def logits(self, obs: np.ndarray, ids: np.ndarray, valid: np.ndarray) -> np.ndarray: ...


_BITS = np.uint64(1) << np.arange(N_CARDS, dtype=np.uint64)


def card_columns(masks: np.ndarray) -> np.ndarray:
    """40 0/1 columns (N, 40) of card bitmasks ``masks`` (N,) uint64."""
    return ((masks[:, None] & _BITS) != 0).astype(np.float32)


class PolicyMoveModel:
    """``agents.worlds.MoveModel`` from a policy network (module docstring)."""

    def __init__(self, policy: MoveScorer, temperature: float = 1.0, floor: float = 0.1
                 ) -> None:
        if not temperature > 0:
            raise ValueError(f"sampler temperature must be more than 0, got {temperature}")
        if not 0 <= floor < 1:
            raise ValueError(f"sampler floor must be in [0, 1), got {floor}")
        self.policy = policy
        self.temperature = temperature
        self.floor = floor

    def decision_log_probs(self, d: PastDecision, held: np.ndarray) -> np.ndarray:
        """log P(``d.action``) (U,) for the seat holding each of ``held`` (U,) uint64 at
        the decision."""
        s = d.state
        base = encode(s, d.seat)
        public = FULL_DECK & ~(s.table | s.piles[0] | s.piles[1])
        obs = np.repeat(base[None].astype(np.float32), len(held), 0)
        obs[:, HAND] = card_columns(held)
        obs[:, UNSEEN] = card_columns(np.uint64(public) & ~held)
        legal = [legal_actions(int(h), s.table, s.rules) for h in held.tolist()]
        width = max(map(len, legal))
        ids = np.zeros((len(held), width), np.int64)
        valid = np.zeros((len(held), width), bool)
        for i, row in enumerate(legal):
            ids[i, :len(row)] = row
            valid[i, :len(row)] = True
        z = self.policy.logits(obs, ids, valid).astype(np.float64) / self.temperature
        z -= z.max(1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(1, keepdims=True)
        chosen = (p * (ids == d.action)).sum(1)
        n = valid.sum(1)
        return np.log((1 - self.floor) * chosen + self.floor / n)

    def log_likelihood(self, decisions: Sequence[PastDecision], hands: np.ndarray
                       ) -> np.ndarray:
        out = np.zeros(len(hands))
        for d in decisions:
            held = hands[:, d.seat] | np.uint64(d.later)
            distinct, back = np.unique(held, return_inverse=True)
            out += self.decision_log_probs(d, distinct)[back.reshape(-1)]
        return out


def policy_sampler(policy: MoveScorer, candidates: int = 4, temperature: float = 1.0,
                   floor: float = 0.1) -> InferenceSampler:
    """The inference sampler reading the table with ``policy`` (``sampler=policy``)."""
    return InferenceSampler(PolicyMoveModel(policy, temperature, floor), candidates)
