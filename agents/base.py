"""The agent interface: an agent sees one seat's information set and returns a catalogue id.

An agent is any object with a ``spec`` string and ``act(info) -> int``; ``info`` is
``scopa_env.observation.InfoSet`` (the seat's hand, the table, both piles, the
unseen cards, hand sizes, scores and the legal ids), which holds nothing the seat
may not know. ``act_batch(infos)`` is the optional batched form (one id per
information set, e.g. for a neural network over many games at once). ``reset()`` is
optional too: an agent that has it keeps state from move to move; it gets its own
instance per game and ``reset()`` before its first move of every deal
(``scopa_env.play.start_deal``, ``PerGame``). docs/agents.md has the whole protocol.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, ClassVar, Protocol, runtime_checkable

from scopa_env.observation import InfoSet

from .move_analysis import MoveAnalysis, first_best, forced


@runtime_checkable
class Agent(Protocol):
    """``act`` gets the seat's ``InfoSet`` (with ``legal_actions``) and returns one
    of those ids. ``spec`` is the string that names the agent (``"random"``)."""

    spec: str

    def act(self, info: InfoSet) -> int: ...


class BaseAgent:
    """Shared plumbing of the built-in agents: the spec, a seeded RNG, ``act_batch``,
    and ``act`` for agents that score moves: a lone legal move is played at once,
    otherwise the first legal move with the highest ``scores(info)``.

    ``PARAMS`` maps each spec parameter to ``(type, default, help)``; ``values_in_points``:
    whether ``scores`` are in points (hand points of the seat's team minus the other's),
    which makes the agent a reviewer (``analyse``, ``agents.evaluation.match_review``)."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    PARAMS: ClassVar[dict[str, tuple[type, Any, str]]] = {}
    values_in_points: ClassVar[bool] = False

    def __init__(self, seed: int | None = None, **params: Any):
        self.params = {k: params.get(k, d) for k, (_, d, _) in self.PARAMS.items()}
        self.rng = random.Random(seed)
        self.spec = self.name + (":" + ",".join(f"{k}={v}" for k, v in self.params.items())
                                 if self.params else "")

    @classmethod
    def param_value(cls, key: str, raw: str, who: str) -> Any:
        """Spec parameter ``key`` typed by ``PARAMS``; a ``ValueError`` naming ``who``
        (e.g. "agent 'pimc'") when the class has no such parameter or ``raw`` does not fit."""
        if key not in cls.PARAMS:
            have = ", ".join(f"{k} ({h}, default {d})" for k, (_, d, h) in cls.PARAMS.items())
            raise ValueError(f"{who} has no parameter {key!r}; "
                             + (f"its parameters: {have}" if have else "it takes none"))
        typ = cls.PARAMS[key][0]
        try:
            return typ(raw)
        except ValueError:
            raise ValueError(f"parameter {key!r} of {who} takes a {typ.__name__}, "
                             f"got {raw!r}") from None

    def act(self, info: InfoSet) -> int:
        legal = info.legal_actions
        if len(legal) == 1:
            return legal[0]
        return legal[first_best(self.scores(info))]

    def scores(self, info: InfoSet) -> list[float]:
        """The value of every legal move (in ``info.legal_actions`` order)."""
        raise NotImplementedError(f"{type(self).__name__} defines neither act nor scores")

    def analyse(self, info: InfoSet, played: int | None = None) -> MoveAnalysis:
        """The decision as ``act`` sees it (``agents.move_analysis``): every legal move's
        ``scores`` and the first best, the move ``act`` plays (``played`` changes nothing:
        every move is scored). Only for agents that choose by ``scores``."""
        if type(self).act is not BaseAgent.act:
            raise NotImplementedError(f"agent {self.name!r} does not choose its moves by "
                                      f"scoring them")
        legal = info.legal_actions
        if len(legal) == 1:
            return forced(legal)
        values = tuple(float(v) for v in self.scores(info))
        return MoveAnalysis(tuple(legal), first_best(values), self.name, values=values)

    def act_batch(self, infos: list[InfoSet]) -> list[int]:
        """One id per information set (in order)."""
        return [self.act(i) for i in infos]

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec}>"


class RandomAgent(BaseAgent):
    """Uniform over the legal moves."""

    name = "random"
    summary = "uniform over the legal moves"

    def act(self, info: InfoSet) -> int:
        return self.rng.choice(info.legal_actions)


class PerGame:
    """Instances of a stateful agent (one with ``reset()``) for games played side by
    side: game ``g``'s instance is made by ``make(g)`` at its first move and reset
    before its first move of every deal, so between two resets it sees one deal."""

    def __init__(self, make: Callable[[int], Agent]) -> None:
        self.make = make
        self.games: dict[int, tuple[Any, Agent]] = {}

    def get(self, game: int, deal: Any) -> Agent:
        """Game ``game``'s instance for the deal ``deal`` (any key that changes with it)."""
        seen = self.games.get(game)
        agent = self.make(game) if seen is None else seen[1]
        if seen is None or seen[0] != deal:
            agent.reset()  # type: ignore[attr-defined]
            self.games[game] = (deal, agent)
        return agent

