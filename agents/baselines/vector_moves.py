"""Batched baselines: the moves of ``random``, ``greedy`` and ``expert`` for many games of a
``VectorScopaEnv`` at once, as numpy array code (no Python loop over games).

``batched_actions(name, env, games)`` gives, for the seat to move in each of ``games``,
the catalogue id that the per-game agent plays on ``env.info_set(g)``: for ``greedy`` and
``expert`` the very same move, ties included; for ``random`` the same distribution (from
a numpy generator, not the agent's own random stream). Each batched form sits beside its
per-game agent (``greedy.greedy_actions``, ``expert.expert_actions`` in this package), on
the shared array machinery of ``batching``.
"""

from __future__ import annotations

import numpy as np

from scopa_env.vector import VectorScopaEnv

from .batching import random_actions
from .expert import expert_actions
from .greedy import greedy_actions

BATCHED = ("random", "greedy", "expert")
"""The baselines with a batched form."""


def batched_actions(name: str, env: VectorScopaEnv, games: np.ndarray,
                    rng: np.random.Generator | None = None) -> np.ndarray:
    """Catalogue ids chosen by the baseline ``name`` ("random" | "greedy" | "expert") for
    the seat to move in each of ``games`` (int array of game indices): the same move as
    the per-game agent's ``act(env.info_set(g))`` (``random``: the same distribution)."""
    games = np.asarray(games, np.int64).reshape(-1)
    if name == "random":
        return random_actions(env, games, rng)
    if name == "greedy":
        return greedy_actions(env, games)
    if name == "expert":
        return expert_actions(env, games)
    raise ValueError(f"no batched form of agent {name!r}; batched agents: "
                     f"{', '.join(BATCHED)}")


__all__ = ["BATCHED", "batched_actions", "random_actions", "greedy_actions", "expert_actions"]
