"""Rooms of ``scopa serve`` through the API: people and agents at one table, each seat and
a watcher following it live (server-sent events), every payload checked for cards the
seat may not see, and every bad request refused with a clear 4xx message."""

from __future__ import annotations

import http.client
import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scopa_env.cards import CODES, cards_of
from scopa_env.game import GameState, apply, hidden_cards, new_match
from scopa_env.records import replay, verify_record
from scopa_env.rules import make_rules
from scopa_web import live, lobby, rooms
from scopa_web.checks import MAX_BODY
from scopa_web.server import make_server
from tests.helpers import serving
from tests.test_web import Client

RANDOM_FIELDS = ("room", "game", "token", "invites", "invite")  # random text, not cards


def _codes_in(data: Any) -> set[str]:
    if isinstance(data, dict):
        data = {k: v for k, v in data.items() if k not in RANDOM_FIELDS}
    return set(re.findall(r"\b(?:10|[1-9])[dcsb]\b", json.dumps(data)))


def _mask_codes(mask: int) -> set[str]:
    return {CODES[c] for c in cards_of(mask)}


def _watcher_hidden(s: GameState) -> set[str]:
    return _mask_codes(hidden_cards(s, 0) | s.hands[0])  # every hand and the deck


def _hidden(s: GameState, seat: int | None) -> set[str]:
    return _watcher_hidden(s) if seat is None else _mask_codes(hidden_cards(s, seat))


def positions(rec: dict[str, Any]) -> tuple[GameState, list[GameState], list[GameState]]:
    """The match's first position, and after each move: the position shown for it (a
    hand's last move: scored, not redealt) and the position the room is in then."""
    start = new_match(make_rules(**rec["rules"]), seed=rec["seed"])
    shown, now = [], []
    for st in replay(rec):
        a = st.state_before.copy()
        apply(a, st.action, check=False, deal_next=False)
        shown.append(a)
    s = start.copy()
    for st in replay(rec):
        apply(s, st.action, check=False)
        now.append(s.copy())
    return start, shown, now


class Stream:
    """A live connection (``GET /api/room/ID/events``) read in a thread: its messages."""

    def __init__(self, port: int, rid: str, token: str | None = None, since: int = 0):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        query = f"?since={since}" + (f"&token={token}" if token else "")
        self.conn.request("GET", f"/api/room/{rid}/events{query}")
        self.resp = self.conn.getresponse()
        self.messages: list[tuple[str, Any]] = []
        self.error = None if self.resp.status == 200 else json.loads(self.resp.read())["error"]
        self.thread = threading.Thread(target=self._read, daemon=True)
        if self.error is None:
            self.thread.start()

    def _read(self) -> None:
        kind, data = "message", []
        try:
            lines = list(self._lines())
        except (AttributeError, ValueError, OSError):  # closed by the test meanwhile
            return
        for line in lines:
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
            elif not line and data:
                self.messages.append((kind, json.loads("\n".join(data))))
                kind, data = "message", []

    def _lines(self) -> Iterator[str]:
        for raw in self.resp:
            yield raw.decode().rstrip("\n")

    def close(self) -> list[tuple[str, Any]]:
        if self.error is None:
            self.thread.join(timeout=60)
        self.conn.close()
        return self.messages


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Any, Client]]:
    srv = make_server(make_rules("scopa"), "greedy", port=0, seed=1, db=tmp_path / "s.db")
    with serving(srv):
        yield srv, Client(srv.server_address[1])


def _create(client: Client, **body: Any) -> dict[str, Any]:
    status, out = client.call("POST", "/api/rooms", body)
    assert status == 201, out
    return out


def _play_room(client: Client, rid: str, tokens: dict[int, str],
               payloads: list[tuple[int | None, int, Any]]) -> dict[str, Any]:
    """Play the room to its end, each person choosing a legal move from its own view;
    every answer is kept in ``payloads`` as (seat, moves played so far, payload)."""
    for _ in range(400):
        status, got = client.call("GET", f"/api/room/{rid}")
        assert status == 200
        payloads.append((None, got["view"]["moves"], got["view"]))
        view = got["view"]
        if view["done"]:
            return view
        seat = view["to_move"]
        status, mine = client.call("GET", f"/api/room/{rid}?token={tokens[seat]}")
        assert status == 200 and mine["view"]["your_turn"]
        payloads.append((seat, mine["view"]["moves"], mine["view"]))
        move = mine["view"]["legal"][-1]
        status, out = client.call("POST", f"/api/room/{rid}/move",
                                  {"token": tokens[seat], "action": move["id"],
                                   "n": mine["view"]["moves"]})
        assert status == 200, out
        payloads.append((seat, out["view"]["moves"], out["view"]))
    raise AssertionError("the room did not end in 400 moves")


