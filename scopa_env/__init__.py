"""scopa_env: the exact Scopa rules engine and its PettingZoo environment.

``scopa_env.env(**options)`` / ``scopa_env.raw_env`` follow PettingZoo's classic
environments; ``scopa_env.game`` is the pure state and step function underneath.

Importing it also registers the single-agent Gymnasium environment ``scopa/Scopa-v0``
(``gymnasium.make("scopa/Scopa-v0", opponent="expert")``): one learner seat, agents in
the others. Its class, ``agents.gym_env.ScopaGymEnv``, lives in the agents layer (it
plays agents) and is imported only by ``gymnasium.make``.
"""

import gymnasium

from .env import env, raw_env
from .game import IllegalMoveError, new_match
from .rules import Rules, make_rules

GYM_ENV_ID = "scopa/Scopa-v0"

if GYM_ENV_ID not in gymnasium.registry:
    # an entry point string: nothing of the agents layer is imported until make().
    # Unwrapped, like env(): the class checks its own call order and every action, and
    # Gymnasium's wrappers would hide action_masks() (they forward no other attribute).
    gymnasium.register(id=GYM_ENV_ID, entry_point="agents.gym_env:ScopaGymEnv",
                       order_enforce=False, disable_env_checker=True)

__all__ = ["env", "raw_env", "IllegalMoveError", "new_match", "Rules", "make_rules",
           "GYM_ENV_ID"]
__version__ = "0.1.0"
