"""The live channel of a room (``GET /api/room/ID/events``): server-sent events.

Each move as it is played (``move``, with the view after it), then the room as it is
now (``room``); ``revoked`` when the seat's token stops holding it; ``end`` when the
match is over and every move sent, before the stream closes; a comment every
``PING_S`` seconds while nothing happens. The stream starts only once its parameters are
checked (any refusal is a 4xx or 503 with a JSON body). Messages are made under the
room's lock and written after it is let go: a client that does not read holds only its
own connection (cut off after ``connections.WRITE_S``). A connection that closes stops
counting at once: the stream watches for the client going away while it waits.
Live connections are bounded: ``MAX_STREAMS`` in all, ``MAX_PER_CLIENT`` from one
address, ``MAX_WATCHERS`` watchers of one room (its seats come on top).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from typing import Any

from .lobby import Entry
from .rooms import ApiError, Room

MAX_STREAMS = 1000  # live connections at once, all rooms together
MAX_PER_CLIENT = 64  # live connections at once from one address
MAX_WATCHERS = 50  # live connections to one room by watchers (seats come on top)
PING_S = 15.0  # a live connection gets a comment line at least this often


class Streams:
    """The live connections open now (the event loop's: no lock)."""

    def __init__(self) -> None:
        self.total = 0
        self.by_client: Counter[str] = Counter()

    def open(self, entry: Entry, watcher: bool, client: str) -> None:
        """Count one more, or refuse it (503) past a bound."""
        if self.total >= MAX_STREAMS:
            raise ApiError(503, f"the server follows {MAX_STREAMS} live connections "
                                "already: try again later")
        if self.by_client[client] >= MAX_PER_CLIENT:
            raise ApiError(503, f"{MAX_PER_CLIENT} live connections from your address are "
                                "open already: close some")
        if watcher and entry.watchers >= MAX_WATCHERS:
            raise ApiError(503, f"room {entry.room.id} has {MAX_WATCHERS} watchers already")
        self.total += 1
        self.by_client[client] += 1
        entry.streams += 1
        entry.watchers += watcher

    def close(self, entry: Entry, watcher: bool, client: str) -> None:
        self.total -= 1
        self.by_client[client] -= 1
        if self.by_client[client] <= 0:
            del self.by_client[client]
        entry.streams -= 1
        entry.watchers -= watcher


def news(room: Room, seat: int | None, cursor: int) -> bytes:
    """The moves from ``cursor`` on, each with the view after it, then the room now."""
    out = []
    for n in range(min(cursor, len(room.events)), len(room.events)):
        msg = {"event": room.events[n], "view": room.view(seat, n)}
        out.append(f"id: {n + 1}\nevent: move\ndata: {json.dumps(msg)}\n\n")
    out.append(f"event: room\ndata: {json.dumps(room.view(seat, now=time.time()))}\n\n")
    return "".join(out).encode()


class EventStream:
    """The ASGI answer of one live connection (counted in ``streams`` from its making
    to its end)."""

    def __init__(self, streams: Streams, entry: Entry, seat: int | None, since: int,
                 client: str):
        self.streams, self.entry, self.seat, self.since = streams, entry, seat, since
        self.client = client
        self.mine = entry.room.seats[seat].token if seat is not None else None
        streams.open(entry, seat is None, client)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        gone = asyncio.ensure_future(self._gone(receive))
        try:
            await send({"type": "http.response.start", "status": 200, "headers": [
                (b"content-type", b"text/event-stream; charset=utf-8"),
                (b"cache-control", b"no-store"), (b"x-accel-buffering", b"no")]})
            await self._body(send, gone)
            if not gone.done():
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:  # the client went away
            pass
        finally:
            gone.cancel()
            self.streams.close(self.entry, self.seat is None, self.client)

    @staticmethod
    async def _gone(receive: Any) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    async def _body(self, send: Any, gone: asyncio.Future) -> None:
        entry, room, seat = self.entry, self.entry.room, self.seat
        chunk, cursor, version = b"retry: 1000\n\n", self.since, -1
        while True:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            if gone.done():
                return
            event = entry.event
            if version == room.version:
                waiter = asyncio.ensure_future(event.wait())
                await asyncio.wait({waiter, gone}, timeout=PING_S,
                                   return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                if gone.done():
                    return
            async with entry.lock:
                if version == room.version and not room.idle_seats(time.time()):
                    chunk = b": ping\n\n"
                else:
                    chunk = news(room, seat, cursor)
                    version, cursor = room.version, len(room.events)
                revoked = seat is not None and room.seats[seat].token != self.mine
                ended = room.state.done and cursor == len(room.events)
            if revoked:
                chunk += b"event: revoked\ndata: {}\n\n"
            elif ended:  # said before the stream closes: the page stops following, and does
                chunk += b"event: end\ndata: {}\n\n"  # not take the close for a lost line
            if revoked or ended:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                return
