"""The replay page and the play server in a real browser: headless Chromium (Debian's
``chromium`` and ``chromium-driver``) driven through selenium. What each page shows is
checked against the game record (the replay) and against the engine and the downloaded
record (a whole match against ``greedy``); each test saves a screenshot in its tmp_path.

Without Chromium these tests are skipped, saying so; under CI (``CI=true``, where
``.ci/run`` installs it) they fail instead."""

from __future__ import annotations

import os
import shutil
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
from tests.helpers import serving

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


def _chromium(profile: Path, downloads: Path) -> Any:
    """A headless Chromium with its own profile (its own localStorage) and download folder."""
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
    for flag in FLAGS + [f"--user-data-dir={profile}"]:
        opts.add_argument(flag)
    opts.add_experimental_option("prefs", {"download.default_directory": str(downloads),
                                           "download.prompt_for_download": False})
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(options=opts, service=Service(CHROMEDRIVER))
    drv.set_page_load_timeout(30)
    drv.execute_cdp_cmd("Page.setDownloadBehavior",
                        {"behavior": "allow", "downloadPath": str(downloads)})
    return drv


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory, downloads: Path) -> Iterator[Any]:
    """One headless Chromium for the module, with a fresh profile and a download folder."""
    drv = _chromium(tmp_path_factory.mktemp("chromium-profile"), downloads)
    try:
        yield drv
    finally:
        drv.quit()


@pytest.fixture(scope="module")
def driver2(tmp_path_factory: pytest.TempPathFactory, driver: Any) -> Iterator[Any]:
    """A second browser (another person: its own profile and localStorage)."""
    drv = _chromium(tmp_path_factory.mktemp("chromium-profile-2"),
                    tmp_path_factory.mktemp("downloads-2"))
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
    assert banner == (f"Match over: {rec['players'][team]} wins "
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
    with serving(srv):
        yield f"http://127.0.0.1:{srv.server_address[1]}", srv.lobby


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
        game = lobby.get(snap["game"]).room
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
        assert snap["log"] == [e["text"] for e in game.events]
        if game.events and game.events[-1]["seat"] == 1:  # greedy's move is shown before our turn
            assert (snap["mover"], snap["move"]) == ("1", game.events[-1]["text"])
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
        if len(game.events) > 12 and not shot.exists():
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
        _wait(driver, lambda d: len(lobby.get(second).room.events) >= 2 and _ready(d))
        driver.refresh()  # the tab keeps its match
        snap = _wait(driver, _ready)
        assert snap["game"] == second
        assert snap["log"] == [e["text"] for e in lobby.get(second).room.events]
    finally:
        driver.close()
        driver.switch_to.window(driver.window_handles[0])
    driver.refresh()
    snap = _wait(driver, _ready)
    assert snap["game"] == first
    assert snap["log"] == [e["text"] for e in lobby.get(first).room.events]
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
    game = lobby.get(snap["game"]).room
    assert game.state.seed == BIG_SEED
    assert "seed" not in driver.find_element(By.ID, "info").text
    assert str(BIG_SEED) not in driver.page_source
    while not game.state.done:  # the page waits for its person: nothing else plays
        game.play(game.id, game.state.legal_actions()[0], 0.0, len(game.events))
    driver.refresh()  # the tab's match, now over
    _wait(driver, lambda d: _ready(d) and _ready(d)["state"] == "over")
    assert f"seed {BIG_SEED} ·" in driver.find_element(By.ID, "info").text
    _no_page_errors(driver)


# -- rooms: people against each other, with agents, watched, refreshed, restarted -------------
class ServeProcess:
    """A real ``scopa serve`` (its own process) on a fixed port and database file, which
    can be killed (SIGKILL) and started again on both."""

    def __init__(self, db: Path):
        self.db, self.port, self.proc = db, 0, None
        self.start()

    def start(self) -> None:
        import re
        import subprocess
        import sys

        root = Path(__file__).resolve().parent.parent
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "scopa_cli", "serve", "--port", str(self.port), "--db",
             str(self.db), "--agents", "greedy", "random"], cwd=root,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline()
        m = re.search(r"open http://127\.0\.0\.1:(\d+)/", line)
        assert m, line
        self.port = int(m.group(1))

    def kill(self) -> None:
        import signal

        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)
        self.proc.stdout.close()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def api(self, path: str) -> Any:
        import json
        import urllib.request

        with urllib.request.urlopen(self.base + path, timeout=30) as r:
            return json.loads(r.read())


