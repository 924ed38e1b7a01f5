"""Figures for BENCHMARKS.md from a finished run.

    python -m scopa_train.report curve RUN_DIR docs/learning_curve.png
    python -m scopa_train.report recipe-curve STAGE1/policy.pt ... STAGE4/policy.pt \
        --out docs/learning_curve_recipe.png --against pimc expert --hands 2000 --seed 11
    python -m scopa_train.report strength CKPT --hands 2000 --against random greedy expert
    python -m scopa_train.report throughput RUN_DIR

(The policy file a recipe ships is written by ``python -m scopa_train.export``.)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np


def load_evaluations(run_dir: Path) -> list[dict[str, Any]]:
    path = Path(run_dir) / "evaluations.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def rollout_margins(run_dir: Path, spec: str) -> list[tuple[float, float]]:
    """(minute, margin) of each PPO update's rollouts against ``spec``, from the run's
    TensorBoard scalars (``rollout/margin_per_hand_vs_SPEC``; the step is seconds since
    the recipe began); empty where there are none."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    if not (Path(run_dir) / "tensorboard").is_dir():
        return []
    acc = EventAccumulator(str(Path(run_dir) / "tensorboard"), size_guidance={"scalars": 0})
    acc.Reload()
    tag = f"rollout/margin_per_hand_vs_{spec}"
    if tag not in acc.Tags().get("scalars", []):
        return []
    return [(e.step / 60, float(e.value)) for e in acc.Scalars(tag)]


