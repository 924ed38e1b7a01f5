"""Hints and match reviews of ``scopa serve --hint-agent`` through the API: a hint is the
reviewer's analysis of the seat's own information set (no card hidden from the seat in
it, checked as tests/test_rooms.py checks every payload), only at the seat's turn and with
its token; a finished match's review is ``scopa review`` of its record."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scopa_cli import main as scopa
from scopa_env.records import verify_record
from scopa_env.rules import make_rules
from scopa_web.server import make_server
from tests.helpers import serving
from tests.test_rooms import _check_hidden, _create
from tests.test_web import Client

SPEC = "pimc:worlds=4,depth=2"  # a cheap reviewer


def _serve(tmp_path: Path, hint_agent: str | None) -> Iterator[tuple[Any, Client]]:
    srv = make_server(make_rules("scopa", target_score=1), "greedy", port=0, seed=1,
                      db=tmp_path / "s.db", hint_agent=hint_agent)
    with serving(srv):
        yield srv, Client(srv.server_address[1])


@pytest.fixture
def hinted(tmp_path: Path) -> Iterator[tuple[Any, Client]]:
    yield from _serve(tmp_path, SPEC)


def _reviewed(client: Client, mid: str) -> dict[str, Any]:
    """The review of a finished match, asked for until it is computed."""
    for _ in range(600):
        status, out = client.call("GET", f"/api/match/{mid}/review")
        if status == 200:
            return out["review"]
        assert status == 202 and out["status"] == "reviewing", (status, out)
        assert 0 <= out["moves_reviewed"] <= out["moves"] and out["reviewer"] == SPEC
        time.sleep(0.05)
    raise AssertionError("the review took more than 30 s")


def _same_as_scopa_review(review: dict[str, Any], text: str, tmp_path: Path) -> None:
    """``review`` (the server's) equals ``scopa review`` of the record ``text``."""
    (tmp_path / "m.jsonl").write_text(text)
    out = tmp_path / "review.jsonl"
    assert scopa(["review", str(tmp_path / "m.jsonl"), "--agent", SPEC, "--seed", "0",
                  "--out", str(out)]) == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    head = {k: v for k, v in lines[0].items() if k not in ("type", "source", "seconds",
                                                          "match", "decisions")}
    assert {k: v for k, v in review.items() if k in head} == head
    assert len(review["decisions"]) == lines[0]["decisions"]
    strip = ("type", "match")
    assert review["decisions"] == [{k: v for k, v in x.items() if k not in strip}
                                   for x in lines if x["type"] == "decision"]
    assert review["seats"] == [{k: v for k, v in x.items() if k not in strip}
                               for x in lines if x["type"] == "seat"]
    assert len(review["decisions"]) > 5


def test_hints_in_a_room_hold_no_hidden_card_and_the_review_is_scopa_reviews(
        hinted, tmp_path: Path) -> None:
    _, client = hinted
    out = _create(client, rules="scopa", target_score=1, seats=[None, None], seat=0)
    rid, tokens = out["room"], {0: out["token"]}
    status, joined = client.call("POST", f"/api/room/{rid}/join",
                                 {"invite": out["invites"]["1"]})
    assert status == 200
    tokens[1] = joined["token"]
    status, got = client.call("GET", f"/api/match/{rid}/review")
    assert status == 409 and "not over" in got["error"]
    payloads: list[tuple[int | None, int, Any]] = []
    hints: dict[int, dict[str, Any]] = {}
    for _ in range(200):
        status, got = client.call("GET", f"/api/room/{rid}?token={tokens[0]}")
        view = got["view"]
        if view["done"]:
            break
        seat = view["to_move"]
        other = 1 - seat
        status, err = client.call("POST", f"/api/room/{rid}/hint", {"token": tokens[other]})
        assert status == 409 and "your turn" in err["error"], err
        assert f"it is {view['names'][seat]}'s, not yours" in err["error"], err
        status, err = client.call("POST", f"/api/room/{rid}/hint", {"token": "forged"})
        assert status == 403 and "token" in err["error"]
        status, mine = client.call("GET", f"/api/room/{rid}?token={tokens[seat]}")
        legal = [m["id"] for m in mine["view"]["legal"]]
        status, hint = client.call("POST", f"/api/room/{rid}/hint", {"token": tokens[seat]})
        assert status == 200, hint
        payloads.append((seat, view["moves"], hint))
        assert hint["seat"] == seat and hint["moves_played"] == view["moves"]
        assert [m["id"] for m in hint["moves"]] == legal and 0 <= hint["best"] < len(legal)
        assert hint["played"] is None and hint["reviewer"] == SPEC and hint["how"] in (
            "pimc", "forced")
        assert hint["cards"] == mine["view"]["hand"] and hint["table"] == mine["view"]["table"]
        hints[view["moves"]] = hint
        # the person plays the reviewer's move half the time, its last legal one else
        pick = hint["moves"][hint["best"]]["id"] if view["moves"] % 2 else legal[-1]
        status, _ = client.call("POST", f"/api/room/{rid}/move",
                                {"token": tokens[seat], "action": pick, "n": view["moves"]})
        assert status == 200
    else:
        pytest.fail("the match did not end in 200 moves")
    status, text = client.call("GET", f"/api/room/{rid}/record")
    rec = json.loads(text)
    verify_record(rec)
    assert _check_hidden(rec, payloads) == len(hints) > 5
    status, err = client.call("POST", f"/api/room/{rid}/hint", {"token": tokens[0]})
    assert status == 409 and "over" in err["error"]

    review = _reviewed(client, rid)
    _same_as_scopa_review(review, text, tmp_path)
    # each hint is the review's analysis of that decision (the same seeding)
    n = 0
    flat = [(h, m) for h, hand in enumerate(rec["hands"]) for m in range(len(hand["moves"]))]
    for d in review["decisions"]:
        hint = hints[flat.index((d["hand"], d["move"]))]
        assert (hint["moves"], hint["best"]) == (d["moves"], d["best"])
        n += 1
    assert n > 5
    assert _reviewed(client, rid) == review  # kept: asked again, the same
    status, page = client.call("GET", f"/review/{rid}")
    assert status == 200 and "const REVIEW = " in page


def test_a_one_person_game_gets_hints_and_its_review(hinted, tmp_path: Path) -> None:
    _, client = hinted
    status, out = client.call("POST", "/api/new", {"seed": 5})
    gid = out["game"]
    payloads: list[tuple[int | None, int, Any]] = []
    view = out["view"]
    while not view["done"]:
        status, hint = client.call("POST", f"/api/game/{gid}/hint")
        assert status == 200, hint
        payloads.append((view["seat"], view["moves"], hint))
        assert [m["id"] for m in hint["moves"]] == [m["id"] for m in view["legal"]]
        status, got = client.call("POST", f"/api/game/{gid}/move",
                                  {"action": hint["moves"][hint["best"]]["id"],
                                   "n": view["moves"]})
        assert status == 200, got
        view = got["view"]
    status, err = client.call("POST", f"/api/game/{gid}/hint")
    assert status == 409 and "over" in err["error"]
    status, err = client.call("POST", "/api/game/nosuchgame/hint")
    assert status == 404
    status, text = client.call("GET", f"/api/game/{gid}/record")
    rec = json.loads(text)
    assert _check_hidden(rec, payloads) == len(payloads) > 3
    review = _reviewed(client, gid)
    _same_as_scopa_review(review, text, tmp_path)
    mine = next(s for s in review["seats"] if s["seat"] == view["seat"])
    assert mine["agreed"] == mine["decisions"] and mine["total_loss"] == 0  # its own moves


def test_one_hint_at_a_time_per_seat(hinted, monkeypatch) -> None:
    srv, client = hinted
    reviews = srv.lobby.reviews
    entered, release = threading.Event(), threading.Event()
    analyse = reviews.reviewer.analyse

    def slow(info: Any, played: Any = None) -> Any:
        entered.set()
        release.wait(30)
        return analyse(info, played)

    monkeypatch.setattr(reviews.reviewer, "analyse", slow)
    status, out = client.call("POST", "/api/new", {"seed": 9})
    gid = out["game"]
    first: list[Any] = []
    thread = threading.Thread(target=lambda: first.append(
        client.call("POST", f"/api/game/{gid}/hint")))
    thread.start()
    assert entered.wait(30)
    status, err = client.call("POST", f"/api/game/{gid}/hint")
    assert status == 429 and "already" in err["error"]
    release.set()
    thread.join(30)
    assert first[0][0] == 200
    status, again = client.call("POST", f"/api/game/{gid}/hint")
    assert status == 200 and again == first[0][1]  # kept: not computed twice


def test_hints_off_and_a_reviewer_that_cannot_review(tmp_path: Path) -> None:
    for _srv, client in _serve(tmp_path, None):
        status, out = client.call("POST", "/api/new", {})
        status, err = client.call("POST", f"/api/game/{out['game']}/hint")
        assert status == 403 and "--hint-agent" in err["error"]
        status, page = client.call("GET", "/")
        assert 'data-hints="off"' in page
    with pytest.raises(ValueError, match="--hint-agent greedy: .*cannot review"):
        make_server(make_rules("scopa"), "greedy", port=0, hint_agent="greedy")
