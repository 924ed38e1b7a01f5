"""Learned policies, for inference: move features, the network, the checkpoint format
and the policy agent. A trained agent loads with this package alone (no trainer).

Layers: ``scopa_env`` <- ``agents`` <- ``scopa_policy`` <- ``scopa_train``.

Importing this package sets ``OMP_WAIT_POLICY=PASSIVE`` and ``GOMP_SPINCOUNT=10000``
(only if torch is not imported yet, and neither where the user has set
``OMP_WAIT_POLICY``): an idle torch thread spins for a short while (about 10,000
checks), then sleeps. Threads that spin long (OpenMP's default, 300,000) made the PPO
update with 2 threads up to 8 times slower than one thread where the machine's other
core was busy. Threads that sleep at once (``PASSIVE`` alone) made training about 30%
slower on a quiet machine than the short spin, which on a busy one is as fast as
sleeping for the PPO update (BENCHMARKS.md, "Threads").
"""

import os
import sys

if "torch" not in sys.modules and "OMP_WAIT_POLICY" not in os.environ:
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    os.environ.setdefault("GOMP_SPINCOUNT", "10000")
