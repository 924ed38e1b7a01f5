"""Playing whole matches with agents (duck-typed: ``agent.act(info) -> id``, and an
optional ``reset()`` called before each deal the agent plays: ``start_deal``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from .game import IllegalMoveError, apply, new_match, raise_illegal
from .observation import InfoSet, info_set
from .records import MatchRecorder
from .rules import Rules


class Actor(Protocol):
    spec: str

    def act(self, info: InfoSet) -> int: ...


def has_reset(agent: Any) -> bool:
    """Whether ``agent`` keeps state between moves (it has a ``reset()`` to clear it)."""
    return callable(getattr(agent, "reset", None))


def start_deal(agents: Any) -> None:
    """A new deal starts: call ``reset()`` of each agent that has one."""
    for agent in agents:
        if has_reset(agent):
            agent.reset()


def derive_seed(*keys: int) -> int:
    """A 63-bit seed from a tuple of non-negative integers, e.g. (run seed, match
    index): the same on every machine and for any number of worker processes."""
    state = np.random.SeedSequence([int(k) for k in keys]).generate_state(2, dtype=np.uint32)
    return int(state[0]) << 31 | int(state[1]) >> 1


def play_match(rules: Rules, seed: int, agents: Sequence[Actor],
               names: Sequence[str] | None = None) -> dict[str, Any]:
    """Play one match (agent ``i`` in seat ``i``) and return its game record."""
    if len(agents) != rules.players:
        raise ValueError(f"{len(agents)} agents for {rules.players} seats")
    state = new_match(rules, seed=seed)
    rec = MatchRecorder(state, list(names or [a.spec for a in agents]))
    start_deal(agents)
    while not state.done:
        seat = state.to_move
        info = info_set(state, seat)
        action = agents[seat].act(info)
        if action not in info.legal_actions:
            try:
                raise_illegal(state, action, list(info.legal_actions))
            except IllegalMoveError as e:
                raise IllegalMoveError(f"agent {agents[seat].spec!r}: {e}") from None
        result = apply(state, int(action), check=False)
        rec.observe(result, state)
        if result.hand is not None and not state.done:
            start_deal(agents)
    return rec.record
