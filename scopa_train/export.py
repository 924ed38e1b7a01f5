"""Ship a finished stage: its policy as a small file (weights, network shape, rules,
counters and the last-deal scorer, if any), the form ``scopa_policy/pretrained/`` holds.

    python -m scopa_train.export RUN/LAST_STAGE/checkpoints/final.pt \
        scopa_policy/pretrained/default.pt

A recipe's last line names this command with its files (``scopa_train.recipe``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scopa_policy.checkpoint import (
    build_last_deal,
    build_model,
    load_checkpoint,
    policy_checkpoint,
    save_atomic,
)

PROG = "python -m scopa_train.export"


def export(ckpt: Path, out: Path) -> Path:
    """A small policy-only file (weights + network shape + rules + counters)."""
    ck = load_checkpoint(ckpt)
    net = build_model(ck)
    meta = {"counters": ck.get("counters", {}), "config": ck.get("config", {}),
            "source": Path(ck["path"]).name}
    return save_atomic(policy_checkpoint(net, ck["rules"], meta, build_last_deal(ck)), out)


def main(argv: list[str] | None = None) -> int:
    """The command; a missing or damaged checkpoint is one line and status 2."""
    p = argparse.ArgumentParser(prog=PROG, description="Write a checkpoint's policy as a "
                                "small file to ship.")
    p.add_argument("ckpt", type=Path, help="a training checkpoint (final.pt) or policy file")
    p.add_argument("out", type=Path, help="the policy file to write")
    args = p.parse_args(argv)
    try:
        print(export(args.ckpt, args.out))
    except (ValueError, OSError) as e:  # a missing or damaged file (CheckpointError), ...
        p.error(str(e))
    return 0


if __name__ == "__main__":
    sys.exit(main())
