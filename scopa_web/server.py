"""``scopa serve``: people play agents and each other in the browser; every match is kept.

A ``ThreadingHTTPServer`` from the standard library (no web framework to install), one
thread per connection, HTTP/1.1 keep-alive. Pages: ``/`` one person against the
server's opponent (one match per tab), ``/room`` rooms (create one, take a seat by its
link, play or watch), ``/history`` and ``/players`` (the database's records). Every
match, one person's or a room's, is a ``scopa_web.rooms.Room`` stored move by move in
SQLite (``scopa_web.store``) and read back after a restart. The JSON API:

- ``POST /api/new`` (``{"seed": N}`` optional): a one-person match, ``201`` with
  ``{"game": ID, "view", "events"}`` (the agents' moves before the person's first turn);
  ``GET /api/game/ID`` (``view``, ``log``), ``POST /api/game/ID/move``
  (``{"action": CATALOGUE_ID}`` or ``{"move": "7d x 3c"}``: the move and the agents'
  replies, each an event with the view after it), ``GET /api/game/ID/record``;
- ``GET /api/config``: the rule sets, options and agent specs a room may use;
- ``POST /api/rooms`` (``rules``, ``players``, ``target_score``, ``options``, ``seats``:
  null for a person or an agent spec, ``seat``: the creator's, ``name``): ``201`` with
  ``room``, the creator's ``token`` and the ``invites`` of the other people's seats;
- ``POST /api/room/ID/join`` (``invite``, ``name``): the seat and its token;
- ``GET /api/room/ID[?token=T]``: the view of that seat (none: a watcher's) and the log;
- ``GET /api/room/ID/events[?token=T&since=N]``: the live channel (server-sent events:
  ``move`` with the view after it, ``room`` with the view now, ``revoked``);
- ``POST /api/room/ID/move`` (``token``, ``action`` or ``move``), ``POST
  /api/room/ID/hand-over`` (``token``, ``seat``, ``agent`` optional): an idle seat
  given to an agent by another seated person;
- ``GET /api/room/ID/record``, ``GET /api/match/ID/record``: the finished match as a
  game record (game-record.md; ``scopa verify`` checks it);
- ``POST /api/game/ID/hint``, ``POST /api/room/ID/hint`` (``token``): at the seat's turn,
  the server's reviewer's analysis of the seat's decision (``scopa_web.reviews``:
  ``--hint-agent``); ``GET /api/match/ID/review``: the review of a finished match
  (``202`` with its progress while it is computed), ``GET /review/ID`` its page;
- ``GET /api/history[?offset=N]``, ``GET /api/players``.

A view holds only what its seat may know (``scopa_env.observation.info_set``), a
watcher's only what is public, and the seed (it fixes every deck) only once the match is
over. A bad request gets ``{"error": MESSAGE}`` with a 4xx status; an unexpected failure
a 500 with the message, and the server goes on.
"""

from __future__ import annotations

import ipaddress
import json
import os
import secrets
import socket
import sqlite3
import sys
import threading
import time
import traceback
from collections import OrderedDict
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from agents import make_agent
from agents.commands import MAX_SEED
from scopa_env.game import GameState
from scopa_env.moves import action_move, parse_action
from scopa_env.observation import info_set
from scopa_env.play import derive_seed
from scopa_env.records import MatchRecorder
from scopa_env.rules import FOUR_PLAYER_ONLY, NAMED_RULES, PRIMIERA_TABLES, Rules, make_rules

from . import asset, fill, rooms
from .html import replay_page, waiting_page
from .reviews import Reviews
from .rooms import PERSON, ApiError, Room, Seat, check_name, check_spec, new_id, token_hash
from .store import Store, default_path

MAX_ROOMS = 1000  # rooms and one-person games kept in memory: past it, the least recently
# used one that nobody follows live is let go (a finished one first); it stays in the
# database and is read back when asked for again
MAX_WAITING = 200  # rooms waiting for people to take their seats, at most (in memory)
MAX_STREAMS = 1000  # live connections (server-sent events) at once, all rooms together
MAX_WATCHERS = 50  # live connections to one room by watchers (seats come on top)
PING_S = 15.0  # a live connection gets a comment line at least this often
IDLE_TIMEOUT = 120  # seconds a kept-alive connection may stay idle
BACKLOG = 1024  # connections waiting to be accepted (the standard library's 5 drops SYNs)
MAX_BODY = 16 * 1024
HUMAN = PERSON
DEFAULT_AGENTS = ("greedy", "random", "expert")


