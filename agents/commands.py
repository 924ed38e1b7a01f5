"""Command-line plumbing shared by every command of the kit (``scopa ...``, ``train.py``):
above the engine, which has no command line.

A bad argument or input gets one line on stderr that names it and what is allowed,
and a non-zero exit status; never a traceback:

- ``Parser``: an ``argparse.ArgumentParser`` whose usage errors raise ``UsageError``
  (one line, with a pointer to ``--help``) instead of printing usage and exiting;
- ``positive_int`` / ``non_negative_int`` / ``seed_arg``: argument types with clear
  messages;
- ``writable_file(path, what)`` (``scopa_env.files``, re-exported): refuse an output
  path that cannot be written, before any work starts;
- ``add_rules_args`` / ``rules_from_args``: a command's ``--rules``, ``--players`` and
  ``--option KEY=VALUE`` arguments and the ``Rules`` they name;
- ``quiet_idle_threads()``: the thread wait policy a process of the kit starts with.
- ``run(prog, fn)``: call ``fn()`` and turn the errors a user can cause (bad input,
  files, Ctrl-C, a module of the ``train`` extra that is not installed) into that one
  line and an exit status.
"""

from __future__ import annotations

import argparse
import dataclasses
import errno
import os
import secrets
import signal
import sys
from collections.abc import Callable, Sequence

from scopa_env.files import writable_file
from scopa_env.rules import NAMED_RULES, Rules, parse_option, resolve_rules

__all__ = ["INTERRUPTED", "MAX_SEED", "TRAIN_EXTRA", "Parser", "UsageError", "add_rules_args",
           "describe", "fail", "fresh_seed", "ignore_interrupts", "missing_extra",
           "non_negative_int", "positive_int", "quiet_idle_threads", "rules_flags",
           "rules_from_args", "run",
           "seed_arg", "writable_file"]

INTERRUPTED = 130  # the shell's status for a command stopped by Ctrl-C (128 + SIGINT)

# the modules of the `train` extra (pyproject.toml), which an install of the env alone
# lacks: the learned agents, training, exploit and the figures need them
TRAIN_EXTRA = ("torch", "tensorboard", "matplotlib")


class UsageError(ValueError):
    """A bad command line (unknown option, missing or malformed argument)."""


