"""Training for Scopa: configs in sections, stages on one framework, recipes of stages.

- ``config``: the typed, sectioned configuration of a stage (``StageConfig``) and of a
  recipe (``Recipe``: ``stages:`` run in order), loaded from YAML plus ``--set``;
- ``bundled``: the configs that ship with the kit (``configs/``), found by name;
- ``framework``: what every stage kind shares (counters, checkpoints, stops, the clock,
  progress, TensorBoard, evaluation);
- ``stages``: the stage kinds (``ppo``, ``last_deal``, ``distill``, ``dmc``), each declared
  once there (``KINDS``);
- ``recipe``: runs a config's stages into one run folder, resumable by running it again;
- ``rollout``, ``ppo``, ``search_labels``, ``evaluation``, ``ray_backend``: the pieces the
  stages use; ``report``, ``exploit``, ``cli``: commands.

The network, its move features and the checkpoint format live in ``scopa_policy`` (the
inference layer below this one). Importing the package sets no environment variable: the
commands set torch's thread wait policy when they start (``agents.commands``).
"""
