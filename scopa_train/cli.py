"""Command line: ``python train.py --config configs/NAME.yaml [--set key=value ...]
[--resume RUN_DIR]`` (also ``scopa train ...``)."""

from __future__ import annotations

import argparse
import sys

from scopa_policy.checkpoint import CheckpointError

from .config import ConfigError, apply_overrides, describe, load_config


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="train.py", description="PPO self-play training for Scopa.",
        epilog="Curves: tensorboard --logdir runs. Keys and ranges: --help-config.")
    p.add_argument("--config", help="YAML config (configs/default.yaml, ...)")
    p.add_argument("--set", dest="overrides", action="append", default=[],
                   metavar="KEY=VALUE", help="override a config key (repeatable); "
                   "opponents.greedy=0.3 sets one weight")
    p.add_argument("--resume", metavar="RUN_DIR",
                   help="continue a run (its directory or a training checkpoint .pt)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--help-config", action="store_true",
                   help="list every config key with its type, default and allowed values")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.help_config:
        print(describe())
        return 0
    from . import trainer

    try:
        if args.resume:
            if args.config:
                raise ConfigError("--resume continues with the run's saved config: drop "
                                  "--config and change keys with --set")
            overrides = apply_overrides({}, args.overrides)
            trainer.resume(args.resume, overrides, progress=not args.no_progress)
        else:
            if not args.config:
                raise ConfigError("give --config configs/NAME.yaml (or --resume RUN_DIR)")
            cfg = load_config(args.config, args.overrides)
            trainer.start(cfg, progress=not args.no_progress)
    except (ConfigError, CheckpointError) as e:
        print(f"train: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
