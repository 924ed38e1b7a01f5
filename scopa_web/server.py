"""``scopa serve``: a person plays a match against agents in the browser.

A ``ThreadingHTTPServer`` from the standard library (no web framework to install):
``GET /`` is the play page (one HTML file, CSS and JavaScript inline), and a small
JSON API drives the games, one per session id (each browser tab keeps its own):

- ``POST /api/new`` (body ``{"seed": N}`` optional; N a number or a string of digits)
  starts a match: ``201`` with
  ``{"game": ID, "view": ..., "events": [...]}`` (the agents' moves before the
  person's first turn);
- ``GET /api/game/ID``: the person's view and the match's moves so far (``log``);
- ``POST /api/game/ID/move`` with ``{"action": CATALOGUE_ID}`` or ``{"move": "7d x 3c"}``:
  plays it, then the agents' moves up to the person's next turn, each as an event
  with the view after it;
- ``GET /api/game/ID/record``: the finished match as a game record (one JSON line,
  game-record.md; ``scopa verify`` checks it).

A view holds only what the person's seat may know (``scopa_env.observation.info_set``).
A bad request gets ``{"error": MESSAGE}`` with a 4xx status; an unexpected failure a
500 with the message, and the server goes on.
"""

from __future__ import annotations

import ipaddress
import json
import secrets
import socket
import sys
import threading
import time
import traceback
from collections import OrderedDict
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from agents import make_agent
from agents.commands import MAX_SEED
from scopa_env.cards import CODES, cards_of
from scopa_env.game import GameState, apply, new_match
from scopa_env.moves import action_move, action_text, parse_action
from scopa_env.observation import info_set
from scopa_env.play import derive_seed, start_deal
from scopa_env.records import MatchRecorder
from scopa_env.rules import Rules

from . import asset, fill
from .html import move_dict

MAX_GAMES = 1000  # games kept: a finished one goes first (the oldest), else the least
# recently used; a finished game keeps its record (a few KiB), not its agents
IDLE_TIMEOUT = 120  # seconds a kept-alive connection may stay idle
BACKLOG = 1024  # connections waiting to be accepted (the standard library's 5 drops SYNs)
MAX_BODY = 16 * 1024
HUMAN = "human"


