"""The ladder as a leaderboard people can read: ``DIR/README.md`` of ``scopa ladder``.

One row per agent: its rating (points per hand above the anchor, and Elo), its margin
against the reference agent ``pimc`` with the interval, and its time per move. Ranks
come with their uncertainty:

- an agent's **rank** is the range of places its points-per-hand interval allows: it is
  below every agent whose interval lies wholly above its own and above every agent whose
  interval lies wholly below; agents whose intervals overlap share a range (``2-3``)
  and are listed as tied;
- with fewer than ``SETTLED_HANDS`` paired hands per pair (evaluation.md asks at least
  1,000 for a claim) the page says the order is not settled and gives no ranks.

``render(doc)`` turns a ladder's ``ratings.json`` document into the page;
``python -m agents.evaluation.leaderboard DIR`` rewrites ``DIR/README.md`` from
``DIR/ratings.json`` (and appends ``DIR/notes.md``, a person's notes, where there is one).
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scopa_env.files import FileProblem, file_errors, write_atomic

REFERENCE = "pimc"  # the agent every other one is measured against (its canonical spec)
SETTLED_HANDS = 1000


def _overlap(x: Sequence[float], y: Sequence[float]) -> bool:
    return x[0] <= y[1] and y[0] <= x[1]


def rank_ranges(ratings: Sequence[dict[str, Any]]) -> list[tuple[int, int]]:
    """(best, worst) place of each agent that its ``points_ci95`` allows, in order."""
    out = []
    for r in ratings:
        lo, hi = r["points_ci95"]
        above = sum(o["points_ci95"][0] > hi for o in ratings if o is not r)
        below = sum(o["points_ci95"][1] < lo for o in ratings if o is not r)
        out.append((above + 1, len(ratings) - below))
    return out


def _timing(doc: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Each agent's median time per move (wall and CPU, ms): the median over its
    evaluations of each evaluation's median."""
    wall: dict[str, list[float]] = {}
    cpu: dict[str, list[float]] = {}
    for e in doc.get("evaluations", []):
        for side in ("a", "b"):
            t = e["timing"][side]
            wall.setdefault(e[side], []).append(t["median_ms"])
            cpu.setdefault(e[side], []).append(t.get("cpu_median_ms", t["median_ms"]))
    return {k: {"wall": statistics.median(v), "cpu": statistics.median(cpu[k])}
            for k, v in wall.items()}


def _reference(doc: dict[str, Any]) -> str | None:
    from .. import check_spec

    ref = check_spec(REFERENCE)
    return ref if ref in (r["agent"] for r in doc["ratings"]) else None


def _vs(doc: dict[str, Any], agent: str, ref: str) -> tuple[float, list[float]] | None:
    """``agent``'s margin against ``ref`` (points per hand) and its interval."""
    for p in doc["pairs"]:
        if (p["a"], p["b"]) == (agent, ref):
            return p["margin"], list(p["ci95"])
        if (p["a"], p["b"]) == (ref, agent):
            return -p["margin"], [-p["ci95"][1], -p["ci95"][0]]
    return None


def _ms(x: float) -> str:
    return f"{x:.3f}" if x < 1 else f"{x:.1f}" if x < 100 else f"{x:.0f}"


