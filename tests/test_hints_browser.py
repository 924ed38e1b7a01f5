"""The play page's hint and the review of a finished match in headless Chromium, with the
browser tests' driver (tests/test_web_browser.py: skipped without Chromium, failing under
CI): at the person's turn "Hint" draws a bar per legal move, each move in words (no card
code in the hint), the reviewer's move marked; a single legal move says so, no bars; once
the match is over "Review the match" opens the server's review of it, a page of the site."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scopa_env.cards import CODES, cards_of
from scopa_env.moves import action_text
from scopa_env.rules import make_rules
from scopa_web.server import make_server
from tests.helpers import serving
from tests.test_review_browser import CODE, move_words, no_card_codes
from tests.test_web_browser import (  # noqa: F401
    _no_page_errors,
    _ready,
    _wait,
    downloads,
    driver,
)

SPEC = "pimc:worlds=4,depth=2"  # a cheap reviewer

HINT = """
const rows = Array.from(document.querySelectorAll("#hint .move-row"));
return {
  moves: document.getElementById("hint").dataset.moves,
  texts: rows.map((r) => r.querySelector(".move-name").textContent),
  codes: rows.map((r) => r.dataset.text),
  text: document.getElementById("hint").innerText,
  widths: rows.map((r) => r.querySelector(".bar").getBoundingClientRect().width),
  best: rows.filter((r) => r.classList.contains("best")).map((r) => Number(r.dataset.index)),
  played: rows.filter((r) => r.classList.contains("played")).length,
};
"""


@pytest.fixture
def hinted() -> Iterator[tuple[str, Any]]:
    srv = make_server(make_rules("scopa", target_score=1), "greedy", port=0,
                      hint_agent=SPEC)
    with serving(srv):
        yield f"http://127.0.0.1:{srv.server_address[1]}", srv.lobby


def test_a_hint_at_the_persons_turn_and_the_review_of_the_match(
        driver: Any, hinted: tuple[str, Any], tmp_path: Path) -> None:  # noqa: F811
    from selenium.webdriver.common.by import By

    base, lobby = hinted
    driver.get(f"{base}/?seed=11&delay=0")
    hints = 0
    for _ in range(300):
        snap = _wait(driver, _ready)
        if snap["overlay"]:
            driver.find_element(By.ID, "continue").click()
            _wait(driver, lambda d: not d.find_element(By.ID, "hand-over").is_displayed())
            continue
        if snap["state"] == "over":
            break
        game = lobby.get(snap["game"]).room
        legal = [action_text(a) for a in game.state.legal_actions()]
        if hints < 2 and len(legal) > 1:  # ask a hint: a bar per legal move
            driver.find_element(By.ID, "hint-button").click()
            got = _wait(driver, lambda d: (lambda h: h if h["texts"] else False)(
                d.execute_script(HINT)))
            hints += 1
            assert got["moves"] == str(len(game.events))
            table = [CODES[c] for c in cards_of(game.state.table)]
            assert got["codes"] == legal and len(got["best"]) == 1 and got["played"] == 0
            assert got["texts"] == [move_words(t, table) for t in legal]
            assert not CODE.search(got["text"]) and "You have" in got["text"]
            assert "bars:" not in got["text"] and "seat" not in got["text"]
            assert all(w > 0 for w in got["widths"])
            assert max(got["widths"]) == got["widths"][got["best"][0]]
            if hints == 1:
                driver.save_screenshot(str(tmp_path / "hint.png"))
            best = driver.find_element(By.CSS_SELECTOR, "#hint .move-row.best").get_attribute(
                "data-text")
        else:
            best = legal[-1]
        card = best.split(" ")[0]
        driver.find_element(By.CSS_SELECTOR, f'#hand-0 .card[data-card="{card}"]').click()
        buttons = driver.find_elements(By.CSS_SELECTOR, "#choices button.choice")
        if buttons:
            next(b for b in buttons if b.get_attribute("data-text") == best).click()
    else:
        pytest.fail("the match did not end in 300 turns")
    assert hints == 2
    assert not driver.find_element(By.ID, "hint-button").is_displayed()

    # a single legal move (an ace taking the whole table): said in words, no bars
    only = driver.execute_script("""
      const box = document.createElement("div");
      reviewDecision(box, {seat: 0, moves: [{id: 0, text: "1s x all", value: 1.2,
        prob: null}], table: ["3c", "4b"], best: 0, played: null, loss: null,
        how: "search", deep: false, position_value: -1.25}, "ann");
      return [box.innerText || box.textContent, box.querySelectorAll(".move-row").length];""")
    assert only[1] == 0 and only[0].startswith(
        "Only one move is possible: ace of swords takes 3 of cups + 4 of clubs.")
    assert "Your side is expected to score about 1.3 points fewer than the other side" in (
        only[0])

    # the match is over: its review, a page of the site
    review_link = driver.find_element(By.ID, "review-button")
    assert review_link.is_displayed()
    assert review_link.get_attribute("href") == f"{base}/review/{snap['game']}"
    review_link.click()
    _wait(driver, lambda d: d.execute_script(
        "return typeof REVIEW !== 'undefined' && !!document.getElementById('review-chart')"),
        timeout=60)
    review = driver.execute_script("return REVIEW")
    assert review["reviewer"] == SPEC and review["decisions"]
    assert [a.text for a in driver.find_elements(By.CSS_SELECTOR, "header nav a")] == [
        "Play an agent", "Play with others", "History", "Players"]
    lines = driver.execute_script(
        "return document.querySelectorAll('#review-chart polyline.seat-line').length")
    assert lines == 2
    d = review["decisions"][-1]
    driver.execute_script(f"go(DATA.hands[{d['hand']}].start + {d['move']} + 1)")
    rows = driver.find_elements(By.CSS_SELECTOR, "#review-moves .move-row")
    assert [r.find_element(By.CLASS_NAME, "move-name").text for r in rows] == [
        move_words(m["text"], d["table"]) for m in d["moves"]]
    no_card_codes(driver)
    driver.save_screenshot(str(tmp_path / "review-of-play.png"))
    _no_page_errors(driver)
