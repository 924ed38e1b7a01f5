"""Strength and speed of the baseline agents (the "Baseline agents" figures of BENCHMARKS.md).

    .venv/bin/python benchmarks/strength.py [--hands 2000] [--workers 2] [--out docs/ladder]

1. the 2-player ladder of random, greedy, expert and pimc (``scopa ladder``), written to
   ``OUT`` (ratings.csv/json, ladder.md, ladder.png);
2. the 4-player ladder of the same agents, written to ``OUT/4p``;
3. pimc's time per move against greedy in 2- and 4-player games with one worker
   (``--timing-hands`` paired hands each), written to ``OUT/timing.json``.
Pairs already played with the same parameters are reused (see ``agents.evaluation.ladder``).
It prints the Markdown that goes into BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.evaluation.evaluate import evaluate  # noqa: E402
from agents.evaluation.ladder import ladder, pairs_markdown, ratings_markdown  # noqa: E402
from agents.evaluation.results import EvalResult  # noqa: E402

SPECS = ["random", "greedy", "expert", "pimc", "pretrained"]  # pimc = pimc:worlds=12,depth=5


def timing(players: int, hands: int, seed: int) -> dict:
    """pimc against greedy with one worker: pimc's time per move."""
    res = evaluate(SPECS[3], "greedy", hands=hands, seed=seed, players=players, workers=1,
                   matches=0)
    return {"players": players, "hands": hands, "margin": res.points_per_hand.to_json(),
            "pimc": res.timing_a.to_json()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hands", type=int, default=2000)
    p.add_argument("--four-player-hands", type=int, default=None,
                   help="paired hands per pair of the 4-player ladder (default: --hands)")
    p.add_argument("--timing-hands", type=int, default=200)
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--out", default="docs/ladder")
    p.add_argument("--skip", nargs="*", default=[], choices=("2p", "4p", "timing"))
    args = p.parse_args(argv)
    out = Path(args.out)
    parts = []
    for players, sub, hands in ((None, out, args.hands),
                                (4, out / "4p", args.four_player_hands or args.hands)):
        if f"{players or 2}p" in args.skip:
            continue
        # players=None: the rule set's own (2), as `scopa ladder` without --players
        res = ladder(SPECS, hands=hands, seed=args.seed, out=sub, players=players,
                     workers=args.workers, log=sys.stderr)
        evals = [EvalResult.from_json(e)
                 for e in json.loads((sub / "ratings.json").read_text())["evaluations"]]
        parts.append(ratings_markdown(res, res) + "\n" + pairs_markdown(evals))
    if "timing" not in args.skip:
        rows = [timing(players, args.timing_hands, args.seed) for players in (2, 4)]
        doc = {"machine": platform.processor() or platform.machine(),
               "python": platform.python_version(), "runs": rows}
        (out / "timing.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        lines = ["| players | moves | median ms | p95 ms | mean ms | median ms (moves with a "
                 "choice) | CPU median ms | CPU p95 ms |", "|---:|---:|---:|---:|---:|---:|---:|"
                 "---:|"]
        for r in rows:
            t = r["pimc"]
            lines.append(f"| {r['players']} | {t['moves']} | {t['median_ms']:.2f} | "
                         f"{t['p95_ms']:.2f} | {t['mean_ms']:.2f} | "
                         f"{t['median_ms_with_choice']:.2f} | {t['cpu_median_ms']:.2f} | "
                         f"{t['cpu_p95_ms']:.2f} |")
        parts.append("\n".join(lines) + "\n")
    print("\n".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
