"""The pages and the JSON API of ``scopa serve`` (a Starlette application).

Every request passes the door first (``scopa_web.checks``: Host and Origin, content type,
body size and JSON, numbers). A room's requests take its lock (an ``asyncio.Lock``:
waiting holds no thread); what changes it (moves, seats, the agents' replies) runs in a
worker thread under that lock; the answer is made under the lock and written after it is
let go. Every failure answers JSON: a refusal a 4xx with its message, a database that
refuses a change a 503, a bug a 500 with its message (printed), and the server goes on.
The API is listed in ``scopa_web.server``'s docstring.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from scopa_env.moves import action_move, parse_action
from scopa_env.observation import info_set
from scopa_env.rules import FOUR_PLAYER_ONLY, NAMED_RULES, PRIMIERA_TABLES, make_rules

from . import asset, fill, rooms
from .checks import MAX_BODY, Door, check_type, content_length, count, move_number, parse_json
from .html import match_name, replay_page, waiting_page
from .live import EventStream, Streams
from .lobby import Entry, Lobby, request_seed
from .reviews import Reviews
from .rooms import ApiError, check_spec

Handler = Callable[[Request], Awaitable[Response]]
MAX_PLAYER = 200  # characters of a player's name in ``/api/history?player=`` (a spec too)
METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]


def page(name: str, hints: bool = False) -> str:
    """A page of the server: ``play`` (one person against agents), ``room`` (create,
    join, play or watch a room), ``history`` and ``players`` (the database's records);
    ``hints``: the play page offers hints and match reviews, the history links each
    match to its review."""
    if name in ("play", "room"):
        return fill(asset("play.html"), style=asset("cards.css"), common=asset("cards.js"),
                    review_style=asset("review.css"), review_script=asset("review.js"),
                    script=asset("play.js"), mode="solo" if name == "play" else "room",
                    hints="on" if hints else "off")
    return fill(asset("records.html"), style=asset("cards.css"), common=asset("cards.js"),
                script=asset("records.js"), page=name, hints="on" if hints else "off")


def _json(status: int, data: Any, close: bool = False) -> Response:
    headers = {"Cache-Control": "no-store"} | ({"Connection": "close"} if close else {})
    return Response(json.dumps(data), status, headers, media_type="application/json")


def _error(status: int, message: str, close: bool = False) -> Response:
    return _json(status, {"error": message}, close)


def action_of(body: dict[str, Any]) -> int:
    """The move of a request body: ``action`` (a catalogue id) or ``move`` (its text)."""
    if "action" in body:
        a = body["action"]
        if type(a) is not int:
            raise ApiError(400, f"action must be a catalogue id (an integer), got "
                                f"{str(a)[:40]!r}")
        try:
            action_move(a)
        except ValueError as e:
            raise ApiError(400, str(e)[:300]) from None
        return a
    if "move" in body:
        if not isinstance(body["move"], str) or len(body["move"]) > 100:
            raise ApiError(400, 'move must be a move\'s text (e.g. "7d x 3c")')
        try:
            return parse_action(body["move"])
        except ValueError as e:
            raise ApiError(400, str(e)[:300]) from None
    raise ApiError(400, 'the body needs "action" (a catalogue id) or "move" (e.g. "7d x 3c")')


def _token(value: Any) -> Any:
    """A token as given (checked by the room); one past 64 characters holds no seat."""
    return value if not isinstance(value, str) or len(value) <= 64 else ""


class Api:
    """The routes of one server, over its ``Lobby``."""

    def __init__(self, lobby: Lobby, door: Door):
        self.lobby, self.door, self.streams = lobby, door, Streams()

    # -- the door ------------------------------------------------------------------------------
    def guarded(self, handler: Handler, method: str) -> Handler:
        """``handler`` behind the door: only ``method`` (and HEAD for GET), the Host and
        Origin checked, every failure answered as JSON."""

        async def run(request: Request) -> Response:
            try:
                self.door.check(request.headers.get("host"), request.headers.get("origin"))
                allowed = (method, "HEAD") if method == "GET" else (method,)
                if request.method not in allowed:
                    raise ApiError(405, f"{request.method[:20]} is not allowed here; use "
                                        f"{method}")
                return await handler(request)
            except ApiError as e:
                return _error(e.status, str(e), close=e.status in (408, 413))
            except ClientDisconnect:
                return _error(400, "the request ended before its body", close=True)
            except sqlite3.Error as e:  # a full disk, a file made read-only meanwhile
                return _error(503, f"the database {self.lobby.store.path} refused a change "
                                   f"({e}): what it refused was not played; try again")
            except Exception as e:  # a bug, not the request's fault: say so, keep serving
                traceback.print_exc(file=sys.stderr)
                return _error(500, f"internal error: {type(e).__name__}: {e}")

        return run

    async def body(self, request: Request) -> dict[str, Any]:
        """The request's JSON object: its size and type checked before it is parsed."""
        content_length(request.headers.get("content-length"))
        raw = bytearray()
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > MAX_BODY:
                raise ApiError(413, f"request body of more than {MAX_BODY} bytes: at most "
                                    f"{MAX_BODY}")
        check_type(request.headers.get("content-type"), bytes(raw))
        return parse_json(bytes(raw))

    # -- rooms ---------------------------------------------------------------------------------
    async def entry(self, rid: str, kind: str | None = None) -> Entry:
        """A room from the cache, or read back from the store in a worker thread; the
        agents' moves it still owes (the server stopped, or the database refused one,
        after a person's move) are played first."""
        entry = self.lobby.cached(rid)
        if entry is None or (kind is not None and entry.room.kind != kind):
            entry = await run_in_threadpool(self.lobby.get, rid, kind)
        room = entry.room
        if room.started and not room.state.done and room.state.to_move in room.agents:
            await self.changing(entry, room.advance, time.time())
        return entry

    @staticmethod
    async def changing(entry: Entry, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` on the room, under its lock, in a worker thread; its live
        connections are woken if it changed (even if ``fn`` failed part way)."""
        async with entry.lock:
            version = entry.room.version
            try:
                return await run_in_threadpool(fn, *args)
            finally:
                if entry.room.version != version:
                    entry.changed()

    # -- pages ---------------------------------------------------------------------------------
    async def play_page(self, request: Request) -> Response:
        return HTMLResponse(page("play", hints=self.lobby.reviews is not None),
                            headers={"Cache-Control": "no-store"})

    async def other_page(self, request: Request) -> Response:
        name = request.url.path.strip("/")
        return HTMLResponse(page(name, hints=self.lobby.reviews is not None),
                            headers={"Cache-Control": "no-store"})

    async def favicon(self, request: Request) -> Response:
        return Response(b"", 204, media_type="image/x-icon")

    async def review_page(self, request: Request) -> Response:
        """The review of a finished match (``/review/ID``), named by its players and the
        room's creation time; a page that reloads itself while it is computed."""
        entry = await self.entry(request.path_params["rid"])
        got = await self._reviewed(entry)
        room = entry.room
        if got is None:
            p = self._reviews().progress(room.id)
            names = match_name([x.name for x in room.seats], room.created)
            return HTMLResponse(waiting_page(f"Reviewing {names} with {p['reviewer']}",
                                             f"{p['moves_reviewed']} of {p['moves']} moves "
                                             "reviewed…"))
        rec, data = got
        text = await run_in_threadpool(replay_page, rec, source=f"scopa-{room.id}.jsonl",
                                       review=data, site=True, when=room.created)
        return HTMLResponse(text)

    # -- one-person games ----------------------------------------------------------------------
    async def new(self, request: Request) -> Response:
        seed = request_seed((await self.body(request)).get("seed"))
        entry = await run_in_threadpool(self.lobby.new, seed)
        events = await self.changing(entry, entry.room.advance, time.time())
        async with entry.lock:
            return _json(201, {"game": entry.room.id, "view": self._solo_view(entry),
                               "events": self._solo_events(entry, events)})

    @staticmethod
    def _solo_view(entry: Entry, k: int | None = None) -> dict[str, Any]:
        return {"game": entry.room.id, **entry.room.view(entry.person_seat, k)}

    def _solo_events(self, entry: Entry, ns: list[int]) -> list[dict[str, Any]]:
        return [{**entry.room.events[n], "view": self._solo_view(entry, n)} for n in ns]

    async def game(self, request: Request) -> Response:
        entry = await self.entry(request.path_params["gid"], "solo")
        async with entry.lock:
            return _json(200, {"game": entry.room.id, "view": self._solo_view(entry),
                               "log": entry.room.events})

    async def game_move(self, request: Request) -> Response:
        body = await self.body(request)
        action, n = action_of(body), move_number(body)
        entry = await self.entry(request.path_params["gid"], "solo")
        gid = entry.room.id
        events = await self.changing(entry, entry.room.play, gid, action, time.time(), n)
        async with entry.lock:
            return _json(200, {"game": gid, "view": self._solo_view(entry),
                               "events": self._solo_events(entry, events)})

    async def game_hint(self, request: Request) -> Response:
        await self.body(request)
        entry = await self.entry(request.path_params["gid"], "solo")
        return await self._hint(entry, entry.person_seat)

    # -- rooms ---------------------------------------------------------------------------------
    async def config(self, request: Request) -> Response:
        return _json(200, {"agents": self.lobby.agents, "rules": NAMED_RULES,
                           "four_player_only": list(FOUR_PLAYER_ONLY),
                           "defaults": make_rules("scopa").to_dict(),
                           "primiera_tables": sorted(PRIMIERA_TABLES),
                           "idle_limit": rooms.IDLE_LIMIT,
                           "seeded": self.lobby.seed is not None})

    async def create_room(self, request: Request) -> Response:
        body = await self.body(request)
        entry, seat, token = await run_in_threadpool(self.lobby.create_room, body)
        room = entry.room
        async with entry.lock:
            invites = {str(s): x.invite for s, x in enumerate(room.seats) if x.open}
            return _json(201, {"room": room.id, "seat": seat, "token": token,
                               "invites": invites, "view": room.view(seat)})

    async def room(self, request: Request) -> Response:
        entry = await self.entry(request.path_params["rid"], "room")
        token = request.query_params.get("token")
        async with entry.lock:
            room = entry.room
            seat = room.seat_of(_token(token)) if token is not None else None
            return _json(200, {"view": room.view(seat, now=time.time()), "log": room.events})

    async def events(self, request: Request) -> Response:
        q = request.query_params
        since = count(request.headers.get("last-event-id") or q.get("since"), "since")
        entry = await self.entry(request.path_params["rid"], "room")
        token = q.get("token")
        async with entry.lock:
            seat = entry.room.seat_of(_token(token)) if token is not None else None
            client = request.client.host if request.client else "?"
            stream = EventStream(self.streams, entry, seat, since, client)
        return stream  # type: ignore[return-value]  (an ASGI answer of its own)

    async def join(self, request: Request) -> Response:
        body = await self.body(request)
        entry = await self.entry(request.path_params["rid"], "room")
        room = entry.room

        def join() -> tuple[int, str]:
            now = time.time()
            seat, token = room.join(body.get("invite"), body.get("name"), now)
            room.advance(now)
            return seat, token

        seat, token = await self.changing(entry, join)
        async with entry.lock:
            return _json(200, {"room": room.id, "seat": seat, "token": token,
                               "view": room.view(seat, now=time.time())})

    async def room_move(self, request: Request) -> Response:
        body = await self.body(request)
        action, n = action_of(body), move_number(body)
        entry = await self.entry(request.path_params["rid"], "room")
        room, token = entry.room, _token(body.get("token"))
        moves = await self.changing(entry, room.play, token, action, time.time(), n)
        return await self._moved(entry, token, moves)

    @staticmethod
    async def _moved(entry: Entry, token: Any, moves: list[int]) -> Response:
        """The answer to a change of a room by a seat: the new moves, the seat's view."""
        async with entry.lock:
            seat = entry.room.seat_of(token)
            return _json(200, {"moves": moves,
                               "view": entry.room.view(seat, now=time.time())})

    async def hand_over(self, request: Request) -> Response:
        body = await self.body(request)
        entry = await self.entry(request.path_params["rid"], "room")
        room, token = entry.room, _token(body.get("token"))
        spec = check_spec(body.get("agent", self.lobby.agents[0]), self.lobby.agents)
        moves = await self.changing(entry, room.hand_over, token, body.get("seat"), spec,
                                    time.time())
        return await self._moved(entry, token, moves)

    async def room_hint(self, request: Request) -> Response:
        body = await self.body(request)
        entry = await self.entry(request.path_params["rid"], "room")
        async with entry.lock:
            seat = entry.room.seat_of(_token(body.get("token")))
        return await self._hint(entry, seat)

    # -- records, reviews, hints -----------------------------------------------------------------
    async def record(self, request: Request) -> Response:
        kind = {"game": "solo", "room": "room"}.get(request.url.path.split("/")[2])
        entry = await self.entry(request.path_params["rid"], kind)
        async with entry.lock:
            line = entry.room.record_line()
        return Response(line.encode(), 200, {
            "Content-Disposition": f'attachment; filename="scopa-{entry.room.id}.jsonl"',
            "Cache-Control": "no-store"}, media_type="application/x-ndjson; charset=utf-8")

    async def review(self, request: Request) -> Response:
        entry = await self.entry(request.path_params["rid"])
        got = await self._reviewed(entry)
        if got is None:
            return _json(202, self._reviews().progress(entry.room.id))
        return _json(200, {"status": "done", "review": got[1]})

    def _reviews(self) -> Reviews:
        if self.lobby.reviews is None:
            raise ApiError(403, "hints and reviews are off on this server (scopa serve "
                                "--hint-agent SPEC turns them on)")
        return self.lobby.reviews

    async def _reviewed(self, entry: Entry) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """The record and review of the finished match (None while it is computed)."""
        reviews = self._reviews()
        async with entry.lock:
            rec = entry.room.record()  # 409 before the end
        return await run_in_threadpool(reviews.review, entry.room.id, rec)

    async def _hint(self, entry: Entry, seat: int) -> Response:
        """The reviewer's analysis of ``seat``'s decision now, from its information set
        alone (computed in a worker thread, the room's lock let go); 409 unless it is
        the seat's turn in a match going on."""
        reviews = self._reviews()
        async with entry.lock:
            room, s = entry.room, entry.room.state
            if s.done:
                raise ApiError(409, "the match is over: no hints now; its review shows "
                                    "every decision")
            if not room.started:
                raise ApiError(409, "the match has not started: a hint is for your turn")
            if s.to_move != seat or not s.hands[seat]:
                raise ApiError(409, f"a hint is for your turn: it is "
                                    f"{room.seats[s.to_move].name}'s, not yours")
            info, moves = info_set(s, seat), len(room.events)
        return _json(200, await run_in_threadpool(reviews.hint, room.id, moves, info))

    # -- the database's records ------------------------------------------------------------------
    async def history(self, request: Request) -> Response:
        offset = count(request.query_params.get("offset"), "offset")
        player = request.query_params.get("player")
        if player is not None and (len(player) > MAX_PLAYER or not player.isprintable()):
            raise ApiError(400, f"player must be a name of at most {MAX_PLAYER} printable "
                                "characters")
        matches = await run_in_threadpool(self.lobby.store.history, 100, offset, player)
        return _json(200, {"matches": matches})

    async def players(self, request: Request) -> Response:
        return _json(200, {"players": await run_in_threadpool(self.lobby.store.standings)})

    # -- the application -----------------------------------------------------------------------
    def routes(self) -> list[Route]:
        table: list[tuple[str, str, Handler]] = [
            ("/", "GET", self.play_page), ("/index.html", "GET", self.play_page),
            ("/room", "GET", self.other_page), ("/history", "GET", self.other_page),
            ("/players", "GET", self.other_page), ("/favicon.ico", "GET", self.favicon),
            ("/review/{rid}", "GET", self.review_page),
            ("/api/new", "POST", self.new), ("/api/config", "GET", self.config),
            ("/api/game/{gid}", "GET", self.game),
            ("/api/game/{gid}/move", "POST", self.game_move),
            ("/api/game/{rid}/record", "GET", self.record),
            ("/api/game/{gid}/hint", "POST", self.game_hint),
            ("/api/rooms", "POST", self.create_room),
            ("/api/room/{rid}", "GET", self.room),
            ("/api/room/{rid}/events", "GET", self.events),
            ("/api/room/{rid}/record", "GET", self.record),
            ("/api/room/{rid}/join", "POST", self.join),
            ("/api/room/{rid}/move", "POST", self.room_move),
            ("/api/room/{rid}/hand-over", "POST", self.hand_over),
            ("/api/room/{rid}/hint", "POST", self.room_hint),
            ("/api/match/{rid}/record", "GET", self.record),
            ("/api/match/{rid}/review", "GET", self.review),
            ("/api/history", "GET", self.history), ("/api/players", "GET", self.players),
        ]
        return [Route(path, self.guarded(fn, method), methods=METHODS)
                for path, method, fn in table]

    def app(self) -> Starlette:
        async def unknown(request: Request, exc: Exception) -> Response:
            try:
                self.door.check(request.headers.get("host"), request.headers.get("origin"))
            except ApiError as e:
                return _error(e.status, str(e))
            status = exc.status_code if isinstance(exc, HTTPException) else 500
            path = request.url.path if len(request.url.path) <= 80 else (
                request.url.path[:80] + "…")
            if status == 405:  # a method no route takes
                return _error(405, f"{request.method[:20]} is not allowed here")
            return _error(status, f"no such page or API call: {request.method[:20]} {path}")

        return Starlette(routes=self.routes(), exception_handlers={HTTPException: unknown})
