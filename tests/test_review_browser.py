"""The review page in headless Chromium, with the browser tests' driver
(tests/test_web_browser.py: skipped without Chromium, failing under CI). Offline
(``scopa review --out FILE.html``): it opens on the first valued decision; at each decision
every legal move in words (no card codes anywhere on the page) with a bar, the played and
the reviewer's moves marked, what the move cost in words; a line per seat in the chart of
points lost. Served (``GET /review/ID``, linked from History, which names the winners):
the site's header and links, named by its players and date, the chart beside the board on
a desktop, the page (and History) no wider than a phone's screen.

``SCOPA_REVIEW_SHOTS=1 .venv/bin/python -m pytest -q tests/test_review_browser.py -k site``
writes the screenshots of docs/browser.md (docs/review_phone.png, docs/review_desktop.png).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from agents import make_agent
from scopa_cli import main as scopa
from scopa_env.play import play_match
from scopa_env.records import append_records
from scopa_env.rules import make_rules
from scopa_web.html import match_name
from tests.test_hints import _reviewed, hinted  # noqa: F401
from tests.test_review_page import play_out
from tests.test_web_browser import _no_page_errors, _wait, downloads, driver  # noqa: F401

CODE = re.compile(r"\b(10|[1-9])[dcsb]\b")  # a card code ("7d", "10b") in a page's text
SEAT = re.compile(r"\b(seat|team) \d", re.IGNORECASE)  # a seat by number
DOCS = Path(__file__).resolve().parent.parent / "docs"
RANKS = {1: "ace", 8: "jack", 9: "knight", 10: "king"}
SUITS = {"d": "coins", "c": "cups", "s": "swords", "b": "clubs"}


def card_words(code: str) -> str:
    """A card as the pages name it: "7 of coins", "king of clubs"."""
    rank = int(code[:-1])
    return f"{RANKS.get(rank, str(rank))} of {SUITS[code[-1]]}"


def move_words(text: str, table: list[str]) -> str:
    """A move's catalogue text ("7d x 3c+4b", "1s x all": the whole ``table``) as the
    pages say it."""
    card, _, taken = text.partition(" x ")
    if not taken:
        return card_words(card) + " on the table"
    caught = table if taken == "all" else taken.split("+")
    return card_words(card) + " takes " + " + ".join(card_words(c) for c in caught)


def _about(text: str) -> float | None:
    """The number of points a sentence says ("about 1.2 points"), None if none."""
    got = re.search(r"about (\d+\.\d) points?", text)
    return None if got is None else float(got[1])


def no_card_codes(drv: Any) -> str:
    """The page's visible text, checked to hold no card code and no seat number (the
    players are named)."""
    text = drv.execute_script("return document.body.innerText")
    assert not CODE.search(text), CODE.search(text)
    assert not SEAT.search(text), SEAT.search(text)
    return text

SHOWN = """
const rows = Array.from(document.querySelectorAll("#review-moves .move-row"));
const box = document.getElementById("review");
return {
  hand: box.dataset.hand, move: box.dataset.move,
  texts: rows.map((r) => r.querySelector(".move-name").textContent),
  codes: rows.map((r) => r.dataset.text),
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
    assert driver.title == f"Scopa review: greedy vs random (match 1 of {records.name})"
    # it opens on the first decision the review values, its values shown
    first = next(d for d in decisions if any(m["value"] is not None for m in d["moves"]))
    start = driver.execute_script(f"return DATA.hands[{first['hand']}].start")
    assert driver.execute_script("return pos") == start + first["move"] + 1
    got = driver.execute_script(SHOWN)
    assert (got["hand"], got["move"]) == (str(first["hand"]), str(first["move"]))
    assert len(got["widths"]) == len(first["moves"]) and max(got["widths"]) > 0

    # every decision: one bar per legal move, drawn to its value, the marks and the loss
    for d in decisions:
        frame = driver.execute_script(f"return DATA.hands[{d['hand']}].start") + d["move"] + 1
        driver.execute_script(f"go({frame})")
        got = driver.execute_script(SHOWN)
        assert (got["hand"], got["move"]) == (str(d["hand"]), str(d["move"]))
        assert got["codes"] == [m["text"] for m in d["moves"]]
        assert got["texts"] == [move_words(m["text"], d["table"]) for m in d["moves"]]
        values = [m["value"] for m in d["moves"]]
        hi = max(values)
        lo = hi - max(1.25 * (hi - min(values)), 0.5)
        for w, v in zip(got["widths"], values, strict=True):
            assert abs(w - max(0.02, (v - lo) / (hi - lo)) * got["track"]) < 1.5
        assert max(got["widths"]) == pytest.approx(got["track"], abs=1.5)
        assert min(got["widths"]) >= 0.19 * got["track"]
        assert got["played"] == [d["played"]] and got["best"] == [d["best"]]
        assert float(got["loss"]) == d["loss"]
        loss = driver.find_element("id", "review-loss").text
        assert ("nothing lost" in loss) == (d["loss"] < 0.05)
        assert (_about(loss) is None) == (d["loss"] < 0.05)
        assert d["loss"] < 0.05 or _about(loss) == pytest.approx(d["loss"], abs=0.0501)
        text = no_card_codes(driver)
        assert "seat 0's team" not in text and "bars:" not in text
    # a move that was no decision says so; the deal too
    driver.execute_script("go(0)")
    assert "dealt" in driver.execute_script(SHOWN)["text"]
    forced = driver.execute_script(  # a move with a single choice: no decision
        "return FRAMES.findIndex((f) => f.move && !REVIEW_AT[f.hand + '/' + f.index])")
    assert forced > 0
    driver.execute_script(f"go({forced})")
    assert "only one move was possible" in driver.execute_script(SHOWN)["text"]

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
    assert rows == [[s["player"], str(s["decisions"]), str(s["agreed"]),
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
            assert "how strongly it favours" in got["text"] and "nothing lost" in got["text"]
            assert "probability" not in got["text"] and "network" not in got["text"]
        else:  # a move the search did not roll out has no bar
            for w, m in zip(got["widths"], d["moves"], strict=True):
                assert (w > 0) == (m["value"] is not None)
        if d["position_value"] is not None:  # the side's prospects, in words
            v = d["position_value"]
            said = driver.find_element("id", "review-position").text
            assert said.startswith("Before this move, ") and "seat" not in said
            assert (_about(said) is None) == (abs(v) < 0.05)
            assert abs(v) < 0.05 or _about(said) == pytest.approx(abs(v), abs=0.0501)
        no_card_codes(driver)
    _no_page_errors(driver)


def _viewport(drv: Any, width: int, height: int) -> None:
    """The window's inner size: ``width`` x ``height`` CSS pixels."""
    drv.set_window_size(width, height)
    w, h = drv.execute_script("return [window.innerWidth, window.innerHeight]")
    drv.set_window_size(2 * width - w, 2 * height - h)


LAYOUT = """
const box = (id) => document.getElementById(id).getBoundingClientRect();
const b = box("board"), c = box("review-chart-panel"), d = box("review-panel");
return {board: [b.left, b.right, b.top, b.bottom], chart: [c.left, c.right, c.top, c.bottom],
        decision: [d.left, d.right, d.top, d.bottom],
        scroll: document.documentElement.scrollWidth, inner: window.innerWidth,
        nav: Array.from(document.querySelectorAll("header nav a")).map((a) => a.href),
        bars: Array.from(document.querySelectorAll("#review-moves .bar"))
          .map((e) => e.getBoundingClientRect().width)};
"""


def test_the_review_page_of_the_site_on_a_phone_and_a_desktop(
        driver: Any, hinted: tuple[Any, Any], tmp_path: Path) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    srv, client = hinted
    gid = play_out(client, 5)
    room = srv.lobby.get(gid).room
    rec = room.record()
    review = _reviewed(client, gid)
    base = client.base
    shots = DOCS if os.environ.get("SCOPA_REVIEW_SHOTS") else tmp_path
    try:
        # Players: a name links to that player's matches, each with its review
        _viewport(driver, 1280, 900)
        driver.get(f"{base}/players")
        name = rec["players"][1]
        _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, f'tr[data-name="{name}"]'))
        driver.find_element(By.LINK_TEXT, name).click()
        _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, f'tr[data-room="{gid}"]'))
        assert driver.find_element(By.ID, "title").text == f"Matches of {name}"
        assert driver.find_element(By.CSS_SELECTOR, f'tr[data-room="{gid}"] a').text == "review"
        # History: the winner by name, a link to the review
        driver.get(f"{base}/history")
        row = _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, f'tr[data-room="{gid}"]'))[0]
        cells = [td.text for td in row.find_elements(By.TAG_NAME, "td")]
        assert cells[1].startswith(" vs ".join(rec["players"]))
        assert cells[3] == rec["players"][rec["winner"]]
        assert cells[4].split() == ["review", "download"]
        assert driver.execute_script(  # a 4-player match's winners
            "return winnerName({winner: 1, players: ['ann', 'bo', 'cy', 'di']})") == (
            "the team of bo and di")
        row.find_element(By.LINK_TEXT, "review").click()
        _wait(driver, lambda d: d.execute_script("return typeof REVIEW !== 'undefined'"))
        assert driver.current_url == f"{base}/review/{gid}"
        assert driver.title == f"Scopa review: {match_name(rec['players'], room.created)}"
        assert rec["players"][0] in driver.find_element(By.ID, "match-title").text

        first = next(d for d in review["decisions"]
                     if any(m["value"] is not None for m in d["moves"]))
        worst = max(review["decisions"], key=lambda d: d["loss"] or 0)
        for width, height in ((1280, 900), (390, 844), (360, 740)):
            _viewport(driver, width, height)
            driver.get(f"{base}/history")  # History fits too
            _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, f'tr[data-room="{gid}"]'))
            assert driver.execute_script(
                "return document.documentElement.scrollWidth <= window.innerWidth")
            driver.get(f"{base}/review/{gid}")
            got = driver.execute_script(LAYOUT)
            assert got["nav"] == [f"{base}/", f"{base}/room", f"{base}/history",
                                  f"{base}/players"]
            # the values of the first decision, at once
            assert driver.find_element(By.ID, "review").get_attribute("data-move") == str(
                first["move"])
            assert len(got["bars"]) == len(first["moves"]) and max(got["bars"]) > 0
            no_card_codes(driver)
            assert got["scroll"] <= got["inner"], got  # never sideways
            if width >= 960:  # the chart and the decision beside the board
                assert got["chart"][0] >= got["board"][1] and got["decision"][0] >= got["board"][1]
                assert got["chart"][2] < got["board"][3]
            else:  # one column: the board, the decision, the chart
                assert got["decision"][2] >= got["board"][3]
                assert got["chart"][2] >= got["decision"][3]
                assert got["chart"][1] <= width and got["board"][1] <= width
            # the costliest decision (the screenshot's): in words, still no wider
            driver.execute_script(f"go(DATA.hands[{worst['hand']}].start + {worst['move']} + 1)")
            assert "fewer than the best move" in driver.find_element(By.ID, "review-loss").text
            no_card_codes(driver)
            assert driver.execute_script(LAYOUT)["scroll"] <= got["inner"]
            if width in (1280, 390):
                driver.save_screenshot(str(shots / ("review_desktop.png" if width == 1280
                                                    else "review_phone.png")))
        _no_page_errors(driver)
    finally:
        _viewport(driver, 1280, 860)
