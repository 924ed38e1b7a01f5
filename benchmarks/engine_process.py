"""Fixed work for timing the engine as a whole process (import and table building
included), to compare two trees with the operating system's own accounting:

    /usr/bin/time -f "%U %S" python benchmarks/engine_process.py import
    /usr/bin/time -f "%U %S" python benchmarks/engine_process.py vector 1024 600

``import``: ``import scopa_env`` alone. ``vector N STEPS``: build ``VectorScopaEnv(N)``
(records off) and play ``STEPS`` random legal moves in every game. Run it with
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
    if what != "vector" or len(argv) != 3:
        sys.exit("usage: engine_process.py import | vector N STEPS")
    import numpy as np

    from scopa_env.vector import VectorScopaEnv

    n, steps = int(argv[1]), int(argv[2])
    env = VectorScopaEnv(n, records=False, seed=0)
    rng = np.random.default_rng(0)
    rows = np.arange(n)
    for _ in range(steps):
        pick = (rng.random(n) * env.legal_valid.sum(1)).astype(np.int64)
        env.step(env.legal_ids[rows, pick])


if __name__ == "__main__":
    main(sys.argv[1:])
