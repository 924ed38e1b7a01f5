"""The kit's Deep Monte-Carlo stage from scratch (configs/dmc.yaml) for a wall-clock
budget: the baselines table's ``dmc`` row (protocol.py has the command line)."""

from __future__ import annotations

import sys

from kit_stage import ROOT, main

if __name__ == "__main__":
    sys.exit(main(ROOT / "configs" / "dmc.yaml", "dmc", __doc__.splitlines()[0]))
