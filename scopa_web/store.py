"""Every match of ``scopa serve`` in one SQLite file (the standard library's ``sqlite3``).

Rooms (one-person games are rooms too, ``kind`` ``solo``), their seats, each move as it
is played, each hand's points and the result. Write-ahead log, ``synchronous=NORMAL``:
a committed move survives the server being killed (``kill -9``); on restart a room is
read back and its match replayed from its seed and moves (``load_room``). The schema's
version is SQLite's ``user_version``; ``MIGRATIONS[k]`` takes a file from version k to
k + 1, so a file written by an older server is brought up to date when it is opened.

A file is scopa's (SQLite's ``application_id`` ``APPLICATION_ID`` and scopa's tables
of its schema; a file of an older scopa, without the id, holding scopa's tables only) or
it is refused untouched: ``inspect_file`` makes every check on the file opened read-only
(a ``-wal``/``-shm`` the check made is removed) before the first write. A file that is
not a SQLite database, is damaged, is another program's, has no write permission (for
root too) or was written by a newer schema raises ``StoreError`` (a ``ValueError``:
``scopa serve`` prints its one line and exits).

Writes are committed in groups by one writer thread: a write waits until the transaction
holding it is committed (what it returns, it is on disk as before), and every write
waiting when the writer comes round shares that transaction. One commit for many moves,
and one thread at the database: under load the server's many worker threads each taking
the database's lock in turn (each also waiting for Python's GIL while it held the lock)
had made a move wait up to 2 s for it (``benchmarks/serve_load.py --hostile``). A group
the database refuses is written again one write at a time, so a refusal is its own
write's alone.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Callable
from concurrent.futures import Future
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


APPLICATION_ID = 0x53636F70  # "Scop": SQLite's application_id of a scopa serve database
TABLES = [{"rooms", "seats", "moves"}, {"rooms", "seats", "moves", "hands"}]  # by version
SQLITE_MAGIC = b"SQLite format 3\x00"


def _why(e: sqlite3.Error) -> str:
    text = str(e)
    if "readonly" in text or "read-only" in text:
        return "it is read-only (scopa serve writes every move to it)"
    if "not a database" in text or "malformed" in text or "corrupt" in text:
        return f"it is not a SQLite database or it is damaged ({text})"
    return text


def _check_place(path: str, make_folder: bool) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    if make_folder:
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as e:
            raise StoreError(f"cannot create the folder of the database {path}: "
                             f"{e.strerror or e}") from None
    if not os.path.isdir(folder):
        raise StoreError(f"cannot open the database {path}: folder {folder} does not exist")
    if os.path.isdir(path):
        raise StoreError(f"cannot open the database {path}: it is a folder")


def _read_only(path: str) -> bool:
    """True for a file nobody may write (no write bit: read-only for root too) or that
    cannot be opened for writing (tried: a read-only mount, another owner); the file is
    opened, not written."""
    if not os.stat(path).st_mode & 0o222:
        return True
    try:
        os.close(os.open(path, os.O_RDWR))
    except OSError:
        return True
    return False


def inspect_file(path: str) -> None:
    """Every check of an existing database file, made without changing it: SQLite's
    header, writable, scopa's ``application_id`` (or a file of an older scopa, which
    had none, holding only scopa's tables), a schema this scopa knows, its tables, an
    intact file. Opened read-only; a ``-wal``/``-shm`` file the check made is removed.
    Raises ``StoreError`` naming what is wrong."""
    bad = f"cannot use the database {path}: "
    with open(path, "rb") as f:
        head = f.read(100)
    if len(head) < 100 or not head.startswith(SQLITE_MAGIC):
        raise StoreError(bad + "it is not a SQLite database or it is damaged (no SQLite "
                               "header)")
    if _read_only(path):
        raise StoreError(bad + "it is read-only (scopa serve writes every move to it)")
    side = [path + "-wal", path + "-shm"]
    before = {p for p in side if os.path.exists(p)}
    uri = f"file:{urllib.parse.quote(os.path.abspath(path))}?mode=ro"
    try:
        db = sqlite3.connect(uri, uri=True, isolation_level=None)
        try:
            _inspect(db, bad)
        finally:
            db.close()
    except sqlite3.Error as e:
        raise StoreError(bad + _why(e)) from None
    finally:
        for p in side:
            if p not in before and os.path.exists(p):
                os.remove(p)


def _inspect(db: sqlite3.Connection, bad: str) -> None:
    app = db.execute("PRAGMA application_id").fetchone()[0]
    version = db.execute("PRAGMA user_version").fetchone()[0]
    tables = {n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if app not in (0, APPLICATION_ID):
        raise StoreError(bad + f"it is another program's SQLite database (application_id "
                               f"{app:#x}, not scopa's {APPLICATION_ID:#x})")
    if version > SCHEMA_VERSION:
        raise StoreError(bad + f"its schema is version {version}, written by a newer scopa "
                               f"(this one knows up to {SCHEMA_VERSION})")
    want = TABLES[version - 1] if version else set()
    if tables != want:
        shown = ", ".join(sorted(tables)) or "none"
        raise StoreError(bad + f"it is not a scopa database (tables: {shown}; a scopa "
                               f"database of schema {version} holds "
                               f"{', '.join(sorted(want)) or 'none yet'})")
    check = db.execute("PRAGMA quick_check").fetchone()[0]
    if check != "ok":
        raise StoreError(bad + f"it is not a SQLite database or it is damaged (quick_check: "
                               f"{check})")


def default_path() -> Path:
    """``$XDG_DATA_HOME/scopa/scopa.db``, else ``~/.local/share/scopa/scopa.db``."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"),
                                                           ".local", "share")
    return Path(base) / "scopa" / DB_NAME


