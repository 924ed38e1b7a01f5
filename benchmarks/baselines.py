"""The algorithm baselines table (docs/baselines/): standard RL algorithms trained from
scratch on Scopa for the same wall-clock budget, side by side.

    python benchmarks/baselines.py [--minutes 20] [--seeds 3] [--other-seeds 1]
        [--algorithms ppo dmc ...] [--hands 1000] [--curve-hands 1000] [--workers 2]
        [--work runs/baselines] [--out docs/baselines] [--smoke]

1. **Train.** Each algorithm's script (``benchmarks/algorithms/``, ``ALGORITHMS``) runs
   in a process of its own, one at a time, for ``--minutes`` of training
   (``--seeds`` seeds for the kit's own stages, ``--other-seeds`` for the libraries'),
   saving a snapshot every tenth of the budget; it ends with ``result.json``
   (benchmarks/algorithms/protocol.py). A run whose ``result.json`` exists is reused:
   the same command again resumes where it stopped, an interrupted run starts over.
2. **Evaluate** (the kit's evaluator, ``agents.evaluation.evaluate``): each final agent
   against ``random``, ``greedy``, ``expert`` and ``pimc``, ``--hands`` paired hands
   each (95% intervals), and each snapshot against ``greedy`` (``--curve-hands``): the
   curves. Every evaluation is kept in its run's ``evaluations.json`` and reused.
3. **Write** ``OUT/baselines.json`` (everything), ``OUT/curves.png`` (margin against
   greedy over minutes of training) and the table into ``OUT/README.md`` (between its
   ``<!-- table -->`` marks; a new README otherwise), with the machine, date and
   command.

A run the table at ``--out`` already holds (its ``baselines.json``, same budget and
evaluation) whose run folder is not here is kept as measured, with its date, instead of
trained again (``--retrain NAME ...`` trains those algorithms' runs again, ``--retrain``
alone all of them): adding an algorithm on another machine trains only that one.

``--smoke``: each script's tiny model, a budget of seconds and a few hands: the test
suite's run (its own ``--work`` and ``--out``). An unknown algorithm, a missing library,
a budget too small for one update: one line each, exit status 2.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SCRIPTS = ROOT / "benchmarks" / "algorithms"
sys.path.insert(0, str(SCRIPTS))

from protocol import MISSING, RESULT, TOO_SMALL  # noqa: E402

OPPONENTS = ("random", "greedy", "expert", "pimc")
FULL_MINUTES, FULL_SEEDS = 20, 3  # the protocol's table (docs/baselines/README.md)
CURVE_OPPONENT = "greedy"
EVALS = "evaluations.json"
STARTED = "started.json"
MARK_START, MARK_END = "<!-- table -->", "<!-- /table -->"


@dataclass(frozen=True)
class Algorithm:
    """One row of the table: its script in ``benchmarks/algorithms/``, the library it
    comes from, the module it needs (and the extra that installs it), and whether it is
    the kit's own (``--seeds`` seeds, else ``--other-seeds``)."""

    name: str
    library: str
    script: str
    module: str | None = None
    extra: str | None = None
    kit: bool = False

    def missing(self) -> str | None:
        """Why it cannot run here (one line), or None."""
        if not (SCRIPTS / self.script).is_file():
            return (f"{self.name}: not wired in yet (no benchmarks/algorithms/{self.script}):"
                    f" see docs/baselines/README.md, 'Adding your algorithm'")
        if self.module and (importlib.util.find_spec(self.module.split(".")[0]) is None
                            or importlib.util.find_spec(self.module) is None):
            return (f"{self.name}: needs {self.module} ({self.library}), which is not "
                    f"installed: pip install -e .[{self.extra}]")
        return None


