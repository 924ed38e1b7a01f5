"""The rooms' cache and the lobby of ``scopa serve``: every match (one person's game or a
room of people) by id, kept in memory up to ``MAX_ROOMS`` and all of them in the store.

A ``Lobby`` makes the matches (``new``: one person against the server's opponent;
``create_room``: a room from ``POST /api/rooms``) and finds them again (``get``: read
back from the store when it is not in memory). Each is an ``Entry``: the ``Room`` and
what the server adds to it, the lock its requests take (an ``asyncio.Lock``: a request
waiting for a busy room holds no thread) and the signal its live connections wait on.
The deal is the server's: drawn at random, or derived from ``scopa serve --seed`` (a
seeded server, for tests and tournaments; its views say so). No client chooses a room's
deal; a one-person game may name its seed (``POST /api/new``: a deal to play again, the
person's own match against the server's agent).
"""

from __future__ import annotations

import asyncio
import secrets
import threading
import time
from collections import OrderedDict
from typing import Any

from agents import make_agent
from agents.commands import MAX_SEED
from scopa_env.play import derive_seed
from scopa_env.rules import NAMED_RULES, Rules, make_rules

from .reviews import Reviews
from .rooms import PERSON, ApiError, Room, Seat, check_name, check_spec, new_id, token_hash
from .store import Store

MAX_ROOMS = 1000  # rooms and one-person games kept in memory: past it, the least recently
# used one that nobody follows live is let go (a finished one first); it stays in the
# database and is read back when asked for again
MAX_DONE = 64  # finished matches kept in memory (each holds its whole log: ~700 objects
# that every full pass of the garbage collector walks); older ones are read back when asked
MAX_WAITING = 200  # rooms waiting for people to take their seats (in the database)
WAITING_S = 3600.0  # a room waits this long for its people to count as waiting
MAX_TARGET = 100  # the largest target score a room may ask for (a match that ends)
DEFAULT_AGENTS = ("greedy", "random", "expert")


class Entry:
    """A room in the cache: the ``Room``, the lock its requests take, the signal its live
    connections wait on (``changed``) and its count of live connections."""

    def __init__(self, room: Room):
        self.room = room
        self.lock = asyncio.Lock()
        self.event = asyncio.Event()
        self.streams = 0
        self.watchers = 0

    def changed(self) -> None:
        """Wake the room's live connections (in the server's event loop)."""
        self.event.set()
        self.event = asyncio.Event()

    @property
    def person_seat(self) -> int:
        """A one-person game's seat (the person's)."""
        return next(s for s, x in enumerate(self.room.seats) if x.person)


def request_seed(seed: Any) -> int | None:
    """The seed of ``POST /api/new``: none, an integer, or its decimal digits as a string
    (how the page sends it: a JavaScript number would round seeds past 2**53)."""
    if isinstance(seed, str) and seed.isascii() and seed.isdigit() and len(seed) <= 20:
        seed = int(seed)
    if seed is not None and (type(seed) is not int or not 0 <= seed <= MAX_SEED):
        shown = repr(seed) if len(repr(seed)) <= 40 else repr(seed)[:40] + "…"
        raise ApiError(400, f"seed must be a non-negative integer up to {MAX_SEED} (a number "
                            f"or a string of digits), got {shown}")
    return seed


def _one_line(e: ValueError) -> str:
    return str(e).replace(":\n  ", ": ").replace("\n  ", "; ").replace("\n", " ")


def _unknown(rid: str, kind: str | None) -> str:
    what = "game" if kind == "solo" else "room"
    shown = repr(rid) if len(rid) <= 64 else repr(rid[:64]) + "…"
    return (f"no {what} {shown} on this server" + (": start a new match" if kind == "solo"
                                                   else " (check the link)"))