def render(doc: dict[str, Any], command: str | None = None) -> str:
    """The leaderboard page (Markdown) of a ladder's ``ratings.json`` document."""
    ratings = sorted(doc["ratings"], key=lambda r: -r["points_per_hand"])
    hands, anchor = doc["hands"], doc["anchor"]
    settled = hands >= SETTLED_HANDS
    elo = bool(doc["matches"]) and ratings[0]["elo"] is not None
    ranges = rank_ranges(ratings)
    ref = _reference(doc)
    times = _timing(doc)
    lines = [f"# Leaderboard: {doc['rules']}, {doc['players']} players", ""]
    if settled:
        lines.append(
            f"Every pair of agents played {hands:,} paired deals (each deal in both seatings) "
            + (f"and {doc['matches']:,} paired matches to {doc['target_score']}" if elo
               else "and no matches (so no Elo)")
            + f", seed {doc['seed']} (evaluation.md). Ranks are ranges: an agent's points-per-hand "
            f"interval decides the places it can hold, and agents whose intervals overlap "
            f"share a range and are marked as tied.")
    else:
        lines.append(
            f"**The order is not settled.** Each pair played only {hands:,} paired deals; "
            f"evaluation.md asks for at least {SETTLED_HANDS:,} before a claim, so no ranks "
            f"are given. The agents are listed by their current rating; read the intervals.")
    lines += ["", f"| rank | agent | points/hand vs `{anchor}` | 95% CI | "
              + ("Elo | Elo 95% CI | " if elo else "")
              + (f"vs `{ref}` (points/hand) | 95% CI | " if ref else "")
              + "ms/move (median) | CPU ms/move | tied with |",
              "|---|---|---:|---|" + ("---:|---|" if elo else "") + ("---:|---|" if ref else "")
              + "---:|---:|---|"]
    for r, (best, worst) in zip(ratings, ranges, strict=True):
        name = r["agent"]
        rank = "-" if not settled else str(best) if best == worst else f"{best}-{worst}"
        tied = [o["agent"] for o in ratings
                if o is not r and _overlap(r["points_ci95"], o["points_ci95"])]
        row = [rank, f"`{name}`", f"{r['points_per_hand']:+.3f}",
               f"[{r['points_ci95'][0]:+.3f}, {r['points_ci95'][1]:+.3f}]"]
        if elo:
            row += [f"{r['elo']:.0f}", f"[{r['elo_ci95'][0]:.0f}, {r['elo_ci95'][1]:.0f}]"]
        if ref:
            vs = None if name == ref else _vs(doc, name, ref)
            row += (["reference", ""] if name == ref else ["-", ""] if vs is None
                    else [f"{vs[0]:+.3f}", f"[{vs[1][0]:+.3f}, {vs[1][1]:+.3f}]"])
        t = times.get(name)
        row += [_ms(t["wall"]) if t else "-", _ms(t["cpu"]) if t else "-",
                ", ".join(f"`{x}`" for x in tied) or "-"]
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", f"Points per hand: a least-squares fit of every pair's margin, `{anchor}` = 0. "
              + ("Elo: a Bradley-Terry fit of the match results. " if elo else "")
              + "Intervals are 95%. Times are "
              "the median over the agent's evaluations of its median time per move (wall "
              "clock, and process CPU time, which a busy machine inflates less)."]
    if ref is None:
        lines.append(f"`{REFERENCE}` is not in this ladder, so there is no reference column.")
    lines += ["", "Every pair's result: [ladder.md](ladder.md); ratings as CSV and JSON: "
              "[ratings.csv](ratings.csv), [ratings.json](ratings.json); chart: "
              "[ladder.png](ladder.png)."]
    if command:
        lines += ["", "Regenerate (pairs already played with the same parameters are reused "
                  "from `pairs/`):", "", "```", command, "```"]
    return "\n".join(lines) + "\n"


def command_of(doc: dict[str, Any], out: str | Path) -> str:
    """The ``scopa ladder`` command line that produces ``doc``'s ladder in ``out``."""
    parts = ["scopa ladder", *doc["specs"], f"--hands {doc['hands']}", f"--seed {doc['seed']}"]
    if doc.get("matches", doc["hands"] // 10) != doc["hands"] // 10:  # not the default
        parts.append(f"--matches {doc['matches']}")
    if doc["rules"] != "scopa":
        parts.append(f"--rules {doc['rules']}")
    if doc["players"] != 2:
        parts.append(f"--players {doc['players']}")
    parts += [f"--option {k}={v}" for k, v in (doc.get("options") or {}).items()]
    parts += ["--workers 2", f"--out {out}"]  # the results are the same for any --workers
    return " ".join(parts)


NOTES = "notes.md"  # in a ladder's folder: written by hand, appended to its README.md


def write(out: Path, doc: dict[str, Any]) -> Path:
    """``out/README.md`` from the ladder document ``doc``, followed by ``out/notes.md``
    where the folder has one (what a person wrote about the ladder, kept across
    regenerations)."""
    page = render(doc, command_of(doc, out))
    notes = out / NOTES
    if notes.is_file():
        with file_errors(notes, "read the ladder's notes from"):
            raw = notes.read_bytes()
        try:
            page += "\n" + raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"{notes} is not UTF-8 text ({e.reason} at byte {e.start}): "
                             f"the ladder's notes are appended to its README.md") from None
    return write_atomic(page.encode("utf-8"), out / "README.md", "write the leaderboard to")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m agents.evaluation.leaderboard DIR``: rewrite DIR/README.md from
    DIR/ratings.json."""
    from ..commands import Parser, run

    p = Parser(prog="python -m agents.evaluation.leaderboard",
               description="Rewrite a ladder folder's README.md from its ratings.json.")
    p.add_argument("dir", metavar="DIR", help="a folder written by scopa ladder --out")

    def command() -> int:
        args = p.parse_args(list(sys.argv[1:] if argv is None else argv))
        src = Path(args.dir) / "ratings.json"
        try:
            with file_errors(src, "read the ladder's ratings from"):
                doc = json.loads(src.read_text(encoding="utf-8"))
        except FileProblem:
            raise
        except ValueError as e:
            raise ValueError(f"{src} is not a ladder's ratings.json: {e}") from None
        print(f"wrote {write(Path(args.dir), doc)}")
        return 0

    return run("python -m agents.evaluation.leaderboard", command, top_level=argv is None)


if __name__ == "__main__":
    sys.exit(main())
