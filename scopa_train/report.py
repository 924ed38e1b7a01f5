"""Figures for BENCHMARKS.md from a finished run.

    python -m scopa_train.report curve RUN_DIR docs/learning_curve.png
    python -m scopa_train.report strength CKPT --hands 2000 --against random greedy expert
    python -m scopa_train.report throughput RUN_DIR
    python -m scopa_train.report export RUN_DIR/checkpoints/final.pt \
        scopa_policy/pretrained/default.pt
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np


def load_evaluations(run_dir: Path) -> list[dict[str, Any]]:
    path = Path(run_dir) / "evaluations.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def plot_curve(run_dir: Path, out: Path, opponents: tuple[str, ...] | None = None,
               marks: list[tuple[float, str]] | None = None, after_minutes: float = 0.0
               ) -> Path:
    """Margin (points per hand, 95% band) against each opponent (default: every one the
    run evaluated against but ``random``) over wall-clock minutes; ``after_minutes``:
    training time spent before this run (an earlier stage it started from)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    evals = load_evaluations(run_dir)
    if opponents is None:
        opponents = tuple(dict.fromkeys(spec for e in evals for spec in e["margins"]
                                        if spec != "random"))
    fig, ax = plt.subplots(figsize=(7, 4), dpi=120)
    for spec in opponents:
        pts = [(after_minutes + e["wall_seconds"] / 60, e["margins"][spec]) for e in evals
               if spec in e["margins"]]
        if not pts:
            continue
        x = np.array([p[0] for p in pts])
        mean = np.array([p[1]["mean"] for p in pts])
        lo = np.array([p[1]["low"] for p in pts])
        hi = np.array([p[1]["high"] for p in pts])
        line, = ax.plot(x, mean, marker="o", ms=3, label=f"vs {spec}")
        ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2)
    ax.axhline(0, color="grey", lw=0.8)
    for minute, label in marks or []:
        ax.axvline(minute, color="black", ls="--", lw=0.8)
        ax.annotate(label, (minute, ax.get_ylim()[1]), xytext=(3, -12),
                    textcoords="offset points", fontsize=7)
    ax.set_xlabel("training wall-clock (minutes, 2-core machine)")
    ax.set_ylabel("margin (points per hand)")
    hands = evals[-1]["margins"][opponents[0]]["hands"] if evals and opponents else 0
    import yaml
    cfg_file = Path(run_dir) / "config.yaml"
    cfg = yaml.safe_load(cfg_file.read_text()) if cfg_file.is_file() else {}
    what = f"config {cfg.get('name', '?')}, {cfg.get('players', 2)} players"
    stage = f" (from minute {after_minutes:.0f}: an earlier stage)" if after_minutes else ""
    ax.set_title(f"{what}{stage}: margin, {hands} paired hands, 95% CI", fontsize=9)
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    return out


def strength(ckpt: str, against: list[str], hands: int, seed: int, workers: int
             ) -> dict[str, Any]:
    from agents.evaluate import evaluate

    spec = "pretrained" if ckpt == "pretrained" else f"ckpt:{ckpt}"
    out = {}
    for opp in against:
        res = evaluate(spec, opp, hands=hands, seed=seed, workers=workers)
        p, m = res.points_per_hand, res.matches
        out[opp] = {"margin": p.margin, "ci95": list(p.ci95),
                    "match_win_rate": m.win_rate,
                    "match_ci95": None if m.ci95 is None else list(m.ci95),
                    "ms_per_move_a": res.timing_a.to_json(),
                    "ms_per_move_b": res.timing_b.to_json(),
                    "categories": {k: v.margin for k, v in res.categories.items()}}
        print(f"{spec} vs {opp}: {p.margin:+.3f} [{p.ci95[0]:+.3f}, {p.ci95[1]:+.3f}] "
              f"points/hand over {hands} paired hands; {res.timing_a.mean_ms:.3f} ms/move "
              f"(opponent {res.timing_b.mean_ms:.3f})", flush=True)
    return out


def throughput(run_dir: Path) -> dict[str, float]:
    """Means over the run of the logged environment and learner rates."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    ea = EventAccumulator(str(Path(run_dir) / "tensorboard"), size_guidance={"scalars": 0})
    ea.Reload()
    out = {}
    for tag in ("charts/env_steps_per_second", "charts/learner_samples_per_second",
                "charts/wall_minutes"):
        vals = [s.value for s in ea.Scalars(tag)]
        out[tag] = float(np.median(vals)) if tag != "charts/wall_minutes" else vals[-1]
    steps = ea.Scalars("charts/wall_minutes")[-1].step
    out["env_steps_total"] = steps
    out["overall_env_steps_per_second"] = steps / (out["charts/wall_minutes"] * 60)
    return out


def export(ckpt: Path, out: Path) -> Path:
    """A small policy-only file (weights + network shape + rules + counters)."""
    from scopa_policy.checkpoint import (
        build_last_deal,
        build_model,
        load_checkpoint,
        policy_checkpoint,
        save_atomic,
    )

    ck = load_checkpoint(ckpt)
    net = build_model(ck)
    meta = {"counters": ck.get("counters", {}), "config": ck.get("config", {}),
            "source": Path(ck["path"]).name}
    return save_atomic(policy_checkpoint(net, ck["rules"], meta, build_last_deal(ck)), out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m scopa_train.report")
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("curve")
    c.add_argument("run_dir", type=Path)
    c.add_argument("out", type=Path)
    c.add_argument("--mark", action="append", default=[], metavar="MINUTES:LABEL",
                   help="a dashed vertical line (e.g. where a run was resumed)")
    c.add_argument("--against", nargs="+", default=None,
                   help="evaluation opponents to plot (default: all but random)")
    c.add_argument("--after-minutes", type=float, default=0.0,
                   help="training minutes before this run (the stage it started from)")
    s = sub.add_parser("strength")
    s.add_argument("ckpt")
    s.add_argument("--against", nargs="+", default=["random", "greedy", "expert"])
    s.add_argument("--hands", type=int, default=2000)
    s.add_argument("--seed", type=int, default=777)
    s.add_argument("--workers", type=int, default=1)
    s.add_argument("--json", type=Path)
    t = sub.add_parser("throughput")
    t.add_argument("run_dir", type=Path)
    e = sub.add_parser("export")
    e.add_argument("ckpt", type=Path)
    e.add_argument("out", type=Path)
    args = p.parse_args(argv)
    if args.cmd == "curve":
        marks = [(float(m.split(":", 1)[0]), m.split(":", 1)[1]) for m in args.mark]
        against = tuple(args.against) if args.against else None
        print(plot_curve(args.run_dir, args.out, against, marks=marks,
                         after_minutes=args.after_minutes))
    elif args.cmd == "strength":
        res = strength(args.ckpt, args.against, args.hands, args.seed, args.workers)
        if args.json:
            args.json.write_text(json.dumps(res, indent=1))
    elif args.cmd == "throughput":
        print(json.dumps(throughput(args.run_dir), indent=1))
    else:
        print(export(args.ckpt, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
