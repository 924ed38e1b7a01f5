"""The review page (``scopa review --out FILE.html``) in headless Chromium, with the
browser tests' driver (tests/test_web_browser.py: skipped without Chromium, failing under
CI): at each decision a bar per legal move, the played and the reviewer's moves marked,
the loss; a line per seat in the chart of points lost; the replay's stepping unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agents import make_agent
from scopa_cli import main as scopa
from scopa_env.play import play_match
from scopa_env.records import append_records
from scopa_env.rules import make_rules
from tests.test_web_browser import _no_page_errors, downloads, driver  # noqa: F401

SHOWN = """
const rows = Array.from(document.querySelectorAll("#review-moves .move-row"));
const box = document.getElementById("review");
return {
  hand: box.dataset.hand, move: box.dataset.move,
  texts: rows.map((r) => r.querySelector(".move-name").textContent),
  widths: rows.map((r) => r.querySelector(".bar").getBoundingClientRect().width),
  track: rows.length ? rows[0].querySelector(".track").getBoundingClientRect().width : 0,
  played: rows.filter((r) => r.classList.contains("played")).map((r) => Number(r.dataset.index)),
  best: rows.filter((r) => r.classList.contains("best")).map((r) => Number(r.dataset.index)),
  loss: document.getElementById("review-loss") ? document.getElementById("review-loss").dataset.loss
                                               : null,
  text: box.textContent,
};
"""


def test_review_page_in_the_browser(driver: Any, tmp_path: Path) -> None:  # noqa: F811
    rec = play_match(make_rules("scopa"), 7, [make_agent("greedy"), make_agent("random", seed=3)],
                     ["greedy", "random"])
    records = tmp_path / "games.jsonl"
    append_records(records, [rec])
    page, lines = tmp_path / "review.html", tmp_path / "review.jsonl"
    spec = "pimc:worlds=4,depth=3"
    assert scopa(["review", str(records), "--agent", spec, "--out", str(page)]) == 0
    assert scopa(["review", str(records), "--agent", spec, "--out", str(lines)]) == 0
    review = [json.loads(x) for x in lines.read_text().splitlines()]
    decisions = [d for d in review if d["type"] == "decision"]
    driver.get(page.as_uri())
    assert driver.execute_script("return REVIEW.decisions.length") == len(decisions)

    # every decision: one bar per legal move, drawn to its value, the marks and the loss
    for d in decisions:
        frame = driver.execute_script(f"return DATA.hands[{d['hand']}].start") + d["move"] + 1
        driver.execute_script(f"go({frame})")
        got = driver.execute_script(SHOWN)
        assert (got["hand"], got["move"]) == (str(d["hand"]), str(d["move"]))
        assert got["texts"] == [m["text"] for m in d["moves"]]
        values = [m["value"] for m in d["moves"]]
        hi = max(values)
        lo = hi - max(1.25 * (hi - min(values)), 0.5)
        for w, v in zip(got["widths"], values, strict=True):
            assert abs(w - max(0.02, (v - lo) / (hi - lo)) * got["track"]) < 1.5
        assert max(got["widths"]) == pytest.approx(got["track"], abs=1.5)
        assert min(got["widths"]) >= 0.19 * got["track"]
        assert got["played"] == [d["played"]] and got["best"] == [d["best"]]
        assert float(got["loss"]) == d["loss"]
    # a move that was no decision says so; the deal too
    driver.execute_script("go(0)")
    assert "dealt" in driver.execute_script(SHOWN)["text"]

    # the chart: a line per seat ending at the seat's total loss, the seats' table
    seats = [s for s in review if s["type"] == "seat"]
    lines_drawn = driver.execute_script("""
      return Array.from(document.querySelectorAll('#review-chart polyline.seat-line'))
        .map((l) => [Number(l.dataset.seat), Number(l.dataset.total),
                     l.getBoundingClientRect().width, l.points.length]);""")
    assert [x[0] for x in lines_drawn] == [0, 1]
    for (seat, total, width, points), s in zip(lines_drawn, seats, strict=True):
        assert seat == s["seat"] and abs(total - s["total_loss"]) < 1e-3 and width > 0
        assert points == 2 * s["decisions"] + 3
    rows = driver.execute_script("""
      return Array.from(document.querySelectorAll('#review-seats tr[data-seat]'))
        .map((r) => Array.from(r.children).map((td) => td.textContent.trim()));""")
    assert rows == [[str(s["seat"]), s["player"], str(s["decisions"]), str(s["agreed"]),
                     f"{s['mean_loss']:.3f}", f"{s['total_loss']:.2f}"] for s in seats]
    # clicking the chart jumps to a decision; the marker follows
    driver.execute_script("go(0)")
    before = driver.execute_script("return document.getElementById('review-marker')"
                                   ".getAttribute('x1')")
    from selenium.webdriver.common.action_chains import ActionChains
    chart = driver.find_element("id", "review-chart")
    driver.execute_script("arguments[0].scrollIntoView()", chart)
    ActionChains(driver).move_to_element_with_offset(chart, chart.size["width"] // 4, 0).click(
        ).perform()
    pos = driver.execute_script("return pos")
    assert pos > 0 and driver.execute_script(SHOWN)["texts"]
    assert driver.execute_script("return document.getElementById('review-marker')"
                                 ".getAttribute('x1')") != before
    driver.save_screenshot(str(tmp_path / "review.png"))
    _no_page_errors(driver)


def test_the_networks_calls_are_drawn_as_probabilities(driver: Any, tmp_path: Path  # noqa: F811
                                                        ) -> None:
    rec = play_match(make_rules("scopa"), 9, [make_agent("expert"), make_agent("greedy")],
                     ["expert", "greedy"])
    records, page = tmp_path / "games.jsonl", tmp_path / "review.html"
    append_records(records, [rec])
    assert scopa(["review", str(records), "--agent", "pretrained:search=on,worlds=8",
                  "--out", str(page)]) == 0
    driver.get(page.as_uri())
    decisions = driver.execute_script("return REVIEW.decisions")
    kinds = {d["how"] for d in decisions}
    assert {"network", "search", "exact"} <= kinds
    for d in decisions:
        if d["how"] not in ("network", "search"):
            continue
        frame = driver.execute_script(f"return DATA.hands[{d['hand']}].start") + d["move"] + 1
        driver.execute_script(f"go({frame})")
        got = driver.execute_script(SHOWN)
        if d["how"] == "network":  # the network's call, played: its probabilities
            for w, m in zip(got["widths"], d["moves"], strict=True):
                assert abs(w - max(0.02, m["prob"]) * got["track"]) < 1.5
            assert "probability" in got["text"] and "nothing lost" in got["text"]
        else:  # a move the search did not roll out has no bar
            for w, m in zip(got["widths"], d["moves"], strict=True):
                assert (w > 0) == (m["value"] is not None)
    _no_page_errors(driver)
