"""The play, room and watch pages on a phone and a desktop, in headless Chromium: no
sideways scrolling, your hand on the screen, cards and names instead of codes and seat
numbers, a watcher who follows a match to its end without a click, and no "connection
lost" once a match is over.

``SCOPA_SCREENSHOTS=docs/browser pytest tests/test_play_layout_browser.py`` also saves
the pages' screenshots there (docs/browser.md shows them). Without Chromium these tests
are skipped, saying so; under CI they fail instead (``tests/test_web_browser.py``)."""

from __future__ import annotations

import json
import os
import re
import time
import urllib.request
from pathlib import Path
from typing import Any

from tests.test_web_browser import (  # noqa: F401  (fixtures)
    ServeProcess,
    _create_room,
    _step,
    _token,
    _wait,
    downloads,
    driver,
    driver2,
    serve_process,
)

PHONE = (390, 844)
SMALL_PHONE = (360, 740)
DESKTOP = (1280, 860)
CODE = re.compile(r"\b(10|[1-9])[dcsb]\b")  # a card's code: 7d, 10b
JARGON = re.compile(r"\bseat \d|\bteam \d|network|bars:|nats|logit|value of the position",
                    re.IGNORECASE)

LAYOUT = """
const hand = Array.from(document.querySelectorAll(".seat .cards:not(.backs) .card"))
  .map((c) => c.getBoundingClientRect());
return {
  scroll: document.documentElement.scrollWidth, width: window.innerWidth,
  height: window.innerHeight, hand: hand.map((r) => [r.left, r.top, r.right, r.bottom]),
  text: document.body.innerText,
  error: document.getElementById("error").classList.contains("hidden") ? null
    : document.getElementById("error").textContent,
  banner: document.getElementById("banner").textContent,
  done: V ? V.done : null, moves: V ? V.moves : null,
};
"""


def _size(drv: Any, size: tuple[int, int]) -> None:
    """The viewport of a phone (a mobile one: the page's viewport tag applies) or a
    desktop window."""
    w, h = size
    drv.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": w, "height": h, "deviceScaleFactor": 1, "mobile": w < 600})


def _layout(drv: Any) -> dict[str, Any]:
    return drv.execute_script(LAYOUT)


def _fits(drv: Any, where: str) -> dict[str, Any]:
    """No sideways scrolling, every card of your hand inside the screen, no card code
    nor seat number nor model word in the page's text."""
    got = _layout(drv)
    assert got["scroll"] <= got["width"], f"{where}: {got['scroll']} px wide in {got['width']}"
    assert got["hand"], f"{where}: no hand shown"
    for left, top, right, bottom in got["hand"]:
        assert 0 <= left and right <= got["width"] and 0 <= top and bottom <= got["height"], (
            f"{where}: a card of the hand at {left:.0f},{top:.0f}-{right:.0f},{bottom:.0f} "
            f"outside {got['width']}x{got['height']}")
    _plain(got["text"], where)
    return got


def _plain(text: str, where: str) -> None:
    assert not CODE.search(text), f"{where}: a card code in the page: {CODE.search(text)}"
    assert not JARGON.search(text), f"{where}: {JARGON.search(text)[0]!r} in the page"


