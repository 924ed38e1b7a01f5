"""``scopa serve`` tried as an attacker would: slow and pipelining readers, double and
retried moves, odd numbers, foreign hosts and content types, names that look like
template placeholders, floods of connections, and database files that are not scopa's
(as root and as another user). Every attack is on 127.0.0.x, with bounded loops."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scopa_env.rules import make_rules
from scopa_web import connections, fill, live, lobby
from scopa_web.html import replay_page
from scopa_web.server import make_server
from scopa_web.store import APPLICATION_ID, Store, StoreError
from tests.helpers import serving
from tests.test_web import Client


@pytest.fixture(autouse=True)
def _data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Any, Client]]:
    srv = make_server(make_rules("scopa"), "greedy", port=0, db=tmp_path / "a.db")
    with serving(srv):
        yield srv, Client(srv.server_address[1])


def _raw(port: int, data: bytes, source: str = "127.0.0.1", timeout: float = 10
         ) -> tuple[int, dict[str, Any], bytes]:
    """One request as bytes on a new connection: its status, JSON body and head."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                  source_address=(source, 0)) as sock:
        sock.sendall(data)
        reply = b""
        while b"\r\n\r\n" not in reply:
            chunk = sock.recv(65536)
            if not chunk:
                break
            reply += chunk
        head, _, body = reply.partition(b"\r\n\r\n")
        length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), 0)
        while len(body) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
    return int(head.split()[1]), json.loads(body) if body else {}, head


def _closed_by_server(sock: socket.socket, within: float = 10) -> bool:
    """True once the server closed ``sock`` (within a bound: a hang detector)."""
    sock.settimeout(within)
    try:
        while sock.recv(65536):
            pass
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False
    return True


def _room(client: Client, **body: Any) -> dict[str, Any]:
    status, out = client.call("POST", "/api/rooms", {"seats": [None, None], "seat": 0, **body})
    assert status == 201, out
    return out


def _two_people(client: Client) -> tuple[str, dict[int, str]]:
    made = _room(client)
    _, joined = client.call("POST", f"/api/room/{made['room']}/join",
                            {"invite": made["invites"]["1"]})
    return made["room"], {0: made["token"], 1: joined["token"]}


