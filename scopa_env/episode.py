"""What the environments share about episodes: the reward and episode options and
seeds. The rule that turns a hand's end into rewards is ``scopa_env.rules.outcome``.
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