@pytest.fixture
def serve_process(tmp_path: Path) -> Iterator[ServeProcess]:
    sp = ServeProcess(tmp_path / "rooms.db")
    try:
        yield sp
    finally:
        sp.kill()


ROOM_SNAPSHOT = """
const codes = (sel) => Array.from(document.querySelectorAll(sel))
  .map((c) => c.classList.contains("back") ? "back" : c.dataset.card);
const overlay = !document.getElementById("hand-over").classList.contains("hidden");
const n = V ? V.players : 0;
return {
  state: document.body.dataset.state, room: document.body.dataset.game || null, overlay,
  seat: V ? V.seat : null, moves: V ? V.moves : null, done: V ? V.done : null,
  started: V ? V.started : null,
  hands: Array.from({length: n}, (_, s) => codes("#hand-" + s + " .card")),
  playable: codes(".card.playable"), table: codes("#table .card"),
  log: Array.from(document.querySelectorAll("#log li.mv")).map((li) => li.dataset.text),
  error: document.getElementById("error").classList.contains("hidden") ? null
    : document.getElementById("error").textContent,
  banner: document.getElementById("banner").textContent,
};
"""


def _snap(drv: Any) -> dict[str, Any]:
    return drv.execute_script(ROOM_SNAPSHOT)


def _create_room(drv: Any, base: str, name: str, rules: str, seats: list[str],
                 target: int | None = None) -> str:
    """Fill in the form of /room; returns the room's id."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    drv.get(f"{base}/room?delay=0")
    _wait(drv, lambda d: d.find_elements(By.CSS_SELECTOR, "#rules option"))
    drv.find_element(By.ID, "name").send_keys(name)
    Select(drv.find_element(By.ID, "rules")).select_by_value(rules)
    if len(seats) == 4:
        _wait(drv, lambda d: d.find_element(By.ID, "players").get_attribute("value") == "4")
    if target is not None:
        box = drv.find_element(By.ID, "target")
        box.clear()
        box.send_keys(str(target))
    for s, choice in enumerate(seats):
        Select(drv.find_element(By.ID, f"seat-{s}-choice")).select_by_value(choice)
    drv.find_element(By.ID, "create-room").click()
    _wait(drv, lambda d: d.execute_script("return V !== null"))
    return _snap(drv)["room"]


def _join(drv: Any, link: str, name: str) -> None:
    from selenium.webdriver.common.by import By

    drv.get(link + "&delay=0")
    drv.find_element(By.ID, "join-name").send_keys(name)
    drv.find_element(By.ID, "join-room").click()
    _wait(drv, lambda d: d.execute_script("return V !== null && V.seat !== null"))


def _token(drv: Any, room: str) -> str:
    import json
    return json.loads(drv.execute_script(f"return localStorage.getItem('scopa-room:{room}')"))[
        "token"]


def _step(drv: Any) -> bool:
    """One thing a person does when the page waits for them: dismiss a hand's score, or
    play a card of the hand (its first way). False when there was nothing to do."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By

    snap = _snap(drv)
    try:
        if snap["overlay"]:
            drv.find_element(By.ID, "continue").click()
            return True
        if snap["state"] != "turn" or not snap["playable"]:
            return False
        drv.find_element(By.CSS_SELECTOR, ".card.playable").click()
        for b in drv.find_elements(By.CSS_SELECTOR, "#choices button.choice")[:1]:
            b.click()
    except WebDriverException:  # the page moved on meanwhile: look again
        return False
    return True


def _check_seat_page(sp: ServeProcess, drv: Any, room: str, token: str) -> None:
    """The page shows this seat's hand, the others face down, the table: as the API says."""
    snap = _wait(drv, lambda d: (lambda s: s if s["state"] in ("turn", "wait") and not s[
        "overlay"] else False)(_snap(d)))
    view = sp.api(f"/api/room/{room}?token={token}")["view"]
    if view["moves"] != snap["moves"] or view["to_move"] is None:
        return  # the match moved on between the two looks
    for s in range(view["players"]):
        want = view["hand"] if s == view["seat"] else ["back"] * view["hand_sizes"][s]
        assert sorted(snap["hands"][s]) == sorted(want), s
    assert sorted(snap["table"]) == sorted(view["table"])