def _shot(drv: Any, name: str) -> None:
    folder = os.environ.get("SCOPA_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        drv.save_screenshot(str(Path(folder) / f"{name}.png"))


def _post(sp: ServeProcess, path: str, body: dict[str, Any]) -> Any:
    req = urllib.request.Request(sp.base + path, json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def _play_by_api(sp: ServeProcess, room: str, token: str) -> None:
    """The person of ``token`` plays the room to its end (the first legal move each
    time), as fast as the server answers."""
    while True:
        view = sp.api(f"/api/room/{room}?token={token}")["view"]
        if view["done"]:
            return
        if view["your_turn"]:
            _post(sp, f"/api/room/{room}/move",
                  {"token": token, "action": view["legal"][0]["id"], "n": view["moves"]})
        else:
            time.sleep(0.02)


def test_the_play_page_fits_a_phone_and_a_desktop(
        driver: Any, serve_process: ServeProcess) -> None:  # noqa: F811
    """One person against an agent, a whole match: at every turn the page fits the screen
    and speaks in cards and names; the hand's summary shows the cards left, not codes."""
    sp = serve_process
    for size, name in ((PHONE, "phone"), (SMALL_PHONE, "small-phone"), (DESKTOP, "desktop")):
        _size(driver, size)
        driver.execute_script("sessionStorage.clear()")
        driver.get(f"{sp.base}/?delay=0")
        _wait(driver, lambda d: d.execute_script(
            "return document.body.dataset.state === 'turn'"))
        _fits(driver, f"play page, {name}, first turn")
        if name != "small-phone":
            _shot(driver, f"play-{name}")
    # the desktop plays on to the end: each hand's summary and the last state fit too
    summaries = 0
    start = time.monotonic()
    while not _layout(driver)["done"] and time.monotonic() - start < 300:
        overlay = driver.execute_script(
            "return !document.getElementById('hand-over').classList.contains('hidden')")
        if overlay:
            summaries += 1
            _plain(driver.find_element("id", "hand-over").text, "a hand's summary")
        if not _step(driver):
            time.sleep(0.05)
    got = _layout(driver)
    assert got["done"] and summaries >= 1 and got["banner"].startswith("Match over: you ")
    _plain(got["text"], "play page, the match over")
    log = driver.find_elements("css selector", "#log li.mv")
    assert log and all(re.match(r"(You|greedy): \w+ of \w+ (takes|on the table)", li.text)
                       for li in log), [li.text for li in log[:4]]


def test_a_four_seat_room_on_a_phone_and_a_watcher_who_never_clicks(
        driver: Any, driver2: Any, serve_process: ServeProcess) -> None:  # noqa: F811
    """A room of scopone (you and three agents; nine cards in each hand): on a
    phone your hand is on the screen; a watcher's page follows the match by itself (hand
    summaries do not stop it) and reaches the end; the player's page says nothing of a
    lost connection once the match is over."""
    sp = serve_process
    _size(driver, PHONE)
    _size(driver2, DESKTOP)
    room = _create_room(driver, sp.base, "ann", "scopone", ["me", "greedy", "random", "greedy"],
                        target=3)
    _fits(driver, "4-seat room, phone")
    assert "your partner" in _layout(driver)["text"]
    _shot(driver, "room-4-phone")
    _size(driver, DESKTOP)
    _fits(driver, "4-seat room, desktop")
    _shot(driver, "room-4-desktop")
    _size(driver, PHONE)

    driver2.get(f"{sp.base}/room?id={room}&watch=1&delay=150")  # at a person's pace
    _wait(driver2, lambda d: d.execute_script("return V !== null"))
    token = _token(driver, room)
    _play_by_api(sp, room, token)
    final = sp.api(f"/api/room/{room}")["view"]
    _shot(driver2, "watch-desktop")

    # the watcher: no click, it reaches the last move and the end
    _wait(driver2, lambda d: (lambda g: g["done"] and g["moves"] == final["moves"])(
        _layout(d)), timeout=240)
    watched = _layout(driver2)
    assert watched["banner"].startswith("Match over: ann and random win") or \
        watched["banner"].startswith("Match over: greedy (on the right) and greedy (on the "
                                     "left) win"), watched["banner"]
    assert driver2.execute_script(
        "return document.getElementById('hand-over').classList.contains('hidden')")
    assert "Match over" in driver2.find_element("id", "last-hand").text
    _plain(watched["text"], "watch page")
    _size(driver2, PHONE)
    time.sleep(0.3)
    assert _layout(driver2)["scroll"] <= PHONE[0]
    _shot(driver2, "watch-phone")

    # the player's page (its hand summaries dismissed): it sees the end, and stays
    # without "connection lost"
    _wait(driver, lambda d: _step(d) and False or _layout(d)["done"] and not d.execute_script(
        "return QUEUE.length || draining"), timeout=120)
    for _ in range(2):  # past the browser's reconnect delay (1 s) twice over
        time.sleep(1.5)
        got = _layout(driver)
        assert got["error"] is None, got["error"]
    assert driver.execute_script("return STREAM === null")


def test_a_person_who_joins_is_announced_by_name(
        driver: Any, driver2: Any, serve_process: ServeProcess) -> None:  # noqa: F811
    """Before the second person comes, nobody's hand is framed as to move and the page
    says it waits; their arrival is said by name; the room's options have words of help."""
    sp = serve_process
    _size(driver, DESKTOP)
    driver.get(f"{sp.base}/room?delay=0")
    _wait(driver, lambda d: d.find_elements("css selector", "#options label"))
    options = driver.find_element("id", "options").get_attribute("textContent")
    assert "Primiera needs every suit" in options and "the king of coins" in options
    assert "primiera requires all suits" not in options and "_" not in options, options
    _shot(driver, "room-create-desktop")
    _size(driver, PHONE)
    assert _layout(driver)["scroll"] <= PHONE[0]
    _shot(driver, "room-create-phone")
    _size(driver, DESKTOP)
    room = _create_room(driver, sp.base, "ann", "scopa", ["me", "person"])
    assert driver.find_elements("css selector", ".seat.to-move") == []
    assert "waiting for 1 person to take a seat" in driver.find_element("id", "info").text
    invite = driver.find_element("id", "invite-1").get_attribute("value")
    assert "your opponent" in driver.find_element("id", "room-links").text
    _size(driver2, PHONE)
    driver2.get(invite + "&delay=0")
    driver2.find_element("id", "join-name").send_keys("bob")
    driver2.find_element("id", "join-room").click()
    _wait(driver, lambda d: "bob joined" in d.find_element("id", "notice").text)
    _wait(driver2, lambda d: d.execute_script("return V !== null && V.started"))
    _fits(driver2, "room, the second person, phone")
    assert room
