"""The replay page and the play server in a real browser: headless Chromium (Debian's
``chromium`` and ``chromium-driver``) driven through selenium. What each page shows is
checked against the game record (the replay) and against the engine and the downloaded
record (a whole match against ``greedy``); each test saves a screenshot in its tmp_path.

Without Chromium these tests are skipped, saying so; under CI (``CI=true``, where
``.ci/run`` installs it) they fail instead."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agents import make_agent
from scopa_cli import main as scopa
from scopa_env.cards import CODES, card_id, cards_of
from scopa_env.moves import action_move, action_text
from scopa_env.play import play_match
from scopa_env.records import append_records, read_records
from scopa_env.rules import make_rules
from scopa_web.server import make_server

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1280,860"]


def _missing() -> list[str]:
    missing = []
    if CHROMIUM is None:
        missing.append("chromium")
    if CHROMEDRIVER is None:
        missing.append("chromedriver")
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("selenium")
    return missing


@pytest.fixture(scope="module")
def downloads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("downloads")


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory, downloads: Path) -> Iterator[Any]:
    """One headless Chromium for the module, with a fresh profile and a download folder."""
    missing = _missing()
    if missing:
        reason = (f"browser tests need headless Chromium: {', '.join(missing)} not installed "
                  "(apt-get install chromium chromium-driver; pip install -e '.[web]')")
        if IN_CI:
            pytest.fail(reason + "; .ci/run installs them, so CI must run these tests")
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ.setdefault("SE_AVOID_STATS", "true")  # selenium: no usage statistics
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in FLAGS + [f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"]:
        opts.add_argument(flag)
    opts.add_experimental_option("prefs", {"download.default_directory": str(downloads),
                                           "download.prompt_for_download": False})
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(options=opts, service=Service(CHROMEDRIVER))
    drv.set_page_load_timeout(30)
    drv.execute_cdp_cmd("Page.setDownloadBehavior",
                        {"behavior": "allow", "downloadPath": str(downloads)})
    try:
        yield drv
    finally:
        drv.quit()


def _no_page_errors(drv: Any) -> None:
    errors = [e for e in drv.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors


def _wait(drv: Any, cond: Any, timeout: float = 20) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait
    return WebDriverWait(drv, timeout, poll_frequency=0.05).until(cond)


def _sorted(codes: list[str]) -> list[str]:
    return sorted(codes, key=card_id)


# -- the replay page ---------------------------------------------------------------------------
SNAPSHOT = """
const codes = (sel) => Array.from(document.querySelectorAll(sel))
  .map((c) => c.classList.contains("back") ? "back" : c.dataset.card);
const P = DATA.rules.players;
const rows = {};
for (const tr of document.querySelectorAll("#breakdown tr[data-key]"))
  rows[tr.dataset.key] = Array.from(tr.children).slice(1).map((td) => Number(td.textContent));