# -- one client never holds another -----------------------------------------------------------
def test_a_watcher_that_pipelines_and_never_reads_does_not_freeze_the_room(
        served, monkeypatch) -> None:
    srv, client = served
    monkeypatch.setattr(connections, "WRITE_S", 1.0)
    rid, tokens = _two_people(client)
    port = srv.server_address[1]
    hog = socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.9", 0))
    hog.setblocking(False)
    ask = f"GET /api/room/{rid} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode() * 200
    sent, until = 0, time.monotonic() + 3
    while time.monotonic() < until:  # 3 s of requests: the answers fill every buffer
        try:
            sent += hog.send(ask)
        except BlockingIOError:
            time.sleep(0.01)
        except OSError:
            break
    stream = socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.9", 0))
    stream.sendall(f"GET /api/room/{rid}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    try:
        for _ in range(6):  # the seats play on: every answer comes
            _, view = client.call("GET", f"/api/room/{rid}")
            seat = view["view"]["to_move"]
            _, mine = client.call("GET", f"/api/room/{rid}?token={tokens[seat]}")
            status, out = client.call("POST", f"/api/room/{rid}/move", {
                "token": tokens[seat], "action": mine["view"]["legal"][0]["id"],
                "n": mine["view"]["moves"]})
            assert status == 200, out
        assert sent > 0
        # the reader that never reads is cut off once its answers waited WRITE_S
        for _ in range(100):
            if not srv.limits.open.get("127.0.0.9"):
                break
            time.sleep(0.1)
        assert not srv.limits.open.get("127.0.0.9") or srv.limits.open["127.0.0.9"] == 1
    finally:
        hog.close()
        stream.close()


def test_two_different_moves_at_once_play_one_and_a_retry_is_not_played_twice(served) -> None:
    _, client = served
    status, new = client.call("POST", "/api/new", {"seed": 7})
    gid, view = new["game"], new["view"]
    legal = [m["id"] for m in view["legal"]]
    assert len(legal) >= 2
    answers: list[tuple[int, Any]] = []

    def post(action: int) -> None:
        answers.append(client.call("POST", f"/api/game/{gid}/move",
                                   {"action": action, "n": view["moves"]}))

    threads = [threading.Thread(target=post, args=(a,)) for a in legal[:2]]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    statuses = sorted(s for s, _ in answers)
    assert statuses == [200, 409], answers
    _, now = client.call("GET", f"/api/game/{gid}")
    mine = [e for e in now["log"] if e["seat"] == view["seat"]]
    assert len(mine) == 1  # one of the two was played, never both
    played = next(out for s, out in answers if s == 200)
    # the same move sent again (a lost answer, a double click) is answered, not replayed
    first_text = played["events"][0]["text"]
    action = next(m["id"] for m in view["legal"] if m["text"] == first_text)
    status, again = client.call("POST", f"/api/game/{gid}/move",
                                {"action": action, "n": view["moves"]})
    assert status == 200 and again["view"]["moves"] == played["view"]["moves"]
    _, after = client.call("GET", f"/api/game/{gid}")
    assert after["log"] == now["log"]


def test_a_room_move_retried_is_played_once(served) -> None:
    _, client = served
    rid, tokens = _two_people(client)
    _, view = client.call("GET", f"/api/room/{rid}")
    seat = view["view"]["to_move"]
    _, mine = client.call("GET", f"/api/room/{rid}?token={tokens[seat]}")
    body = {"token": tokens[seat], "action": mine["view"]["legal"][0]["id"],
            "n": mine["view"]["moves"]}
    answers = [client.call("POST", f"/api/room/{rid}/move", body) for _ in range(3)]
    assert [s for s, _ in answers] == [200, 200, 200]
    _, after = client.call("GET", f"/api/room/{rid}")
    assert after["view"]["moves"] == mine["view"]["moves"] + 1
    other = {**body, "action": mine["view"]["legal"][-1]["id"]}
    if other["action"] != body["action"]:  # another move for a number already played
        status, err = client.call("POST", f"/api/room/{rid}/move", other)
        assert status in (403, 409) and "error" in err


# -- every input checked at the door ----------------------------------------------------------
def test_odd_numbers_get_a_4xx_never_a_5xx(served) -> None:
    srv, client = served
    rid, tokens = _two_people(client)
    _, new = client.call("POST", "/api/new")
    gid = new["game"]
    port = srv.server_address[1]
    huge = "9" * 5000
    raw_bodies = [
        ("/api/new", f'{{"seed": {huge}}}'),
        (f"/api/game/{gid}/move", f'{{"action": {huge}, "n": 0}}'),
        (f"/api/game/{gid}/move", f'{{"action": 1, "n": {huge}}}'),
        (f"/api/game/{gid}/move", '{"action": NaN, "n": 0}'),
        (f"/api/game/{gid}/move", '{"action": 1e999, "n": 0}'),
        (f"/api/room/{rid}/move", f'{{"token": "{tokens[0]}", "action": 1, "n": 0}}'),
        ("/api/new", "[" * 10000 + "]" * 10000),
        ("/api/new", '{"a":' * 5000 + "1" + "}" * 5000),
        ("/api/rooms", f'{{"seats": [null, null], "target_score": {10**40}}}'),
        ("/api/rooms", '{"seats": [null, null], "target_score": 1000000}'),
        ("/api/rooms", '{"seats": [null, null], "seed": 5}'),
        ("/api/rooms", f'{{"seats": [null, null], "seat": {huge}}}'),
        ("/api/rooms", f'{{"seats": [null, null], "options": {{"x": {"9" * 19}}}}}'),
        (f"/api/room/{rid}/hand-over", f'{{"token": "{tokens[0]}", "seat": {huge}}}'),
    ]
    for path, text in raw_bodies:
        status, err = client.call("POST", path, raw=text.encode())
        assert 400 <= status < 500 and isinstance(err, dict) and err["error"], (path, status)
    for path in (f"/api/room/{rid}/events?since={huge}", f"/api/room/{rid}/events?since=%C2%B2",
                 "/api/history?offset=%C2%B2", f"/api/history?offset={10**30}",
                 f"/api/history?offset={huge}", f"/api/room/{rid}/events?since=-1"):
        status, err = client.call("GET", path)
        assert status == 400 and "must be a number" in err["error"], (path, err)
    # Last-Event-ID is checked before the stream starts: one 400, no 200 then a 500
    status, err, head = _raw(port, f"GET /api/room/{rid}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                   "Last-Event-ID: \u00b2\r\n\r\n".encode())
    assert status == 400 and b"text/event-stream" not in head and "since" in err["error"]
    status, err, _ = _raw(port, b"POST /api/new HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                b"Content-Length: 99999999999999999999999\r\n\r\n")
    assert status in (400, 413) and err["error"]  # refused by the parser or the door
    status, _ = client.call("GET", "/api/history?offset=5")
    assert status == 200


def test_foreign_hosts_and_origins_and_other_content_types_are_refused(tmp_path) -> None:
    srv = make_server(make_rules("scopa"), "greedy", port=0,
                      allowed_origins=["https://scopa.example.org"])
    with serving(srv):
        port = srv.server_address[1]
        made = _room(Client(port))
        rid, token = made["room"], made["token"]

        def ask(method: str, path: str, host: str, extra: str = "", body: bytes = b""
                ) -> tuple[int, dict[str, Any]]:
            head = (f"{method} {path} HTTP/1.1\r\nHost: {host}\r\n{extra}"
                    f"Content-Length: {len(body)}\r\n\r\n").encode()
            status, out, _ = _raw(port, head + body)
            return status, out

        for host in ("attacker.example", f"attacker.example:{port}", "localhost.attacker.example"):
            status, err = ask("GET", "/api/history", host)
            assert status == 403 and "does not answer for host" in err["error"]
        for host in (f"127.0.0.1:{port}", f"localhost:{port}", "scopa.example.org"):
            assert ask("GET", "/api/history", host)[0] == 200
        move = json.dumps({"token": token, "action": 1, "n": 0}).encode()
        status, err = ask("POST", f"/api/room/{rid}/move", "localhost",
                          "Origin: http://attacker.example\r\nContent-Type: application/json\r\n",
                          move)
        assert status == 403 and "attacker.example" in err["error"]
        status, err = ask("POST", f"/api/room/{rid}/move", "localhost",
                          "Content-Type: text/plain\r\n", move)
        assert status == 415 and "application/json" in err["error"]
        status, err = ask("POST", f"/api/room/{rid}/move", "localhost", "", move)
        assert status == 415
        status, _ = ask("GET", "/api/config", "scopa.example.org",
                        "Origin: https://scopa.example.org\r\n")
        assert status == 200
    with pytest.raises(ValueError, match="--allowed-origin example.org: give a scheme"):
        make_server(make_rules("scopa"), "greedy", port=0, allowed_origins=["example.org"])


def test_a_name_like_a_placeholder_stays_text_in_the_pages(served, tmp_path: Path) -> None:
    assert fill("<p>{{a}} {{b}}</p>", a="{{b}}", b="x") == "<p>{{b}} x</p>"
    from agents import make_agent
    from scopa_env.play import play_match

    names = ["{{review_style}}", "{{data}}</script>"]
    rec = play_match(make_rules("scopa", target_score=1), 3,
                     [make_agent("greedy", seed=1), make_agent("random", seed=2)], names)
    page = replay_page(rec, review={"x": "{{script}}"})
    data = page.split('<script type="application/json" id="match-data">', 1)[1]
    assert json.loads(data.split("</script>", 1)[0])["players"] == names
    assert page.count("{{") == page.count("{{review_style}}") + page.count("{{data}}") + (
        page.count("{{script}}"))
    _, client = served
    made = _room(client, name="{{review_style}}")
    assert made["view"]["names"][0] == "{{review_style}}"


# -- limits that hold ---------------------------------------------------------------------------
def test_the_waiting_rooms_cap_counts_rooms_let_go_from_memory(served, monkeypatch) -> None:
    _, client = served
    monkeypatch.setattr(lobby, "MAX_WAITING", 3)
    monkeypatch.setattr(lobby, "MAX_ROOMS", 2)
    for _ in range(3):
        _room(client)
    for _ in range(4):  # one-person games push the waiting rooms out of memory
        assert client.call("POST", "/api/new")[0] == 201
    status, err = client.call("POST", "/api/rooms", {"seats": [None, None], "seat": 0})
    assert status == 503 and "3 rooms are waiting" in err["error"]


def test_a_closed_live_connection_stops_counting_at_once(served, monkeypatch) -> None:
    srv, client = served
    monkeypatch.setattr(live, "MAX_STREAMS", 1)
    monkeypatch.setattr(live, "PING_S", 3600.0)  # no ping would notice the close
    rid = _room(client)["room"]
    port = srv.server_address[1]
    ask = f"GET /api/room/{rid}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    for _ in range(3):
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        sock.sendall(ask)
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        status, err, _ = _raw(port, ask)
        assert status == 503 and "1 live connections" in err["error"]
        sock.close()
        for _ in range(100):  # counted off when the server sees the close
            if srv.api.streams.total == 0:
                break
            time.sleep(0.05)
        assert srv.api.streams.total == 0


def test_connections_are_capped_per_address_and_slow_requests_cut_off(monkeypatch) -> None:
    monkeypatch.setattr(connections, "REQUEST_S", 0.5)
    monkeypatch.setattr(connections, "IDLE_S", 1.0)
    srv = make_server(make_rules("scopa"), "greedy", port=0, max_per_client=5)
    threads_before = threading.active_count()
    with serving(srv):
        port = srv.server_address[1]
        held = [socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.7", 0))
                for _ in range(5)]
        status, err, _ = _raw(port, b"GET /api/config HTTP/1.1\r\nHost: localhost\r\n\r\n",
                              source="127.0.0.7")
        assert status == 503 and "5 connections from your address" in err["error"]
        # another address is served; the server holds no thread per connection
        status, _, _ = _raw(port, b"GET /api/config HTTP/1.1\r\nHost: localhost\r\n\r\n",
                            source="127.0.0.8")
        assert status == 200
        assert threading.active_count() <= threads_before + 3
        # idle connections are closed after IDLE_S, and their count let go
        assert all(_closed_by_server(s) for s in held)
        for s in held:
            s.close()
        # a body shorter than its Content-Length, a head sent byte by byte: cut off
        slow = socket.create_connection(("127.0.0.1", port))
        slow.sendall(b"POST /api/new HTTP/1.1\r\nHost: localhost\r\nContent-Type: "
                     b"application/json\r\nContent-Length: 1000\r\n\r\n{")
        trickle = socket.create_connection(("127.0.0.1", port))
        for b in b"GET / HTTP/1.1\r\nX: ":
            trickle.send(bytes([b]))
        assert _closed_by_server(slow) and _closed_by_server(trickle)
        slow.close()
        trickle.close()
        for _ in range(100):
            if not srv.limits.open:
                break
            time.sleep(0.05)
        assert not srv.limits.open
    with pytest.raises(ValueError, match="--max-per-client must be at least 1"):
        make_server(make_rules("scopa"), "greedy", port=0, max_per_client=0)


def test_a_flood_of_connections_is_held_without_threads(served) -> None:
    srv, client = served
    port = srv.server_address[1]
    threads_before = threading.active_count()
    flood = []
    for k in range(600):  # six addresses, 100 each: under the cap of one address
        flood.append(socket.create_connection(("127.0.0.1", port),
                                              source_address=(f"127.0.1.{k // 100 + 1}", 0)))
    try:
        for _ in range(100):
            if sum(srv.limits.open.values()) >= 600:
                break
            time.sleep(0.05)
        assert sum(srv.limits.open.values()) >= 600
        assert threading.active_count() <= threads_before + 3
        assert client.call("GET", "/api/config")[0] == 200
    finally:
        for s in flood:
            s.close()


# -- the database opened safely ---------------------------------------------------------------
def _refused_untouched(path: Path, message: str) -> None:
    before = path.read_bytes()
    with pytest.raises(StoreError, match=message):
        Store(path)
    assert path.read_bytes() == before
    assert not Path(f"{path}-wal").exists() and not Path(f"{path}-shm").exists()


def _sqlite(path: Path, *statements: str) -> Path:
    """A SQLite file made by another program: ``statements`` run and committed."""
    db = sqlite3.connect(path)
    for sql in statements:
        db.execute(sql)
    db.commit()
    db.close()
    return path


def test_another_programs_database_is_refused_untouched(tmp_path: Path) -> None:
    other = _sqlite(tmp_path / "other.db", "CREATE TABLE notes (id INTEGER PRIMARY KEY, x)",
                    "INSERT INTO notes (x) VALUES ('mine')")
    _refused_untouched(other, "it is not a scopa database .tables: notes")
    tagged = _sqlite(tmp_path / "tagged.db", "PRAGMA application_id = 1234",
                     "CREATE TABLE rooms (x)")
    _refused_untouched(tagged, "another program's SQLite database .application_id 0x4d2")
    # scopa's tables and more: not scopa's either
    mixed = tmp_path / "mixed.db"
    Store(mixed).close()
    _refused_untouched(_sqlite(mixed, "CREATE TABLE extra (x)"),
                       "tables: extra, hands, moves, rooms, seats")


def test_a_refused_file_keeps_its_header_and_gets_no_wal(tmp_path: Path) -> None:
    newer = _sqlite(tmp_path / "newer.db", f"PRAGMA application_id = {APPLICATION_ID}",
                    "PRAGMA user_version = 99")  # rollback journal: header bytes 18-19 are 1
    assert newer.read_bytes()[18:20] == b"\x01\x01"
    _refused_untouched(newer, "its schema is version 99")
    mine = tmp_path / "mine.db"
    store = Store(mine)
    assert store.db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    store.close()


def test_a_read_only_file_is_read_only_for_root_too(tmp_path: Path) -> None:
    path = tmp_path / "ro.db"
    Store(path).close()
    path.chmod(0o444)
    try:
        _refused_untouched(path, "it is read-only")
    finally:
        path.chmod(0o644)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="as root: the check run again as another user")
def test_a_file_another_user_cannot_write_is_refused_untouched_as_that_user() -> None:
    folder = Path(tempfile.mkdtemp(prefix="scopa-ro-"))
    try:
        folder.chmod(0o755)
        path = folder / "root.db"
        Store(path).close()
        path.chmod(0o644)  # root's: nobody may read it, not write it
        before = path.read_bytes()
        read, write = os.pipe()
        pid = os.fork()  # the child opens the file as user nobody, and says what it got
        if pid == 0:
            try:
                os.setuid(65534)
                try:
                    Store(path).close()
                    said = "opened"
                except StoreError as e:
                    said = str(e)
                os.write(write, said.encode())
            finally:
                os._exit(0)
        os.close(write)
        os.waitpid(pid, 0)
        said = os.read(read, 4096).decode()
        os.close(read)
        assert "it is read-only" in said, said
        assert path.read_bytes() == before and sorted(p.name for p in folder.iterdir()) == [
            "root.db"]
    finally:
        for p in folder.iterdir():
            p.unlink()
        folder.rmdir()


def test_an_empty_file_and_an_older_scopa_file_are_accepted(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()
    Store(empty).close()
    from scopa_web.store import SCHEMA_V1

    old = _sqlite(tmp_path / "old.db", *SCHEMA_V1.split(";")[:-1], "PRAGMA user_version = 1")
    store = Store(old)
    assert store.db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    store.close()
