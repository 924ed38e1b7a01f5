"""Train a Scopa agent: ``python train.py --config configs/recipe.yaml`` (every stage of a
config, in one run folder; the same command again continues it).

See ``python train.py --help`` and ``--help-config``; the code lives in ``scopa_train``.
"""

from __future__ import annotations

import sys

from scopa_train.cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