class Table:
    """A room in memory with what the server adds: its lock (a condition the live
    connections wait on) and its count of live connections."""

    def __init__(self, room: Room):
        self.room = room
        self.cond = threading.Condition()
        self.streams = 0
        self.watchers = 0

    def changed(self) -> None:
        """Wake the room's live connections (call with ``cond`` held)."""
        self.cond.notify_all()


class Hall:
    """Every room by id, in memory up to ``MAX_ROOMS`` and all in the store."""

    def __init__(self, store: Store):
        self.store = store
        self.tables: OrderedDict[str, Table] = OrderedDict()
        self.lock = threading.Lock()
        self.streams = 0

    def add(self, room: Room) -> Table:
        """A new room: stored, then kept."""
        self.store.create_room(room)
        table = Table(room)
        with self.lock:
            self.tables[room.id] = table
            self._trim()
        return table

    def _trim(self) -> None:
        while len(self.tables) > MAX_ROOMS:
            idle = [k for k, t in self.tables.items() if not t.streams]
            if not idle:
                return
            done = next((k for k in idle if self.tables[k].room.state.done), idle[0])
            del self.tables[done]

    def get(self, rid: str, kind: str | None = None) -> Table:
        """The room ``rid`` (read back from the store if it is not in memory); 404 if
        there is none (of ``kind``, when given)."""
        with self.lock:
            table = self.tables.get(rid)
            if table is not None:
                self.tables.move_to_end(rid)
        if table is None:
            table = self._load(rid, kind)
        if kind is not None and table.room.kind != kind:
            raise ApiError(404, _unknown(rid, kind))
        return table

    def _load(self, rid: str, kind: str | None) -> Table:
        data = self.store.load_room(rid) if len(rid) <= 64 else None
        if data is None:
            raise ApiError(404, _unknown(rid, kind))
        seats = [Seat(**x) for x in data["seats"]]
        try:
            room = Room(rid, make_rules(**data["rules"]), seats, data["seed"], data["created"],
                        sink=self.store, kind=data["kind"])
        except ValueError as e:
            raise ApiError(503, f"room {rid} cannot be resumed: {e}") from None
        try:
            room.restore(data["actions"], time.time())
        except ValueError as e:
            raise ApiError(503, f"room {rid} cannot be resumed: {e}") from None
        with self.lock:  # another request may have read it back meanwhile
            table = self.tables.setdefault(rid, Table(room))
            self.tables.move_to_end(rid)
            self._trim()
        return table


def _unknown(rid: str, kind: str | None) -> str:
    what = "game" if kind == "solo" else "room"
    return (f"no {what} {rid!r} on this server" + (": start a new match" if kind == "solo"
                                                   else " (check the link)"))


class Game:
    """A one-person match (a room of kind ``solo``): the person's seat is played with
    the game's id, every other seat by the server's opponent."""

    def __init__(self, table: Table):
        self.table = table
        room = table.room
        self.id = room.id
        self.seat = next(s for s, x in enumerate(room.seats) if x.person)
        self.lock = table.cond

    @property
    def room(self) -> Room:
        return self.table.room

    @property
    def state(self) -> GameState:
        return self.room.state

    @property
    def recorder(self) -> MatchRecorder:
        return self.room.recorder

    @property
    def log(self) -> list[dict[str, Any]]:
        return self.room.events

    @property
    def agents(self) -> dict[int, Any]:
        return self.room.agents

    def _events(self, ns: list[int]) -> list[dict[str, Any]]:
        return [{**self.room.events[n], "view": self.view(n)} for n in ns]

    def advance(self) -> list[dict[str, Any]]:
        """The agents' moves up to the person's turn or the end of the match."""
        return self._events(self.room.advance(time.time()))

    def play(self, action: int) -> list[dict[str, Any]]:
        """The person's move, then the agents' replies."""
        return self._events(self.room.play(self.id, action, time.time()))

    def view(self, k: int | None = None) -> dict[str, Any]:
        """What the person's seat may know after move ``k`` (None: now)."""
        return {"game": self.id, **self.room.view(self.seat, k)}

    def record_line(self) -> str:
        return self.room.record_line()


