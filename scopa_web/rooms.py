"""Rooms: people and agents at one table, the state of a match and of its seats (no I/O).

A ``Room`` holds one match on the engine (``scopa_env.game``): its rules, its seed (kept
from every client until the match is over: it fixes the deck order), 2 or 4 seats, each
an agent (a spec the server allows) or a person. A person's seat is claimed once through
its invite (the seat link) and then played with the seat's token (only its hash is kept);
the match starts when every person's seat is claimed, and agents play their seats as
soon as it is their turn. What each client is sent comes from ``seat_view`` (a seat:
``scopa_env.observation.info_set``, never another hand or the deck) or ``public_view``
(a watcher: the table, the piles, the counts). A person whose turn has waited past
``IDLE_LIMIT`` can be replaced by an agent by another seated person.

Changes are reported to ``Room.sink`` (the server stores them: ``scopa_web.store``)
before they are made here: a move the sink refuses is not played.
"""

from __future__ import annotations

import functools
import hashlib
import json
import secrets
from dataclasses import dataclass
from typing import Any, Protocol

from agents import make_agent
from scopa_env.cards import CODES, cards_of
from scopa_env.game import GameState, StepResult, apply, new_match
from scopa_env.moves import action_move, action_text
from scopa_env.observation import info_set
from scopa_env.play import derive_seed, start_deal
from scopa_env.records import MatchRecorder
from scopa_env.rules import Rules

from .html import move_dict

IDLE_LIMIT = 120.0  # seconds a person's turn may wait before the others may give it away
KEEP_SHOWN = 16  # positions kept to show a client that is behind each move it missed (a
# round of four seats and more; one further behind is shown the room as it is now)
KEEP_DONE = 8  # positions kept once the match is over (the last answer's moves)
MAX_NAME = 40  # characters of a person's name
PERSON = "human"  # the name of a person who gives none (as in the one-person game)


class ApiError(Exception):
    """A request the API refuses: an HTTP status and a message for the JSON body."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def new_id() -> str:
    """An unguessable id (96 random bits, URL-safe): rooms, invites."""
    return secrets.token_urlsafe(12)


def new_token() -> str:
    """A seat's token (192 random bits); only ``token_hash`` of it is kept."""
    return secrets.token_urlsafe(24)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def _codes(mask: int) -> list[str]:
    return [CODES[c] for c in cards_of(mask)]


@functools.lru_cache(maxsize=64)
def _rules_dict(rules: Rules) -> dict[str, Any]:
    """``rules.to_dict()``, made once per rule set (every view carries it; not changed)."""
    return rules.to_dict()


def _live(s: GameState) -> bool:
    """A move is awaited (not the end of the match, nor a hand scored before its redeal)."""
    return not s.done and any(s.hands)


def public_view(s: GameState) -> dict[str, Any]:
    """What everyone at the table sees: the table, both piles, the scope, the counts of
    every hand and of the deck, the scores (teams by absolute index)."""
    return {"players": s.rules.players, "rules": _rules_dict(s.rules), "hand_index": s.hand_index,
            "dealer": s.dealer, "to_move": s.to_move if _live(s) else None,
            "table": _codes(s.table), "hand_sizes": [h.bit_count() for h in s.hands],
            "deck": s.deck_count, "piles": [_codes(p) for p in s.piles],
            "scope": list(s.scope), "match_score": list(s.match_score), "done": s.done,
            "winner": s.winner}


def seat_view(s: GameState, seat: int) -> dict[str, Any]:
    """What ``seat`` may know: its own information set (``info_set``) with absolute team
    indices, and its legal moves when it is to move."""
    info = info_set(s, seat)
    flip = seat % 2 == 1  # info_set's pairs are (own team, other team)

    def pair(own: Any, other: Any) -> list[Any]:
        return [other, own] if flip else [own, other]

    legal = []
    live = _live(s)
    for a in info.legal_actions if live else ():
        mv = action_move(a, info.table)
        legal.append({"id": a, "text": action_text(a), "card": CODES[mv.card],
                      "capture": _codes(mv.capture), "takes_all": mv.takes_all})
    return {"seat": seat, "players": s.rules.players, "rules": _rules_dict(s.rules),
            "hand_index": s.hand_index, "dealer": info.dealer,
            "to_move": s.to_move if live else None, "hand": _codes(info.hand),
            "table": _codes(info.table), "hand_sizes": list(info.hand_sizes),
            "deck": info.deck_count,
            "piles": pair(_codes(info.own_pile), _codes(info.other_pile)),
            "scope": pair(*info.scope), "match_score": pair(*info.match_score),
            "your_turn": live and s.to_move == seat, "legal": legal, "done": s.done,
            "winner": s.winner}