ALGORITHMS: dict[str, Algorithm] = {a.name: a for a in (
    Algorithm("ppo", "scopa (this kit), kind: ppo", "kit_ppo.py", kit=True),
    Algorithm("dmc", "scopa (this kit), kind: dmc", "kit_dmc.py", kit=True),
    Algorithm("cleanrl_ppo", "examples/cleanrl_ppo.py (CleanRL style), batched env, "
              "moves=legal", "cleanrl_ppo.py"),
    Algorithm("sb3_batched_legal", "sb3-contrib MaskablePPO, batched env, moves=legal",
              "sb3_batched_legal.py", module="sb3_contrib", extra="sb3"),
    Algorithm("sb3_batched_catalogue", "sb3-contrib MaskablePPO, batched env, "
              "moves=catalogue", "sb3_batched_catalogue.py", module="sb3_contrib",
              extra="sb3"),
    Algorithm("rllib_batched", "RLlib PPO, batched env (make_vec), moves=legal",
              "rllib_batched.py", module="ray.rllib", extra="rllib"),
    Algorithm("sb3_maskable_ppo", "sb3-contrib MaskablePPO, one env per game",
              "sb3_maskable_ppo.py", module="sb3_contrib", extra="sb3"),
    Algorithm("rllib_ppo", "RLlib PPO, one env per game (PettingZoo)", "rllib_ppo.py",
              module="ray.rllib", extra="rllib"),
    Algorithm("openspiel_dqn", "OpenSpiel DQN (PyTorch), one env per game",
              "openspiel_dqn.py", module="open_spiel.python.pytorch", extra="openspiel"),
)}


class Refused(Exception):
    """A request that cannot be run (one line)."""


# -- training ----------------------------------------------------------------------------
def run_dir(work: Path, minutes: float, smoke: bool, name: str, seed: int) -> Path:
    return work / f"{minutes:g}min{'-smoke' if smoke else ''}" / name / f"seed-{seed}"


def train(alg: Algorithm, folder: Path, minutes: float, seed: int, smoke: bool,
          log: Any) -> dict[str, Any]:
    """The run's ``result.json``: read when it exists for this budget, else trained now
    (a partial folder is started over). ``Refused`` with the script's one line when it
    fails."""
    result = folder / RESULT
    if result.is_file():
        doc = json.loads(result.read_text())
        if doc.get("budget_minutes") == minutes:
            log(f"{alg.name} seed {seed}: done ({folder})")
            return doc
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / STARTED).write_text(json.dumps(  # when and on how busy a machine it trained
        {"date": now(), "load_average": load_average()}) + "\n", encoding="utf-8")
    cmd = [sys.executable, str(SCRIPTS / alg.script), "--minutes", f"{minutes:g}",
           "--seed", str(seed), "--out", str(folder), *(["--smoke"] if smoke else [])]
    log(f"{alg.name} seed {seed}: training {minutes:g} min in {folder}")
    t0 = time.perf_counter()
    with open(folder / "stdout.log", "w") as out, open(folder / "stderr.log", "w+") as err:
        code = subprocess.run(cmd, cwd=ROOT, stdout=out, stderr=err).returncode
        err.seek(0)
        lines = [line for line in err.read().splitlines() if line.strip()]
    if code or not result.is_file():
        why = lines[-1] if lines else f"exit status {code}"
        if code not in (TOO_SMALL, MISSING):
            why += f" (exit status {code}; {folder / 'stderr.log'})"
        raise Refused(why if why.startswith(alg.name) else f"{alg.name}: {why}")
    doc = json.loads(result.read_text())
    log(f"{alg.name} seed {seed}: {doc['env_steps']:,} env steps in "
        f"{doc['train_seconds'] / 60:.3g} min of training ({time.perf_counter() - t0:.0f} s "
        f"in all)")
    return doc


