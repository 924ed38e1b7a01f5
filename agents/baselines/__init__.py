"""The rule-based agents and their batched forms.

- ``greedy`` / ``expert``: each heuristic's per-game agent and its batched form
  (``greedy_actions``, ``expert_actions``) side by side; ``vector_moves``: the batched
  baselines by name; ``batching``: the array machinery they share;
- ``pimc``: perfect-information Monte Carlo search; ``endgame``: the exact last-deal
  solver; ``values``: card counting and move values for the heuristics.

The rules they play by are the engine's (``scopa_env.rules``, ``scopa_env.moves``).
"""