def check_name(name: Any) -> str:
    """A person's name: printable text up to ``MAX_NAME`` characters (empty: ``PERSON``)."""
    if name is None:
        return PERSON
    if not isinstance(name, str):
        raise ApiError(400, f"name must be text, got {name!r}")
    name = " ".join(name.split())
    if len(name) > MAX_NAME or not name.isprintable():
        raise ApiError(400, f"name must be printable text of at most {MAX_NAME} characters")
    return name or PERSON


@dataclass
class Seat:
    """One seat: an agent (``agent`` its spec) or a person (claimed when ``token`` is
    set: the hash of the seat's token)."""

    agent: str | None
    name: str
    invite: str | None = None  # a person's seat link code
    token: str | None = None  # sha256 of the seat's token, once claimed

    @property
    def person(self) -> bool:
        return self.agent is None

    @property
    def open(self) -> bool:
        return self.agent is None and self.token is None

    def to_dict(self) -> dict[str, Any]:
        return {"agent": self.agent, "name": self.name, "invite": self.invite,
                "token": self.token}


class Sink(Protocol):
    """Where a room's changes go before they are made (the server's store)."""

    def seat_changed(self, room: Room, seat: int) -> None: ...

    def move_played(self, room: Room, n: int, seat: int, action: int,
                    result: StepResult, after: GameState) -> None: ...


