"""Every match of ``scopa serve`` in one SQLite file (the standard library's ``sqlite3``).

Rooms (one-person games are rooms too, ``kind`` ``solo``), their seats, each move as it
is played, each hand's points and the result. Write-ahead log, ``synchronous=NORMAL``:
a committed move survives the server being killed (``kill -9``); on restart a room is
read back and its match replayed from its seed and moves (``load_room``). The schema's
version is SQLite's ``user_version``; ``MIGRATIONS[k]`` takes a file from version k to
k + 1, so a file written by an older server is brought up to date when it is opened.

A file that is not a SQLite database, is damaged, is read-only or was written by a
newer schema raises ``StoreError`` (a ``ValueError``: ``scopa serve`` prints its one
line and exits) before anything is written to it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scopa_env.game import GameState, StepResult, apply, new_match
from scopa_env.rules import make_rules

DB_NAME = "scopa.db"

SCHEMA_V1 = """
CREATE TABLE rooms (id TEXT PRIMARY KEY, kind TEXT NOT NULL, created REAL NOT NULL,
  rules TEXT NOT NULL, seed INTEGER NOT NULL, finished REAL, match_score TEXT,
  winner INTEGER);
CREATE TABLE seats (room TEXT NOT NULL REFERENCES rooms(id), seat INTEGER NOT NULL,
  agent TEXT, name TEXT NOT NULL, invite TEXT, token TEXT, PRIMARY KEY (room, seat));
CREATE TABLE moves (room TEXT NOT NULL REFERENCES rooms(id), n INTEGER NOT NULL,
  seat INTEGER NOT NULL, action INTEGER NOT NULL, at REAL NOT NULL, PRIMARY KEY (room, n));
"""


def _script(db: sqlite3.Connection, sql: str) -> None:
    """Each statement of ``sql`` in the open transaction (``executescript`` commits it)."""
    for statement in sql.split(";"):
        if statement.strip():
            db.execute(statement)


def _to_v2(db: sqlite3.Connection) -> None:
    """Version 2: each hand's points (the players' page), filled in for the matches
    already stored by replaying their moves."""
    _script(db, """
    CREATE TABLE hands (room TEXT NOT NULL REFERENCES rooms(id), hand INTEGER NOT NULL,
      points0 INTEGER NOT NULL, points1 INTEGER NOT NULL, PRIMARY KEY (room, hand));
    CREATE INDEX rooms_finished ON rooms(finished);
    """)
    for rid, rules, seed in db.execute("SELECT id, rules, seed FROM rooms").fetchall():
        s = new_match(make_rules(**json.loads(rules)), seed=seed)
        hand = 0
        for (action,) in db.execute("SELECT action FROM moves WHERE room = ? ORDER BY n",
                                    (rid,)).fetchall():
            res = apply(s, action)
            if res.hand is not None:
                pts = [e["points"]["total"] for e in res.hand.score]
                db.execute("INSERT INTO hands VALUES (?, ?, ?, ?)", (rid, hand, *pts))
                hand += 1


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [
    lambda db: _script(db, SCHEMA_V1),  # 0 -> 1: a new file
    _to_v2,
]
SCHEMA_VERSION = len(MIGRATIONS)


class StoreError(ValueError):
    """A database file that cannot be used (one line naming it)."""


def default_path() -> Path:
    """``$XDG_DATA_HOME/scopa/scopa.db``, else ``~/.local/share/scopa/scopa.db``."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"),
                                                           ".local", "share")
    return Path(base) / "scopa" / DB_NAME


