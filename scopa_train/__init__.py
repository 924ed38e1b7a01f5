"""PPO self-play training for Scopa: config, rollouts, PPO, checkpoints, evaluation.

Importing this package sets ``OMP_WAIT_POLICY=PASSIVE`` (unless set already, and only
if torch is not imported yet): torch's idle threads then sleep instead of spinning. With
``torch_threads`` > 1 on a machine whose other cores are busy, spinning threads made the
PPO update up to 8 times slower than one thread (BENCHMARKS.md); sleeping ones cost
little when the machine is quiet.
"""

import os
import sys

if "torch" not in sys.modules:
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
