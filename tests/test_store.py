"""The database of ``scopa serve`` (scopa_web/store.py): the schema's migration, files it
refuses in one line without touching them, and a real ``scopa serve`` killed with
SIGKILL mid-match and started again on the same file: every match goes on."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agents import make_agent
from scopa_cli import main as scopa
from scopa_env.play import play_match
from scopa_env.records import replay, verify_record
from scopa_env.rules import make_rules
from scopa_web.store import SCHEMA_V1, SCHEMA_VERSION, Store, StoreError, default_path
from tests.test_web import Client

ROOT = Path(__file__).resolve().parent.parent


def _v1_file(path: Path, rec: dict[str, Any]) -> None:
    """A database as version 1 of the schema wrote it, holding the finished match ``rec``."""
    db = sqlite3.connect(path)
    db.executescript(SCHEMA_V1)
    db.execute("INSERT INTO rooms VALUES ('r1', 'room', 1.0, ?, ?, 2.0, ?, ?)",
               (json.dumps(rec["rules"]), rec["seed"], json.dumps(rec["match_score"]),
                rec["winner"]))
    for s, name in enumerate(rec["players"]):
        db.execute("INSERT INTO seats VALUES ('r1', ?, ?, ?, NULL, NULL)",
                   (s, name if s else None, name))
    for n, st in enumerate(replay(rec)):
        db.execute("INSERT INTO moves VALUES ('r1', ?, ?, ?, 1.5)",
                   (n, st.state_before.to_move, st.action))
    db.execute("PRAGMA user_version = 1")
    db.commit()
    db.close()


def test_a_version_1_file_is_migrated_and_its_hands_filled_in(tmp_path: Path) -> None:
    rules = make_rules("scopa")
    rec = play_match(rules, 9, [make_agent("greedy", seed=1), make_agent("random", seed=2)],
                     ["ann", "random"])
    path = tmp_path / "old.db"
    _v1_file(path, rec)
    store = Store(path)
    assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 2
    hands = store.db.execute("SELECT points0, points1 FROM hands ORDER BY hand").fetchall()
    assert [list(h) for h in hands] == [[e["points"]["total"] for e in h["score"]]
                                        for h in rec["hands"]]
    (match,) = store.history()
    assert match["players"] == ["ann", "random"] and match["hands"] == len(rec["hands"])
    stats = {p["name"]: p for p in store.standings()}
    assert stats["ann"]["matches"] == 1 and stats["ann"]["wins"] == int(rec["winner"] == 0)
    assert not stats["ann"]["agent"] and stats["random"]["agent"]
    loaded = store.load_room("r1")
    assert loaded is not None and loaded["actions"] == [st.action for st in replay(rec)]
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.close()
    Store(path).close()  # opened again: nothing left to migrate


def _one_line_refusal(capsys, tmp_path: Path, path: Path, message: str) -> None:
    before = path.read_bytes()
    assert scopa(["serve", "--port", "0", "--db", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("scopa serve: error: ") and err.count("\n") == 1, err
    assert message in err and "Traceback" not in err
    assert path.read_bytes() == before  # the file is left as it was


def test_a_file_that_is_not_a_database_is_refused_in_one_line(tmp_path: Path, capsys) -> None:
    path = tmp_path / "notes.db"
    path.write_text("my notes, not a database\n" * 50)
    _one_line_refusal(capsys, tmp_path, path, f"cannot use the database {path}: it is not a "
                                              "SQLite database or it is damaged")


def test_a_damaged_database_is_refused_in_one_line(tmp_path: Path, capsys) -> None:
    path = tmp_path / "damaged.db"
    Store(path).close()
    raw = bytearray(path.read_bytes())
    raw[100:400] = b"\xff" * 300  # the first page's b-tree header
    path.write_bytes(bytes(raw))
    _one_line_refusal(capsys, tmp_path, path, "it is not a SQLite database or it is damaged")


def test_a_read_only_database_is_refused_in_one_line(tmp_path: Path, capsys,
                                                     monkeypatch) -> None:
    path = tmp_path / "ro.db"
    Store(path).close()
    path.chmod(0o444)
    if os.access(path, os.W_OK):  # root writes any file: make the check see it read-only
        real = os.access
        monkeypatch.setattr(os, "access", lambda p, mode: False if os.fspath(p) == str(path)
                            else real(p, mode))
    _one_line_refusal(capsys, tmp_path, path, f"cannot use the database {path}: it is "
                                              "read-only")


def test_a_newer_schema_and_a_missing_folder_are_refused(tmp_path: Path, capsys) -> None:
    path = tmp_path / "new.db"
    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = 99")
    db.commit()
    db.close()
    _one_line_refusal(capsys, tmp_path, path, "its schema is version 99, written by a newer "
                                              f"scopa (this one knows up to {SCHEMA_VERSION})")
    with pytest.raises(StoreError, match="folder .*/nowhere does not exist"):
        Store(tmp_path / "nowhere" / "x.db")


def test_the_default_file_is_under_the_data_directory(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_path() == tmp_path / "xdg" / "scopa" / "scopa.db"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_path() == tmp_path / "home" / ".local" / "share" / "scopa" / "scopa.db"
    store = Store(default_path(), make_folder=True)
    store.close()
    assert default_path().exists()


# -- a real server killed mid-match --------------------------------------------------------------
def _start(db: Path) -> tuple[subprocess.Popen, Client]:
    proc = subprocess.Popen([sys.executable, "-m", "scopa_cli", "serve", "--port", "0",
                             "--db", str(db)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    m = re.search(r"open http://127\.0\.0\.1:(\d+)/", line)
    assert m, line + (proc.stderr.read() if proc.stderr else "")
    assert str(db) in proc.stdout.readline()
    return proc, Client(int(m.group(1)))


def _turn(client: Client, rid: str, tokens: dict[int, str]) -> dict[str, Any]:
    _, got = client.call("GET", f"/api/room/{rid}")
    view = got["view"]
    if view["done"]:
        return view
    seat = view["to_move"]
    _, mine = client.call("GET", f"/api/room/{rid}?token={tokens[seat]}")
    status, out = client.call("POST", f"/api/room/{rid}/move",
                              {"token": tokens[seat], "action": mine["view"]["legal"][0]["id"],
                               "n": mine["view"]["moves"]})
    assert status == 200, out
    return out["view"]


def test_kill_9_mid_match_loses_no_move(tmp_path: Path) -> None:
    db = tmp_path / "serve.db"
    proc, client = _start(db)
    try:
        _, made = client.call("POST", "/api/rooms", {"seats": [None, None], "seat": 0,
                                                     "name": "ann"})
        rid = made["room"]
        _, joined = client.call("POST", f"/api/room/{rid}/join",
                                {"invite": made["invites"]["1"], "name": "bob"})
        tokens = {0: made["token"], 1: joined["token"]}
        for _ in range(9):
            _turn(client, rid, tokens)
        _, solo = client.call("POST", "/api/new", {"seed": 4})
        _, solo_after = client.call("POST", f"/api/game/{solo['game']}/move",
                                    {"action": solo["view"]["legal"][0]["id"],
                                     "n": solo["view"]["moves"]})
        _, before = client.call("GET", f"/api/room/{rid}?token={tokens[0]}")
        assert before["view"]["moves"] == 9
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL

    proc, client = _start(db)
    try:
        _, after = client.call("GET", f"/api/room/{rid}?token={tokens[0]}")
        for x in (before, after):
            x["view"].pop("idle_in")  # the time left to move (started again on restart)
        assert after == before  # the same position, the same log, the same seat
        status, game = client.call("GET", f"/api/game/{solo['game']}")
        assert status == 200 and game["log"] == [
            {k: v for k, v in e.items() if k != "view"} for e in
            solo["events"] + solo_after["events"]]
        view = after["view"]
        while not view["done"]:
            view = _turn(client, rid, tokens)
        _, text = client.call("GET", f"/api/room/{rid}/record")
        rec = json.loads(text)
        verify_record(rec)
        flat = [m for h in rec["hands"] for m in h["moves"]]
        assert [(m["seat"], m["card"], m["capture"]) for m in flat[:9]] == [
            (e["seat"], e["card"], e["capture"]) for e in before["log"]]
        path = tmp_path / "after.jsonl"
        path.write_text(text)
        assert scopa(["verify", str(path)]) == 0
        _, hist = client.call("GET", "/api/history")
        assert rid in [m["room"] for m in hist["matches"]]
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert "Traceback" not in err



def test_writes_are_committed_in_groups_and_a_refused_one_fails_alone(tmp_path: Path) -> None:
    """Every write waiting when the writer comes round shares one transaction; one the
    database refuses is written again on its own: it fails, the others are committed."""
    from concurrent.futures import Future

    store = Store(tmp_path / "group.db")
    note = "INSERT INTO rooms (id, kind, created, rules, seed) VALUES (?, 'solo', 0, '{}', 1)"
    waiting: list[Future[None]] = [Future(), Future()]
    store.waiting += [([(note, ("a",))], waiting[0]),
                      ([(note, ("b",)), ("INSERT INTO no_such_table VALUES (1)", ())],
                       waiting[1])]
    store._write([(note, ("c",))])  # starts the writer: the three writes in one group
    assert waiting[0].result() is None
    with pytest.raises(sqlite3.OperationalError, match="no_such_table"):
        waiting[1].result()
    with store.lock:
        ids = [r for (r,) in store.db.execute("SELECT id FROM rooms ORDER BY id")]
    assert ids == ["a", "c"]  # "b" went with its refused statement: whole or not at all
    store.close()
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        store._write([(note, ("d",))])