def _play_to_the_end(drivers: list[Any], limit: float = 600,
                     during: Any = None) -> None:
    start = time.monotonic()
    while time.monotonic() - start < limit:
        acted = [_step(d) for d in drivers]
        snaps = [_snap(d) for d in drivers]
        if all(s["done"] and not s["overlay"] for s in snaps):
            return
        if during is not None:
            during(snaps)
        if not any(acted):
            time.sleep(0.05)
    pytest.fail(f"the room did not end in {limit:.0f} s")


def test_two_browsers_play_a_room_watched_refreshed_and_restarted(
        driver: Any, driver2: Any, serve_process: ServeProcess, tmp_path: Path,
        downloads: Path) -> None:
    from selenium.webdriver.common.by import By

    sp = serve_process
    room = _create_room(driver, sp.base, "ann", "scopa", ["me", "person"])
    invite = driver.find_element(By.ID, "invite-1").get_attribute("value")
    watch = driver.find_element(By.ID, "watch-link").get_attribute("value")
    assert invite.startswith(f"{sp.base}/room?id={room}&invite=")
    assert _snap(driver)["state"] == "wait" and not _snap(driver)["started"]
    _join(driver2, invite, "bob")
    tokens = {0: _token(driver, room), 1: _token(driver2, room)}
    _wait(driver, lambda d: _snap(d)["started"])
    assert driver.find_elements(By.ID, "invite-1") == []  # the seat is taken: no link

    # a watcher: a second tab of the first browser, opened with the watch link
    first_tab = driver.current_window_handle
    driver.switch_to.new_window("tab")
    driver.get(watch + "&delay=0")
    _wait(driver, lambda d: d.execute_script("return V !== null"))
    snap = _snap(driver)
    assert snap["seat"] is None and all(set(h) <= {"back"} for h in snap["hands"])
    watcher_tab = driver.current_window_handle
    driver.switch_to.window(first_tab)

    events = {"refreshed": False, "restarted": False}

    def during(snaps: list[dict[str, Any]]) -> None:
        moves = max(s["moves"] or 0 for s in snaps)
        if moves >= 6 and not events["refreshed"]:  # bob closes and reopens his tab
            events["refreshed"] = True
            before = _snap(driver2)["log"]
            driver2.refresh()
            snap = _wait(driver2, lambda d: (lambda s: s if s["seat"] == 1 else False)(
                _snap(d)))
            assert snap["log"][:len(before)] == before and snap["room"] == room
            _check_seat_page(sp, driver2, room, tokens[1])
            _check_seat_page(sp, driver, room, tokens[0])
        if moves >= 14 and not events["restarted"]:  # the server is killed and restarted
            events["restarted"] = True
            stored = sp.api(f"/api/room/{room}?token={tokens[0]}")["log"]
            sp.kill()
            sp.start()
            assert sp.api(f"/api/room/{room}?token={tokens[0]}")["log"] == stored
            for d in (driver, driver2):  # each page reconnects by itself
                _wait(d, lambda d: _snap(d)["error"] is None and _snap(d)["state"] in (
                    "turn", "wait", "over") or _snap(d)["overlay"], timeout=30)

    _play_to_the_end([driver, driver2], during=during)
    assert events == {"refreshed": True, "restarted": True}
    final = sp.api(f"/api/room/{room}")["view"]
    rec_text = _download_record(driver, downloads, room)
    import json
    rec = json.loads(rec_text)
    assert rec["players"] == ["ann", "bob"] and final["done"]
    assert [_snap(d)["log"] for d in (driver, driver2)] == [[action_text(a) for a in
                                                              _record_actions(rec)]] * 2
    mine = rec["winner"] == 0
    assert _snap(driver)["banner"].startswith(f"Match over: you {'win' if mine else 'lose'} ")
    assert _snap(driver2)["banner"].startswith(f"Match over: you {'lose' if mine else 'win'} ")

    # the watcher saw it all (its hand scores do not stop it), and the same end
    driver.switch_to.window(watcher_tab)
    _play_to_the_end([driver], limit=120)
    snap = _snap(driver)
    assert snap["log"] == _snap(driver2)["log"]
    assert snap["banner"].startswith(f"Match over: {rec['players'][rec['winner']]} wins ")
    driver.save_screenshot(str(tmp_path / "room-watcher.png"))
    driver.close()
    driver.switch_to.window(first_tab)

    # the database's pages list the match and both people
    driver.get(f"{sp.base}/history")
    _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, f'tr[data-room="{room}"]'))
    driver.get(f"{sp.base}/players")
    rows = _wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "tr[data-name]"))
    assert {r.get_attribute("data-name") for r in rows} >= {"ann", "bob"}
    errors = [e for e in driver.get_log("browser") + driver2.get_log("browser")
              if e["level"] == "SEVERE" and "ERR_CONNECTION_REFUSED" not in e["message"]
              and "/events" not in e["message"]]
    assert not errors, errors  # only the restart's refused connections


