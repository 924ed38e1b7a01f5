"""The kit's PPO from scratch (configs/ppo_scratch.yaml) for a wall-clock budget: the
baselines table's ``ppo`` row (protocol.py has the command line)."""

from __future__ import annotations

import sys

from kit_stage import ROOT, main

if __name__ == "__main__":
    sys.exit(main(ROOT / "configs" / "ppo_scratch.yaml", "ppo", __doc__.splitlines()[0]))
