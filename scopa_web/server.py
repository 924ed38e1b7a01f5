"""``scopa serve``: people play agents and each other in the browser; every match is kept.

Starlette on uvicorn (the ``web`` extra: ``pip install scopa-rl[web]``), one event loop,
HTTP/1.1 keep-alive. The parts: ``scopa_web.routes`` (the pages and the API),
``scopa_web.live`` (the live channel), ``scopa_web.lobby`` (the rooms' cache and the
lobby), ``scopa_web.checks`` (every input checked at the door),
``scopa_web.connections`` (per-connection and per-client limits, read and write
timeouts) and this module (the start-up). Pages: ``/`` one person against the
server's opponent (one match per tab), ``/room`` rooms (create one, take a seat by its
link, play or watch), ``/history`` and ``/players`` (the database's records). Every
match, one person's or a room's, is a ``scopa_web.rooms.Room`` stored move by move in
SQLite (``scopa_web.store``) and read back after a restart. The JSON API:

- ``POST /api/new`` (``{"seed": N}`` optional: the person's own deal to play again): a
  one-person match, ``201`` with ``{"game": ID, "view", "events"}`` (the agents' moves
  before the person's first turn); ``GET /api/game/ID`` (``view``, ``log``), ``POST
  /api/game/ID/move`` (``{"action": CATALOGUE_ID}`` or ``{"move": "7d x 3c"}``, and
  ``"n"``: the view's ``moves`` when the move was chosen; a retry of a move played is
  answered again, not played again; another ``n`` is a 409: the move and the agents'
  replies, each an event with the view after it), ``GET /api/game/ID/record``;
- ``GET /api/config``: the rule sets, options and agent specs a room may use;
- ``POST /api/rooms`` (``rules``, ``players``, ``target_score``, ``options``, ``seats``:
  null for a person or an agent spec, ``seat``: the creator's, ``name``; no ``seed``: the
  deal is the server's, seeded only by ``scopa serve --seed``, and then every view
  says ``"seeded": true``): ``201`` with
  ``room``, the creator's ``token`` and the ``invites`` of the other people's seats;
- ``POST /api/room/ID/join`` (``invite``, ``name``): the seat and its token;
- ``GET /api/room/ID[?token=T]``: the view of that seat (none: a watcher's) and the log;
- ``GET /api/room/ID/events[?token=T&since=N]``: the live channel (server-sent events:
  ``move`` with the view after it, ``room`` with the view now, ``revoked``);
- ``POST /api/room/ID/move`` (``token``, ``action`` or ``move``, ``n``), ``POST
  /api/room/ID/hand-over`` (``token``, ``seat``, ``agent`` optional): an idle seat
  given to an agent by another seated person;
- ``GET /api/room/ID/record``, ``GET /api/match/ID/record``: the finished match as a
  game record (game-record.md; ``scopa verify`` checks it);
- ``POST /api/game/ID/hint``, ``POST /api/room/ID/hint`` (``token``): at the seat's turn,
  the server's reviewer's analysis of the seat's decision (``scopa_web.reviews``:
  ``--hint-agent``); ``GET /api/match/ID/review``: the review of a finished match
  (``202`` with its progress while it is computed), ``GET /review/ID`` its page;
- ``GET /api/history[?offset=N&player=NAME]``, ``GET /api/players``.

A view holds only what its seat may know (``scopa_env.observation.info_set``), a
watcher's only what is public, and the seed (it fixes every deck) only once the match is
over. A request must name this server's host (``Host``; and ``Origin`` if sent): the
bound host, ``localhost``, an IP address, or a site of ``--allowed-origin``; a body is
JSON sent as ``application/json``. A bad request gets ``{"error": MESSAGE}`` with a 4xx
status; an unexpected failure a 500 with the message, and the server goes on.
"""

from __future__ import annotations

import asyncio
import gc
import ipaddress
import logging
import os
import resource
import socket
import sys
import threading
import time

from scopa_env.rules import Rules

from .checks import MAX_BODY, Door
from .connections import IDLE_S, Limits, protocol_class
from .lobby import Lobby
from .routes import Api, page
from .store import Store, default_path

__all__ = ["MAX_BODY", "Server", "exposure_warning", "make_server", "page", "serve"]

BACKLOG = 1024  # connections waiting to be accepted (many players connecting at once)
SHUTDOWN_S = 2  # seconds open answers (live connections) get to end when the server stops
GC_YOUNG = 10_000  # allocations between the garbage collector's young passes (Python: 700)


