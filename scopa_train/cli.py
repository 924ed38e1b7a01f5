"""Command line: ``python train.py --config configs/NAME.yaml [--set key=value ...]
[--resume RUN_DIR]`` (also ``scopa train ...``)."""

from __future__ import annotations

import argparse
import sys

from agents.commands import Parser, run

from .config import ConfigError, apply_overrides, describe, load_config


def build_parser(prog: str = "train.py") -> argparse.ArgumentParser:
    p = Parser(
        prog=prog, description="PPO self-play training for Scopa.",
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


def main(argv: list[str] | None = None, prog: str = "train") -> int:
    """``train.py`` / ``scopa train``; returns the exit status. Every key is checked
    before the run starts; a bad one is one line on stderr and status 2. The first
    Ctrl-C saves and stops (status 0), a second one stops at once (status 130)."""

    def command() -> int:
        args = build_parser("train.py" if prog == "train" else prog).parse_args(argv)
        if args.help_config:
            print(describe())
            return 0
        from . import trainer

        try:
            if args.resume:
                if args.config:
                    raise ConfigError("--resume continues with the run's saved config: "
                                      "drop --config and change keys with --set")
                overrides = apply_overrides({}, args.overrides)
                trainer.resume(args.resume, overrides, progress=not args.no_progress)
            else:
                if not args.config:
                    raise ConfigError("give --config configs/NAME.yaml (or --resume RUN_DIR)")
                cfg = load_config(args.config, args.overrides)
                trainer.start(cfg, progress=not args.no_progress)
        except KeyboardInterrupt:
            raise KeyboardInterrupt("stopped at once, without a final save; a run that "
                                    "has saved a checkpoint continues with --resume "
                                    "RUN_DIR") from None
        return 0

    return run(prog, command, top_level=argv is None)


if __name__ == "__main__":
    sys.exit(main())