const move = document.getElementById("move");
return {
  pos: Number(document.body.dataset.pos),
  table: codes("#table .card"),
  hands: Array.from({length: P}, (_, s) => codes("#hand-" + s + " .card")),
  piles: [codes("#pile-0 .card"), codes("#pile-1 .card")],
  seat: move.dataset.seat === "" ? null : Number(move.dataset.seat),
  played: codes("#move .card.played"),
  captured: codes("#move .card.captured"),
  scopa: document.querySelector("#move .scopa-flag") !== null,
  score: document.getElementById("match-score").dataset.score,
  points: rows,
};
"""


def _deal(hands: list[list[str]], deck: list[str], pos: int, first: int, size: int) -> int:
    """Deal one round from ``deck[pos:]``, one card at a time from seat ``first``."""
    p = len(hands)
    for i in range(p * size):
        hands[(first + i) % p].append(deck[pos + i])
    return pos + p * size


def _shown(table: list[str], hands: list[list[str]], piles: list[list[str]],
           move: dict[str, Any] | None, score: list[int],
           points: dict[str, list[int]]) -> dict[str, Any]:
    return {"table": _sorted(table), "hands": [_sorted(x) for x in hands],
            "piles": [_sorted(x) for x in piles], "seat": move["seat"] if move else None,
            "played": [move["card"]] if move else [], "captured": move["capture"] if move else [],
            "scopa": bool(move and move["scopa"]), "score": f"{score[0]}-{score[1]}",
            "points": points}


def _expected_frames(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """What the page must show at each position, from the record alone: deal each hand's
    deck as game-record.md says, then apply each recorded move to the cards in view."""
    r = rec["rules"]
    p, size, table_size = r["players"], r["hand_size"], r["table_size"]
    keys = ["carte", "denari", "settebello", "primiera", "scope", "total"]
    score = [0, 0]
    for h in rec["hands"]:
        deck, first = h["deck"], (h["dealer"] + 1) % p
        hands: list[list[str]] = [[] for _ in range(p)]
        piles: list[list[str]] = [[], []]
        pos = _deal(hands, deck, 0, first, size)
        table = deck[pos:pos + table_size]
        pos += table_size
        yield _shown(table, hands, piles, None, score, {})
        for j, m in enumerate(h["moves"]):
            hands[m["seat"]].remove(m["card"])
            if m["capture"]:
                table = [c for c in table if c not in m["capture"]]
                piles[m["seat"] % 2] += m["capture"] + [m["card"]]
            else:
                table = table + [m["card"]]
            points: dict[str, list[int]] = {}
            if j == len(h["moves"]) - 1:
                if h["last_capture_team"] is not None:
                    piles[h["last_capture_team"]] += table
                table = []
                points = {k: [e["points"][k] for e in h["score"]] for k in keys}
                score = [s + e["points"]["total"] for s, e in zip(score, h["score"], strict=True)]
            elif not any(hands):
                pos = _deal(hands, deck, pos, first, size)
            yield _shown(table, hands, piles, m, score, points)


def test_replay_page_in_the_browser(driver: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    rec = play_match(make_rules("scopa"), 5, [make_agent("greedy", seed=1),
                                              make_agent("random", seed=2)], ["greedy", "random"])
    records = tmp_path / "games.jsonl"
    append_records(records, [rec])
    page = tmp_path / "replay.html"
    assert scopa(["replay", str(records), "--html", str(page)]) == 0
    driver.get(page.as_uri())
    expected = list(_expected_frames(rec))
    assert driver.execute_script("return FRAMES.length") == len(expected)

    # step through every position with the forward button
    hand_ends = []
    for k, exp in enumerate(expected):
        if k:
            driver.find_element(By.ID, "next").click()
        got = driver.execute_script(SNAPSHOT)
        assert got.pop("pos") == k
        assert got == exp, f"position {k}"
        if exp["points"]:
            hand_ends.append(k)
    assert driver.find_element(By.ID, "next").get_attribute("disabled")
    banner = driver.find_element(By.ID, "banner").text
    team = rec["winner"]
    assert banner == (f"Match over: Seat {team} ({rec['players'][team]}) wins "
                      f"{rec['match_score'][0]}–{rec['match_score'][1]}")
    rows = driver.find_elements(By.CSS_SELECTOR, "#hands tr[data-hand]")
    assert [[int(td.text) for td in row.find_elements(By.TAG_NAME, "td")[1:3]]
            for row in rows] == [[e["points"]["total"] for e in h["score"]]
                                 for h in rec["hands"]]

    # back one move, then jump to hand 3 and to a hand's end
    driver.find_element(By.ID, "prev").click()
    assert driver.execute_script(SNAPSHOT)["table"] == expected[-2]["table"]
    Select(driver.find_element(By.ID, "hand-select")).select_by_value("2")
    got = driver.execute_script(SNAPSHOT)
    assert got.pop("pos") == hand_ends[1] + 1 and got == expected[hand_ends[1] + 1]
    # the hand summary (finished hands only) jumps to a hand's start
    driver.find_element(By.CSS_SELECTOR, '#hands tr[data-hand="0"]').click()
    assert driver.execute_script(SNAPSHOT)["pos"] == 0

    # one seat's view: the other hand is face down, the same number of cards
    Select(driver.find_element(By.ID, "view-select")).select_by_value("1")
    got = driver.execute_script(SNAPSHOT)
    assert got["hands"][0] == ["back"] * len(expected[0]["hands"][0])
    assert got["hands"][1] == expected[0]["hands"][1]
    Select(driver.find_element(By.ID, "view-select")).select_by_value("all")
    assert driver.execute_script(SNAPSHOT)["hands"] == expected[0]["hands"]

    # autoplay moves on by itself and pauses
    Select(driver.find_element(By.ID, "speed")).select_by_value("300")
    driver.find_element(By.ID, "play").click()
    _wait(driver, lambda d: int(d.find_element(By.TAG_NAME, "body").get_attribute("data-pos"))
          >= 3)
    driver.find_element(By.ID, "play").click()
    paused = driver.execute_script(SNAPSHOT)["pos"]
    time.sleep(0.8)
    got = driver.execute_script(SNAPSHOT)
    assert got.pop("pos") == paused and got == expected[paused]

    # a capture, for the screenshot
    k = next(i for i, e in enumerate(expected) if len(e["captured"]) >= 2)
    driver.execute_script(f"go({k})")
    shot = tmp_path / "replay.png"
    assert driver.save_screenshot(str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    _no_page_errors(driver)


# -- the play server ---------------------------------------------------------------------------
@pytest.fixture
def server() -> Iterator[tuple[str, Any]]:
    srv = make_server(make_rules("scopa"), "greedy", port=0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}", srv.RequestHandlerClass.lobby
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(timeout=10)


PLAY_SNAPSHOT = """
const codes = (sel) => Array.from(document.querySelectorAll(sel))
  .map((c) => c.classList.contains("back") ? "back" : c.dataset.card);
