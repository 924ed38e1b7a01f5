"""Learned policies, for inference: move features, the network, the checkpoint format
and the policy agent. A trained agent loads with this package alone (no trainer).

Layers: ``scopa_env`` <- ``agents`` <- ``scopa_policy`` <- ``scopa_train``.

Importing this package sets ``OMP_WAIT_POLICY=PASSIVE`` (unless set already, and only
if torch is not imported yet): torch's idle threads then sleep instead of spinning. With
more than one torch thread on a machine whose other cores are busy, spinning threads
made the PPO update up to 8 times slower than one thread (BENCHMARKS.md); sleeping
ones cost little when the machine is quiet.
"""

import os
import sys

if "torch" not in sys.modules:
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
