"""sb3-contrib's MaskablePPO on the batched env, ``moves="legal"``: the baselines table's
``sb3_batched_legal`` row (sb3_batched.py has the setup, protocol.py the command line)."""

from __future__ import annotations

import sys

from protocol import parse_args
from sb3_batched import run

if __name__ == "__main__":
    sys.exit(run(parse_args(__doc__.splitlines()[0]), "legal"))