def _more_files() -> None:
    """Raise the open-files limit to its ceiling: every connection is a file."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        except (ValueError, OSError):
            pass


def steady_collector() -> None:
    """Python's cyclic garbage collector set for a server's answer times (the process is
    the server's: ``scopa serve``). Its full passes stop the event loop while they walk
    every object (150-260 ms each under the load benchmark, the p99 of every answer), so:
    what start-up made (the modules, the agents' tables) is frozen out of its reach
    (``gc.freeze``: never garbage, never walked again), and its young pass runs every
    ``GC_YOUNG`` allocations, so that the objects of answers in flight die before it
    sees them instead of being promoted to the generations the full passes walk.
    Garbage is collected as before: reference counting frees at once what holds no
    cycle, and the passes still find the cycles."""
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(GC_YOUNG, older, oldest)


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


class _QuietStop(logging.Filter):
    """uvicorn's log without the answers cut short when the server stops."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, asyncio.CancelledError) and "graceful shutdown" not in (
            record.getMessage())


class Server:
    """A bound ``scopa serve`` (uvicorn running the Starlette application): answers
    from ``serve_forever`` (in any thread) until ``shutdown``; ``lobby`` holds its
    matches."""

    def __init__(self, lobby: Lobby, api: Api, sock: socket.socket, limits: Limits):
        import uvicorn

        self.lobby, self.api, self.socket, self.limits = lobby, api, sock, limits
        self.config = uvicorn.Config(
            api.app(), lifespan="off", ws="none", http=protocol_class(limits),
            interface="asgi3", log_config=None, access_log=False, server_header=False,
            timeout_keep_alive=int(IDLE_S), timeout_graceful_shutdown=SHUTDOWN_S,
            backlog=BACKLOG, h11_max_incomplete_event_size=16 * 1024)
        self.uvicorn = uvicorn.Server(self.config)
        self.stopped = threading.Event()
        log = logging.getLogger("uvicorn.error")
        log.setLevel(logging.ERROR)
        if not any(isinstance(f, _QuietStop) for f in log.filters):
            log.addFilter(_QuietStop())

    @property
    def server_address(self) -> tuple[str, int]:
        return self.socket.getsockname()[:2]

    def serve_forever(self) -> None:
        try:
            asyncio.run(self.uvicorn.serve(sockets=[self.socket]))
        finally:
            self.stopped.set()

    def shutdown(self) -> None:
        """Stop ``serve_forever`` (from another thread) and wait for it."""
        self.uvicorn.should_exit = True
        self.stopped.wait(SHUTDOWN_S + 10)

    def server_close(self) -> None:
        self.socket.close()


def make_server(rules: Rules, opponent: str, *, host: str = "127.0.0.1", port: int = 8765,
                seat: int = 0, seed: int | None = None, db: str | os.PathLike | None = None,
                agents: list[str] | None = None, make_folder: bool = False,
                hint_agent: str | None = None, allowed_origins: list[str] | None = None,
                max_per_client: int | None = None) -> Server:
    """A server ready to ``serve_forever``, its matches kept in the SQLite file ``db``
    (None: in memory only); ``hint_agent`` reviews (hints and match reviews; None: off);
    ``allowed_origins``: sites besides the bound host whose pages may use it;
    ``max_per_client``: connections at once from one address. A bad spec, seat or
    origin, or a hint agent that cannot review, raises ``ValueError``, a database that
    cannot be used ``StoreError`` (a ``ValueError``), an address that cannot be bound
    ``OSError``, each naming it."""
    if not 0 <= port <= 65535:
        raise ValueError(f"--port {port} is not a port number (0-65535; 0 picks a free one)")
    if max_per_client is not None and max_per_client < 1:
        raise ValueError(f"--max-per-client must be at least 1, got {max_per_client}")
    door = Door(host, allowed_origins)
    store = Store(db, make_folder=make_folder) if db is not None else None
    try:
        lobby = Lobby(rules, opponent, seat, seed, store=store, agents=agents,
                      hint_agent=hint_agent)
    except BaseException:
        if store is not None:
            store.close()
        raise
    try:
        sock = _listen(host, port)
    except OSError as e:
        lobby.store.close()
        raise OSError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    _more_files()
    limits = Limits() if max_per_client is None else Limits(per_client=max_per_client)
    return Server(lobby, Api(lobby, door), sock, limits)


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
          agents: list[str] | None = None, hint_agent: str | None = None,
          allowed_origins: list[str] | None = None, max_per_client: int | None = None) -> int:
    """Run the server until Ctrl-C (``scopa serve``); ``db`` None: ``default_path()``;
    ``hint_agent`` None: no hints nor reviews."""
    path = default_path() if db is None else db
    server = make_server(rules, opponent, host=host, port=port, seat=seat, seed=seed, db=path,
                         agents=agents, make_folder=db is None, hint_agent=hint_agent,
                         allowed_origins=allowed_origins, max_per_client=max_per_client)
    h, p = server.server_address[:2]
    shown = f"[{h}]" if ":" in str(h) else h
    print(f"scopa serve: {rules.name} ({rules.players} players, to {rules.target_score}) "
          f"against {opponent}; open http://{shown}:{p}/  (Ctrl-C stops)", flush=True)
    print(f"scopa serve: rooms to play with others at http://{shown}:{p}/room; every match "
          f"is kept in {path}", flush=True)
    reviews = server.lobby.reviews
    print("scopa serve: " + (f"hints and match reviews by {reviews.spec}" if reviews else
                             "hints and match reviews are off"), flush=True)
    if seed is not None:
        print(f"scopa serve: every deal is derived from --seed {seed} (its views say "
              "\"seeded\"): for tests and tournaments", flush=True)
    warning = exposure_warning(host)
    if warning:
        print(warning, file=sys.stderr, flush=True)
    steady_collector()
    started = time.monotonic()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        server.lobby.store.close()
    print(f"\nscopa serve: stopped after {time.monotonic() - started:.0f} s", flush=True)
    return 0
