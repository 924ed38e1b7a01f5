"""Agents and environments across the kit's edge: the single-agent Gymnasium env
(``gym_env``), Stable-Baselines3 models as agents (``sb3_agent``), and agents from outside
the kit (``plugins``: ``py:`` specs and the ``scopa.agents`` entry points)."""
