"""Fixed work for timing the engine as a whole process (import and table building
included), to compare two trees with the operating system's own accounting:

    /usr/bin/time -f "%U %S" python benchmarks/engine_process.py import
    /usr/bin/time -f "%U %S" python benchmarks/engine_process.py vector 1024 600
    /usr/bin/time -f "%U %S" python benchmarks/engine_process.py apply
    /usr/bin/time -f "%U %S" python benchmarks/engine_process.py endgame

``import``: ``import scopa_env`` alone. ``vector N STEPS [records]``: build
``VectorScopaEnv(N)`` (records off, or on) and play ``STEPS`` random legal moves in every
game. ``apply``: 600
matches of random legal moves with ``game.apply``. ``endgame``: the exact values of
every move of 1,500 random last deals (``agents.baselines.endgame``). Run it with
``PYTHONPATH=TREE`` from outside the trees to time another checkout (a ``git worktree``
of the commit before a change), alternating the two.
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> None:
    what = argv[0] if argv else "import"
    if what == "import":
        import scopa_env  # noqa: F401
        return
    if what in ("apply", "endgame"):
        moves(what)
        return
    if what != "vector" or len(argv) not in (3, 4) or argv[3:] not in ([], ["records"]):
        sys.exit("usage: engine_process.py import | vector N STEPS [records] | apply | endgame")
    import numpy as np

    from scopa_env.vector import VectorScopaEnv

    n, steps = int(argv[1]), int(argv[2])
    env = VectorScopaEnv(n, records=argv[3:] == ["records"], seed=0)
    rng = np.random.default_rng(0)
    rows = np.arange(n)
    for _ in range(steps):
        pick = (rng.random(n) * env.legal_valid.sum(1)).astype(np.int64)
        env.step(env.legal_ids[rows, pick])


def moves(what: str) -> None:
    """``apply`` or ``endgame`` (see the module docstring)."""
    import random

    from agents.baselines.endgame import EndgameSolver
    from scopa_env.game import apply, new_match
    from scopa_env.rules import make_rules

    rng = random.Random(0)
    rules = make_rules("scopa")
    if what == "apply":
        for m in range(600):
            s = new_match(rules, seed=m)
            while not s.done:
                apply(s, rng.choice(s.legal_actions()))
        return
    solver = EndgameSolver(rules)
    for _ in range(1500):
        cards = list(range(40))
        rng.shuffle(cards)
        me, other = sum(1 << c for c in cards[:3]), sum(1 << c for c in cards[3:6])
        table = sum(1 << c for c in cards[6:10])
        rest = cards[10:]
        cut = rng.randrange(len(rest))
        pos = (me, other, table, sum(1 << c for c in rest[:cut]),
               sum(1 << c for c in rest[cut:]), 0, rng.choice((1, -1, 0)))
        solver.move_values(pos)
        solver.clear()


if __name__ == "__main__":
    main(sys.argv[1:])