def _check_hidden(rec: dict[str, Any], payloads: list[tuple[int | None, int, Any]]) -> int:
    """No payload holds a card hidden from its reader in the position it was made in."""
    start, _, now = positions(rec)
    for seat, moves, payload in payloads:
        s = start if moves == 0 else now[moves - 1]
        if s.done:
            continue  # the end: the record (every deck) is everyone's
        leak = _codes_in(payload) & _hidden(s, seat)
        assert not leak, (seat, moves, leak)
    return len(payloads)


def _check_stream(rec: dict[str, Any], seat: int | None,
                  messages: list[tuple[str, Any]]) -> None:
    start, shown, now = positions(rec)
    moves = [m for kind, m in messages if kind == "move"]
    assert [m["event"]["n"] for m in moves] == list(range(len(shown)))
    flat = [m for h in rec["hands"] for m in h["moves"]]
    assert [(m["event"]["seat"], m["event"]["card"], m["event"]["capture"]) for m in moves] == [
        (m["seat"], m["card"], m["capture"]) for m in flat]
    assert messages[-1] == ("end", {})  # said before the stream closes: the match is over
    messages = messages[:-1]
    for kind, msg in messages:
        if kind == "move":
            n = msg["event"]["n"]
            assert msg["view"]["moves"] == n + 1
            s = shown[n]
        else:
            assert kind == "room"
            s = start if msg["moves"] == 0 else now[msg["moves"] - 1]
        if not s.done:
            leak = _codes_in(msg) & _hidden(s, seat)
            assert not leak, (seat, kind, leak)
        if seat is not None and kind == "move" and not s.done:
            assert msg["view"]["hand"] == [CODES[c] for c in cards_of(s.hands[seat])]
    assert messages[-1][0] == "room" and messages[-1][1]["done"]


def test_two_people_play_a_room_to_the_end_seen_live_by_both_and_a_watcher(
        served, tmp_path: Path) -> None:
    srv, client = served
    out = _create(client, rules="scopa", seats=[None, None], seat=0, name="ann")
    rid, tokens = out["room"], {0: out["token"]}
    assert len(rid) >= 16 and out["seat"] == 0 and set(out["invites"]) == {"1"}
    assert out["view"]["hand"] and not out["view"]["started"] and "seed" not in out["view"]
    watcher = Stream(srv.server_address[1], rid)
    first = Stream(srv.server_address[1], rid, tokens[0])
    status, joined = client.call("POST", f"/api/room/{rid}/join",
                                 {"invite": out["invites"]["1"], "name": "bob"})
    assert status == 200 and joined["seat"] == 1 and joined["view"]["started"]
    tokens[1] = joined["token"]
    second = Stream(srv.server_address[1], rid, tokens[1])
    payloads: list[tuple[int | None, int, Any]] = [(0, 0, out), (1, 0, joined)]
    end = _play_room(client, rid, tokens, payloads)
    assert end["done"] and end["seed"]  # the seed comes with the end

    status, text = client.call("GET", f"/api/room/{rid}/record")
    rec = json.loads(text)
    verify_record(rec)
    assert rec["players"] == ["ann", "bob"] and str(rec["seed"]) == end["seed"]
    assert _check_hidden(rec, payloads) > 40
    for seat, stream in ((None, watcher), (0, first), (1, second)):
        _check_stream(rec, seat, stream.close())
    (tmp_path / "room.jsonl").write_text(text)
    from scopa_cli import main as scopa
    assert scopa(["verify", str(tmp_path / "room.jsonl")]) == 0

    # the database: the history, each player's record, the download
    _, hist = client.call("GET", "/api/history")
    assert [m["room"] for m in hist["matches"]] == [rid]
    assert hist["matches"][0]["players"] == ["ann", "bob"]
    for name, expected in (("bob", [rid]), ("nobody", []), ("", [])):  # one player's matches
        _, hist = client.call("GET", "/api/history?player=" + name)
        assert [m["room"] for m in hist["matches"]] == expected
    status, refused = client.call("GET", "/api/history?player=" + "x" * 201)
    assert status == 400 and "player must be a name" in refused["error"]
    _, players = client.call("GET", "/api/players")
    by_name = {p["name"]: p for p in players["players"]}
    win = rec["winner"]
    assert by_name[["ann", "bob"][win]]["wins"] == 1 and by_name[["ann", "bob"][1 - win]][
        "wins"] == 0
    points = [sum(h["score"][t]["points"]["total"] for h in rec["hands"]) for t in (0, 1)]
    assert by_name["ann"]["points_per_hand"] == pytest.approx(points[0] / len(rec["hands"]))
    status, again = client.call("GET", f"/api/match/{rid}/record")
    assert status == 200 and json.loads(again) == rec
    for path in ("/history", "/players", "/room"):
        status, page = client.call("GET", path)
        assert status == 200 and "<!DOCTYPE html>" in page


