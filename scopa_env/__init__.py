"""scopa_env: the exact Scopa rules engine and its PettingZoo environment.

``scopa_env.env(**options)`` / ``scopa_env.raw_env`` follow PettingZoo's classic
environments; ``scopa_env.game`` is the pure state and step function underneath.

The single-agent Gymnasium environment ``scopa/Scopa-v0`` plays agents: the agents
layer above holds and registers it (``import agents``).
"""

from .env import env, raw_env
from .game import IllegalMoveError, new_match
from .rules import Rules, make_rules

__all__ = ["env", "raw_env", "IllegalMoveError", "new_match", "Rules", "make_rules"]
__version__ = "0.1.0"