class Lobby:
    """Every match of one server, in memory and in the store. Thread-safe: rooms are made
    and read back in worker threads; an ``Entry``'s room is used under its lock."""

    def __init__(self, rules: Rules, opponent: str, seat: int, seed: int | None,
                 store: Store | None = None, agents: list[str] | None = None,
                 hint_agent: str | None = None):
        if not 0 <= seat < rules.players:
            raise ValueError(f"--seat {seat} is not a seat of a {rules.players}-player game")
        if seed is not None and seed < 0:
            raise ValueError(f"--seed must be a non-negative integer, got {seed}")
        self.rules, self.opponent, self.seat, self.seed = rules, opponent, seat, seed
        self.started = 0
        self.lock = threading.Lock()  # the cache (held briefly: the event loop takes it)
        self.creating = threading.Lock()  # rooms counted and made one at a time
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
        self.entries: OrderedDict[str, Entry] = OrderedDict()

    # -- the cache ------------------------------------------------------------------------------
    def add(self, room: Room) -> Entry:
        """A new room: stored, then kept."""
        self.store.create_room(room)
        entry = Entry(room)
        with self.lock:
            self.entries[room.id] = entry
            self._trim()
        return entry

    def _trim(self) -> None:
        done = [k for k, e in self.entries.items() if e.room.state.done and not e.streams]
        for k in done[:max(0, len(done) - MAX_DONE)]:  # the least recently used first
            del self.entries[k]
        while len(self.entries) > MAX_ROOMS:
            idle = [k for k, e in self.entries.items() if not e.streams]
            if not idle:
                return
            done = next((k for k in idle if self.entries[k].room.state.done), idle[0])
            del self.entries[done]

    def cached(self, rid: str) -> Entry | None:
        """The room ``rid`` if it is in memory (no database read), else None."""
        with self.lock:
            entry = self.entries.get(rid)
            if entry is not None:
                self.entries.move_to_end(rid)
        return entry

    def get(self, rid: str, kind: str | None = None) -> Entry:
        """The room ``rid`` (read back from the store if it is not in memory); 404 if
        there is none (of ``kind``, when given)."""
        entry = self.cached(rid)
        if entry is None:
            entry = self._load(rid, kind)
        if kind is not None and entry.room.kind != kind:
            raise ApiError(404, _unknown(rid, kind))
        return entry

    def _load(self, rid: str, kind: str | None) -> Entry:
        data = self.store.load_room(rid) if len(rid) <= 64 else None
        if data is None:
            raise ApiError(404, _unknown(rid, kind))
        seats = [Seat(**x) for x in data["seats"]]
        try:
            room = Room(rid, make_rules(**data["rules"]), seats, data["seed"], data["created"],
                        sink=self.store, kind=data["kind"], seeded=self.seed is not None)
            room.restore(data["actions"], time.time())
        except ValueError as e:
            raise ApiError(503, f"room {rid} cannot be resumed: {e}") from None
        with self.lock:  # another request may have read it back meanwhile
            entry = self.entries.setdefault(rid, Entry(room))
            self.entries.move_to_end(rid)
            self._trim()
        return entry

    # -- new matches ----------------------------------------------------------------------------
    def _seed(self, seed: int | None) -> int:
        if seed is not None:
            return seed
        with self.lock:
            k = self.started
            self.started += 1
        return derive_seed(self.seed, k) if self.seed is not None else secrets.randbits(62)

    def new(self, seed: int | None) -> Entry:
        """A one-person game (its id is its seat's token)."""
        gid = new_id()
        seats = [Seat(None, PERSON, None, token_hash(gid)) if s == self.seat
                 else Seat(self.opponent, self.opponent) for s in range(self.rules.players)]
        room = Room(gid, self.rules, seats, self._seed(seed), time.time(), sink=self.store,
                    kind="solo", seeded=seed is not None or self.seed is not None)
        return self.add(room)

    def create_room(self, body: dict[str, Any]) -> tuple[Entry, int | None, str | None]:
        """A room from ``POST /api/rooms``; the creator takes ``body["seat"]`` if given.
        Its deal is the server's: a ``seed`` in the body is refused."""
        if "seed" in body:
            raise ApiError(400, "a room's deal is drawn by the server: no seed may be given "
                                "(scopa serve --seed seeds every deal, for tests)")
        rules = room_rules(body)
        seats_in = body.get("seats")
        if not isinstance(seats_in, list) or len(seats_in) != rules.players:
            raise ApiError(400, f"seats must list {rules.players} entries, one per seat: null "
                                "for a person, or an agent spec")
        seats = [Seat(None, PERSON, new_id()) if x is None
                 else Seat(check_spec(x, self.agents), x) for x in seats_in]
        mine = body.get("seat")
        if mine is not None and (type(mine) is not int or not 0 <= mine < rules.players
                                 or not seats[mine].person):
            raise ApiError(400, f"seat (yours) must be a person's seat of this room, got "
                                f"{str(mine)[:20]}")
        if not any(x.person for x in seats):
            raise ApiError(400, "a room needs at least one person's seat (agents alone: "
                                "use scopa record)")
        name = check_name(body.get("name"))
        with self.creating:  # counted in the database: rooms let go from memory count too
            waiting = self.store.waiting_rooms(time.time() - WAITING_S)
            if waiting >= MAX_WAITING:
                raise ApiError(503, f"{MAX_WAITING} rooms are waiting for people to take "
                                    "their seats already: try again later")
            room = Room(new_id(), rules, seats, self._seed(None), time.time(),
                        sink=self.store, seeded=self.seed is not None)
            entry = self.add(room)
        token = None
        if mine is not None:
            _, token = room.join(seats[mine].invite, name, time.time())
            room.advance(time.time())
        return entry, mine, token


def room_rules(body: dict[str, Any]) -> Rules:
    """The rules of ``POST /api/rooms``: a named rule set, its options, ``players`` and a
    ``target_score`` up to ``MAX_TARGET``."""
    name = body.get("rules", "scopa")
    options = body.get("options") or {}
    if not isinstance(options, dict):
        raise ApiError(400, "options must be a JSON object of rules options")
    for key in ("players", "target_score"):
        if body.get(key) is not None:
            options = {**options, key: body[key]}
    if not isinstance(name, str) or name not in NAMED_RULES:
        raise ApiError(400, f"rules must be one of {', '.join(NAMED_RULES)}, got "
                            f"{str(name)[:40]!r}")
    for key, value in options.items():
        if type(value) is int and not -1000 <= value <= 1000:
            raise ApiError(400, f"rules: {str(key)[:40]} must be between -1000 and 1000")
    target = options.get("target_score")
    if type(target) is int and target > MAX_TARGET:
        raise ApiError(400, f"rules: target_score must be at most {MAX_TARGET}, got {target}")
    try:
        return make_rules(name, **options)
    except (ValueError, TypeError) as e:
        raise ApiError(400, f"rules: {str(e)[:300]}") from None
