"""What the environments share about episodes: the reward and episode options, seeds,
and the rule that turns a hand's end into rewards (the AEC environment, the Gymnasium
environment and the training env all follow it; ``scopa_env.vector`` has its array form,
tested equal to this one).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

REWARDS = ("match", "points")
"""``match``: +1 / -1 to the winning / losing team at the match's end; ``points``: at
every hand's end, the team's hand points minus the other team's."""
EPISODES = ("match", "hand")
"""``match``: to ``target_score``; ``hand``: one hand (with ``reward="match"``, rewarded
by the sign of the hand's margin)."""


def check_choice(name: str, value: Any, allowed: Sequence[str]) -> None:
    """``ValueError`` naming the option and its allowed values unless ``value`` is one."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, "
                         f"got {value!r}")


def check_seed(seed: Any, what: str = "seed") -> int:
    """``seed`` as an int; ``ValueError`` unless it is a non-negative integer."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"{what} must be a non-negative integer, got {seed!r}")
    return int(seed)


def entropy_seed() -> int:
    """A seed from fresh entropy (a match or environment seeded with None)."""
    return int(np.random.SeedSequence().generate_state(1)[0])


def hand_end(reward: str, episode: str, totals: Sequence[int], match_over: bool,
             winner: int | None) -> tuple[bool, tuple[float, float]]:
    """At a hand's end: whether the episode ends, and the reward of each team (team 0,
    team 1), from the hand's points per team and the match's outcome."""
    done = match_over or episode == "hand"
    if reward == "points":
        return done, (float(totals[0] - totals[1]), float(totals[1] - totals[0]))
    if match_over:
        return done, (1.0 if winner == 0 else -1.0, 1.0 if winner == 1 else -1.0)
    if done:  # one-hand episode, match reward: the sign of the hand's margin
        m = float(np.sign(totals[0] - totals[1]))
        return done, (m, -m)
    return done, (0.0, 0.0)