class ApiError(Exception):
    """A request the API refuses: an HTTP status and a message for the JSON body."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def _codes(mask: int) -> list[str]:
    return [CODES[c] for c in cards_of(mask)]


class Game:
    """One match between the person (``seat``) and agents in every other seat."""

    def __init__(self, gid: str, rules: Rules, opponent: str, seat: int, seed: int):
        self.id, self.seat, self.opponent = gid, seat, opponent
        self.state = new_match(rules, seed=seed)
        self.agents = {s: make_agent(opponent, seed=derive_seed(seed, 1000 + s))
                       for s in range(rules.players) if s != seat}
        start_deal(self.agents.values())
        names = [HUMAN if s == seat else opponent for s in range(rules.players)]
        self.names = names
        self.recorder = MatchRecorder(self.state, names)
        self.log: list[dict[str, Any]] = []
        self.results: list[dict[str, Any]] = []  # each finished hand's points
        self.lock = threading.Lock()

    def _step(self, action: int) -> dict[str, Any]:
        s = self.state
        hand_index = s.hand_index
        before = s.copy()
        res = apply(s, action)
        self.recorder.observe(res, s)
        m = res.move
        event: dict[str, Any] = {"hand": hand_index,
                                 **move_dict(m.seat, action, m.card, m.capture, m.scopa)}
        h = res.hand
        if h is not None:
            event["hand_over"] = {"leftover": _codes(h.leftover), "score": h.score,
                                  "last_capture_team": h.last_capture_team,
                                  "match_score": list(s.match_score),
                                  "match_over": res.match_over}
            self.results.append({"points": [e["points"]["total"] for e in h.score],
                               "match_score": list(s.match_score)})
            if not s.done:
                start_deal(self.agents.values())
            else:
                self.agents = {}  # a search agent's caches are not kept past the match
        self.log.append(event)
        if h is None:
            return {**event, "view": self.view()}
        apply(before, action, check=False, deal_next=False)  # the hand scored, not redealt
        return {**event, "view": self.view(before)}

    def advance(self) -> list[dict[str, Any]]:
        """The agents' moves up to the person's turn or the end of the match."""
        events = []
        s = self.state
        while not s.done and s.to_move != self.seat:
            info = info_set(s, s.to_move)
            action = int(self.agents[s.to_move].act(info))
            if action not in info.legal_actions:
                raise RuntimeError(f"agent {self.opponent!r} chose the illegal move "
                                   f"{action_text(action)}")
            events.append(self._step(action))
        return events

    def play(self, action: int) -> list[dict[str, Any]]:
        """The person's move, then the agents' replies."""
        s = self.state
        if s.done:
            raise ApiError(409, "the match is over: start a new one")
        if s.to_move != self.seat:
            raise ApiError(409, f"it is seat {s.to_move}'s turn, not yours")
        legal = s.legal_actions()
        if action not in legal:
            raise ApiError(400, f"{action_text(action)} is not legal here; legal moves: "
                                + ", ".join(action_text(a) for a in legal))
        return [self._step(action), *self.advance()]

    def view(self, state: GameState | None = None) -> dict[str, Any]:
        """What the person's seat may know (in ``state``, default the match's), with
        absolute team indices."""
        s = self.state if state is None else state
        info = info_set(s, self.seat)
        live = not s.done and any(s.hands)  # not a hand scored and waiting for its redeal
        flip = self.seat % 2 == 1  # info_set's pairs are (own team, other team)

        def pair(own: Any, other: Any) -> list[Any]:
            return [other, own] if flip else [own, other]

        legal = []
        for a in info.legal_actions:
            mv = action_move(a, info.table)
            legal.append({"id": a, "text": action_text(a), "card": CODES[mv.card],
                          "capture": _codes(mv.capture), "takes_all": mv.takes_all})
        return {"game": self.id, "seat": self.seat, "players": s.rules.players,
                "seed": str(s.seed),  # as text: JavaScript numbers round past 2**53
                "names": self.names, "rules": s.rules.to_dict(), "hand_index": s.hand_index,
                "dealer": info.dealer, "to_move": s.to_move if live else None,
                "hand": _codes(info.hand), "table": _codes(info.table),
                "hand_sizes": list(info.hand_sizes), "deck": info.deck_count,
                "piles": pair(_codes(info.own_pile), _codes(info.other_pile)),
                "scope": pair(*info.scope), "match_score": pair(*info.match_score),
                "your_turn": live and s.to_move == self.seat, "legal": legal,
                "done": s.done, "winner": s.winner, "results": list(self.results)}

    def record_line(self) -> str:
        if not self.state.done:
            raise ApiError(409, "the match is not over yet: the record is written at its end")
        return json.dumps(self.recorder.record, separators=(",", ":")) + "\n"


def request_seed(seed: Any) -> int | None:
    """The seed of ``POST /api/new``: none, an integer, or its decimal digits as a string
    (how the page sends it: a JavaScript number would round seeds past 2**53)."""
    if isinstance(seed, str) and seed.isascii() and seed.isdigit():
        seed = int(seed)
    if seed is not None and (type(seed) is not int or not 0 <= seed <= MAX_SEED):
        raise ApiError(400, f"seed must be a non-negative integer up to {MAX_SEED} (a number "
                            f"or a string of digits), got {seed!r}")
    return seed


class Lobby:
    """The games by id, at most ``MAX_GAMES``: past it, the least recently used finished
    game is dropped, else the least recently used one."""

    def __init__(self, rules: Rules, opponent: str, seat: int, seed: int | None):
        if not 0 <= seat < rules.players:
            raise ValueError(f"--seat {seat} is not a seat of a {rules.players}-player game")
        if seed is not None and seed < 0:
            raise ValueError(f"--seed must be a non-negative integer, got {seed}")
        self.rules, self.opponent, self.seat, self.seed = rules, opponent, seat, seed
        self.games: OrderedDict[str, Game] = OrderedDict()
        self.lock = threading.Lock()
        self.started = 0
        try:  # a bad spec or checkpoint fails now, not per game
            make_agent(opponent, seed=0)
        except ValueError as e:  # the list of known agents, on one line
            text = str(e).replace(":\n  ", ": ").replace("\n  ", "; ").replace("\n", " ")
            raise ValueError(f"--opponent {opponent}: {text}") from None

    def new(self, seed: int | None) -> Game:
        with self.lock:
            k = self.started
            self.started += 1
        if seed is None:
            seed = (derive_seed(self.seed, k) if self.seed is not None
                    else secrets.randbits(62))
        game = Game(secrets.token_urlsafe(12), self.rules, self.opponent, self.seat, seed)
        with self.lock:
            self.games[game.id] = game
            while len(self.games) > MAX_GAMES:
                done = next((g for g, x in self.games.items() if x.state.done), None)
                if done is None:
                    self.games.popitem(last=False)
                else:
                    del self.games[done]
        return game

    def get(self, gid: str) -> Game:
        with self.lock:
            game = self.games.get(gid)
            if game is None:
                raise ApiError(404, f"no game {gid!r} on this server (it may have been "
                                    "dropped, or the server restarted): start a new match")
            self.games.move_to_end(gid)
            return game


class Handler(BaseHTTPRequestHandler):
    """The play page and the JSON API; every failure answers JSON, none stops the server."""

    server_version = "scopa-serve/1"
    protocol_version = "HTTP/1.1"  # keep-alive: a tab's requests share one connection
    timeout = IDLE_TIMEOUT  # an idle kept-alive connection is closed (its thread ends)
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
                self._route(method, urlsplit(self.path).path)
            except ApiError as e:
                self._json(e.status, {"error": str(e)})
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
            return self._send(200, "text/html; charset=utf-8", self._page().encode())
        if parts == ["favicon.ico"]:
            return self._send(204, "image/x-icon", b"")
        if parts == ["api", "new"]:
            self._allow(method, "POST")
            game = self.lobby.new(request_seed(self._body().get("seed")))
            with game.lock:
                events = game.advance()
                return self._json(201, {"game": game.id, "view": game.view(),
                                        "events": events})
        if len(parts) >= 3 and parts[:2] == ["api", "game"]:
            game = self.lobby.get(parts[2])
            rest = parts[3:]
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
                    return self._json(200, {"game": game.id, "view": game.view(),
                                            "events": events})
            if rest == ["record"]:
                self._allow(method, "GET")
                with game.lock:
                    line = game.record_line()
                return self._send(200, "application/x-ndjson; charset=utf-8", line.encode(),
                                  {"Content-Disposition":
                                   f'attachment; filename="scopa-{game.id}.jsonl"'})
        raise ApiError(404, f"no such page or API call: {method} {path}")

    def _page(self) -> str:
        return fill(asset("play.html"), style=asset("cards.css"), common=asset("cards.js"),
                    script=asset("play.js"))

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
                seat: int = 0, seed: int | None = None) -> ThreadingHTTPServer:
    """A server ready to ``serve_forever``; a bad spec or seat raises ``ValueError``, an
    address that cannot be bound ``OSError`` naming it."""
    if not 0 <= port <= 65535:
        raise ValueError(f"--port {port} is not a port number (0-65535; 0 picks a free one)")
    lobby = Lobby(rules, opponent, seat, seed)
    handler = type("ScopaHandler", (Handler,), {"lobby": lobby})
    server_class = _Server6 if ":" in host else _Server
    try:
        server = server_class((host, port), handler)
    except OSError as e:
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
          seat: int = 0, seed: int | None = None) -> int:
    """Run the server until Ctrl-C (``scopa serve``)."""
    server = make_server(rules, opponent, host=host, port=port, seat=seat, seed=seed)
    h, p = server.server_address[:2]
    shown = f"[{h}]" if ":" in str(h) else h
    print(f"scopa serve: {rules.name} ({rules.players} players, to {rules.target_score}) "
          f"against {opponent}; open http://{shown}:{p}/  (Ctrl-C stops)", flush=True)
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
    return 0