class Room:
    """One match and its seats. Not thread-safe: the caller holds ``lock``-like
    exclusion (the server's per-room lock) around every call."""

    def __init__(self, rid: str, rules: Rules, seats: list[Seat], seed: int, created: float,
                 sink: Sink | None = None, kind: str = "room", seeded: bool = False):
        if len(seats) != rules.players:
            raise ApiError(400, f"{len(seats)} seats for a {rules.players}-player game")
        self.id, self.seats, self.seed, self.created, self.kind = rid, seats, seed, created, kind
        self.seeded = seeded  # the deal was not drawn at random (a seed given): views say so
        self.sink = sink
        self.state = new_match(rules, seed=seed)
        self.recorder = MatchRecorder(self.state, [x.name for x in seats])
        self.events: list[dict[str, Any]] = []  # every move, public (move_dict + hand_over)
        self.actions: list[int] = []  # every move's catalogue id
        self.shown: dict[int, GameState] = {}  # the position after each of the last
        # KEEP_SHOWN moves (a hand's last move: the hand scored and not yet redealt)
        self.results: list[dict[str, Any]] = []  # each finished hand's points
        self.version = 0  # counts every change (moves, seats): the live channel waits on it
        self.turn_since = created  # when the seat to move got its turn
        self.agents: dict[int, Any] = {}
        self._make_agents()

    # -- seats -------------------------------------------------------------------------------
    def _make_agents(self) -> None:
        self.agents = {s: make_agent(x.agent, seed=derive_seed(self.seed, 1000 + s))
                       for s, x in enumerate(self.seats) if x.agent is not None}
        start_deal(self.agents.values())

    @property
    def started(self) -> bool:
        return not any(x.open for x in self.seats)

    def seat_of(self, token: Any) -> int:
        """The seat this token holds; 403 for any other (stale, forged, missing)."""
        if not isinstance(token, str) or not token:
            raise ApiError(403, "this needs your seat's token (\"token\")")
        h = token_hash(token)
        for s, x in enumerate(self.seats):
            if x.token is not None and secrets.compare_digest(x.token, h):
                return s
        raise ApiError(403, f"this token holds no seat in room {self.id} (a stale or wrong "
                            "token: open your seat link again, or watch)")

    def join(self, invite: Any, name: Any, now: float) -> tuple[int, str]:
        """Claim the seat of ``invite``: its index and a new token."""
        name = check_name(name)
        if not isinstance(invite, str):
            raise ApiError(400, "join needs the seat link's code (\"invite\")")
        seat = next((s for s, x in enumerate(self.seats)
                     if x.invite is not None and secrets.compare_digest(x.invite, invite)), None)
        if seat is None:
            raise ApiError(403, f"no seat of room {self.id} has this link's code")
        if not self.seats[seat].open:
            left = sum(x.open for x in self.seats)
            raise ApiError(409, "this seat is already taken" + (
                f"; {left} more can join (ask for their links)" if left
                else ": the room is full (you can watch)"))
        token = new_token()
        claimed = Seat(None, name, self.seats[seat].invite, token_hash(token))
        self._set_seat(seat, claimed)
        if self.started:
            self.turn_since = now
        return seat, token

    def _set_seat(self, seat: int, new: Seat) -> None:
        old = self.seats[seat]
        self.seats[seat] = new
        if self.sink is not None:
            try:
                self.sink.seat_changed(self, seat)
            except Exception:
                self.seats[seat] = old
                raise
        self.version += 1

    def idle_in(self, now: float) -> float | None:
        """Seconds until the person to move may be replaced (0: now); None when no
        person's turn is waited for."""
        s = self.state
        if not self.started or not _live(s) or not self.seats[s.to_move].person:
            return None
        return max(0.0, IDLE_LIMIT - (now - self.turn_since))

    def idle_seats(self, now: float) -> list[int]:
        """The person's seat whose turn has waited past ``IDLE_LIMIT`` (none or one)."""
        wait = self.idle_in(now)
        return [self.state.to_move] if wait is not None and wait <= 0 else []

    def hand_over(self, token: Any, seat: Any, spec: str, now: float) -> list[int]:
        """Another seated person gives the idle ``seat`` to the agent ``spec``; then the
        agents play. Returns the new moves' indices."""
        me = self.seat_of(token)
        if type(seat) is not int or not 0 <= seat < len(self.seats):
            raise ApiError(400, f"seat must be a seat number 0..{len(self.seats) - 1}")
        if seat == me:
            raise ApiError(409, "you cannot give your own seat away: play, or leave it idle")
        if seat not in self.idle_seats(now):
            raise ApiError(409, f"{self.seats[seat].name}'s seat is not idle: a person's seat "
                                f"can be given to an agent when its turn has waited "
                                f"{IDLE_LIMIT:g} s")
        self._set_seat(seat, Seat(spec, spec))
        self.agents[seat] = make_agent(spec, seed=derive_seed(self.seed, 2000 + seat))
        return self.advance(now)

    # -- moves -------------------------------------------------------------------------------
    def _apply(self, action: int, now: float, store: bool = True) -> int:
        before = self.state
        after = before.copy()
        res = apply(after, action, check=False)
        shown = after
        if res.hand is not None and not after.done:  # the hand scored, not redealt
            shown = before.copy()
            apply(shown, action, check=False, deal_next=False)
        n = len(self.events)
        if store and self.sink is not None:
            self.sink.move_played(self, n, res.move.seat, action, res, after)
        self.state = after
        self.recorder.observe(res, after)
        m = res.move
        event: dict[str, Any] = {"n": n, "hand": before.hand_index,
                                 **move_dict(m.seat, action, m.card, m.capture, m.scopa)}
        h = res.hand
        if h is not None:
            event["hand_over"] = {"leftover": _codes(h.leftover), "score": h.score,
                                  "last_capture_team": h.last_capture_team,
                                  "match_score": list(after.match_score),
                                  "match_over": res.match_over}
            self.results.append({"points": [e["points"]["total"] for e in h.score],
                                 "match_score": list(after.match_score)})
            if after.done:
                self.agents = {}  # a search agent's caches are not kept past the match
                self.shown = {k: v for k, v in self.shown.items() if k > n - KEEP_DONE}
            else:
                start_deal(self.agents.values())
        self.events.append(event)
        self.actions.append(action)
        self.shown[n] = shown
        self.shown.pop(n - KEEP_SHOWN, None)
        self.turn_since = now
        self.version += 1
        return n

    def advance(self, now: float) -> list[int]:
        """The agents' moves up to a person's turn or the end of the match."""
        out = []
        s = self.state
        while self.started and not s.done and s.to_move in self.agents:
            info = info_set(s, s.to_move)
            action = int(self.agents[s.to_move].act(info))
            if action not in info.legal_actions:
                raise RuntimeError(f"agent {self.seats[s.to_move].agent!r} chose the illegal "
                                   f"move {action_text(action)}")
            out.append(self._apply(action, now))
            s = self.state
        return out

    def check_move(self, seat: int, action: int) -> None:
        """409/400 unless ``seat`` may play ``action`` now."""
        s = self.state
        if s.done:
            raise ApiError(409, "the match is over: start a new one")
        if not self.started:
            left = sum(x.open for x in self.seats)
            raise ApiError(409, f"the match has not started: waiting for {left} more "
                                f"player{'s' if left > 1 else ''} to join")
        if s.to_move != seat:
            raise ApiError(409, f"it is {self.seats[s.to_move].name}'s turn, not yours")
        legal = s.legal_actions()
        if action not in legal:
            raise ApiError(400, f"{action_text(action)} is not legal here; legal moves: "
                                + ", ".join(action_text(a) for a in legal))

    def play(self, token: Any, action: int, now: float, n: int) -> list[int]:
        """The token's seat plays ``action`` as move number ``n`` (the number of moves it
        saw: the view's ``moves``), then the agents reply: the new moves' indices. The
        same move sent again (a retry) is not played again: its answer is the moves from
        ``n`` on; any other ``n`` but the next move's is refused (409)."""
        seat = self.seat_of(token)
        played = len(self.events)
        if n < played and self.events[n]["seat"] == seat and self.actions[n] == action:
            return list(range(n, played))  # already played: answered again, not replayed
        if n != played and not self.state.done:
            raise ApiError(409, f"this move answers move {n}, but the match is at move "
                                f"{played}: look again (GET) and choose from there")
        self.check_move(seat, action)
        return [self._apply(action, now), *self.advance(now)]

    def restore(self, actions: list[int], now: float) -> None:
        """Replay the stored moves of this match (after a restart), storing nothing."""
        for a in actions:
            legal = self.state.legal_actions()
            if a not in legal:
                raise ValueError(f"room {self.id}: stored move {len(self.events)} "
                                 f"({action_text(a)}) is not legal in the replayed match")
            self._apply(a, now, store=False)

    # -- what clients see --------------------------------------------------------------------
    def view(self, seat: int | None, k: int | None = None, now: float | None = None
             ) -> dict[str, Any] | None:
        """The room as ``seat`` (None: a watcher) sees it after move ``k`` (None: now);
        None for a move older than the last ``KEEP_SHOWN``. ``now`` (the time) adds
        which seat is idle and when the one to move will be."""
        s = self.state if k is None else self.shown.get(k)
        if s is None:
            return None
        body = public_view(s) if seat is None else seat_view(s, seat)
        if seat is None or not self.started:  # nobody plays before every seat is taken
            body["seat"] = seat
            body["your_turn"] = False
            body["legal"] = []
        body.update(room=self.id, kind=self.kind, started=self.started, seeded=self.seeded,
                    names=[x.name for x in self.seats],
                    seats=[{"name": x.name, "agent": x.agent,
                            "open": x.open} for x in self.seats],
                    results=self.results[:len(self.results) if k is None else sum(
                        "hand_over" in e for e in self.events[:k + 1])],
                    moves=len(self.events) if k is None else k + 1,
                    idle=self.idle_seats(now) if k is None and now is not None else [],
                    idle_in=self.idle_in(now) if k is None and now is not None else None)
        if self.state.done and (k is None or k == len(self.events) - 1):
            body["seed"] = str(self.seed)  # only now: the seed fixes every deck
        return body

    def record(self) -> dict[str, Any]:
        """The finished match as a game record (the names the seats have now)."""
        if not self.state.done:
            raise ApiError(409, "the match is not over yet: the record is written at its end")
        rec = self.recorder.record
        rec["players"] = [x.name for x in self.seats]
        return rec

    def record_line(self) -> str:
        return json.dumps(self.record(), separators=(",", ":")) + "\n"


def check_spec(spec: Any, allowed: list[str]) -> str:
    """An agent spec a room may seat: one the server allows."""
    if spec not in allowed:
        raise ApiError(400, f"agent {spec!r} is not offered by this server; it offers: "
                            + ", ".join(allowed))
    return spec