def request_seed(seed: Any) -> int | None:
    """The seed of ``POST /api/new``: none, an integer, or its decimal digits as a string
    (how the page sends it: a JavaScript number would round seeds past 2**53)."""
    if isinstance(seed, str) and seed.isascii() and seed.isdigit():
        seed = int(seed)
    if seed is not None and (type(seed) is not int or not 0 <= seed <= MAX_SEED):
        raise ApiError(400, f"seed must be a non-negative integer up to {MAX_SEED} (a number "
                            f"or a string of digits), got {seed!r}")
    return seed


def _one_line(e: ValueError) -> str:
    return str(e).replace(":\n  ", ": ").replace("\n  ", "; ").replace("\n", " ")


class Lobby:
    """The one-person games (``POST /api/new``) and the rooms (``POST /api/rooms``),
    all in one ``Hall``."""

    def __init__(self, rules: Rules, opponent: str, seat: int, seed: int | None,
                 store: Store | None = None, agents: list[str] | None = None,
                 hint_agent: str | None = None):
        if not 0 <= seat < rules.players:
            raise ValueError(f"--seat {seat} is not a seat of a {rules.players}-player game")
        if seed is not None and seed < 0:
            raise ValueError(f"--seed must be a non-negative integer, got {seed}")
        self.rules, self.opponent, self.seat, self.seed = rules, opponent, seat, seed
        self.started = 0
        self.count_lock = threading.Lock()
        try:  # a bad spec or checkpoint fails now, not per game
            make_agent(opponent, seed=0)
        except ValueError as e:  # the list of known agents, on one line
            raise ValueError(f"--opponent {opponent}: {_one_line(e)}") from None
        self.agents = list(dict.fromkeys([opponent, *(agents or DEFAULT_AGENTS)]))
        for spec in self.agents[1:]:
            try:
                make_agent(spec, seed=0)
            except ValueError as e:
                raise ValueError(f"--agents {spec}: {_one_line(e)}") from None
        self.reviews = None if hint_agent is None else Reviews(hint_agent)
        self.store = store if store is not None else Store(None)
        self.hall = Hall(self.store)

    @property
    def games(self) -> OrderedDict[str, Table]:
        return self.hall.tables

    def _seed(self, seed: int | None) -> int:
        if seed is not None:
            return seed
        with self.count_lock:
            k = self.started
            self.started += 1
        return derive_seed(self.seed, k) if self.seed is not None else secrets.randbits(62)

    def new(self, seed: int | None) -> Game:
        """A one-person game (its id is its seat's token)."""
        gid = new_id()
        seats = [Seat(None, HUMAN, None, token_hash(gid)) if s == self.seat
                 else Seat(self.opponent, self.opponent) for s in range(self.rules.players)]
        room = Room(gid, self.rules, seats, self._seed(seed), time.time(), sink=self.store,
                    kind="solo")
        return Game(self.hall.add(room))

    def get(self, gid: str) -> Game:
        return Game(self.hall.get(gid, "solo"))

    def create_room(self, body: dict[str, Any]) -> tuple[Table, int | None, str | None]:
        """A room from ``POST /api/rooms``; the creator takes ``body["seat"]`` if given."""
        rules = _room_rules(body)
        seats_in = body.get("seats")
        if not isinstance(seats_in, list) or len(seats_in) != rules.players:
            raise ApiError(400, f"seats must list {rules.players} entries, one per seat: null "
                                "for a person, or an agent spec")
        seats = [Seat(None, HUMAN, new_id()) if x is None
                 else Seat(check_spec(x, self.agents), x) for x in seats_in]
        mine = body.get("seat")
        if mine is not None and (type(mine) is not int or not 0 <= mine < rules.players
                                 or not seats[mine].person):
            raise ApiError(400, f"seat (yours) must be a person's seat of this room, got "
                                f"{mine!r}")
        if not any(x.person for x in seats):
            raise ApiError(400, "a room needs at least one person's seat (agents alone: "
                                "use scopa record)")
        name = check_name(body.get("name"))
        seed = request_seed(body.get("seed"))
        with self.hall.lock:
            waiting = sum(t.room.kind == "room" and not t.room.started
                          for t in self.hall.tables.values())
        if waiting >= MAX_WAITING:
            raise ApiError(503, f"{MAX_WAITING} rooms are waiting for people to take their "
                                "seats already: try again later")
        room = Room(new_id(), rules, seats, self._seed(seed), time.time(), sink=self.store)
        table = self.hall.add(room)
        token = None
        if mine is not None:
            with table.cond:
                _, token = room.join(seats[mine].invite, name, time.time())
                room.advance(time.time())
        return table, mine, token