def test_refusals_in_a_room_still_filling_count_the_players_not_seat_numbers(served) -> None:
    """A seat link used twice while other seats are open says how many more can join,
    and a move before the start how many players it waits for (never a seat number)."""
    srv, client = served
    out = _create(client, rules="scopone_scientifico", seats=[None, None, None, "greedy"],
                  seat=0, name="cara")
    rid = out["room"]
    status, _ = client.call("POST", f"/api/room/{rid}/join", {"invite": out["invites"]["1"]})
    assert status == 200
    status, err = client.call("POST", f"/api/room/{rid}/join", {"invite": out["invites"]["1"]})
    assert status == 409 and err["error"] == (
        "this seat is already taken; 1 more can join (ask for their links)")
    first = srv.lobby.get(rid).room.state.legal_actions()[0]
    status, err = client.call("POST", f"/api/room/{rid}/move",
                              {"token": out["token"], "action": first, "n": 0})
    assert status == 409 and "waiting for 1 more player to join" in err["error"]


def test_four_seats_two_people_two_agents(served) -> None:
    srv, client = served
    out = _create(client, rules="scopone_scientifico", seats=[None, "greedy", None, "random"],
                  seat=2, name="cara", target_score=5)
    rid = out["room"]
    assert out["view"]["rules"]["target_score"] == 5 and out["view"]["seat"] == 2
    assert set(out["invites"]) == {"0"}
    status, joined = client.call("POST", f"/api/room/{rid}/join",
                                 {"invite": out["invites"]["0"], "name": "dan"})
    assert status == 200
    tokens = {2: out["token"], 0: joined["token"]}
    watcher = Stream(srv.server_address[1], rid)
    payloads: list[tuple[int | None, int, Any]] = []
    _play_room(client, rid, tokens, payloads)
    _, text = client.call("GET", f"/api/room/{rid}/record")
    rec = json.loads(text)
    verify_record(rec)
    assert rec["players"] == ["dan", "greedy", "cara", "random"]
    assert {m["seat"] for h in rec["hands"] for m in h["moves"]} == {0, 1, 2, 3}
    _check_hidden(rec, payloads)
    _check_stream(rec, None, watcher.close())