class Parser(argparse.ArgumentParser):
    """``ArgumentParser`` whose errors raise ``UsageError`` with one line of text."""

    def error(self, message: str):  # type: ignore[override]
        raise UsageError(f"{message} (see {self.prog} --help)")


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def positive_int(text: str) -> int:
    """An argument type: an integer >= 1."""
    v = _int(text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {v}")
    return v


def non_negative_int(text: str) -> int:
    """An argument type: an integer >= 0."""
    v = _int(text)
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {v}")
    return v


MAX_SEED = 2**63 - 1


def fresh_seed() -> int:
    """A seed nobody can have predicted (from the operating system's entropy)."""
    return secrets.randbelow(MAX_SEED + 1)


def seed_arg(text: str) -> int:
    """An argument type: a seed in 0 .. 2**63 - 1, or ``fresh`` for an unpredictable one."""
    if text.strip().lower() == "fresh":
        return fresh_seed()
    v = _int(text)
    if not 0 <= v <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be in 0..{MAX_SEED} or 'fresh', got {v}")
    return v


def describe(e: BaseException) -> str:
    """One line for an error a user can cause."""
    if isinstance(e, OSError) and e.strerror:
        code = errno.errorcode.get(e.errno or 0)
        text = f"{e.strerror}{f' ({code})' if code else ''}"
        return text if e.filename is None else f"{e.filename}: {text}"
    return " ".join(str(e).split()) or type(e).__name__


def missing_extra(e: ImportError) -> str | None:
    """One line for a module of the ``train`` extra that is not installed; None for any
    other import error."""
    name = (e.name or "").partition(".")[0]
    if not isinstance(e, ModuleNotFoundError) or name not in TRAIN_EXTRA:
        return None
    return (f"{name} is not installed: this needs the kit's train extra, pip install "
            f"'scopa-rl[train]' (in a checkout: make install)")


def fail(prog: str, message: str, status: int = 2) -> int:
    """Print ``prog: error: message`` (one line) and return ``status``."""
    print(f"{prog}: error: {message}", file=sys.stderr, flush=True)
    return status


def ignore_interrupts() -> None:
    """The process is about to exit: a late Ctrl-C must not break into its shutdown
    (where Python would print a traceback from an exit handler)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def run(prog: str, fn: Callable[[], int], top_level: bool = False) -> int:
    """``fn()``'s status; bad input, file errors and Ctrl-C become one line on stderr (a
    ``KeyboardInterrupt``'s text, if any, says what the interruption left behind), and
    output piped into a reader that is gone (``| head``) stops quietly. ``top_level``:
    the process exits next (``main()`` called from the command line), so Ctrl-C is
    ignored once ``fn`` is done."""
    try:
        return fn()
    except KeyboardInterrupt as e:
        print(f"\n{prog}: {str(e) or 'interrupted'}", file=sys.stderr, flush=True)
        return INTERRUPTED
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # no second error when Python flushes
        return 0
    except (ValueError, OSError) as e:  # every error class of the kit is a ValueError
        return fail(prog, describe(e))
    except ImportError as e:  # an install without the train extra
        line = missing_extra(e)
        if line is None:
            raise
        return fail(prog, line)
    finally:
        if top_level:
            ignore_interrupts()


def add_rules_args(p: argparse.ArgumentParser) -> None:
    """Add ``--rules``, ``--players`` and ``--option`` to a command's parser."""
    p.add_argument("--rules", default="scopa", choices=sorted(NAMED_RULES),
                   help="named rule set (default: scopa)")
    p.add_argument("--players", type=int, choices=(2, 4), default=None,
                   help="2, or 4 in teams (default: the rule set's)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="any rules option, e.g. capture_rule=fewest (repeatable)")


def rules_from_args(name: str, players: int | None, options: Sequence[str]) -> Rules:
    """The rules named by ``--rules``, ``--players`` and ``--option KEY=VALUE`` values."""
    return resolve_rules(name, players, dict(parse_option(o) for o in options))


def rules_flags(rules: Rules) -> str:
    """The ``--rules``, ``--players`` and ``--option`` flags that name ``rules`` on a
    ``scopa`` command line, ``rules_from_args`` read back (none for 2-player scopa as it
    stands)."""
    named = resolve_rules(rules.name)
    flags = [] if rules.name == "scopa" else [f"--rules {rules.name}"]
    if rules.players != named.players:
        flags.append(f"--players {rules.players}")
        named = resolve_rules(rules.name, players=rules.players)
    flags += [f"--option {f.name}={getattr(rules, f.name)}" for f in dataclasses.fields(rules)
              if f.name not in ("name", "players")
              and getattr(rules, f.name) != getattr(named, f.name)]
    return "".join(" " + flag for flag in flags)


def quiet_idle_threads() -> None:
    """Where a process of the kit starts (``scopa``, ``train.py``), before torch loads:
    ``OMP_WAIT_POLICY=PASSIVE`` and ``GOMP_SPINCOUNT=10000``, so that an idle torch thread
    spins for a short while (about 10,000 checks), then sleeps (nothing where torch is
    loaded already or the user has set ``OMP_WAIT_POLICY``). Threads that spin long
    (OpenMP's default, 300,000) made the PPO update with 2 threads up to 8 times slower
    than one thread where the machine's other core was busy; threads that sleep at once
    (``PASSIVE`` alone) made training about 30% slower on a quiet machine than the short
    spin, which on a busy one is as fast as sleeping for the PPO update (BENCHMARKS.md,
    "Threads"). Importing a package of the kit sets no environment variable."""
    if "torch" not in sys.modules and "OMP_WAIT_POLICY" not in os.environ:
        os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
        os.environ.setdefault("GOMP_SPINCOUNT", "10000")