Statements = list[tuple[str, tuple[Any, ...]]]


class Store:
    """The database of one server: every call takes the store's lock (one connection,
    shared by the server's threads); writes are committed in groups by the writer
    thread (``_write``), each write whole or not at all."""

    def __init__(self, path: str | os.PathLike | None, *, make_folder: bool = False):
        self.path = ":memory:" if path is None else os.fspath(path)
        self.lock = threading.Lock()
        self.waiting: list[tuple[Statements, Future[None]]] = []  # writes to commit
        self.wake = threading.Condition()  # guards ``waiting``, wakes the writer
        self.writer: threading.Thread | None = None  # started by the first write
        self.closing = False
        if path is not None:
            _check_place(self.path, make_folder)
            if os.path.exists(self.path) and os.path.getsize(self.path) > 0:
                inspect_file(self.path)  # every check, read-only: refused untouched
        try:
            self.db = sqlite3.connect(self.path, check_same_thread=False, timeout=10,
                                      isolation_level=None)
        except sqlite3.Error as e:
            raise StoreError(f"cannot open the database {self.path}: {e}") from None
        try:
            self._prepare()
        except sqlite3.Error as e:
            self.db.close()
            raise StoreError(f"cannot use the database {self.path}: {_why(e)}") from None

    def _prepare(self) -> None:
        """Bring the (checked) file to the current schema in one transaction, then switch
        on the write-ahead log. A file that refuses writes fails at ``BEGIN IMMEDIATE``,
        before any change."""
        db = self.db
        version = db.execute("PRAGMA user_version").fetchone()[0]
        db.execute("BEGIN IMMEDIATE")
        try:
            for k in range(version, SCHEMA_VERSION):
                MIGRATIONS[k](db)
                db.execute(f"PRAGMA user_version = {k + 1}")
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")  # a write: fails if read-only
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        if self.path != ":memory:":
            mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if mode.lower() != "wal":
                raise sqlite3.OperationalError(f"readonly: journal mode stays {mode}")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")

    def close(self) -> None:
        """Commit the writes waiting, stop the writer, close the file."""
        with self.wake:
            self.closing = True
            self.wake.notify()
        if self.writer is not None:
            self.writer.join()
        with self.lock:
            self.db.close()

    def _write(self, statements: Statements) -> None:
        """Commit ``statements`` as one whole (in a group with the other writes waiting);
        returns once committed, raises what the database raised."""
        done: Future[None] = Future()
        with self.wake:
            if self.closing:
                raise sqlite3.ProgrammingError(f"the database {self.path} is closed")
            self.waiting.append((statements, done))
            if self.writer is None:
                self.writer = threading.Thread(target=self._writes, name="scopa-store-writer",
                                               daemon=True)
                self.writer.start()
            self.wake.notify()
        done.result()

    def _writes(self) -> None:
        """The writer thread: each time, every write waiting in one transaction."""
        while True:
            with self.wake:
                while not self.waiting and not self.closing:
                    self.wake.wait()
                group, self.waiting = self.waiting, []
            if not group:
                return  # closing, nothing left
            with self.lock:
                try:
                    self._commit([row for statements, _ in group for row in statements])
                except BaseException:  # each write on its own: the refusal is one's alone
                    for statements, done in group:
                        try:
                            self._commit(statements)
                        except BaseException as e:
                            done.set_exception(e)
                        else:
                            done.set_result(None)
                else:
                    for _, done in group:
                        done.set_result(None)

    def _commit(self, statements: Statements) -> None:
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

    def waiting_rooms(self, since: float) -> int:
        """How many rooms created after ``since`` wait for a person to take a seat."""
        with self.lock:
            return self.db.execute(
                "SELECT count(*) FROM rooms r WHERE r.kind = 'room' AND r.created > ? AND "
                "r.finished IS NULL AND EXISTS (SELECT 1 FROM seats s WHERE s.room = r.id "
                "AND s.agent IS NULL AND s.token IS NULL)", (since,)).fetchone()[0]

    def history(self, limit: int = 100, offset: int = 0, player: str | None = None
                ) -> list[dict[str, Any]]:
        """The finished matches, the latest first (``player``: those where a seat has
        that name, a person's or an agent's spec)."""
        with self.lock:
            rows = self.db.execute(
                "SELECT r.id, r.kind, r.rules, r.finished, r.match_score, r.winner, "
                "(SELECT json_group_array(name) FROM (SELECT name FROM seats "
                " WHERE room = r.id ORDER BY seat)), "
                "(SELECT count(*) FROM hands WHERE room = r.id) "
                "FROM rooms r WHERE r.finished IS NOT NULL AND (? IS NULL OR EXISTS "
                "(SELECT 1 FROM seats WHERE room = r.id AND name = ?)) "
                "ORDER BY r.finished DESC LIMIT ? OFFSET ?",
                (player, player, limit, offset)).fetchall()
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
