"""Training for Scopa: configs in sections, stages on one framework, recipes of stages.

- ``settings``: a config key's type, range and help, and a section made from a mapping;
- ``config``: the sections every stage reads, a stage (``StageConfig``) and a recipe
  (``Recipe``: ``stages:`` run in order), loaded from YAML plus ``--set``;
- ``bundled``: the configs that ship with the kit (``configs/``), found by name;
- ``framework``: what every stage kind shares (counters, checkpoints, stops, the clock,
  progress, TensorBoard, evaluation);
- ``stages``: the stage kinds, one module each (``ppo``, ``dmc``, ``last_deal``,
  ``distill``; ``pool`` and ``fitting`` what they share), registered there by one line
  or, from another package, by an entry point (docs/stage_kinds.md);
- ``recipe``: runs a config's stages into one run folder, resumable by running it again;
- ``rollout``, ``search_labels``, ``policy_eval``, ``ray_backend``: the pieces the stages
  use; ``report`` (figures), ``export`` (the shipped policy file), ``exploit``, ``cli``:
  commands.

The network, its move features and the checkpoint format live in ``scopa_policy`` (the
inference layer below this one). Importing the package sets no environment variable: the
commands set torch's thread wait policy when they start (``agents.commands``).
"""
