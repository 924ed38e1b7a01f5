"""The review of a match as a page (``scopa_web.html.replay_page``, ``GET /review/ID``)
without a browser: named by its sides and date, with the site's navigation when served
(none in the offline file of ``scopa replay --html``), a waiting page of the site while
it is computed; the history pages told whether the server reviews."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agents import make_agent
from scopa_env.play import play_match
from scopa_env.rules import make_rules
from scopa_web import asset
from scopa_web.html import SITE_NAV, match_name, replay_page
from scopa_web.server import make_server
from tests.helpers import serving
from tests.test_hints import _reviewed, hinted  # noqa: F401
from tests.test_web import Client

LINKS = ['href="/"', 'href="/room"', 'href="/history"', 'href="/players"']


def _title(page: str) -> str:
    got = re.search(r"<title>(.*?)</title>", page)
    assert got is not None
    return html.unescape(got[1])


def play_out(client: Client, seed: int) -> str:
    """A one-person match of the server played to its end (the person's first legal move
    each turn); its id."""
    status, out = client.call("POST", "/api/new", {"seed": seed})
    assert status == 201, out
    view = out["view"]
    while not view["done"]:
        status, got = client.call("POST", f"/api/game/{out['game']}/move",
                                  {"action": view["legal"][0]["id"], "n": view["moves"]})
        assert status == 200, got
        view = got["view"]
    return out["game"]


def test_a_match_is_named_by_its_sides_and_date() -> None:
    assert match_name(["ann", "greedy"]) == "ann vs greedy"
    assert match_name(["a", "b", "c", "d"], 86400 * 365) == (
        "a and c vs b and d, 1971-01-01 00:00 UTC")


def test_the_offline_page_names_players_and_file_and_has_no_site_links() -> None:
    rec = play_match(make_rules("scopa", target_score=1), 3,
                     [make_agent("greedy", seed=1), make_agent("random", seed=2)],
                     ["greedy", "random"])
    off = replay_page(rec, source="some/dir/games.jsonl", match=2)
    assert _title(off) == "Scopa replay: greedy vs random (match 2 of games.jsonl)"
    assert not any(x in off for x in LINKS)
    site = replay_page(rec, source="scopa-x.jsonl", review={"decisions": [], "seats": []},
                       site=True, when=0)
    assert _title(site) == "Scopa review: greedy vs random, 1970-01-01 00:00 UTC"
    assert SITE_NAV in site and all(x in site for x in LINKS)
    assert asset("replay.css") in site and asset("replay.css") in off  # inline: no files


def test_the_servers_review_page_is_a_page_of_the_site(hinted: tuple[Any, Client]  # noqa: F811
                                                       ) -> None:
    srv, client = hinted
    gid = play_out(client, 5)
    room = srv.lobby.get(gid).room
    names = match_name([s.name for s in room.seats], room.created)
    assert re.search(r", \d{4}-\d\d-\d\d \d\d:\d\d UTC$", names)
    status, page = client.call("GET", f"/review/{gid}")  # the first ask starts the review
    assert status == 200 and 'http-equiv="refresh"' in page
    assert _title(page).startswith(f"Reviewing {names} with ") and SITE_NAV in page
    _reviewed(client, gid)
    status, page = client.call("GET", f"/review/{gid}")
    assert status == 200 and "const REVIEW = " in page and "refresh" not in page
    assert _title(page) == f"Scopa review: {names}" and SITE_NAV in page
    for name in ("history", "players"):
        status, page = client.call("GET", f"/{name}")
        assert status == 200 and f'data-page="{name}" data-hints="on"' in page


@pytest.fixture
def plain(tmp_path: Path) -> Iterator[Client]:
    srv = make_server(make_rules("scopa", target_score=1), "greedy", port=0,
                      db=tmp_path / "s.db")
    with serving(srv):
        yield Client(srv.server_address[1])


def test_without_reviews_the_history_links_none(plain: Client) -> None:
    status, page = plain.call("GET", "/history")
    assert status == 200 and 'data-hints="off"' in page
    status, err = plain.call("GET", f"/review/{play_out(plain, 2)}")
    assert status == 403 and "--hint-agent" in err["error"]
