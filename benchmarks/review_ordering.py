"""Does the review mean something? Mean loss per decision against the ladder's order.

    .venv/bin/python benchmarks/review_ordering.py [--games 1] [--seed 51]
        [--agents random greedy expert pimc pretrained] [--reviewer pretrained:search=on]
        [--ladder docs/ladder/ratings.json] [--dir DIR] [--json]

1. **Records.** Every pair of ``--agents`` plays ``--games`` matches to 11 in each seating
   (``scopa record``, seeds from ``--seed``), into one records file per seating.
2. **Review.** Every match is reviewed by ``--reviewer`` (reviewer seed 0;
   ``agents.evaluation.match_review``); each agent's mean loss per decision is its points lost
   over all its decisions divided by their number, with a 95% interval from a bootstrap
   over its (match, seat) pairs.
3. **Order.** For every pair of agents the ladder (``--ladder``: ratings.json) places apart
   (points-per-hand intervals that do not overlap), the stronger must lose less per
   decision; pairs the ladder ties are listed, not counted.
4. **The reviewer's own moves.** The reviewer (``Reviewer.act``: the fresh seeded agent
   per decision) plays one match against each of the first and the last of ``--agents``;
   the review of those records must give its seats a loss of 0 at every decision.
5. **Time.** Wall and CPU seconds of each match's review (one process; the rollouts use
   one BLAS thread), with the machine's load average.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents import check_spec, make_agent  # noqa: E402
from agents.evaluation.match_review import DEFAULT_REVIEWER, Reviewer, review_match  # noqa: E402
from scopa_cli import main as scopa  # noqa: E402
from scopa_env.play import derive_seed, play_match  # noqa: E402
from scopa_env.records import read_records  # noqa: E402
from scopa_env.rules import make_rules  # noqa: E402

AGENTS = ["random", "greedy", "expert", "pimc", "pretrained"]


def record_pairs(agents: list[str], games: int, seed: int, folder: Path) -> list[Path]:
    """One records file per ordered pair (both seatings), made by ``scopa record``."""
    files = []
    for k, (a, b) in enumerate(itertools.permutations(agents, 2)):
        path = folder / f"{k:02d}.jsonl"
        if not path.exists():
            code = scopa(["record", "--agents", a, b, "--games", str(games), "--seed",
                          str(derive_seed(seed, k)), "--out", str(path)])
            if code:
                raise SystemExit(f"scopa record failed for {a} vs {b}")
        files.append(path)
    return files


def bootstrap_ratio(losses: np.ndarray, counts: np.ndarray, rng: np.random.Generator,
                    n: int = 2000) -> tuple[float, float]:
    """95% interval of sum(losses) / sum(counts), resampling the (match, seat) pairs."""
    idx = rng.integers(0, len(losses), size=(n, len(losses)))
    ratios = losses[idx].sum(1) / counts[idx].sum(1)
    lo, hi = np.percentile(ratios, [2.5, 97.5])
    return float(lo), float(hi)


def ladder_order(path: Path, agents: list[str]) -> dict[str, tuple[float, float, float]]:
    """Each agent's (points per hand, interval low, high) in the ladder."""
    ratings = {r["agent"]: r for r in json.loads(path.read_text())["ratings"]}
    out = {}
    for a in agents:
        r = ratings[check_spec(a)]
        out[a] = (r["points_per_hand"], *r["points_ci95"])
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--agents", nargs="+", default=AGENTS)
    p.add_argument("--games", type=int, default=1, help="matches per seating of each pair")
    p.add_argument("--seed", type=int, default=51)
    p.add_argument("--reviewer", default=DEFAULT_REVIEWER)
    p.add_argument("--ladder", type=Path, default=Path("docs/ladder/ratings.json"))
    p.add_argument("--dir", type=Path, default=None, help="keep the records here (reused)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()

    folder = args.dir or Path(tempfile.mkdtemp(prefix="review-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    files = record_pairs(args.agents, args.games, args.seed, folder)
    record_s = time.perf_counter() - t0
    reviewer = Reviewer(args.reviewer, seed=0)
    per: dict[str, list[tuple[float, int, int]]] = {a: [] for a in args.agents}
    timings = []
    load = [os.getloadavg()[0]]
    for path in files:
        for k, rec in enumerate(read_records(path), 1):
            w, c = time.perf_counter(), time.process_time()
            review = review_match(rec, reviewer, match=k, source=str(path))
            timings.append({"wall_s": time.perf_counter() - w, "cpu_s": time.process_time() - c,
                            "decisions": len(review.decisions), "hands": len(rec["hands"])})
            for s in review.seats:
                per[s.player].append((s.total_loss, len(s.decisions), s.agreed))
    load.append(os.getloadavg()[0])

    own = []
    rules = make_rules("scopa")
    for j, other in enumerate([args.agents[0], args.agents[-1]]):
        rec = play_match(rules, derive_seed(args.seed, 900 + j),
                         [reviewer, make_agent(other, seed=j)], [reviewer.spec, other])
        review = review_match(rec, Reviewer(args.reviewer, seed=0))
        mine = review.seats[0]
        own.append({"against": other, "decisions": len(mine.decisions),
                    "agreed": mine.agreed, "total_loss": mine.total_loss,
                    "max_loss": max((d.loss or 0.0) for d in mine.decisions)})

    rng = np.random.default_rng(0)
    rows = []
    for a in args.agents:
        arr = np.array(per[a], float)
        lo, hi = bootstrap_ratio(arr[:, 0], arr[:, 1], rng)
        rows.append({"agent": a, "seats": len(arr), "decisions": int(arr[:, 1].sum()),
                     "mean_loss": float(arr[:, 0].sum() / arr[:, 1].sum()),
                     "ci95": [lo, hi], "agreed": float(arr[:, 2].sum() / arr[:, 1].sum())})
    by = {r["agent"]: r for r in rows}
    ladder = ladder_order(args.ladder, args.agents)
    pairs = []
    for a, b in itertools.combinations(args.agents, 2):
        strong, weak = (a, b) if ladder[a][0] > ladder[b][0] else (b, a)
        apart = ladder[strong][1] > ladder[weak][2]
        pairs.append({"stronger": strong, "weaker": weak, "ladder_apart": apart,
                      "review_agrees": by[strong]["mean_loss"] < by[weak]["mean_loss"]})
    wall = np.array([t["wall_s"] for t in timings])
    cpu = np.array([t["cpu_s"] for t in timings])
    dec = np.array([t["decisions"] for t in timings])
    out = {"reviewer": reviewer.spec, "agents": args.agents, "games": args.games,
           "seed": args.seed, "matches": len(timings), "record_s": record_s, "rows": rows,
           "ladder": ladder, "pairs": pairs, "own": own,
           "timing": {"median_wall_s": float(np.median(wall)),
                      "median_cpu_s": float(np.median(cpu)),
                      "max_wall_s": float(wall.max()),
                      "wall_ms_per_decision": float(1000 * wall.sum() / dec.sum()),
                      "median_decisions": float(np.median(dec)),
                      "median_hands": float(np.median([t["hands"] for t in timings])),
                      "loadavg": load, "cpus": os.cpu_count()}}
    if args.json:
        print(json.dumps(out, indent=1))
        return
    print(f"reviewer {reviewer.spec}; {len(timings)} matches to 11 ({args.games} per seating "
          f"of each pair, seed {args.seed}), recorded in {record_s:.0f} s")
    print(f"{'agent':<12}{'ladder pts/hand':>16}{'matches':>9}{'decisions':>10}"
          f"{'mean loss':>11}  {'95% CI':<17}{'agreed':>7}")
    for r in sorted(rows, key=lambda r: r["mean_loss"]):
        lo, hi = r["ci95"]
        print(f"{r['agent']:<12}{ladder[r['agent']][0]:>+16.3f}{r['seats']:>9}"
              f"{r['decisions']:>10}{r['mean_loss']:>11.3f}  [{lo:.3f}, {hi:.3f}]"
              f"{r['agreed']:>7.0%}")
    apart = [q for q in pairs if q["ladder_apart"]]
    print(f"ladder pairs placed apart: {len(apart)}; the review orders "
          f"{sum(q['review_agrees'] for q in apart)} of them as the ladder does")
    for q in pairs:
        tag = "" if q["ladder_apart"] else " (tied in the ladder: not counted)"
        print(f"  {q['stronger']} > {q['weaker']}: "
              f"{'agrees' if q['review_agrees'] else 'DISAGREES'}{tag}")
    for o in own:
        print(f"the reviewer's own moves against {o['against']}: {o['decisions']} decisions, "
              f"{o['agreed']} its choice, total loss {o['total_loss']:.3f}")
    t = out["timing"]
    print(f"review time per match: median {t['median_wall_s']:.1f} s wall "
          f"({t['median_cpu_s']:.1f} s CPU), max {t['max_wall_s']:.1f} s; "
          f"{t['wall_ms_per_decision']:.0f} ms per decision; median "
          f"{t['median_decisions']:.0f} decisions, {t['median_hands']:.0f} hands a match; "
          f"load average {load[0]:.1f} -> {load[1]:.1f} on {t['cpus']} CPUs")


if __name__ == "__main__":
    main()
