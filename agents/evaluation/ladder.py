"""Round-robin ladder: ``scopa ladder SPEC ... --hands N --out DIR``.

Every pair of agents is evaluated with ``agents.evaluation.evaluate.evaluate`` (paired,
seat-swapped deals and matches). Two ratings are fitted, both anchored at
``random`` = 0 (or at the first agent when ``random`` is not in the ladder):

- **Elo** (Bradley-Terry on match results, 400 x log10 of the strength ratio; every
  pair gets half a virtual win each way so a clean sweep stays finite), with a 95%
  interval from the inverse Fisher information;
- **points per hand** above the anchor (weighted least squares on the pairwise
  points-per-hand margins), with its 95% interval.

``DIR`` receives ``ratings.csv``, ``ratings.json`` (ratings, pairwise results and the
parameters), ``ladder.md``, ``ladder.png`` and ``README.md``, the leaderboard
(``agents.evaluation.leaderboard``: ranks with their uncertainty, the margin against ``pimc``,
time per move); each pair's full evaluation is kept
in ``DIR/pairs/`` and reused when the ladder is re-run with the same parameters (and,
for learned agents, the same weights: their ``fingerprint(rules)``). With ``--records``
the game records of each pair's matches are kept beside it
(``DIR/pairs/PAIR.records.jsonl``, game-record.md: ``scopa replay``, ``scopa review``).
"""

from __future__ import annotations

import csv
import io
import json
import re
import sys
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from scopa_env.files import file_errors, writable_file, write_atomic
from scopa_env.rules import Rules, resolve_rules

from ..commands import Parser, missing_extra, run
from . import leaderboard
from .evaluate import (
    _canonical,
    add_common_args,
    build_agent,
    evaluate,
    options_from_args,
)
from .results import EvalResult
from .stats import Z95, additive_ratings, bradley_terry

# the evaluation protocol a cached pair was played under (2: fresh agents per seating)
PROTOCOL = 2