def test_bad_requests_get_clear_4xx_messages(served, monkeypatch) -> None:
    srv, client = served
    out = _create(client, seats=[None, None], seat=0, name="ann")
    rid, mine, invite = out["room"], out["token"], out["invites"]["1"]
    move = f"/api/room/{rid}/move"
    assert out["view"]["hand"] and not out["view"]["legal"]  # no move before the start
    first = srv.lobby.get(rid).room.state.legal_actions()[0]
    status, err = client.call("POST", move, {"token": mine, "action": first, "n": 0})
    assert status == 409 and "has not started: waiting for 1 more player to join" in err["error"]
    status, joined = client.call("POST", f"/api/room/{rid}/join", {"invite": invite})
    theirs = joined["token"]
    assert joined["view"]["names"] == ["ann", "human"]
    to_move = joined["view"]["to_move"]
    mover, other = (mine, theirs) if to_move == 0 else (theirs, mine)
    _, view = client.call("GET", f"/api/room/{rid}?token={mover}")
    good = view["view"]["legal"][0]["id"]
    illegal = next(a for a in range(16204) if a not in {m["id"] for m in view["view"]["legal"]})
    cases = [
        ("POST", f"/api/room/{rid}/join", {"invite": invite}, None, 409,
         "this seat is already taken: the room is full (you can watch)"),
        ("POST", f"/api/room/{rid}/join", {"invite": "guessed"}, None, 403,
         "no seat of room"),
        ("POST", move, {"token": other, "action": good, "n": 0}, None, 409,
         f"it is {['ann', 'human'][to_move]}'s turn, not yours"),
        ("POST", move, {"token": "forged-token", "action": good, "n": 0}, None, 403,
         "this token holds no seat"),
        ("POST", move, {"action": good, "n": 0}, None, 403, "needs your seat's token"),
        ("POST", move, {"token": mover}, None, 400, 'needs "action"'),
        ("POST", move, {"token": mover, "action": "x"}, None, 400, "must be a catalogue id"),
        ("POST", move, {"token": mover, "action": illegal, "n": 0}, None, 400,
         "is not legal here"),
        ("POST", move, {"token": mover, "action": good}, None, 400, 'a move needs "n"'),
        ("POST", move, {"token": mover, "action": good, "n": 1}, None, 409,
         "answers move 1, but the match is at move 0"),
        ("POST", move, None, b"{broken", 400, "not valid JSON"),
        ("POST", move, None, b"x" * (MAX_BODY + 1), 413, "at most"),
        ("GET", f"/api/room/{rid}?token=forged", None, None, 403, "holds no seat"),
        ("GET", f"/api/room/{rid}/events?token=forged", None, None, 403, "holds no seat"),
        ("GET", f"/api/room/{rid}/events?since=x", None, None, 400, "since must be"),
        ("GET", f"/api/room/{rid}/record", None, None, 409, "not over yet"),
        ("GET", "/api/room/nope", None, None, 404, "no room 'nope'"),
        ("POST", "/api/room/nope/move", {"token": mine, "action": good, "n": 0}, None, 404,
         "no room"),
        ("POST", "/api/rooms", {"seats": [None]}, None, 400, "seats must list 2 entries"),
        ("POST", "/api/rooms", {"seats": [None, "pimc:worlds=999"]}, None, 400,
         "is not offered by this server; it offers: greedy, random, expert"),
        ("POST", "/api/rooms", {"seats": ["greedy", "random"]}, None, 400,
         "needs at least one person"),
        ("POST", "/api/rooms", {"seats": [None, None], "rules": "scopone"}, None, 400,
         "seats must list 4 entries"),
        ("POST", "/api/rooms", {"seats": [None, None], "rules": "bogus"}, None, 400,
         "rules must be one of"),
        ("POST", "/api/rooms", {"seats": [None, None], "options": {"napola": 3}}, None, 400,
         "napola must be true or false"),
        ("POST", "/api/rooms", {"seats": [None, None], "target_score": 0}, None, 400,
         "target_score must be at least 1"),
        ("POST", "/api/rooms", {"seats": [None, None], "seat": 5}, None, 400,
         "seat (yours) must be a person's seat"),
        ("POST", "/api/rooms", {"seats": [None, None], "seat": 0, "name": "x" * 41}, None,
         400, "at most 40 characters"),
        ("POST", f"/api/room/{rid}/hand-over", {"token": other, "seat": to_move}, None, 409,
         f"{['ann', 'human'][to_move]}'s seat is not idle"),
        ("POST", f"/api/room/{rid}/hand-over", {"token": mover, "seat": to_move}, None, 409,
         "cannot give your own seat away"),
    ]
    for method, path, body, raw, status, message in cases:
        got, err = client.call(method, path, body, raw)
        assert (got, type(err)) == (status, dict), (method, path, got, err)
        assert message in err["error"], (method, path, err)
    _, after = client.call("GET", f"/api/room/{rid}")
    assert after["view"]["moves"] == 0  # nothing above was played

    # an idle seat is given to an agent by the other person; its token is then stale
    monkeypatch.setattr(rooms, "IDLE_LIMIT", 0.0)
    _, seen = client.call("GET", f"/api/room/{rid}?token={other}")
    assert seen["view"]["idle"] == [to_move]
    status, out = client.call("POST", f"/api/room/{rid}/hand-over",
                              {"token": other, "seat": to_move, "agent": "random"})
    assert status == 200 and out["moves"] == [0] and out["view"]["names"][to_move] == "random"
    status, err = client.call("POST", move, {"token": mover, "action": good, "n": 1})
    assert status == 403 and "holds no seat" in err["error"]