# -- evaluation --------------------------------------------------------------------------
def evaluated(folder: Path, spec: str, opponent: str, hands: int, seed: int,
              workers: int) -> dict[str, Any]:
    """``spec``'s margin against ``opponent`` (points per hand, 95% interval), from the
    run's ``evaluations.json`` or played now and added to it."""
    from agents.evaluation.evaluate import evaluate

    path = folder / EVALS
    cache = json.loads(path.read_text()) if path.is_file() else {}
    key = f"{spec} | {opponent} | {hands} | {seed}"
    if key not in cache:
        res = evaluate(spec, opponent, hands=hands, seed=seed, workers=workers, matches=0)
        cache[key] = {**res.points_per_hand.to_json(), "seconds": res.elapsed_s}
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(cache, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    return cache[key]


def evaluate_run(folder: Path, doc: dict[str, Any], args: argparse.Namespace,
                 log: Any) -> dict[str, Any]:
    """The final agent against every opponent and the curve against greedy."""
    finals = {}
    for opp in OPPONENTS:
        finals[opp] = evaluated(folder, doc["spec"], opp, args.hands, args.eval_seed,
                                args.workers)
    log(f"{doc['algorithm']} seed {doc['seed']}: " + ", ".join(
        f"{o} {m['margin']:+.3f} [{m['ci95'][0]:+.3f}, {m['ci95'][1]:+.3f}]"
        for o, m in finals.items()))
    curve = [{"minutes": s["minutes"], "env_steps": s["env_steps"],
              **evaluated(folder, s["spec"], CURVE_OPPONENT, args.curve_hands,
                          args.eval_seed, args.workers)}
             for s in doc["snapshots"]]
    started = folder / STARTED
    trained = json.loads(started.read_text()) if started.is_file() else {
        "date": now((folder / RESULT).stat().st_mtime), "load_average": None}
    return {**doc, "margins": finals, "curve": curve, "trained": trained}


# -- output ------------------------------------------------------------------------------
def now(stamp: float | None = None) -> str:
    return datetime.fromtimestamp(stamp if stamp is not None else time.time(),
                                  timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def load_average() -> list[float] | None:
    return [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None


def machine() -> dict[str, Any]:
    import torch

    return {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
            "python": platform.python_version(), "torch": torch.__version__}


def _span(runs: list[dict[str, Any]]) -> str:
    """When the runs trained, and the load average at the start of each."""
    dates = sorted(r["trained"]["date"] for r in runs)
    loads = [r["trained"]["load_average"][0] for r in runs if r["trained"]["load_average"]]
    when = dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}"
    return when + (f" (1-minute load average {min(loads):g} to {max(loads):g} at their "
                   f"starts)" if loads else "")


def _m(m: dict[str, Any]) -> str:
    return f"{m['margin']:+.3f} [{m['ci95'][0]:+.3f}, {m['ci95'][1]:+.3f}]"


def table(doc: dict[str, Any]) -> str:
    """The Markdown of the table (one row per algorithm; each seed below it)."""
    runs = doc["runs"]
    full = doc["minutes"] >= FULL_MINUTES and doc.get("seeds", 0) >= FULL_SEEDS
    lines = [
        *([] if full or doc["smoke"] else [
            f"**A preview, not the table the protocol asks for** ({FULL_MINUTES} minutes a "
            f"run, {FULL_SEEDS} seeds of the kit's stages): {doc['minutes']:g} minutes a "
            f"run, {doc.get('seeds')} seed(s) of the kit's stages, "
            f"{doc.get('other_seeds')} of the others'.", ""]),
        f"Budget: **{doc['minutes']:g} minutes** of training per run"
        + (" (smoke mode: tiny models, not a result)" if doc["smoke"] else "")
        + f"; trained {_span(runs)} on {doc['machine']['cores']} cores "
        f"({doc['machine']['cpu']}, Python {doc['machine']['python']}, torch "
        f"{doc['machine']['torch']}); table written {doc['date']}. Margins: points per "
        f"hand against each opponent, "
        f"{doc['hands']:,} paired hands (seed {doc['eval_seed']}), 95% interval.",
        "",
        f"Command: `{doc['command']}`",
        "",
        "| algorithm | library | seeds | env steps in the budget | env steps/s | "
        + " | ".join(f"vs `{o}`" for o in OPPONENTS) + " |",
        "|---|---|---:|---:|---:|" + "---|" * len(OPPONENTS),
    ]
    for name in dict.fromkeys(r["algorithm"] for r in runs):
        rows = [r for r in runs if r["algorithm"] == name]
        steps = sum(r["env_steps"] for r in rows) / len(rows)
        rate = sum(r["env_steps"] / r["train_seconds"] for r in rows) / len(rows)
        if len(rows) == 1:
            cells = [_m(rows[0]["margins"][o]) for o in OPPONENTS]
        else:
            cells = []
            for o in OPPONENTS:
                ms = [r["margins"][o]["margin"] for r in rows]
                cells.append(f"{sum(ms) / len(ms):+.3f} (seeds {min(ms):+.3f} .. "
                             f"{max(ms):+.3f})")
        lines.append(f"| {name} | {ALGORITHMS[name].library} | {len(rows)} | {steps:,.0f} | "
                     f"{rate:,.0f} | " + " | ".join(cells) + " |")
    if any(len([r for r in runs if r["algorithm"] == n]) > 1
           for n in {r["algorithm"] for r in runs}):
        lines += ["", "Each seed:", "",
                  "| algorithm | seed | env steps | updates | "
                  + " | ".join(f"vs `{o}`" for o in OPPONENTS) + " |",
                  "|---|---:|---:|---:|" + "---|" * len(OPPONENTS)]
        for r in runs:
            lines.append(f"| {r['algorithm']} | {r['seed']} | {r['env_steps']:,} | "
                         f"{r['updates']:,} | "
                         + " | ".join(_m(r["margins"][o]) for o in OPPONENTS) + " |")
    lines += ["", "![margin against greedy over minutes of training](curves.png)",
              "", f"Raw figures: `baselines.json`; the curves: each snapshot against "
              f"`{CURVE_OPPONENT}`, {doc['curve_hands']:,} paired hands."]
    return "\n".join(lines) + "\n"


def plot(doc: dict[str, Any]) -> bytes | None:
    """curves.png: margin against greedy over minutes of training, a colour per
    algorithm, a line per seed; None without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=110)
    names = list(dict.fromkeys(r["algorithm"] for r in doc["runs"]))
    for i, name in enumerate(names):
        for j, r in enumerate(x for x in doc["runs"] if x["algorithm"] == name):
            xs = [p["minutes"] for p in r["curve"]]
            ys = [p["margin"] for p in r["curve"]]
            ax.plot(xs, ys, marker="o", ms=3, lw=1.2, color=f"C{i}",
                    label=name if j == 0 else None)
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xlabel("minutes of training")
    ax.set_ylabel(f"points per hand vs {CURVE_OPPONENT}")
    ax.set_title(f"Baselines, {doc['minutes']:g} min budget ({doc['date'][:10]})")
    ax.legend()
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def write(doc: dict[str, Any], out: Path, log: Any) -> None:
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / "baselines.json", (json.dumps(doc, indent=1) + "\n").encode())
    png = plot(doc)
    if png is None:
        log("no curves.png: matplotlib is not installed (pip install -e .[bench])")
    else:
        write_atomic(out / "curves.png", png)
    readme = out / "README.md"
    block = f"{MARK_START}\n{table(doc)}{MARK_END}"
    text = readme.read_text(encoding="utf-8") if readme.is_file() else \
        f"# Algorithm baselines\n\n{MARK_START}\n{MARK_END}\n"
    a, b = text.find(MARK_START), text.find(MARK_END)
    if a < 0 or b < a:
        text = text.rstrip("\n") + f"\n\n{MARK_START}\n{MARK_END}\n"
        a, b = text.find(MARK_START), text.find(MARK_END)
    write_atomic(readme, (text[:a] + block + text[b + len(MARK_END):]).encode())
    log(f"wrote {out / 'README.md'}, {out / 'baselines.json'}"
        + ("" if png is None else f", {out / 'curves.png'}"))


# -- the command -------------------------------------------------------------------------
def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--minutes", type=float, default=None,
                   help="training budget per run in wall-clock minutes (default 20; "
                        "--smoke: 0.1)")
    p.add_argument("--seeds", type=int, default=3, help="seeds of the kit's own stages")
    p.add_argument("--other-seeds", type=int, default=1,
                   help="seeds of the other libraries' algorithms")
    p.add_argument("--algorithms", nargs="+", default=None, metavar="NAME",
                   help=f"default: every one wired in ({', '.join(ALGORITHMS)})")
    p.add_argument("--hands", type=int, default=None,
                   help="paired hands of each final evaluation (default 1000; --smoke: 4)")
    p.add_argument("--curve-hands", type=int, default=None,
                   help="paired hands of each curve point (default 1000; --smoke: 2)")
    p.add_argument("--eval-seed", type=int, default=2026)
    p.add_argument("--workers", type=int, default=None,
                   help="evaluation worker processes (default 2; --smoke: 1, in this process)")
    p.add_argument("--work", default="runs/baselines", help="the runs' folder")
    p.add_argument("--out", default=None,
                   help="where the table goes (default docs/baselines; --smoke: "
                        "WORK/smoke-docs)")
    p.add_argument("--smoke", action="store_true",
                   help="tiny models, seconds of training, a few hands (tests)")
    p.add_argument("--retrain", nargs="*", default=None, metavar="NAME",
                   help="train again the runs the table at --out holds whose run folders "
                        "are not here: of the algorithms named, or (no name) of all "
                        "(default: keep them as measured)")
    args = p.parse_args(argv)
    smoke = args.smoke
    args.minutes = args.minutes if args.minutes is not None else (0.1 if smoke else 20.0)
    for key, quick, full in (("hands", 4, 1000), ("curve_hands", 2, 1000), ("workers", 1, 2)):
        if getattr(args, key) is None:
            setattr(args, key, quick if smoke else full)
    args.work = Path(args.work)
    args.out = Path(args.out) if args.out else (args.work / "smoke-docs" if smoke
                                                else ROOT / "docs" / "baselines")
    for key in ("minutes", "seeds", "other_seeds", "hands", "curve_hands", "workers"):
        if not getattr(args, key) > 0:
            p.error(f"--{key.replace('_', '-')} must be above 0, got {getattr(args, key):g}")
    return args


def kept_runs(args: argparse.Namespace) -> dict[tuple[str, int], dict[str, Any]]:
    """The runs of the table already written at ``--out`` (its baselines.json) at this
    budget and evaluation, by (algorithm, seed): a run whose folder is gone (another
    machine, a fresh clone) is kept as it was measured, not trained again
    (``--retrain``: train them again)."""
    path = args.out / "baselines.json"
    if args.retrain == [] or args.smoke or not path.is_file():
        return {}
    doc = json.loads(path.read_text(encoding="utf-8"))
    if (doc.get("minutes"), doc.get("hands"), doc.get("eval_seed"), doc.get("curve_hands")) \
            != (args.minutes, args.hands, args.eval_seed, args.curve_hands):
        return {}
    again = set(args.retrain or ())
    return {(r["algorithm"], r["seed"]): r for r in doc["runs"] if r["algorithm"] not in again}


def chosen(names: list[str] | None) -> list[Algorithm]:
    """The algorithms to run: those named (each known and runnable here, else
    ``Refused``), or every one wired in and installed (the others said once)."""
    if names is None:
        return [a for a in ALGORITHMS.values() if a.missing() is None]
    unknown = [n for n in names if n not in ALGORITHMS]
    if unknown:
        raise Refused(f"unknown algorithm {unknown[0]!r}; known: {', '.join(ALGORITHMS)}")
    for n in names:
        why = ALGORITHMS[n].missing()
        if why:
            raise Refused(why)
    return [ALGORITHMS[n] for n in dict.fromkeys(names)]


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)

    def log(line: str) -> None:
        print(line, flush=True)

    try:
        algorithms = chosen(args.algorithms)
    except Refused as e:
        print(e, file=sys.stderr)
        return 2
    if args.algorithms is None:
        for a in ALGORITHMS.values():
            if a.missing():
                log(f"left out: {a.missing()}")
    info = machine()
    runs, failed = [], []
    kept = kept_runs(args)
    for alg in algorithms:
        for seed in range(1, (args.seeds if alg.kit else args.other_seeds) + 1):
            folder = run_dir(args.work, args.minutes, args.smoke, alg.name, seed)
            if not (folder / RESULT).is_file() and (alg.name, seed) in kept:
                run = kept[alg.name, seed]
                log(f"{alg.name} seed {seed}: kept from the table (trained "
                    f"{run['trained']['date']}; its run folder is not here)")
                runs.append(run)
                continue
            try:
                doc = train(alg, folder, args.minutes, seed, args.smoke, log)
            except Refused as e:
                print(e, file=sys.stderr)
                failed.append(str(e))
                break  # the next seeds would fail alike
            runs.append(evaluate_run(folder, doc, args, log))
    if runs:
        command = "python benchmarks/baselines.py " + " ".join(
            argv if argv is not None else sys.argv[1:])
        write({"minutes": args.minutes, "smoke": args.smoke,
               "date": now(),
               "machine": info, "command": command.strip(), "hands": args.hands,
               "curve_hands": args.curve_hands, "eval_seed": args.eval_seed,
               "seeds": args.seeds, "other_seeds": args.other_seeds,
               "opponents": list(OPPONENTS), "runs": runs}, args.out, log)
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
