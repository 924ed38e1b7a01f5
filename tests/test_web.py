"""`scopa replay --html` and `scopa serve` without a browser: the page's data against the
record, a self-contained page, the play API (views, errors, whole matches, several games)
and the command line's errors. The browser itself: tests/test_web_browser.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agents import make_agent
from scopa_cli import main as scopa
from scopa_env.play import play_match
from scopa_env.records import append_records, read_records, verify_record
from scopa_env.rules import make_rules
from scopa_web.html import match_data, replay_page
from scopa_web.server import MAX_BODY, make_server
from tests.helpers import fresh_python, serving

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).parent / "data" / "golden-records.jsonl"


def _record(seed: int = 5, rules: str = "scopa") -> dict[str, Any]:
    r = make_rules(rules)
    specs = ["greedy", "random"] * (r.players // 2)
    return play_match(r, seed, [make_agent(s, seed=i) for i, s in enumerate(specs)], specs)


@pytest.fixture
def records_file(tmp_path: Path) -> Path:
    path = tmp_path / "games.jsonl"
    append_records(path, [_record(5), _record(6, "scopone_scientifico")])
    return path


# -- the replay page -------------------------------------------------------------------------
def _one_per_rule_set() -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for rec in read_records(GOLDEN):
        seen.setdefault(rec["rules"]["name"], rec)
    return list(seen.values())


@pytest.mark.parametrize("rec", _one_per_rule_set(), ids=lambda r: r["rules"]["name"])
def test_page_data_follows_the_record(rec: dict[str, Any]) -> None:
    data = match_data(rec)
    frames, hands = data["frames"], rec["hands"]
    assert len(frames) == sum(len(h["moves"]) + 1 for h in hands)
    assert len(data["hands"]) == len(hands)
    for i, (h, page) in enumerate(zip(hands, data["hands"], strict=True)):
        deal = frames[page["start"]]
        assert deal["move"] is None and deal["hand"] == i and deal["dealer"] == h["dealer"]
        p = rec["rules"]["players"]
        first = p * rec["rules"]["hand_size"]
        assert sorted(deal["table"]) == sorted(h["deck"][first:first + rec["rules"]["table_size"]])
        moves = frames[page["start"] + 1:page["end"] + 1]
        assert [f["move"]["card"] for f in moves] == [m["card"] for m in h["moves"]]
        assert [f["move"]["capture"] for f in moves] == [m["capture"] for m in h["moves"]]
        assert [f["move"]["scopa"] for f in moves] == [m["scopa"] for m in h["moves"]]
        assert [f["move"]["seat"] for f in moves] == [m["seat"] for m in h["moves"]]
        end = frames[page["end"]]
        assert end["hand_over"]["score"] == h["score"] == page["score"]
        assert end["hand_over"]["leftover"] == h["leftover"]
        assert end["table"] == [] and not any(end["hands"])
        assert sum(len(pile) for pile in end["piles"]) == 40
        assert end["scope"] == [e["scope"] for e in h["score"]]
    assert frames[-1]["score"] == rec["match_score"] == data["hands"][-1]["match_score"]
    assert frames[-1]["hand_over"]["match_over"]


def test_the_page_is_self_contained(records_file: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "match.html"
    assert scopa(["replay", str(records_file), "--html", str(out), "--match", "2"]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    text = out.read_text(encoding="utf-8")
    # nothing fetched: no external script, style, image, font or link
    assert not re.search(r"<(link|img|iframe)\b|\bsrc=|@import|url\(", text)
    assert set(re.findall(r"https?://[^\s\"'<>]+", text)) <= {"http://www.w3.org/2000/svg"}
    blob = re.search(r'<script type="application/json" id="match-data">(.*?)</script>', text,
                     re.S)
    assert blob is not None
    data = json.loads(blob.group(1))
    rec = list(read_records(records_file))[1]
    assert data["frames"] == match_data(rec)["frames"]
    assert data["match"] == 2 and data["players"] == rec["players"] and data["view"] == "all"


def test_names_cannot_break_out_of_the_page() -> None:
    rec = _record(3)
    rec["players"] = ["</script><script>alert(1)</script>", "a & <b>"]
    verify_record(rec)
    text = replay_page(rec, source="<x>.jsonl")
    assert "</script><script>" not in text and "<b>" not in text
    assert "&lt;x&gt;.jsonl" in text


def test_seat_view_is_kept(records_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "seat.html"
    assert scopa(["replay", str(records_file), "--html", str(out), "--match", "2",
                  "--seat", "3"]) == 0
    assert '"view":3' in out.read_text(encoding="utf-8")


@pytest.mark.parametrize("extra, message", [
    (["--match", "3"], "--match 3 is past the end: {f} holds 2 match(es)"),
    (["--match", "0"], "--match 0: matches are numbered from 1"),
    (["--seat", "2"], "--seat 2 is not a seat of this match (0..1)"),
    (["--html", "{d}/no/such/folder/x.html"], "folder {d}/no/such/folder does not exist"),
])
def test_replay_html_errors_are_one_line(records_file: Path, tmp_path: Path, capsys,
                                         extra: list[str], message: str) -> None:
    args = ["replay", str(records_file), "--html", str(tmp_path / "x.html")]
    args += [a.replace("{d}", str(tmp_path)) for a in extra]
    assert scopa(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("scopa replay: error: ")
    assert message.format(f=records_file, d=tmp_path) in err
    assert not (tmp_path / "x.html").exists()


def test_replay_seat_needs_html(records_file: Path, capsys) -> None:
    assert scopa(["replay", str(records_file), "--seat", "1"]) == 2
    assert "use it with --html" in capsys.readouterr().err


def test_replay_html_of_a_broken_file(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "scopa-record/1"\n')
    assert scopa(["replay", str(bad), "--html", str(tmp_path / "x.html")]) == 2
    assert f"{bad}:1: not valid JSON" in capsys.readouterr().err


# -- the play server -------------------------------------------------------------------------
class Client:
    """JSON requests to a server on 127.0.0.1."""

    def __init__(self, port: int):
        self.base = f"http://127.0.0.1:{port}"

    def call(self, method: str, path: str, body: Any = None,
             raw: bytes | None = None) -> tuple[int, Any]:
        data = raw if raw is not None else None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                status, payload, ctype = resp.status, resp.read(), resp.headers["Content-Type"]
        except urllib.error.HTTPError as e:
            status, payload, ctype = e.code, e.read(), e.headers["Content-Type"]
        if ctype == "application/json":
            return status, json.loads(payload)
        return status, payload.decode()


@pytest.fixture(autouse=True)
def _data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``scopa serve`` without --db writes under $XDG_DATA_HOME: a temporary one here."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))


@pytest.fixture
def server() -> Iterator[tuple[Any, Client]]:
    srv = make_server(make_rules("scopa"), "greedy", port=0, seed=1)
    with serving(srv):
        yield srv, Client(srv.server_address[1])


def _codes_in(data: Any) -> set[str]:
    return set(re.findall(r"\b(?:10|[1-9])[dcsb]\b", json.dumps(data)))


def _play_out(client: Client, gid: str, view: dict[str, Any]) -> list[dict[str, Any]]:
    events = []
    while not view["done"]:
        assert view["your_turn"] and view["legal"]
        choice = view["legal"][-1]
        status, out = client.call("POST", f"/api/game/{gid}/move",
                                  {"action": choice["id"], "n": view["moves"]})
        assert status == 200, out
        assert out["events"][0]["seat"] == view["seat"]
        assert out["events"][0]["text"] == choice["text"]
        events += out["events"]
        view = out["view"]
    return events


def test_a_whole_match_over_the_api_gives_a_verified_record(server, tmp_path: Path) -> None:
    srv, client = server
    assert srv.server_address[0] == "127.0.0.1"
    status, page = client.call("GET", "/")
    assert status == 200 and "<title>Scopa" in page and "http" not in re.sub(
        r"http://www\.w3\.org/2000/svg", "", page)
    status, new = client.call("POST", "/api/new", {"seed": 3})
    assert status == 201
    gid, view = new["game"], new["view"]
    assert view["seat"] == 0 and view["your_turn"] and len(view["hand"]) == 3
    assert view["names"] == ["human", "greedy"]
    events = new["events"] + _play_out(client, gid, view)
    status, rec_text = client.call("GET", f"/api/game/{gid}/record")
    assert status == 200 and rec_text.endswith("\n") and rec_text.count("\n") == 1
    rec = json.loads(rec_text)
    verify_record(rec)
    assert rec["seed"] == 3 and rec["players"] == ["human", "greedy"]
    # the seed fixes the deck order: no view has it before the end of the match
    assert "seed" not in view and not any("seed" in e["view"] for e in events[:-1])
    assert events[-1]["view"]["seed"] == "3"  # as text: a JavaScript number would round
    big = 3429124248386577504  # past 2**53, sent as a string of digits
    status, new = client.call("POST", "/api/new", {"seed": str(big)})
    assert status == 201 and "seed" not in new["view"]
    assert srv.lobby.get(new["game"]).room.state.seed == big
    moves = [m for h in rec["hands"] for m in h["moves"]]
    assert [(e["seat"], e["card"], e["capture"], e["scopa"]) for e in events] == [
        (m["seat"], m["card"], m["capture"], m["scopa"]) for m in moves]
    for e in events:  # a hand's last move shows the hand scored, before the redeal
        if "hand_over" in e:
            v = e["view"]
            assert v["table"] == [] and v["hand"] == [] and sum(map(len, v["piles"])) == 40
            assert v["to_move"] is None and not v["your_turn"] and not v["legal"]
    ends = [e["hand_over"] for e in events if "hand_over" in e]
    assert [e["score"] for e in ends] == [h["score"] for h in rec["hands"]]
    assert ends[-1]["match_over"] and ends[-1]["match_score"] == rec["match_score"]
    path = tmp_path / "served.jsonl"
    path.write_text(rec_text)
    assert scopa(["verify", str(path)]) == 0
    status, state = client.call("GET", f"/api/game/{gid}")
    assert status == 200 and state["view"]["done"] and len(state["log"]) == len(moves)


def test_the_view_hides_the_other_hands(server) -> None:
    srv, client = server
    _, new = client.call("POST", "/api/new", {"seed": 8})
    game = srv.lobby.get(new["game"]).room
    for _ in range(5):
        _, out = client.call("GET", f"/api/game/{game.id}")
        theirs = _hand_codes(game.state.hands[1])
        shown = {k: v for k, v in out["view"].items()
                 if k not in ("game", "room")}  # the id is random text
        assert theirs and not theirs & _codes_in([shown, out["log"]])
        choice = out["view"]["legal"][0]["id"]
        status, _ = client.call("POST", f"/api/game/{game.id}/move",
                                {"action": choice, "n": out["view"]["moves"]})
        assert status == 200


def _hand_codes(mask: int) -> set[str]:
    from scopa_env.cards import CODES, cards_of
    return {CODES[c] for c in cards_of(mask)}


def test_bad_requests_get_json_errors_and_the_server_goes_on(server) -> None:
    srv, client = server
    _, new = client.call("POST", "/api/new", {"seed": 4})
    gid = new["game"]
    legal = {m["id"] for m in new["view"]["legal"]}
    illegal = next(a for a in range(16204) if a not in legal)
    legal_one = min(legal)
    move = f"/api/game/{gid}/move"
    cases = [
        ("POST", "/api/new", None, b"{not json", 400, "not valid JSON"),
        ("POST", "/api/new", None, b"[1, 2]", 400, "must be a JSON object"),
        ("POST", "/api/new", {"seed": -1}, None, 400, "seed must be a non-negative integer"),
        ("POST", "/api/new", {"seed": "x"}, None, 400, "seed must be"),
        ("POST", "/api/new", {"seed": str(2**63)}, None, 400, "seed must be"),
        ("POST", move, {}, None, 400, 'needs "action"'),
        ("POST", move, {"action": "3"}, None, 400, "must be a catalogue id"),
        ("POST", move, {"action": 99999}, None, 400, "is not a catalogue id"),
        ("POST", move, {"action": True}, None, 400, "must be a catalogue id"),
        ("POST", move, {"action": illegal, "n": 0}, None, 400,
         "is not legal here; legal moves:"),
        ("POST", move, {"move": "11z"}, None, 400, "unknown card code"),
        ("POST", move, None, b"\xff\xfe", 400, "not valid JSON"),
        ("POST", move, None, b"x" * (MAX_BODY + 1), 413, "at most"),
        ("GET", move, None, None, 405, "use POST"),
        ("POST", f"/api/game/{gid}", {}, None, 405, "use GET"),
        ("DELETE", "/", None, None, 405, "use GET"),
        ("GET", "/api/game/nope", None, None, 404, "no game 'nope'"),
        ("POST", "/api/game/nope/move", {"action": 0, "n": 0}, None, 404, "no game 'nope'"),
        ("POST", move, {"action": legal_one, "n": 3}, None, 409, "answers move 3, but the "
         "match is at move 0"),
        ("POST", move, {"action": legal_one}, None, 400, 'a move needs "n"'),
        ("GET", "/api/what", None, None, 404, "no such page or API call"),
        ("GET", f"/api/game/{gid}/record", None, None, 409, "not over yet"),
    ]
    for method, path, body, raw, status, message in cases:
        got, out = client.call(method, path, body, raw)
        assert (got, type(out)) == (status, dict), (method, path, got, out)
        assert message in out["error"], (method, path, out)
    # the game is untouched and the server still plays
    _, state = client.call("GET", f"/api/game/{gid}")
    assert state["log"] == [] and state["view"] == new["view"]
    first = new["view"]["legal"][0]
    status, out = client.call("POST", move, {"move": first["text"], "n": 0})
    assert status == 200 and out["events"][0]["text"] == first["text"]
    # the same move sent again (a retry) is answered again, not played again
    again, twice = client.call("POST", move, {"move": first["text"], "n": 0})
    assert again == 200 and twice["events"][0]["text"] == first["text"]
    assert twice["view"]["moves"] == out["view"]["moves"]


@pytest.mark.parametrize("request_bytes, status, message", [
    (b"GET / HTTP/one\r\n\r\n", 400, "bad request"),
    (b"BREW / HTTP/1.0\r\n\r\n", 405, "BREW is not allowed here"),
    (b"PATCH /api/new HTTP/1.0\r\n\r\n", 405, "use POST"),
])
def test_malformed_http_gets_json_too(server, request_bytes: bytes, status: int,
                                      message: str) -> None:
    import socket

    srv, client = server
    with socket.create_connection(srv.server_address[:2], timeout=10) as sock:
        sock.sendall(request_bytes)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.split()[1] == str(status).encode() and b"application/json" in head
    assert message in json.loads(body)["error"]
    assert client.call("GET", "/")[0] == 200


def test_move_after_the_end_is_refused(server) -> None:
    _, client = server
    _, new = client.call("POST", "/api/new", {"seed": 2})
    _play_out(client, new["game"], new["view"])
    status, out = client.call("POST", f"/api/game/{new['game']}/move", {"action": 0, "n": 0})
    assert status == 409 and "the match is over" in out["error"]


def test_several_games_at_once_stay_apart(server) -> None:
    _, client = server
    results: dict[int, Any] = {}

    def one(k: int) -> None:
        _, new = client.call("POST", "/api/new", {"seed": 20 + k % 2})
        events = _play_out(client, new["game"], new["view"])
        results[k] = (new["game"], [e["text"] for e in events])

    threads = [threading.Thread(target=one, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert len(results) == 4 and len({gid for gid, _ in results.values()}) == 4
    # the same seed and choices give the same match, whatever ran alongside
    assert results[0][1] == results[2][1] and results[1][1] == results[3][1]
    assert results[0][1] != results[1][1]


def test_agents_move_before_the_person_and_in_teams() -> None:
    srv = make_server(make_rules("scopone_scientifico"), "random", port=0, seat=2)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        client = Client(srv.server_address[1])
        _, new = client.call("POST", "/api/new", {"seed": 1})
        view = new["view"]
        assert [e["seat"] for e in new["events"]] == [0, 1]  # dealer 3: seat 0 leads
        assert view["your_turn"] and view["seat"] == 2 and view["hand_sizes"][2] == 10
        assert view["names"] == ["random", "random", "human", "random"]
        _, out = client.call("POST", f"/api/game/{new['game']}/move",
                             {"action": view["legal"][0]["id"], "n": view["moves"]})
        assert [e["seat"] for e in out["events"]] == [2, 3, 0, 1]
    finally:
        srv.shutdown()
        srv.server_close()


# -- scopa serve on the command line -----------------------------------------------------------
@pytest.mark.parametrize("args, message", [
    (["--opponent", "nobody"], "unknown agent 'nobody'"),
    (["--opponent", "ckpt:/no/such.pt"], "does not exist"),
    (["--seat", "2"], "--seat 2 is not a seat of a 2-player game"),
    (["--option", "bogus=1"], "unknown rules option 'bogus'"),
    (["--seed", "-3"], "--seed must be a non-negative integer"),
    (["--port", "70000"], "--port 70000 is not a port number"),
])
def test_serve_refuses_bad_options_in_one_line(capsys, args: list[str], message: str) -> None:
    port = [] if "--port" in args else ["--port", "0"]
    assert scopa(["serve", *port, *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("scopa serve: error: ") and message in err
    assert err.count("\n") == 1


def test_serve_says_when_the_port_is_taken(server, capsys) -> None:
    srv, _ = server
    port = srv.server_address[1]
    assert scopa(["serve", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (f"scopa serve: error: cannot listen on 127.0.0.1:{port}: "
                           "Address already in use")


def test_scopa_serve_runs_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    import signal

    code = "import sys; from scopa_cli import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.Popen([sys.executable, "-c", code, "serve", "--port", "0", "--seed", "1",
                             "--db", str(tmp_path / "x.db")], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        m = re.search(r"open http://127\.0\.0\.1:(\d+)/", line)
        assert m, line
        status, page = Client(int(m.group(1))).call("GET", "/")
        assert status == 200 and "<!DOCTYPE html>" in page
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0 and "Traceback" not in err and "stopped" in out
    assert "warning" not in err  # 127.0.0.1: this machine only, nothing to warn about


def test_a_host_other_than_this_machine_is_warned_about(tmp_path: Path) -> None:
    import signal

    from scopa_web.server import exposure_warning

    for local in ("127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.2"):
        assert exposure_warning(local) is None
    assert "anyone who can reach this machine on every network" in exposure_warning("0.0.0.0")
    assert "on the network of 192.168.1.5 can open the page and play" in \
        exposure_warning("192.168.1.5")
    assert "--host 127.0.0.1" in exposure_warning("::")
    code = "import sys; from scopa_cli import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.Popen([sys.executable, "-c", code, "serve", "--host", "0.0.0.0",
                             "--port", "0", "--db", str(tmp_path / "x.db")], cwd=ROOT,
                            stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stderr is not None
        assert "open http://0.0.0.0:" in proc.stdout.readline()
        warning = proc.stderr.readline()
        assert warning.startswith("scopa serve: warning: listening on 0.0.0.0: anyone who "
                                  "can reach this machine"), warning
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_request_bodies_are_capped_and_connections_kept_alive(server) -> None:
    import socket

    srv, _ = server

    def exchange(sock: socket.socket, raw: bytes) -> tuple[bytes, dict]:
        sock.sendall(raw)
        reply = b""
        while b"\r\n\r\n" not in reply:
            reply += sock.recv(65536)
        head, _, body = reply.partition(b"\r\n\r\n")
        length = int(re.search(rb"(?i)Content-Length: (\d+)", head).group(1))
        while len(body) < length:
            body += sock.recv(65536)
        return head, json.loads(body)

    with socket.create_connection(srv.server_address[:2], timeout=10) as sock:
        ask = (b"POST /api/new HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
               b"\r\nContent-Length: 2\r\n\r\n{}")
        head, first = exchange(sock, ask)
        assert head.startswith(b"HTTP/1.1 201") and b"connection: close" not in head.lower()
        head, second = exchange(sock, ask)  # the same connection, kept alive
        assert head.startswith(b"HTTP/1.1 201") and second["game"] != first["game"]
        # a body past the cap is refused from its Content-Length, without waiting for it
        # (none is sent), and the connection is closed: the body would follow
        head, err = exchange(sock, b"POST /api/new HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                   b"Content-Length: 1000000000\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 413") and b"connection: close" in head.lower()
        assert f"at most {MAX_BODY}" in err["error"]
        assert sock.recv(1) == b""  # closed by the server


def test_the_web_layer_loads_no_higher_layer_and_the_engine_not_it() -> None:
    code = ("import sys, scopa_web.server, scopa_web.html\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'scopa_train', 'scopa_cli', 'torch'}))\n")
    out = fresh_python(code)
    assert out == "[]"
    engine = " ".join(p.read_text() for p in (ROOT / "scopa_env").glob("*.py"))
    assert "scopa_web" not in engine


def test_games_past_the_memory_bound_are_read_back_from_the_store(monkeypatch) -> None:
    from scopa_web import lobby as cache

    monkeypatch.setattr(cache, "MAX_ROOMS", 3)
    lobby = cache.Lobby(make_rules("scopa"), "greedy", 0, 1)
    games = [lobby.new(None).room for _ in range(3)]
    finished = games[1]
    finished.advance(0.0)
    while not finished.state.done:
        finished.play(finished.id, finished.state.legal_actions()[0], 0.0,
                      len(finished.events))
    assert finished.agents == {}  # its agents are let go; its record stays
    verify_record(json.loads(finished.record_line()))
    games[0].advance(0.0)
    games[0].play(games[0].id, games[0].state.legal_actions()[0], 0.0, len(games[0].events))
    lobby.get(games[0].id)  # the oldest is used again; games[2] is now the oldest live one
    extra = lobby.new(None).room
    assert list(lobby.entries) == [games[2].id, games[0].id, extra.id]  # the finished one went
    lobby.new(None)  # no finished game left: the least recently used goes
    assert list(lobby.entries)[0] == games[0].id and games[2].id not in lobby.entries
    # a game let go is read back from the store as it was, and plays on
    back = lobby.get(finished.id).room
    assert back.record_line() == finished.record_line()
    again = lobby.get(games[2].id).room
    assert again.state.seed == games[2].state.seed and again.events == games[2].events
    lobby.entries.clear()
    first = lobby.get(games[0].id).room
    assert [e["text"] for e in first.events] == [e["text"] for e in games[0].events]
    assert first.view(0) == games[0].view(0)


def _finish(room: Any) -> None:
    room.advance(0.0)
    while not room.state.done:
        room.play(room.id, room.state.legal_actions()[0], 0.0, len(room.events))


def test_finished_matches_past_their_own_bound_leave_memory_not_the_store(monkeypatch) -> None:
    """Finished matches are the heaviest in memory (their whole log) and the least used:
    past ``MAX_DONE`` of them the least recently used goes, however few rooms there are;
    it is read back whole when asked for again."""
    from scopa_web import lobby as cache

    monkeypatch.setattr(cache, "MAX_DONE", 2)
    lobby = cache.Lobby(make_rules("scopa"), "greedy", 0, 1)
    playing = lobby.new(None).room
    done = [lobby.new(None).room for _ in range(3)]
    for room in done:
        _finish(room)
    lobby.get(done[0].id)  # used again: done[1] is now the least recently used finished
    lobby.new(None)
    assert done[1].id not in lobby.entries
    assert {playing.id, done[0].id, done[2].id} <= set(lobby.entries)
    assert lobby.get(done[1].id).room.record_line() == done[1].record_line()


def test_a_client_far_behind_gets_every_move_and_the_room_as_it_is_now() -> None:
    """Positions are kept for the last ``KEEP_SHOWN`` moves: a client further behind gets
    each older move without its position, then the room now (the page shows that)."""
    from scopa_web import lobby as cache
    from scopa_web import rooms
    from scopa_web.live import news

    lobby = cache.Lobby(make_rules("scopa"), "greedy", 0, 1)
    room = lobby.new(None).room
    room.advance(0.0)
    while len(room.events) < rooms.KEEP_SHOWN + 6:
        room.play(room.id, room.state.legal_actions()[0], 0.0, len(room.events))
    messages = news(room, 0, 0).decode().strip().split("\n\n")
    moves = [json.loads(m.split("data: ", 1)[1]) for m in messages[:-1]]
    assert [m["event"]["n"] for m in moves] == list(range(len(room.events)))
    old = len(room.events) - rooms.KEEP_SHOWN
    assert all(m["view"] is None for m in moves[:old])
    assert [m["view"]["moves"] for m in moves[old:]] == list(range(old + 1, len(room.events) + 1))
    assert messages[-1].startswith("event: room") and json.loads(
        messages[-1].split("data: ", 1)[1])["moves"] == len(room.events)


def test_the_server_process_freezes_start_up_out_of_the_collectors_passes() -> None:
    """``scopa serve`` sets the garbage collector for its answer times (in a process of
    its own: it changes the interpreter's collector)."""
    out = fresh_python(
        "import gc\nfrom scopa_web.server import GC_YOUNG, steady_collector\n"
        "before = gc.get_freeze_count()\nsteady_collector()\n"
        "print(before, gc.get_freeze_count() > 10_000, gc.get_threshold()[0] == GC_YOUNG)\n")
    assert out == "0 True True"
