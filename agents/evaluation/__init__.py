"""Measuring agents: the evaluator (``evaluate``: paired deals, matches, worker pools,
``ray_eval`` on Ray), the round-robin ladder (``ladder``) and its leaderboard
(``leaderboard``), the statistics (``stats``) and the result types (``results``)."""
