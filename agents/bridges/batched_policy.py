"""Agents that choose every move of a batch with one forward pass of a network
(``sb3:PATH``, ``rllib:PATH``): ``act`` is ``act_batch`` of one information set, and a
seat without a legal move is refused before the network runs."""

from __future__ import annotations

from abc import ABC, abstractmethod

from scopa_env.observation import InfoSet


class BatchedPolicyAgent(ABC):
    """Subclasses set ``spec`` and implement ``choose(infos)``: one legal id per
    information set, every one of which has legal moves."""

    spec: str

    def act(self, info: InfoSet) -> int:
        return self.act_batch([info])[0]

    def act_batch(self, infos: list[InfoSet]) -> list[int]:
        """One id per information set, from one batched forward pass."""
        for info in infos:
            if not info.legal_actions:
                raise ValueError(f"seat {info.seat} has no legal move to choose from")
        return self.choose(infos)

    @abstractmethod
    def choose(self, infos: list[InfoSet]) -> list[int]:
        """The moves of ``infos`` (each with legal moves), from one forward pass."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec}>"