def plot_curve(run_dir: Path, out: Path, opponents: tuple[str, ...] | None = None,
               marks: list[tuple[float, str]] | None = None, after_minutes: float = 0.0
               ) -> Path:
    """Margin (points per hand, 95% band) against each opponent (default: every one the
    run evaluated against but ``random``) over wall-clock minutes, and, where the
    opponent played in the rollouts, each update's rollout margin; ``after_minutes``:
    training time spent before this run (an earlier stage it started from; the
    evaluations' clock is the stage's own)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    evals = [e for e in load_evaluations(run_dir) if "margins" in e]
    if not evals:
        raise ValueError(f"{run_dir}/evaluations.jsonl holds no evaluation against "
                         f"opponents (a stage with evaluation.every_steps: 0?)")
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
        line, = ax.plot(x, mean, marker="o", ms=3, label=f"vs {spec} (evaluation)")
        ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.2)
        rollouts = rollout_margins(run_dir, spec)
        if rollouts:  # their minutes count from the recipe's start, the evaluations' not
            e = evals[0]
            before = (e.get("recipe_seconds", e["wall_seconds"]) - e["wall_seconds"]) / 60
            ax.plot([after_minutes + m - before for m, _ in rollouts],
                    [v for _, v in rollouts],
                    color=line.get_color(), lw=0.7, alpha=0.5,
                    label=f"vs {spec} (each update's rollouts, moves sampled)")
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
    run, rules = cfg.get("run") or {}, cfg.get("rules") or {}
    what = f"run {run.get('name', '?')}, {rules.get('players', 2)} players"
    stage = f" (from minute {after_minutes:.0f}: an earlier stage)" if after_minutes else ""
    ax.set_title(f"{what}{stage}: margin, {hands} paired hands, 95% CI", fontsize=9)
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    return out


def recipe_curve(policies: list[Path], out: Path, against: list[str], hands: int = 2000,
                 seed: int = 11, workers: int = 1, log: Any = print) -> Path:
    """A recipe's learning curve: each stage's policy file (in the recipe's order) against
    each opponent (evaluator, ``hands`` paired hands, ``seed``), at the recipe's minute
    where that stage ended (the running sum of the files' ``wall_seconds`` counters).
    The results are written beside the picture (``out`` with ``.json``) and reused for a
    file whose bytes, opponent, hands and seed are unchanged."""
    from agents.evaluation.evaluate import evaluate
    from scopa_policy.checkpoint import load_checkpoint

    cache_file = out.with_suffix(".json")
    cached: dict[str, Any] = {}
    if cache_file.is_file():
        for point in json.loads(cache_file.read_text()).get("stages", []):
            for opp, r in point["results"].items():
                cached[f"{point['sha256']} {opp} {r['hands']} {r['seed']}"] = r
    out.parent.mkdir(parents=True, exist_ok=True)
    stages: list[dict[str, Any]] = []
    minutes = 0.0
    for path in policies:
        ck = load_checkpoint(path)
        minutes += float(ck.get("counters", {}).get("wall_seconds", 0.0)) / 60
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
        stage = {"policy": str(path), "sha256": digest,
                 "name": ck.get("config", {}).get("name", Path(path).parent.name),
                 "minute": minutes, "results": {}}
        stages.append(stage)
        for opp in against:
            key = f"{digest} {opp} {hands} {seed}"
            played = key not in cached
            if played:
                res = evaluate(f"ckpt:{path}", opp, hands=hands, seed=seed, workers=workers)
                p = res.points_per_hand
                cached[key] = {"margin": p.margin, "low": p.ci95[0], "high": p.ci95[1],
                               "hands": hands, "seed": seed}
            r = stage["results"][opp] = cached[key]
            if played:  # a stop keeps every result played so far
                _write_json(cache_file, {"stages": stages})
            log(f"{path} (minute {minutes:.1f}) vs {opp}: {r['margin']:+.3f} "
                f"[{r['low']:+.3f}, {r['high']:+.3f}]")
    _write_json(cache_file, {"stages": stages})
    return _plot_stages(stages, against, hands, seed, out)


def _write_json(path: Path, doc: dict[str, Any]) -> None:
    from scopa_policy.checkpoint import write_atomic

    write_atomic((json.dumps(doc, indent=1) + "\n").encode(), path)


def _plot_stages(stages: list[dict[str, Any]], against: list[str], hands: int, seed: int,
                 out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4), dpi=120)
    x = np.array([s["minute"] for s in stages])
    for opp in against:
        mean = np.array([s["results"][opp]["margin"] for s in stages])
        err = np.array([[m - s["results"][opp]["low"], s["results"][opp]["high"] - m]
                        for m, s in zip(mean, stages, strict=True)]).T
        ax.errorbar(x, mean, yerr=err, marker="o", ms=4, capsize=3, label=f"vs {opp}")
    for s in stages:  # each stage's name along its line, clear of its neighbours
        ax.axvline(s["minute"], color="grey", ls=":", lw=0.6)
        ax.text(s["minute"], 0.5, f" {s['name']} ", transform=ax.get_xaxis_transform(),
                rotation=90, fontsize=7, ha="right", va="center", color="dimgrey")
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xlim(0, max(x) * 1.05 if len(x) else 1)
    ax.set_xlabel("training wall-clock at the end of each stage (minutes, 2-core machine)")
    ax.set_ylabel("margin (points per hand)")
    ax.set_title(f"the recipe, stage by stage: margin over {hands} paired hands "
                 f"(seed {seed}), 95% CI", fontsize=9)
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return out


def strength(ckpt: str, against: list[str], hands: int, seed: int, workers: int
             ) -> dict[str, Any]:
    from agents.evaluation.evaluate import evaluate

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
    """Medians over a PPO stage of the logged environment and learner rates, its
    minutes and env steps (the recipe's, in a later stage)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    ea = EventAccumulator(str(Path(run_dir) / "tensorboard"), size_guidance={"scalars": 0})
    ea.Reload()
    out = {}
    if "charts/env_steps_per_second" not in ea.Tags().get("scalars", []):
        raise ValueError(f"{run_dir} has no PPO throughput scalars (a fitting stage, or no "
                         f"update yet)")
    for tag in ("charts/env_steps_per_second", "charts/learner_samples_per_second",
                "charts/wall_minutes", "charts/env_steps"):
        vals = [s.value for s in ea.Scalars(tag)]
        out[tag] = float(np.median(vals)) if tag.endswith("per_second") else vals[-1]
    steps = out.pop("charts/env_steps")
    out["env_steps_total"] = steps
    out["overall_env_steps_per_second"] = steps / (out["charts/wall_minutes"] * 60)
    return out


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
    r = sub.add_parser("recipe-curve", help="each stage's policy against opponents, at the "
                       "recipe's minute where the stage ended")
    r.add_argument("policies", type=Path, nargs="+", help="the stages' policy files, in order")
    r.add_argument("--out", type=Path, required=True, help="the picture (PNG); its .json "
                   "keeps the results")
    r.add_argument("--against", nargs="+", default=["pimc", "expert"])
    r.add_argument("--hands", type=int, default=2000)
    r.add_argument("--seed", type=int, default=11)
    r.add_argument("--workers", type=int, default=1)
    s = sub.add_parser("strength")
    s.add_argument("ckpt")
    s.add_argument("--against", nargs="+", default=["random", "greedy", "expert"])
    s.add_argument("--hands", type=int, default=2000)
    s.add_argument("--seed", type=int, default=777)
    s.add_argument("--workers", type=int, default=1)
    s.add_argument("--json", type=Path)
    t = sub.add_parser("throughput")
    t.add_argument("run_dir", type=Path)
    args = p.parse_args(argv)
    try:
        return _run(p, args)
    except (ValueError, OSError) as e:  # a missing or damaged file (CheckpointError), ...
        p.error(str(e))


def _run(p: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """The subcommand of ``args``; bad input is a ``ValueError`` or ``OSError``."""
    if args.cmd == "throughput" and not (args.run_dir / "tensorboard").is_dir():
        raise ValueError(f"{str(args.run_dir)!r} is not a training run directory (it has "
                         f"no tensorboard/ folder)")
    if args.cmd == "curve":
        marks = [(float(m.split(":", 1)[0]), m.split(":", 1)[1]) for m in args.mark]
        against = tuple(args.against) if args.against else None
        print(plot_curve(args.run_dir, args.out, against, marks=marks,
                         after_minutes=args.after_minutes))
    elif args.cmd == "recipe-curve":
        from agents.evaluation.evaluate import build_agent

        missing = [str(q) for q in args.policies if not q.is_file()]
        if missing:
            p.error(f"no such policy file: {', '.join(missing)}")
        if args.hands < 1 or args.workers < 1:
            p.error("--hands and --workers must be at least 1")
        for spec in args.against:  # a bad spec stops before any stage is played
            build_agent(spec, 0)
        print(recipe_curve(args.policies, args.out, args.against, args.hands, args.seed,
                           args.workers))
    elif args.cmd == "strength":
        res = strength(args.ckpt, args.against, args.hands, args.seed, args.workers)
        if args.json:
            args.json.write_text(json.dumps(res, indent=1))
    else:
        print(json.dumps(throughput(args.run_dir), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
