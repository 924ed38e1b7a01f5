"""The readable leaderboard (``agents.evaluation.leaderboard``): ranks with their uncertainty, the
margin against pimc, time per move, and no ranking on too few hands."""

from __future__ import annotations

import pytest

from agents.evaluation.ladder import main as ladder_main
from agents.evaluation.leaderboard import main as leaderboard_main
from agents.evaluation.leaderboard import rank_ranges, render


def _rating(agent: str, pts: float, lo: float, hi: float) -> dict:
    return {"agent": agent, "points_per_hand": pts, "points_ci95": [lo, hi], "elo": 100 * pts,
            "elo_ci95": [100 * lo, 100 * hi], "matches_won": 0, "matches_played": 0}


def _timing(ms: float) -> dict:
    return {"median_ms": ms, "cpu_median_ms": ms / 2}


def _doc(hands: int) -> dict:
    ratings = [_rating("random", 0, 0, 0), _rating("greedy", 1.6, 1.5, 1.7),
               _rating("expert", 1.72, 1.65, 1.8), _rating("pimc:worlds=12,depth=5", 2.4, 2.3, 2.5)]
    pairs = [{"a": "greedy", "b": "pimc:worlds=12,depth=5", "margin": -0.8, "ci95": [-0.9, -0.7]},
             {"a": "pimc:worlds=12,depth=5", "b": "expert", "margin": 0.5, "ci95": [0.4, 0.6]}]
    evals = [{"a": "greedy", "b": "pimc:worlds=12,depth=5",
              "timing": {"a": _timing(0.01), "b": _timing(8.0)}}]
    return {"rules": "scopa", "players": 2, "options": {}, "hands": hands, "seed": 3,
            "matches": hands // 10, "target_score": 11, "anchor": "random",
            "specs": ["random", "greedy", "expert", "pimc"], "ratings": ratings, "pairs": pairs,
            "evaluations": evals}


def test_overlapping_intervals_share_a_rank_range():
    doc = _doc(2000)
    by_rating = sorted(doc["ratings"], key=lambda r: -r["points_per_hand"])
    assert rank_ranges(by_rating) == [(1, 1), (2, 3), (2, 3), (4, 4)]
    page = render(doc, "scopa ladder ...")
    rows = {line.split(" | ")[1]: line for line in page.splitlines() if line.startswith("| ")}
    assert rows["`expert`"].startswith("| 2-3 |") and rows["`greedy`"].startswith("| 2-3 |")
    assert rows["`expert`"].endswith("| `greedy` |")  # tied with
    assert rows["`pimc:worlds=12,depth=5`"].startswith("| 1 |") and "reference" in page
    # the margin against pimc, from either side of the pair, with its interval
    assert "| -0.800 | [-0.900, -0.700] |" in rows["`greedy`"]
    assert "| -0.500 | [-0.600, -0.400] |" in rows["`expert`"]
    assert "| 0.010 | 0.005 |" in rows["`greedy`"]
    assert "| 8.0 | 4.0 |" in rows["`pimc:worlds=12,depth=5`"]
    assert "not settled" not in page and "scopa ladder ..." in page


def test_few_hands_say_the_order_is_not_settled():
    page = render(_doc(200))
    assert "The order is not settled" in page and "only 200 paired deals" in page
    assert all(line.startswith("| - |") for line in page.splitlines()
               if line.startswith("| ") and "`" in line.split(" | ")[1])


def test_a_tiny_ladder_writes_its_leaderboard(tmp_path, capsys):
    out = tmp_path / "ladder"
    assert ladder_main(["random", "greedy", "pimc:worlds=2,depth=1", "--hands", "8",
                        "--out", str(out)]) == 0
    page = (out / "README.md").read_text()
    assert "The order is not settled" in page and "`pimc` is not in this ladder" in page
    assert f"--hands 8 --seed 0 --workers 2 --out {out}" in page
    assert "README.md" in capsys.readouterr().out
    (out / "README.md").unlink()
    assert leaderboard_main([str(out)]) == 0 and (out / "README.md").read_text() == page
    assert leaderboard_main([str(tmp_path)]) == 2  # no ratings.json there: one line
    assert "No such file" in capsys.readouterr().err


def test_a_ladder_without_matches_has_no_elo(tmp_path):
    """``--matches 0``: ratings by points per hand only; no Elo column, no infinite
    interval, empty Elo cells in the CSV."""
    import json

    out = tmp_path / "ladder"
    assert ladder_main(["random", "greedy", "expert", "--hands", "6", "--matches", "0",
                        "--workers", "1", "--out", str(out)]) == 0
    doc = json.loads((out / "ratings.json").read_text())
    assert [r["elo"] for r in doc["ratings"]] == [None, None, None]
    points = [r["points_per_hand"] for r in doc["ratings"]]
    assert points == sorted(points, reverse=True)
    page = (out / "README.md").read_text()
    assert "Elo" not in page and "inf," not in page  # not settled on 6 hands: no ranks
    csv_rows = (out / "ratings.csv").read_text().splitlines()[1:]
    assert all(row.split(",")[2:5] == ["", "", ""] for row in csv_rows)
    assert "inf," not in (out / "ladder.md").read_text()
    assert (out / "ladder.png").stat().st_size > 0


def test_a_settled_ladder_without_matches_says_so():
    doc = _doc(2000)
    doc["matches"] = 0
    for r in doc["ratings"]:
        r["elo"] = r["elo_ci95"] = None
    page = render(doc)
    assert "2,000 paired deals (each deal in both seatings) and no matches (so no Elo)" in page
    header = next(line for line in page.splitlines() if line.startswith("| rank"))
    assert "Elo" not in header and "vs `pimc:worlds=12,depth=5`" in header
    rows = [line for line in page.splitlines() if line.startswith("| 1 |")]
    assert rows and rows[0].count("|") == header.count("|")


def test_notes_follow_the_generated_page_and_the_command_keeps_matches(tmp_path):
    from agents.evaluation.leaderboard import command_of, write

    doc = _doc(2000)
    doc["matches"] = 0
    (tmp_path / "notes.md").write_text("## The recipe's learning curve\n\nby hand\n")
    page = write(tmp_path, doc).read_text()
    assert page.endswith("## The recipe's learning curve\n\nby hand\n")
    assert "--hands 2000 --seed 3 --matches 0 --workers 2" in page
    doc["matches"] = 200  # the default (hands // 10) is not spelled out
    assert "--matches" not in command_of(doc, tmp_path)


def test_notes_that_are_not_text_are_refused_in_one_line(tmp_path, capsys):
    from agents.evaluation.leaderboard import write

    (tmp_path / "ratings.json").write_text(__import__("json").dumps(_doc(2000)))
    (tmp_path / "notes.md").write_bytes(b"## notes\n\xff\xfe\n")
    assert leaderboard_main([str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "notes.md is not UTF-8 text" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "README.md").exists()
    with pytest.raises(ValueError, match="invalid start byte at byte 9"):
        write(tmp_path, _doc(2000))