const overlay = !document.getElementById("hand-over").classList.contains("hidden");
const rows = {};
for (const tr of document.querySelectorAll("#hand-over-body tr[data-key]"))
  rows[tr.dataset.key] = Array.from(tr.children).slice(1).map((td) => Number(td.textContent));
return {
  state: document.body.dataset.state, game: document.body.dataset.game || null,
  overlay, points: rows,
  hand: codes("#hand-0 .card"), playable: codes("#hand-0 .card.playable"),
  other: codes("#hand-1 .card"), table: codes("#table .card"),
  move: document.getElementById("move").dataset.text || null,
  mover: document.getElementById("move").dataset.seat || null,
  log: Array.from(document.querySelectorAll("#log li.mv")).map((li) => li.dataset.text),
  score: document.getElementById("match-score").dataset.score,
};
"""


def _ready(drv: Any) -> dict[str, Any] | bool:
    snap = drv.execute_script(PLAY_SNAPSHOT)
    return snap if snap["overlay"] or snap["state"] in ("turn", "over") else False


def test_play_a_whole_match_against_greedy(driver: Any, server: tuple[str, Any],
                                           tmp_path: Path, downloads: Path) -> None:
    from selenium.webdriver.common.by import By

    base, lobby = server
    driver.get(f"{base}/?seed=7&delay=0")
    choices_seen = hands_seen = 0
    shot = tmp_path / "play.png"
    for _ in range(300):
        snap = _wait(driver, _ready)
        game = lobby.get(snap["game"])
        if snap["overlay"]:  # the hand's score, before the next hand is played
            hands_seen += 1
            score = game.recorder.record["hands"][hands_seen - 1]["score"]
            for key in ("carte", "denari", "settebello", "primiera", "scope", "total"):
                assert snap["points"][key] == [e["points"][key] for e in score]
            driver.find_element(By.ID, "continue").click()
            _wait(driver, lambda d: not d.find_element(By.ID, "hand-over").is_displayed())
            continue
        if snap["state"] == "over":
            break
        s = game.state
        assert s.to_move == 0 and not s.done
        assert snap["hand"] == [CODES[c] for c in cards_of(s.hands[0])]
        assert snap["other"] == ["back"] * s.hands[1].bit_count()
        assert snap["table"] == [CODES[c] for c in cards_of(s.table)]
        assert snap["log"] == [e["text"] for e in game.log]
        if game.log and game.log[-1]["seat"] == 1:  # greedy's move is shown before our turn
            assert (snap["mover"], snap["move"]) == ("1", game.log[-1]["text"])
        legal: dict[str, list[str]] = {}
        for a in s.legal_actions():
            legal.setdefault(CODES[action_move(a).card], []).append(action_text(a))
        assert sorted(snap["playable"], key=card_id) == sorted(legal, key=card_id)
        card = max(legal, key=lambda c: len(legal[c]))
        driver.find_element(By.CSS_SELECTOR, f'#hand-0 .card[data-card="{card}"]').click()
        if len(legal[card]) > 1:  # capture choices: exactly the legal ways to play it
            choices_seen += 1
            buttons = driver.find_elements(By.CSS_SELECTOR, "#choices button.choice")
            assert sorted(b.get_attribute("data-text") for b in buttons) == sorted(legal[card])
            if choices_seen == 1:
                assert driver.save_screenshot(str(tmp_path / "choices.png"))
            buttons[-1].click()
        if len(game.log) > 12 and not shot.exists():
            _wait(driver, _ready)
            assert driver.save_screenshot(str(shot))
    else:
        pytest.fail("the match did not end in 300 turns")

    rec = game.recorder.record
    assert hands_seen == len(rec["hands"]) and choices_seen > 0
    assert snap["score"] == f"{rec['match_score'][0]}-{rec['match_score'][1]}"
    mine = rec["match_score"][0] > rec["match_score"][1]
    assert driver.find_element(By.ID, "banner").text.startswith(
        f"Match over: you {'win' if mine else 'lose'} ")
    assert snap["log"] == [action_text(a) for a in _record_actions(rec)]

    # download the record from the page and verify it
    link = driver.find_element(By.ID, "download")
    assert link.is_displayed()
    link.click()
    path = _wait(driver, lambda d: next((p for p in downloads.glob("scopa-*.jsonl")), False))
    _wait(driver, lambda d: path.stat().st_size > 0 and not list(downloads.glob("*.crdownload")))
    assert path.name == f"scopa-{game.id}.jsonl"
    assert scopa(["verify", str(path)]) == 0
    (got,) = read_records(path)
    assert got == rec and got["players"] == ["human", "greedy"]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    driver.save_screenshot(str(tmp_path / "play-over.png"))
    _no_page_errors(driver)


def _record_actions(rec: dict[str, Any]) -> Iterator[int]:
    from scopa_env.records import replay
    return (st.action for st in replay(rec))


def test_two_tabs_play_two_matches(driver: Any, server: tuple[str, Any]) -> None:
    from selenium.webdriver.common.by import By

    base, lobby = server
    driver.get(f"{base}/?delay=0")
    first = _wait(driver, _ready)["game"]
    driver.switch_to.new_window("tab")
    try:
        driver.get(f"{base}/?delay=0")
        snap = _wait(driver, _ready)
        second = snap["game"]
        assert second != first
        driver.find_element(By.CSS_SELECTOR, "#hand-0 .card.playable").click()
        for b in driver.find_elements(By.CSS_SELECTOR, "#choices button.choice")[:1]:
            b.click()
        _wait(driver, lambda d: len(lobby.get(second).log) >= 2 and _ready(d))
        driver.refresh()  # the tab keeps its match
        snap = _wait(driver, _ready)
        assert snap["game"] == second
        assert snap["log"] == [e["text"] for e in lobby.get(second).log]
    finally:
        driver.close()
        driver.switch_to.window(driver.window_handles[0])
    driver.refresh()
    snap = _wait(driver, _ready)
    assert snap["game"] == first and snap["log"] == [e["text"] for e in lobby.get(first).log]
    _no_page_errors(driver)


BIG_SEED = 3429124248386577504  # past 2**53: a JavaScript number would show ...577400


def test_seeds_past_2_to_the_53_are_shown_exactly(driver: Any, server: tuple[str, Any],
                                                  tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    rec = play_match(make_rules("scopa"), BIG_SEED, [make_agent("greedy", seed=1),
                                                     make_agent("random", seed=2)],
                     ["greedy", "random"])
    records = tmp_path / "big.jsonl"
    append_records(records, [rec])
    page = tmp_path / "big.html"
    assert scopa(["replay", str(records), "--html", str(page)]) == 0
    driver.get(page.as_uri())
    seed = next(read_records(records))["seed"]
    assert seed == BIG_SEED
    assert f"seed {seed} ·" in driver.find_element(By.ID, "info").text
    assert driver.execute_script("return DATA.seed") == str(seed)

    # the play page: ?seed= reaches the server whole; the page shows it, whole, only when
    # the match is over (the seed fixes every deck: a player could compute the hidden cards)
    base, lobby = server
    driver.get(f"{base}/?delay=0")
    driver.execute_script("sessionStorage.clear()")
    driver.get(f"{base}/?seed={BIG_SEED}&delay=0")
    snap = _wait(driver, _ready)
    game = lobby.get(snap["game"])
    assert game.state.seed == BIG_SEED
    assert "seed" not in driver.find_element(By.ID, "info").text
    assert str(BIG_SEED) not in driver.page_source
    with game.lock:
        while not game.state.done:
            game.play(game.state.legal_actions()[0])
    driver.refresh()  # the tab's match, now over
    _wait(driver, lambda d: _ready(d) and _ready(d)["state"] == "over")
    assert f"seed {BIG_SEED} ·" in driver.find_element(By.ID, "info").text
    _no_page_errors(driver)
