"""Command line: ``python train.py --config configs/NAME.yaml [--set key=value ...]``
(also ``scopa train ...``): every stage of the config, in one run folder. The same
command again continues that run where it stopped; ``--resume RUN`` continues a given
run; ``--new`` starts another."""

from __future__ import annotations

import argparse
import sys

from agents.commands import Parser, quiet_idle_threads, run

from . import bundled
from .config import ConfigError, describe, load_recipe


def build_parser(prog: str = "train.py") -> argparse.ArgumentParser:
    p = Parser(
        prog=prog, description="Train a Scopa agent: every stage of a config (PPO self-play, "
        "last-deal scorer, suit distillation), in one run folder.",
        epilog="Curves: tensorboard --logdir runs/RUN. Sections and keys: --help-config.")
    p.add_argument("--config", help="YAML config: a file, or the name of a bundled config "
                   "(recipe, quick, ...; a file of that name wins); see --list-configs")
    p.add_argument("--set", dest="overrides", action="append", default=[],
                   metavar="KEY=VALUE", help="override a config key (repeatable): "
                   "ppo.learning_rate=1e-3, opponents.greedy=0.3, STAGE.fit.epochs=2")
    p.add_argument("--resume", metavar="RUN_DIR",
                   help="continue a run (its folder, a stage's folder or a training "
                   "checkpoint .pt); the same --config command does this by itself")
    p.add_argument("--new", action="store_true",
                   help="start a new run even where an unfinished run of this config exists")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--list-configs", action="store_true",
                   help="list the bundled configs (those --config finds by name)")
    p.add_argument("--help-config", action="store_true",
                   help="list every config key by section, with its type, default and "
                   "allowed values")
    return p


def main(argv: list[str] | None = None, prog: str = "train") -> int:
    """``train.py`` / ``scopa train``; returns the exit status. Every key is checked
    before the run starts; a bad one is one line on stderr and status 2. The first
    Ctrl-C (or SIGTERM) saves and stops, a second one stops at once; either way the run is
    not finished and the status is 128 + the signal's number, the Unix convention (130 for
    Ctrl-C, 143 for SIGTERM), as ``make train`` reports it too."""
    quiet_idle_threads()

    def command() -> int:
        args = build_parser("train.py" if prog == "train" else prog).parse_args(argv)
        if args.help_config:
            print(describe())
            return 0
        if args.list_configs:
            print(bundled.listing())
            return 0
        from . import recipe

        progress = not args.no_progress
        try:
            if args.resume:
                if args.config or args.new:
                    raise ConfigError("--resume continues a run with its saved config: drop "
                                      "--config/--new and change keys with --set")
                out = recipe.resume(args.resume, args.overrides, progress=progress)
            else:
                if not args.config:
                    raise ConfigError("give --config NAME or --config FILE (the bundled "
                                      "names: --list-configs), or --resume RUN_DIR")
                out = recipe.run_recipe(load_recipe(bundled.config_path(args.config),
                                                    args.overrides),
                                        new=args.new, progress=progress)
        except ConfigError as e:
            if "\n" not in str(e):
                raise
            for line in str(e).splitlines():  # one line a key (an old flat config)
                print(f"{prog}: error: {line}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            raise KeyboardInterrupt("stopped at once, without a final save; run the same "
                                    "command again to continue from the last checkpoint"
                                    ) from None
        return 128 + out["signal"] if out.get("signal") and not out["finished"] else 0

    return run(prog, command, top_level=argv is None)


if __name__ == "__main__":
    sys.exit(main())
