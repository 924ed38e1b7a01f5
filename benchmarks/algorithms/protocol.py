"""What every algorithm script of the baselines table shares (docs/baselines/README.md,
"Adding your algorithm"): its command line, the training clock with its curve snapshots,
the one-line refusals and the ``result.json`` it ends with.

    python benchmarks/algorithms/SCRIPT.py --minutes M --seed S --out DIR [--smoke]

trains from scratch for ``M`` minutes of training wall-clock time (the library's own
loop; building the model and starting workers do not count), saves a snapshot of the
agent about every ``M / CURVE_POINTS`` minutes (``DIR/snapshots/``) and the final agent,
and writes ``DIR/result.json`` (``write_result``). ``--smoke``: a tiny model and batch,
so that one update takes a second or two (the test suite's run).

Exit status 0 when the result is written; ``TOO_SMALL`` (one line on stderr) when no
update finished within the budget; ``MISSING`` when the library is not installed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

CURVE_POINTS = 10  # snapshots over the budget (the last one is the final agent)
TOO_SMALL, MISSING = 4, 3  # exit statuses the driver reads
RESULT = "result.json"


def parse_args(description: str, argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--minutes", type=float, required=True,
                   help="training wall-clock budget in minutes")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="the run's folder (created)")
    p.add_argument("--smoke", action="store_true",
                   help="a tiny model and batch: seconds (tests)")
    args = p.parse_args(argv)
    if not args.minutes > 0:
        p.error(f"--minutes must be above 0, got {args.minutes:g}")
    args.out = Path(args.out).resolve()
    (args.out / "snapshots").mkdir(parents=True, exist_ok=True)
    return args


def load_example(name: str) -> ModuleType:
    """examples/NAME.py imported as the module ``NAME_example`` (registered in
    ``sys.modules``: dataclasses and Ray's pickling by value look it up there)."""
    path = Path(__file__).resolve().parents[2] / "examples" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"{name}_example", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def need(module: str, extra: str, name: str) -> None:
    """Exit with one line naming the extra to install unless ``module`` imports: its
    files alone are not enough (``ray.rllib`` is inside the ``ray`` extra's package, and
    only the ``rllib`` extra installs what it imports)."""
    try:
        importlib.import_module(module)
    except ImportError as e:
        found = importlib.util.find_spec(module.split(".")[0]) is not None
        why = f" (importing it fails: {str(e).splitlines()[0]})" if found else ""
        print(f"{name}: needs {module}, which is not installed{why}: pip install -e "
              f".[{extra}]", file=sys.stderr)
        sys.exit(MISSING)


class Clock:
    """Training time against the budget, and when the next curve snapshot is due."""

    def __init__(self, minutes: float) -> None:
        self.budget = minutes * 60
        self.every = self.budget / CURVE_POINTS
        self.start = time.perf_counter()
        self.next = self.every

    def seconds(self) -> float:
        return time.perf_counter() - self.start

    def over(self) -> bool:
        return self.seconds() >= self.budget

    def snapshot_due(self) -> bool:
        """Whether a snapshot is due now (the next mark then moves on)."""
        now = self.seconds()
        if now < self.next or now >= self.budget:
            return False
        self.next = (now // self.every + 1) * self.every
        return True


def refuse_overrun(name: str, args: Any, budget_s: float, first_update_s: float | None) -> None:
    """``too_small`` unless an update finished within the budget; with ``--smoke`` one
    finished update is enough, however long it took (a busy machine may overrun a budget
    of seconds: a smoke run checks the pipeline, not the budget)."""
    if first_update_s is None or (first_update_s > budget_s and not args.smoke):
        too_small(name, args.minutes, first_update_s)


def too_small(name: str, minutes: float, first_update_s: float | None) -> None:
    """Exit with one line: no update finished within the budget."""
    took = (f"the first took {first_update_s:.1f} s" if first_update_s is not None
            else "none finished")
    print(f"{name}: --minutes {minutes:g} is too small to finish one update ({took}); "
          f"give a larger budget", file=sys.stderr)
    sys.exit(TOO_SMALL)


def write_result(out: Path, *, algorithm: str, library: str, spec: str, env_steps: int,
                 train_seconds: float, updates: int, snapshots: list[dict[str, Any]],
                 minutes: float, seed: int, settings: dict[str, Any]) -> Path:
    """``OUT/result.json``, written atomically: the final agent's spec, env steps (moves
    of every seat) and training seconds in the budget, updates done, the curve's
    snapshots (``{"minutes", "env_steps", "spec"}``) and the settings used."""
    doc = {"algorithm": algorithm, "library": library, "spec": spec,
           "env_steps": int(env_steps), "train_seconds": float(train_seconds),
           "updates": int(updates), "budget_minutes": minutes, "seed": seed,
           "snapshots": snapshots, "settings": settings}
    path = out / RESULT
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


__all__ = ["CURVE_POINTS", "MISSING", "RESULT", "TOO_SMALL", "Clock", "load_example", "need",
           "parse_args", "too_small", "write_result"]
