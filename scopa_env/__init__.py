"""scopa_env: the exact Scopa rules engine and its PettingZoo environment.

``scopa_env.env(**options)`` / ``scopa_env.raw_env`` follow PettingZoo's classic
environments; ``scopa_env.game`` is the pure state and step function underneath.

Importing this package registers the single-agent Gymnasium environment ``GYM_ENV_ID``
(``scopa/Scopa-v0``: one seat plays, agents play the others; ``gymnasium.make_vec`` gives
N games in one batch). Its classes live in the agents
layer above (``agents.bridges.gym_env.ScopaGymEnv``); the registration names it by a
string, Gymnasium's convention, so nothing of ``agents`` is imported until
``gymnasium.make``.
"""

import gymnasium

from .env import env, raw_env
from .game import IllegalMoveError, new_match
from .rules import Rules, make_rules

GYM_ENV_ID = "scopa/Scopa-v0"

if GYM_ENV_ID not in gymnasium.registry:
    # Unwrapped, like the AEC env: the class checks its own call order and every action,
    # and Gymnasium's wrappers would hide action_masks() (they forward no other attribute).
    # ``gymnasium.make_vec`` builds the batched one (``agents.bridges.gym_vector``).
    gymnasium.register(id=GYM_ENV_ID, entry_point="agents.bridges.gym_env:ScopaGymEnv",
                       vector_entry_point="agents.bridges.gym_vector:ScopaVectorEnv",
                       order_enforce=False, disable_env_checker=True)

__all__ = ["GYM_ENV_ID", "env", "raw_env", "IllegalMoveError", "new_match", "Rules",
           "make_rules"]
__version__ = "0.1.0"