def _download_record(drv: Any, downloads: Path, room: str) -> str:
    from selenium.webdriver.common.by import By

    link = drv.find_element(By.ID, "download")
    assert link.is_displayed()
    link.click()
    path = downloads / f"scopa-{room}.jsonl"
    _wait(drv, lambda d: path.exists() and path.stat().st_size > 0
          and not list(downloads.glob("*.crdownload")))
    assert scopa(["verify", str(path)]) == 0
    return path.read_text()


def test_a_four_seat_room_with_two_people_and_two_agents(
        driver: Any, driver2: Any, serve_process: ServeProcess, downloads: Path,
        tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    sp = serve_process
    room = _create_room(driver, sp.base, "cara", "scopone_scientifico",
                        ["me", "greedy", "person", "random"], target=3)
    invite = driver.find_element(By.ID, "invite-2").get_attribute("value")
    _join(driver2, invite, "dan")
    snap = _wait(driver2, lambda d: (lambda s: s if s["started"] else False)(_snap(d)))
    assert snap["seat"] == 2 and len(snap["hands"]) == 4
    _check_seat_page(sp, driver2, room, _token(driver2, room))
    shot = tmp_path / "room-4.png"
    _play_to_the_end([driver, driver2],
                     during=lambda s: shot.exists() or driver.save_screenshot(str(shot)))
    import json
    rec = json.loads(_download_record(driver, downloads, room))
    assert rec["players"] == ["cara", "greedy", "dan", "random"]
    assert rec["rules"]["name"] == "scopone_scientifico" and rec["rules"]["target_score"] == 3
    assert {m["seat"] for h in rec["hands"] for m in h["moves"]} == {0, 1, 2, 3}
    _no_page_errors(driver2)


def test_an_idle_seat_is_given_to_an_agent_from_the_other_browser(
        driver: Any, driver2: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from selenium.webdriver.common.by import By

    from scopa_web import rooms

    monkeypatch.setattr(rooms, "IDLE_LIMIT", 2.0)
    srv = make_server(make_rules("scopa"), "greedy", port=0, db=tmp_path / "idle.db")
    with serving(srv):
        base = f"http://127.0.0.1:{srv.server_address[1]}"
        room = _create_room(driver, base, "ann", "scopa", ["me", "person"])
        _join(driver2, driver.find_element(By.ID, "invite-1").get_attribute("value"), "bob")
        _wait(driver, lambda d: _snap(d)["state"] == "turn")  # seat 0 leads, and waits
        button = _wait(driver2, lambda d: d.find_elements(By.ID, "hand-over-0"), timeout=30)
        assert not driver.find_elements(By.ID, "hand-over-1")  # nobody gives their own
        button[0].click()
        snap = _wait(driver2, lambda d: (lambda s: s if s["state"] == "turn" else False)(
            _snap(d)))  # greedy played seat 0's move: bob's turn
        assert snap["log"] and driver2.execute_script("return V.names[0]") == "greedy"
        snap = _wait(driver, lambda d: (lambda s: s if s["seat"] is None and s["error"]
                                        else False)(_snap(d)))
        assert "given to an agent" in snap["error"]  # ann's page watches now
        assert all(set(h) <= {"back"} for h in snap["hands"])
        table = srv.lobby.get(room)
        assert table.room.seats[0].agent == "greedy" and table.room.seats[0].token is None
        _no_page_errors(driver2)
