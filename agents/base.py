"""The agent interface: an agent sees one seat's information set and returns a catalogue id."""

from __future__ import annotations

import random
from typing import Protocol

from scopa_env.observation import InfoSet


class Agent(Protocol):
    """``act`` gets the seat's ``InfoSet`` (with ``legal_actions``) and returns one
    of those ids. ``spec`` is the string that names the agent (``"random"``)."""

    spec: str

    def act(self, info: InfoSet) -> int: ...


class RandomAgent:
    """Uniform over the legal moves."""

    def __init__(self, seed: int | None = None):
        self.spec = "random"
        self.rng = random.Random(seed)

    def act(self, info: InfoSet) -> int:
        return self.rng.choice(info.legal_actions)
