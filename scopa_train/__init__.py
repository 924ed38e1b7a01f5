"""PPO self-play training for Scopa: config, rollouts, PPO, the trainer, reports and CLI.

The network, its move features and the checkpoint format live in ``scopa_policy`` (the
inference layer below this one), which is imported first so that its thread settings
apply before torch loads.
"""

import scopa_policy  # noqa: F401  (before torch: see its docstring)