def test_live_connections_are_bounded(served, monkeypatch) -> None:
    srv, client = served
    out = _create(client, seats=[None, None], seat=0)
    rid = out["room"]
    monkeypatch.setattr(live, "MAX_WATCHERS", 1)
    one = Stream(srv.server_address[1], rid)
    assert one.resp.status == 200
    two = Stream(srv.server_address[1], rid)
    assert two.resp.status == 503 and "has 1 watchers already" in two.error
    seat = Stream(srv.server_address[1], rid, out["token"])  # a seat is not a watcher
    assert seat.resp.status == 200
    monkeypatch.setattr(live, "MAX_STREAMS", 2)
    three = Stream(srv.server_address[1], rid, out["token"])
    assert three.resp.status == 503 and "2 live connections" in three.error
    for s in (one, seat):
        s.conn.close()
    monkeypatch.setattr(lobby, "MAX_WAITING", 1)  # this room waits for its seat 1 already
    status, err = client.call("POST", "/api/rooms", {"seats": [None, None], "seat": 0})
    assert status == 503 and "1 rooms are waiting for people" in err["error"]
    status, _ = client.call("POST", "/api/new")  # a one-person game does not wait
    assert status == 201


def test_a_room_resumes_after_its_server_stops(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    srv = make_server(make_rules("scopa"), "greedy", port=0, db=db)
    room, token = srv.lobby.create_room(
        {"seats": [None, "greedy"], "seat": 0, "name": "ann"})[::2]
    r = room.room
    for _ in range(5):
        r.play(token, r.state.legal_actions()[0], 0.0, len(r.events))
    played = list(r.events)
    srv.server_close()
    srv.lobby.store.close()
    again = make_server(make_rules("scopa"), "greedy", port=0, db=db)
    back = again.lobby.get(r.id, "room").room
    assert back.events == played and back.view(0) == r.view(0)
    back.play(token, back.state.legal_actions()[0], 0.0, len(back.events))
    again.server_close()


def test_the_load_benchmark_plays_rooms_through_the_live_channel(tmp_path: Path) -> None:
    from tests.helpers import import_benchmark

    bench = import_benchmark("serve_load")
    out = tmp_path / "load.json"
    assert bench.main(["--players", "2", "--rooms", "2", "--seconds", "4", "--think", "0",
                       "--ramp", "0", "--json", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["failed_requests"] == 0 and res["rooms"] == 2
    assert res["room_moves"] > 0 and res["reached"] > 0 and res["moves"] > 0
    r = res["reach_ms"]
    assert 0 < r["p50"] <= r["p95"] <= r["p99"] <= r["max"]
    assert res["server_peak_rss_mib"] >= res["server_rss_mib"] > 0


def test_a_move_the_database_refuses_is_not_played(served, monkeypatch) -> None:
    import sqlite3

    srv, client = served
    out = _create(client, seats=[None, "greedy"], seat=0, name="ann")
    rid, token = out["room"], out["token"]
    _, before = client.call("GET", f"/api/room/{rid}?token={token}")
    store = srv.lobby.store

    def full(*args: Any) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(store, "move_played", full)
    action = before["view"]["legal"][0]["id"]
    status, err = client.call("POST", f"/api/room/{rid}/move",
                              {"token": token, "action": action,
                               "n": before["view"]["moves"]})
    assert status == 503 and "refused a change (database or disk is full): what it " \
        "refused was not played" in err["error"]
    _, after = client.call("GET", f"/api/room/{rid}?token={token}")
    for x in (before, after):
        assert 0 < x["view"].pop("idle_in") <= rooms.IDLE_LIMIT  # the time left to move
    assert after == before
    monkeypatch.undo()

    # the person's move is stored, the agent's reply refused: it is played on the next
    # request
    calls = []

    def once(*args: Any) -> None:
        calls.append(args[1])
        if len(calls) == 2:
            raise sqlite3.OperationalError("disk I/O error")
        type(store).move_played(store, *args)

    monkeypatch.setattr(store, "move_played", once)
    status, err = client.call("POST", f"/api/room/{rid}/move",
                              {"token": token, "action": action,
                               "n": before["view"]["moves"]})
    assert status == 503 and "disk I/O error" in err["error"]
    _, mid = client.call("GET", f"/api/room/{rid}?token={token}")
    assert mid["view"]["moves"] == before["view"]["moves"] + 2 and mid["view"]["your_turn"]
    assert [e["seat"] for e in mid["log"][-2:]] == [0, 1]
    loaded = store.load_room(rid)
    assert loaded is not None and len(loaded["actions"]) == mid["view"]["moves"]