def _room_rules(body: dict[str, Any]) -> Rules:
    name = body.get("rules", "scopa")
    options = body.get("options") or {}
    if not isinstance(options, dict):
        raise ApiError(400, "options must be a JSON object of rules options")
    for key in ("players", "target_score"):
        if body.get(key) is not None:
            options = {**options, key: body[key]}
    if not isinstance(name, str) or name not in NAMED_RULES:
        raise ApiError(400, f"rules must be one of {', '.join(NAMED_RULES)}, got {name!r}")
    try:
        return make_rules(name, **options)
    except (ValueError, TypeError) as e:
        raise ApiError(400, f"rules: {e}") from None


class Handler(BaseHTTPRequestHandler):
    """The pages and the JSON API; every failure answers JSON, none stops the server."""

    server_version = "scopa-serve/2"
    protocol_version = "HTTP/1.1"  # keep-alive: a tab's requests share one connection
    timeout = IDLE_TIMEOUT  # an idle kept-alive connection is closed (its thread ends)
    disable_nagle_algorithm = True  # a small write (a live message, an answer's body after
    # its headers) goes out now, not after the client's delayed acknowledgement (40 ms)
    lobby: Lobby  # set on the subclass that ``make_server`` builds
    _body_read = False  # this request's body was read (else the connection is closed)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (base signature)
        pass  # quiet: errors are answered to the browser, crashes printed in _handle

    def _dispatch(self) -> None:
        self._body_read = False
        self._handle(self.command)  # the request's method, parsed by the base class

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_PATCH = do_OPTIONS = _dispatch

    def send_error(self, code: int, message: str | None = None,
                   explain: str | None = None) -> None:
        """The base class's own errors (a malformed request line, an unknown method, headers
        too long) as JSON too; an unknown method is a 405."""
        if code == HTTPStatus.NOT_IMPLEMENTED:
            code, message = 405, f"method {self.command!r} is not supported"
        self.close_connection = True
        self.request_version = "HTTP/1.0"  # status and headers even for a garbled request line
        try:
            self._json(code, {"error": message or HTTPStatus(code).phrase})
        except OSError:
            pass

    def _handle(self, method: str) -> None:
        try:
            try:
                url = urlsplit(self.path)
                self.query = {k: v[-1] for k, v in parse_qs(url.query).items()}
                self._route(method, url.path)
            except ApiError as e:
                self._json(e.status, {"error": str(e)})
            except sqlite3.Error as e:  # a full disk, a file made read-only meanwhile
                self._json(503, {"error": f"the database {self.lobby.store.path} refused a "
                                          f"change ({e}): what it refused was not played; "
                                          "try again"})
            except (ConnectionError, TimeoutError):
                raise
            except Exception as e:  # a bug, not the request's fault: say so and keep serving
                traceback.print_exc(file=sys.stderr)
                self._json(500, {"error": f"internal error: {type(e).__name__}: {e}"})
        except (ConnectionError, TimeoutError):  # the browser went away: nothing to answer
            self.close_connection = True

    def _route(self, method: str, path: str) -> None:
        parts = [p for p in path.split("/") if p]
        if parts in ([], ["index.html"]):
            self._allow(method, "GET")
            return self._html(page("play", hints=self.lobby.reviews is not None))
        if parts in (["room"], ["history"], ["players"]):
            self._allow(method, "GET")
            return self._html(page(parts[0], hints=self.lobby.reviews is not None))
        if len(parts) == 2 and parts[0] == "review":
            self._allow(method, "GET")
            return self._review_page(self.lobby.hall.get(parts[1]))
        if parts == ["favicon.ico"]:
            return self._send(204, "image/x-icon", b"")
        if parts[:1] == ["api"]:
            return self._api(method, parts[1:])
        raise ApiError(404, f"no such page or API call: {method} {path}")

    def _api(self, method: str, parts: list[str]) -> None:
        lobby = self.lobby
        if parts == ["new"]:
            self._allow(method, "POST")
            game = lobby.new(request_seed(self._body().get("seed")))
            with game.lock:
                events = game.advance()
                return self._json(201, {"game": game.id, "view": game.view(),
                                        "events": events})
        if len(parts) >= 2 and parts[0] == "game":
            return self._game(method, lobby.get(parts[1]), parts[2:])
        if parts == ["config"]:
            self._allow(method, "GET")
            return self._json(200, {"agents": lobby.agents, "rules": NAMED_RULES,
                                    "four_player_only": list(FOUR_PLAYER_ONLY),
                                    "defaults": make_rules("scopa").to_dict(),
                                    "primiera_tables": sorted(PRIMIERA_TABLES),
                                    "idle_limit": rooms.IDLE_LIMIT})
        if parts == ["rooms"]:
            self._allow(method, "POST")
            table, seat, token = lobby.create_room(self._body())
            room = table.room
            with table.cond:
                invites = {str(s): x.invite for s, x in enumerate(room.seats) if x.open}
                return self._json(201, {"room": room.id, "seat": seat, "token": token,
                                        "invites": invites, "view": room.view(seat)})
        if len(parts) >= 2 and parts[0] == "room":
            return self._room(method, lobby.hall.get(parts[1], "room"), parts[2:])
        if parts in (["history"], ["players"]):
            self._allow(method, "GET")
            if parts == ["players"]:
                return self._json(200, {"players": lobby.store.standings()})
            offset = self.query.get("offset", "0")
            if not offset.isdigit():
                raise ApiError(400, f"offset must be a number, got {offset!r}")
            return self._json(200, {"matches": lobby.store.history(100, int(offset))})
        if len(parts) == 3 and parts[0] == "match" and parts[2] == "record":
            self._allow(method, "GET")
            return self._record(lobby.hall.get(parts[1]))
        if len(parts) == 3 and parts[0] == "match" and parts[2] == "review":
            self._allow(method, "GET")
            table = lobby.hall.get(parts[1])
            got = self._reviewed(table)
            if got is None:
                return self._json(202, self._reviews().progress(table.room.id))
            return self._json(200, {"status": "done", "review": got[1]})
        raise ApiError(404, f"no such page or API call: {method} /api/{'/'.join(parts)}")

    @staticmethod
    def _catch_up(table: Table) -> None:
        """The agents' moves still owed (the server stopped, or the database refused one,
        after a person's move and before the agents' replies): played now."""
        with table.cond:
            if table.room.advance(time.time()):
                table.changed()

    def _game(self, method: str, game: Game, rest: list[str]) -> None:
        self._catch_up(game.table)
        if not rest:
            self._allow(method, "GET")
            with game.lock:
                return self._json(200, {"game": game.id, "view": game.view(),
                                        "log": game.log})
        if rest == ["move"]:
            self._allow(method, "POST")
            action = self._action(self._body())
            with game.lock:
                events = game.play(action)
                game.table.changed()
                return self._json(200, {"game": game.id, "view": game.view(),
                                        "events": events})
        if rest == ["record"]:
            self._allow(method, "GET")
            return self._record(game.table)
        if rest == ["hint"]:
            self._allow(method, "POST")
            self._body()
            return self._hint(game.table, game.seat)
        raise ApiError(404, f"no such page or API call: {method} {self.path}")

    def _record(self, table: Table) -> None:
        with table.cond:
            line = table.room.record_line()
        self._send(200, "application/x-ndjson; charset=utf-8", line.encode(),
                   {"Content-Disposition": f'attachment; filename="scopa-{table.room.id}.jsonl"'})

    def _room(self, method: str, table: Table, rest: list[str]) -> None:
        self._catch_up(table)
        room = table.room
        if not rest:
            self._allow(method, "GET")
            with table.cond:
                seat = room.seat_of(self.query["token"]) if "token" in self.query else None
                return self._json(200, {"view": room.view(seat, now=time.time()),
                                        "log": room.events})
        if rest == ["events"]:
            self._allow(method, "GET")
            return self._stream(table)
        if rest == ["record"]:
            self._allow(method, "GET")
            return self._record(table)
        self._allow(method, "POST")
        body = self._body()
        now = time.time()
        if rest == ["hint"]:
            with table.cond:
                seat = room.seat_of(body.get("token"))
            return self._hint(table, seat)
        with table.cond:
            if rest == ["join"]:
                seat, token = room.join(body.get("invite"), body.get("name"), now)
                room.advance(now)
                table.changed()
                return self._json(200, {"room": room.id, "seat": seat, "token": token,
                                        "view": room.view(seat, now=now)})
            if rest == ["move"]:
                seat = room.seat_of(body.get("token"))
                moves = room.play(body.get("token"), self._action(body), now)
                table.changed()
                return self._json(200, {"moves": moves, "view": room.view(seat, now=now)})
            if rest == ["hand-over"]:
                spec = check_spec(body.get("agent", self.lobby.agents[0]), self.lobby.agents)
                moves = room.hand_over(body.get("token"), body.get("seat"), spec, now)
                table.changed()
                seat = room.seat_of(body.get("token"))
                return self._json(200, {"moves": moves, "view": room.view(seat, now=now)})
        raise ApiError(404, f"no such page or API call: {method} {self.path}")

    def _reviews(self) -> Reviews:
        if self.lobby.reviews is None:
            raise ApiError(403, "hints and reviews are off on this server (scopa serve "
                                "--hint-agent SPEC turns them on)")
        return self.lobby.reviews

    def _hint(self, table: Table, seat: int) -> None:
        """The reviewer's analysis of ``seat``'s decision now, from its information set
        alone; 409 unless it is the seat's turn in a match going on."""
        reviews = self._reviews()
        with table.cond:
            room, s = table.room, table.room.state
            if s.done:
                raise ApiError(409, "the match is over: no hints now; its review shows "
                                    "every decision")
            if not room.started:
                raise ApiError(409, "the match has not started: a hint is for your turn")
            if s.to_move != seat or not s.hands[seat]:
                raise ApiError(409, f"a hint is for your turn: it is seat {s.to_move}'s, "
                                    f"not yours (seat {seat})")
            info, moves = info_set(s, seat), len(room.events)
        self._json(200, reviews.hint(room.id, moves, info))

    def _reviewed(self, table: Table) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """The record and review of the finished match (None while it is computed)."""
        reviews = self._reviews()
        with table.cond:
            rec = table.room.record()  # 409 before the end
        return reviews.review(table.room.id, rec)

    def _review_page(self, table: Table) -> None:
        got = self._reviewed(table)
        rid = table.room.id
        if got is None:
            p = self._reviews().progress(rid)
            return self._html(waiting_page(
                f"Reviewing the match with {p['reviewer']}",
                f"{p['moves_reviewed']} of {p['moves']} moves reviewed…"))
        rec, data = got
        self._html(replay_page(rec, source=f"scopa-{rid}.jsonl", review=data))

    def _stream(self, table: Table) -> None:
        """Server-sent events: each move as it is played (with the view after it), then
        the room as it is now; a comment every ``PING_S`` seconds while nothing happens.
        ``?token=`` follows a seat, none watches; ``?since=N`` (or ``Last-Event-ID``)
        skips the first N moves."""
        room = table.room
        token = self.query.get("token")
        since = self.headers.get("Last-Event-ID") or self.query.get("since") or "0"
        if not since.isdigit():
            raise ApiError(400, f"since must be a number of moves, got {since!r}")
        with table.cond:
            seat = room.seat_of(token) if token is not None else None
            mine = room.seats[seat].token if seat is not None else None
        hall = self.lobby.hall
        with hall.lock:
            if hall.streams >= MAX_STREAMS:
                raise ApiError(503, f"the server follows {MAX_STREAMS} live connections "
                                    "already: try again later")
            if seat is None and table.watchers >= MAX_WATCHERS:
                raise ApiError(503, f"room {room.id} has {MAX_WATCHERS} watchers already")
            hall.streams += 1
            table.streams += 1
            table.watchers += seat is None
        try:
            self.close_connection = True  # the answer has no length: it ends the connection
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            self.send_header("Cache-Control", "no-store")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b"retry: 1000\n\n")
            self.wfile.flush()
            cursor, version = int(since), -1
            while True:
                with table.cond:
                    if version == room.version:
                        table.cond.wait(PING_S)
                    if version == room.version and not room.idle_seats(time.time()):
                        out = b": ping\n\n"
                    else:
                        out = self._news(room, seat, cursor)
                        version, cursor = room.version, len(room.events)
                    revoked = seat is not None and room.seats[seat].token != mine
                self.wfile.write(out)
                if revoked:
                    self.wfile.write(b'event: revoked\ndata: {}\n\n')
                    return
                self.wfile.flush()
                if room.state.done and cursor == len(room.events):
                    return
        except OSError:  # the browser went away (or a write timed out)
            return
        finally:
            with hall.lock:
                hall.streams -= 1
                table.streams -= 1
                table.watchers -= seat is None

    @staticmethod
    def _news(room: Room, seat: int | None, cursor: int) -> bytes:
        now = time.time()
        out = []
        for n in range(min(cursor, len(room.events)), len(room.events)):
            msg = {"event": room.events[n], "view": room.view(seat, n)}
            out.append(f"id: {n + 1}\nevent: move\ndata: {json.dumps(msg)}\n\n")
        out.append(f"event: room\ndata: {json.dumps(room.view(seat, now=now))}\n\n")
        return "".join(out).encode()

    def _html(self, text: str) -> None:
        self._send(200, "text/html; charset=utf-8", text.encode())

    def _allow(self, method: str, allowed: str) -> None:
        if method != allowed:
            raise ApiError(405, f"{method} is not allowed here; use {allowed}")


    def _body(self) -> dict[str, Any]:
        raw_len = self.headers.get("Content-Length")
        try:
            length = int(raw_len or 0)
        except ValueError:
            raise ApiError(400, f"bad Content-Length {raw_len!r}") from None
        if length < 0 or length > MAX_BODY:
            raise ApiError(413, f"request body of {length} bytes: at most {MAX_BODY}")
        raw = self.rfile.read(length) if length else b""
        self._body_read = True
        if not raw.strip():
            return {}
        try:
            body = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ApiError(400, f"the request body is not valid JSON: {e}") from None
        if not isinstance(body, dict):
            raise ApiError(400, "the request body must be a JSON object")
        return body

    @staticmethod
    def _action(body: dict[str, Any]) -> int:
        if "action" in body:
            a = body["action"]
            if type(a) is not int:
                raise ApiError(400, f"action must be a catalogue id (an integer), got {a!r}")
            try:
                action_move(a)
            except ValueError as e:
                raise ApiError(400, str(e)) from None
            return a
        if "move" in body:
            try:
                return parse_action(body["move"])
            except ValueError as e:
                raise ApiError(400, str(e)) from None
        raise ApiError(400, 'the body needs "action" (a catalogue id) or "move" (e.g. "7d x 3c")')

    def _json(self, status: int, data: Any) -> None:
        self._send(status, "application/json", json.dumps(data).encode())

    def _send(self, status: int, ctype: str, body: bytes,
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status, HTTPStatus(status).phrase)
        request = getattr(self, "headers", None)  # none for a garbled request line
        if not self._body_read and request is not None and request.get(
                "Content-Length", "0").strip() not in ("", "0"):
            self.close_connection = True  # an unread body would be taken for a request
        if self.close_connection:
            self.send_header("Connection", "close")
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