class Store:
    """The database of one server: every call takes the store's lock (one connection,
    shared by the server's threads); a write is one transaction."""

    def __init__(self, path: str | os.PathLike | None, *, make_folder: bool = False):
        self.path = ":memory:" if path is None else os.fspath(path)
        self.lock = threading.Lock()
        where = self.path
        if path is not None:
            folder = os.path.dirname(os.path.abspath(self.path))
            if make_folder:
                try:
                    os.makedirs(folder, exist_ok=True)
                except OSError as e:
                    raise StoreError(f"cannot create the folder of the database {where}: "
                                     f"{e.strerror or e}") from None
            if not os.path.isdir(folder):
                raise StoreError(f"cannot open the database {where}: folder {folder} does "
                                 "not exist")
            if os.path.isdir(self.path):
                raise StoreError(f"cannot open the database {where}: it is a folder")
        target, uri = self.path, False
        if path is not None and os.path.exists(self.path) and not os.access(self.path, os.W_OK):
            target, uri = f"file:{urllib.parse.quote(os.path.abspath(self.path))}?mode=ro", True
        try:
            self.db = sqlite3.connect(target, check_same_thread=False, timeout=10,
                                      isolation_level=None, uri=uri)
        except sqlite3.Error as e:
            raise StoreError(f"cannot open the database {where}: {e}") from None
        try:
            self._prepare()
        except sqlite3.Error as e:
            self.db.close()
            text = str(e)
            if "readonly" in text or "read-only" in text:
                why = "it is read-only (scopa serve writes every move to it)"
            elif "not a database" in text or "malformed" in text or "corrupt" in text:
                why = f"it is not a SQLite database or it is damaged ({text})"
            else:
                why = text
            raise StoreError(f"cannot use the database {where}: {why}") from None

    def _prepare(self) -> None:
        db = self.db
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(f"cannot use the database {self.path}: its schema is version "
                             f"{version}, written by a newer scopa (this one knows up to "
                             f"{SCHEMA_VERSION})")
        check = db.execute("PRAGMA quick_check").fetchone()[0]
        if check != "ok":
            raise sqlite3.DatabaseError(f"malformed: quick_check says {check}")
        if self.path != ":memory:":
            mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if mode.lower() != "wal":
                raise sqlite3.OperationalError(f"readonly: journal mode stays {mode}")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")
        db.execute("BEGIN IMMEDIATE")  # a read-only file fails here, before any change
        try:
            for k in range(version, SCHEMA_VERSION):
                MIGRATIONS[k](db)
                db.execute(f"PRAGMA user_version = {k + 1}")
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")  # a write: fails if read-only
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def close(self) -> None:
        with self.lock:
            self.db.close()

    def _write(self, statements: list[tuple[str, tuple[Any, ...]]]) -> None:
        with self.lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                for sql, args in statements:
                    self.db.execute(sql, args)
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise

    # -- writes (the rooms' sink) -------------------------------------------------------------
    def create_room(self, room: Any) -> None:
        """A new room and its seats."""
        rules = json.dumps(room.state.rules.to_dict())
        rows = [("INSERT INTO rooms (id, kind, created, rules, seed) VALUES (?, ?, ?, ?, ?)",
                 (room.id, room.kind, room.created, rules, room.seed))]
        rows += [("INSERT INTO seats VALUES (?, ?, ?, ?, ?, ?)",
                  (room.id, s, x.agent, x.name, x.invite, x.token))
                 for s, x in enumerate(room.seats)]
        self._write(rows)

    def seat_changed(self, room: Any, seat: int) -> None:
        x = room.seats[seat]
        self._write([("UPDATE seats SET agent = ?, name = ?, invite = ?, token = ? "
                      "WHERE room = ? AND seat = ?",
                      (x.agent, x.name, x.invite, x.token, room.id, seat))])

    def move_played(self, room: Any, n: int, seat: int, action: int, result: StepResult,
                    after: GameState) -> None:
        rows: list[tuple[str, tuple[Any, ...]]] = [
            ("INSERT INTO moves VALUES (?, ?, ?, ?, ?)", (room.id, n, seat, action, time.time()))]
        if result.hand is not None:
            pts = [e["points"]["total"] for e in result.hand.score]
            rows.append(("INSERT INTO hands VALUES (?, ?, ?, ?)",
                         (room.id, len(room.results), *pts)))
        if after.done:
            rows.append(("UPDATE rooms SET finished = ?, match_score = ?, winner = ? "
                         "WHERE id = ?", (time.time(), json.dumps(after.match_score),
                                          after.winner, room.id)))
        self._write(rows)

    # -- reads --------------------------------------------------------------------------------
    def load_room(self, rid: str) -> dict[str, Any] | None:
        """A stored room: ``kind``, ``rules`` (a dict), ``seed``, ``created``, ``seats``
        (dicts of ``Seat`` fields) and ``actions`` (every move played); None if unknown."""
        with self.lock:
            row = self.db.execute("SELECT kind, rules, seed, created FROM rooms WHERE id = ?",
                                  (rid,)).fetchone()
            if row is None:
                return None
            seats = self.db.execute("SELECT agent, name, invite, token FROM seats WHERE "
                                    "room = ? ORDER BY seat", (rid,)).fetchall()
            actions = [a for (a,) in self.db.execute(
                "SELECT action FROM moves WHERE room = ? ORDER BY n", (rid,))]
        return {"kind": row[0], "rules": json.loads(row[1]), "seed": row[2],
                "created": row[3], "actions": actions,
                "seats": [dict(zip(("agent", "name", "invite", "token"), s, strict=True))
                          for s in seats]}

    def history(self, limit: int = 100, offset: int = 0) -> list[dict[str, Any]]:
        """The finished matches, the latest first."""
        with self.lock:
            rows = self.db.execute(
                "SELECT r.id, r.kind, r.rules, r.finished, r.match_score, r.winner, "
                "(SELECT json_group_array(name) FROM (SELECT name FROM seats "
                " WHERE room = r.id ORDER BY seat)), "
                "(SELECT count(*) FROM hands WHERE room = r.id) "
                "FROM rooms r WHERE r.finished IS NOT NULL "
                "ORDER BY r.finished DESC LIMIT ? OFFSET ?", (limit, offset)).fetchall()
        return [{"room": r[0], "kind": r[1], "rules": json.loads(r[2])["name"],
                 "players": json.loads(r[6]), "finished": r[3],
                 "match_score": json.loads(r[4]), "winner": r[5], "hands": r[7]}
                for r in rows]

    def standings(self) -> list[dict[str, Any]]:
        """Each player's and agent's record over the finished matches: matches, wins,
        hands and its team's points per hand, by name (a person's) or spec (an agent's;
        one side of a match counts once, however many of its seats the name holds)."""
        with self.lock:
            rows = self.db.execute(
                "WITH p AS (SELECT DISTINCT s.room, s.name, s.agent IS NOT NULL AS agent, "
                "  s.seat % 2 AS team, r.winner FROM seats s JOIN rooms r ON r.id = s.room "
                "  WHERE r.finished IS NOT NULL), "
                "h AS (SELECT room, count(*) AS n, sum(points0) AS p0, sum(points1) AS p1 "
                "  FROM hands GROUP BY room) "
                "SELECT p.name, p.agent, count(*), sum(p.winner = p.team), sum(h.n), "
                "sum(CASE p.team WHEN 0 THEN h.p0 ELSE h.p1 END) "
                "FROM p JOIN h ON h.room = p.room GROUP BY p.name, p.agent "
                "ORDER BY count(*) DESC, p.name").fetchall()
        return [{"name": r[0], "agent": bool(r[1]), "matches": r[2], "wins": r[3],
                 "hands": r[4], "points_per_hand": (r[5] or 0) / r[4] if r[4] else None}
                for r in rows]