def _slug(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", spec)[:60]


def run_pairs(specs: Sequence[str], *, hands: int, seed: int, out: Path, rules: str = "scopa",
              players: int | None = None, options: dict[str, Any] | None = None,
              workers: int = 1, matches: int | None = None, progress: bool = False,
              log: Any = None, backend: str = "local", records: bool = False
              ) -> list[EvalResult]:
    """Evaluate every pair (cached in ``out/pairs``); one result per pair, in order.
    ``records``: keep each pair's match records in ``PAIR.records.jsonl`` beside it (a
    cached pair without them is played again)."""
    pairs_dir = out / "pairs"
    with file_errors(pairs_dir, "create the ladder's pairs folder"):
        pairs_dir.mkdir(parents=True, exist_ok=True)
    results = []
    for i, j in combinations(range(len(specs)), 2):
        a, b = specs[i], specs[j]
        path = pairs_dir / f"{i:02d}-{_slug(a)}__{j:02d}-{_slug(b)}.json"
        params = {"a": a, "b": b, "hands": hands, "seed": seed, "rules": rules,
                  "players": players, "options": options or {}, "matches": matches,
                  "protocol": PROTOCOL,
                  **_fingerprints(a, b, rules=resolve_rules(rules, players, options))}
        kept = path.with_suffix(".records.jsonl")
        cached = _cached(path, params)
        if records and not kept.exists():
            cached = None
        if cached is not None:
            results.append(cached)
            if log:
                print(f"{a} vs {b}: reusing {path}", file=log)
            continue
        fresh = kept.with_name(f".{kept.name}.new") if records else None
        if fresh is not None:
            fresh.unlink(missing_ok=True)
        res = evaluate(a, b, hands=hands, seed=seed, rules=rules, players=players,
                       workers=workers, options=options, progress=progress, matches=matches,
                       backend=backend, records=fresh)
        if fresh is not None:  # whole or not at all, as the pair's result
            with file_errors(kept, "keep the pair's match records in"):
                fresh.replace(kept)
        text = json.dumps({"params": params, "result": res.to_json()}, indent=1) + "\n"
        # atomic: a ladder run at the same time reads it whole or not at all
        write_atomic(text.encode("utf-8"), path, "write the pair's result to")
        if log:
            p = res.points_per_hand
            print(f"{res.a} vs {res.b}: {p.margin:+.3f} [{p.ci95[0]:+.3f}, {p.ci95[1]:+.3f}] "
                  f"points/hand ({res.elapsed_s:.0f} s)", file=log)
        results.append(res)
    return results


def _fingerprints(*specs: str, rules: Rules) -> dict[str, Any]:
    """``{"weights": {spec: digest}}`` for the specs whose agents can change under the
    same name (learned agents have a ``fingerprint(rules)``: a digest of the weights that
    play ``rules``, so retrained or re-shipped weights replay a cached pair of theirs);
    empty when none can."""
    digests = {}
    for spec in specs:
        fp = getattr(build_agent(spec, 0), "fingerprint", None)
        if callable(fp):
            digests[spec] = fp(rules)
    return {"weights": digests} if digests else {}


def _cached(path: Path, params: dict[str, Any]) -> EvalResult | None:
    """The cached result of a pair played with ``params``; None when there is none (an
    unreadable or stale file is played again and overwritten)."""
    try:
        cached = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(cached, dict) or cached.get("params") != params:
        return None
    try:
        return EvalResult.from_json(cached["result"])
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def fit(names: Sequence[str], results: Sequence[EvalResult]) -> dict[str, Any]:
    """Ratings of ``names`` from pairwise ``evaluate`` results (canonical specs)."""
    n = len(names)
    idx = {s: k for k, s in enumerate(names)}
    anchor = next((k for k, s in enumerate(names) if s == "random"), 0)
    wins = np.zeros((n, n))
    rows = []
    pairs = []
    for r in results:
        i, j = idx[r.a], idx[r.b]
        m, p = r.matches, r.points_per_hand
        if m.played:
            wins[i, j] += m.a_wins
            wins[j, i] += m.played - m.a_wins
        rows.append((i, j, p.margin, p.half_width / Z95))
        pairs.append({"a": r.a, "b": r.b, "margin": p.margin, "ci95": list(p.ci95),
                      "win_rate": m.win_rate,
                      "win_ci95": None if m.ci95 is None else list(m.ci95),
                      "matches": m.played, "hands": r.hands})
    has_elo = bool(wins.sum())  # a ladder without matches (--matches 0) has no Elo
    elo, elo_se = bradley_terry(n, wins, anchor=anchor)
    pts, pts_se = additive_ratings(n, rows, anchor=anchor)
    ratings = []
    for k, s in enumerate(names):
        played = int(wins[k].sum() + wins[:, k].sum())
        ratings.append({
            "agent": s, "elo": float(elo[k]) if has_elo else None,
            "elo_ci95": [float(elo[k] - Z95 * elo_se[k]), float(elo[k] + Z95 * elo_se[k])]
            if has_elo else None,
            "points_per_hand": float(pts[k]),
            "points_ci95": [float(pts[k] - Z95 * pts_se[k]), float(pts[k] + Z95 * pts_se[k])],
            "matches_won": int(wins[k].sum()), "matches_played": played})
    ratings.sort(key=lambda x: -(x["elo"] if has_elo else x["points_per_hand"]))
    return {"anchor": names[anchor], "ratings": ratings, "pairs": pairs}


def write_outputs(out: Path, table: dict[str, Any], meta: dict[str, Any],
                  results: Sequence[EvalResult], log: Any = None) -> bool:
    """ratings.csv, ratings.json, ladder.md, README.md and ladder.png in ``out``, each
    written atomically (a reader, or a ladder run on the same folder at the same time,
    never sees half a file); a file error names the file. Without matplotlib (an install
    without the train extra) there is no ladder.png: one line to ``log``, and False."""
    f = io.StringIO(newline="")  # the table, as CSV
    w = csv.writer(f)
    w.writerow(["rank", "agent", "elo", "elo_ci95_low", "elo_ci95_high",
                "points_per_hand_vs_anchor", "points_ci95_low", "points_ci95_high",
                "matches_won", "matches_played"])
    for k, r in enumerate(table["ratings"], 1):
        elo = ([f"{r['elo']:.1f}", f"{r['elo_ci95'][0]:.1f}", f"{r['elo_ci95'][1]:.1f}"]
               if r["elo"] is not None else ["", "", ""])
        w.writerow([k, r["agent"], *elo, f"{r['points_per_hand']:.3f}",
                    f"{r['points_ci95'][0]:.3f}", f"{r['points_ci95'][1]:.3f}",
                    r["matches_won"], r["matches_played"]])
    doc = {**meta, **table, "evaluations": [r.to_json() for r in results]}
    write_atomic(f.getvalue().encode("utf-8"), out / "ratings.csv", "write the ratings to")
    write_atomic((json.dumps(doc, indent=1) + "\n").encode("utf-8"), out / "ratings.json",
                 "write the ratings to")
    write_atomic(markdown(table, meta, results).encode("utf-8"), out / "ladder.md",
                 "write the ladder's table to")
    leaderboard.write(out, doc)
    png = io.BytesIO()
    try:
        plot(png, table, meta)
    except ImportError as e:
        why = missing_extra(e)
        if why is None:
            raise
        if log:
            print(f"no ladder.png: {why}", file=log)
        return False
    write_atomic(png.getbuffer(), out / "ladder.png", "draw the ladder's plot to")
    return True


def markdown(table: dict[str, Any], meta: dict[str, Any],
             results: Sequence[EvalResult]) -> str:
    """The ladder as Markdown: ratings, then every pair."""
    return ratings_markdown(table, meta) + "\n" + pairs_markdown(results)


def ratings_markdown(table: dict[str, Any], meta: dict[str, Any]) -> str:
    """The ratings table (Markdown)."""
    a = table["anchor"]
    lines = [
        f"# Ladder ({meta['rules']}, {meta['players']} players, {meta['hands']} paired hands "
        f"per pair, seed {meta['seed']})", "",
        f"Ratings anchored at `{a}` = 0. Elo: Bradley-Terry on match results (to "
        f"{meta['target_score']}); points/hand: least-squares fit of the pairwise margins. "
        f"Intervals are 95%.", "",
        "| rank | agent | Elo | Elo 95% CI | points/hand vs " + a + " | 95% CI | matches won |",
        "|---:|---|---:|---|---:|---|---:|"]
    for k, r in enumerate(table["ratings"], 1):
        elo = (f"{r['elo']:.0f} | [{r['elo_ci95'][0]:.0f}, {r['elo_ci95'][1]:.0f}]"
               if r["elo"] is not None else "- | -")
        lines.append(
            f"| {k} | `{r['agent']}` | {elo} | {r['points_per_hand']:+.3f} | "
            f"[{r['points_ci95'][0]:+.3f}, {r['points_ci95'][1]:+.3f}] | "
            f"{r['matches_won']}/{r['matches_played']} |")
    return "\n".join(lines) + "\n"


def pairs_markdown(results: Sequence[EvalResult]) -> str:
    """Every pair's result (Markdown)."""
    lines = ["| A | B | points/hand A - B | 95% CI | A's match win rate | 95% CI | "
              "A ms/move (median) | B ms/move (median) |",
             "|---|---|---:|---|---:|---|---:|---:|"]
    for r in results:
        p, m = r.points_per_hand, r.matches
        wr = wci = "-"
        if m.played and m.win_rate is not None and m.ci95 is not None:
            wr = f"{100 * m.win_rate:.1f}%"
            wci = f"[{100 * m.ci95[0]:.1f}%, {100 * m.ci95[1]:.1f}%]"
        lines.append(f"| `{r.a}` | `{r.b}` | {p.margin:+.3f} | [{p.ci95[0]:+.3f}, "
                     f"{p.ci95[1]:+.3f}] | {wr} | {wci} | {r.timing_a.median_ms:.3f} | "
                     f"{r.timing_b.median_ms:.3f} |")
    return "\n".join(lines) + "\n"


def plot(path: Path | BinaryIO, table: dict[str, Any], meta: dict[str, Any]) -> None:
    """Horizontal bars: Elo and points/hand with their 95% intervals."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rs = table["ratings"][::-1]
    names = [r["agent"] for r in rs]
    panels = [("points_per_hand", "points_ci95", "points per hand vs " + table["anchor"])]
    if rs[0]["elo"] is not None:  # no Elo without matches
        panels.insert(0, ("elo", "elo_ci95", "Elo (match results)"))
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels) + 0.5,
                                                      1.2 + 0.55 * len(rs)), sharey=True)
    for ax, (key, ci, label) in zip(np.atleast_1d(axes), panels, strict=True):
        vals = np.array([r[key] for r in rs])
        lo = vals - np.array([r[ci][0] for r in rs])
        hi = np.array([r[ci][1] for r in rs]) - vals
        ax.barh(names, vals, xerr=[lo, hi], color="#3b7dd8", capsize=4)
        ax.axvline(0, color="black", lw=0.8)
        ax.set_xlabel(label)
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle(f"Ladder: {meta['rules']}, {meta['players']} players, "
                 f"{meta['hands']} paired hands per pair")
    fig.tight_layout()
    fig.savefig(path, dpi=120, format="png")
    plt.close(fig)


def ladder(specs: Sequence[str], *, hands: int, seed: int, out: str | Path,
           rules: str = "scopa", players: int | None = None,
           options: dict[str, Any] | None = None, workers: int = 1,
           matches: int | None = None, progress: bool = False, log: Any = None,
           backend: str = "local", records: bool = False) -> dict[str, Any]:
    """Run the round robin, fit the ratings and write every output; the table.
    ``backend="ray"``: every pair's deals are Ray tasks (the same results); ``records``:
    keep the matches' game records (``run_pairs``)."""
    if len(specs) < 2:
        raise ValueError("a ladder needs at least two agents")
    names = [_canonical(s) for s in specs]
    if len(set(names)) != len(names):
        raise ValueError(f"the same agent is listed twice: {', '.join(names)}")
    r = resolve_rules(rules, players, options)
    for spec in specs:  # every agent (a checkpoint too) is checked before any pair is played
        build_agent(spec, 0)
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {str(out)!r} is a file: give a folder for the ladder's files")
    with file_errors(out, "create the ladder's folder"):
        out.mkdir(parents=True, exist_ok=True)
    writable_file(out / "ratings.json", "ladder output")  # before any pair is played
    results = run_pairs(specs, hands=hands, seed=seed, out=out, rules=rules, players=players,
                        options=options, workers=workers, matches=matches, progress=progress,
                        log=log, backend=backend, records=records)
    table = fit(names, results)
    meta = {"rules": r.name, "players": r.players, "options": options or {},
            "hands": hands, "seed": seed, "matches": results[0].matches.paired,
            "target_score": r.target_score, "specs": list(specs)}
    drawn = write_outputs(out, table, meta, results, log)
    return {**meta, **table, "chart": drawn}


def main(argv: Sequence[str] | None = None) -> int:
    """``scopa ladder SPEC SPEC ... --hands N --out DIR``."""
    p = Parser(
        prog="scopa ladder", description="Round robin of agents on paired deals; Elo and "
        "points-per-hand ratings (random = 0) as CSV, JSON, Markdown and PNG.")
    p.add_argument("specs", nargs="+", metavar="SPEC", help="agent specs (two or more)")
    add_common_args(p)
    p.add_argument("--out", required=True, metavar="DIR", help="output directory")
    p.add_argument("--records", action="store_true",
                   help="keep the game records of each pair's matches in "
                        "DIR/pairs/PAIR.records.jsonl (scopa replay, scopa review)")

    def command() -> int:
        args = p.parse_args(list(sys.argv[1:] if argv is None else argv))
        progress = sys.stderr.isatty() if args.progress is None else args.progress
        res = ladder(args.specs, hands=args.hands, seed=args.seed, out=args.out, rules=args.rules,
                     players=args.players, options=options_from_args(args),
                     workers=args.workers, matches=args.matches, progress=progress,
                     log=sys.stderr, backend=args.backend, records=args.records)
        print(ratings_markdown(res, res))
        print(f"wrote {args.out}/README.md (the leaderboard), ratings.csv, ratings.json, "
              f"ladder.md" + (", ladder.png" if res["chart"] else ""))
        return 0

    return run("scopa ladder", command, top_level=argv is None)


if __name__ == "__main__":
    sys.exit(main())