class _Server(ThreadingHTTPServer):
    request_queue_size = BACKLOG  # many players connecting at once wait, not retry
    daemon_threads = True


class _Server6(_Server):
    address_family = socket.AF_INET6


def make_server(rules: Rules, opponent: str, *, host: str = "127.0.0.1", port: int = 8765,
                seat: int = 0, seed: int | None = None, db: str | os.PathLike | None = None,
                agents: list[str] | None = None, make_folder: bool = False,
                hint_agent: str | None = None) -> ThreadingHTTPServer:
    """A server ready to ``serve_forever``, its matches kept in the SQLite file ``db``
    (None: in memory only); ``hint_agent`` reviews (hints and match reviews; None: off).
    A bad spec or seat, or a hint agent that cannot review, raises ``ValueError``, a
    database that cannot be used ``StoreError`` (a ``ValueError``), an address that
    cannot be bound ``OSError``, each naming it."""
    if not 0 <= port <= 65535:
        raise ValueError(f"--port {port} is not a port number (0-65535; 0 picks a free one)")
    lobby = Lobby(rules, opponent, seat, seed, agents=agents, hint_agent=hint_agent)
    if db is not None:
        lobby.store = Store(db, make_folder=make_folder)
        lobby.hall = Hall(lobby.store)
    handler = type("ScopaHandler", (Handler,), {"lobby": lobby})
    server_class = _Server6 if ":" in host else _Server
    try:
        server = server_class((host, port), handler)
    except OSError as e:
        lobby.store.close()
        raise OSError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    server.daemon_threads = True
    return server


def exposure_warning(host: str) -> str | None:
    """The warning for a server reachable from other machines (``host`` is not a
    loopback address), or None."""
    name = host.strip("[]")
    if name.lower() == "localhost":
        return None
    try:
        addr = ipaddress.ip_address(name)
    except ValueError:  # a host name: where it points decides who can reach it
        addr = None
    if addr is not None and addr.is_loopback:
        return None
    where = ("every network this machine is on" if addr is not None and addr.is_unspecified
             else f"the network of {host}")
    return (f"scopa serve: warning: listening on {host}: anyone who can reach this machine "
            f"on {where} can open the page and play (no login; each game uses this "
            f"machine's CPU). Use --host 127.0.0.1 to keep it to this machine.")


def serve(rules: Rules, opponent: str, *, host: str = "127.0.0.1", port: int = 8765,
          seat: int = 0, seed: int | None = None, db: str | os.PathLike | None = None,
          agents: list[str] | None = None, hint_agent: str | None = None) -> int:
    """Run the server until Ctrl-C (``scopa serve``); ``db`` None: ``default_path()``;
    ``hint_agent`` None: no hints nor reviews."""
    path = default_path() if db is None else db
    server = make_server(rules, opponent, host=host, port=port, seat=seat, seed=seed, db=path,
                         agents=agents, make_folder=db is None, hint_agent=hint_agent)
    h, p = server.server_address[:2]
    shown = f"[{h}]" if ":" in str(h) else h
    print(f"scopa serve: {rules.name} ({rules.players} players, to {rules.target_score}) "
          f"against {opponent}; open http://{shown}:{p}/  (Ctrl-C stops)", flush=True)
    print(f"scopa serve: rooms to play with others at http://{shown}:{p}/room; every match "
          f"is kept in {path}", flush=True)
    reviews = server.RequestHandlerClass.lobby.reviews
    print("scopa serve: " + (f"hints and match reviews by {reviews.spec}" if reviews else
                             "hints and match reviews are off"), flush=True)
    warning = exposure_warning(host)
    if warning:
        print(warning, file=sys.stderr, flush=True)
    started = time.monotonic()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print(f"\nscopa serve: stopped after {time.monotonic() - started:.0f} s", flush=True)
    finally:
        server.server_close()
        server.RequestHandlerClass.lobby.store.close()
    return 0


def page(name: str, hints: bool = False) -> str:
    """A page of the server: ``play`` (one person against agents), ``room`` (create,
    join, play or watch a room), ``history`` and ``players`` (the database's records);
    ``hints``: the play page offers hints and match reviews."""
    if name in ("play", "room"):
        return fill(asset("play.html"), style=asset("cards.css"), common=asset("cards.js"),
                    review_style=asset("review.css"), review_script=asset("review.js"),
                    script=asset("play.js"), mode="solo" if name == "play" else "room",
                    hints="on" if hints else "off")
    return fill(asset("records.html"), style=asset("cards.css"), common=asset("cards.js"),
                script=asset("records.js"), page=name)
