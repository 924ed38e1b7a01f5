"""Game records (game-record.md): build while playing, write/read JSON Lines, replay, verify."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from .cards import CODES, RANK, SUIT, card_id, cards_of, mask_of
from .files import (
    DamagedFile,
    append_lines,
    file_errors,
    last_line,
    line_number,
    require_complete,
    shared_lock,
    writable_file,
)
from .game import GameState, HandResult, IllegalMoveError, StepResult, apply, new_match
from .moves import ACE_ALL_BASE, action_id
from .rules import OPTION_NAMES, make_rules
from .rules.capture import ALL_CARDS, legal_captures

FORMAT = "scopa-record/1"


class RecordError(ValueError):
    """A malformed or inconsistent record."""


def _codes(mask: int) -> list[str]:
    return [CODES[c] for c in cards_of(mask)]


class MatchRecorder:
    """Collects a match's record while it is played: call ``observe`` with every
    ``StepResult``; ``record`` is complete once the match is over. Moves are kept
    as ids and converted to text only when the record is read."""

    def __init__(self, state: GameState, players: list[str]):
        if len(players) != state.rules.players:
            raise ValueError(f"players names {len(players)} agents for "
                             f"{state.rules.players} seats")
        self._rules, self._seed, self._players = state.rules.to_dict(), state.seed, players
        self._hands: list[tuple[HandResult, list[tuple[int, int, int, bool]]]] = []
        self._moves: list[tuple[int, int, int, bool]] = []
        self._result: tuple[list[int], int | None] = ([0, 0], None)

    def observe(self, result: StepResult, state: GameState) -> None:
        m = result.move
        self._moves.append((m.seat, m.card, m.capture, m.scopa))
        if result.hand is not None:
            self._hands.append((result.hand, self._moves))
            self._moves = []
        if result.match_over:
            self._result = (list(state.match_score), state.winner)

    @property
    def record(self) -> dict[str, Any]:
        hands = [hand_entry(h, [move_entry(seat, CODES[card], _codes(cap), scopa)
                                for seat, card, cap, scopa in moves])
                 for h, moves in self._hands]
        return match_record(self._rules, seed=self._seed, players=self._players, hands=hands,
                            match_score=self._result[0], winner=self._result[1])


def move_entry(seat: int, card: str, capture: list[str], scopa: bool) -> dict[str, Any]:
    """A move of a record: the seat, the played card's code, the captured cards' codes
    (every table card for an ace that takes all), the scopa flag."""
    return {"seat": seat, "card": card, "capture": capture, "scopa": scopa}


def hand_entry(h: HandResult, moves: list[dict[str, Any]]) -> dict[str, Any]:
    """A hand of a record, from the engine's ``HandResult`` and the hand's moves."""
    return {"dealer": h.dealer, "deck": [CODES[c] for c in h.deck], "moves": moves,
            "last_capture_team": h.last_capture_team, "leftover": _codes(h.leftover),
            "score": h.score}


def match_record(rules: dict[str, Any], *, seed: int, players: list[str],
                 hands: list[dict[str, Any]], match_score: list[int], winner: int | None
                 ) -> dict[str, Any]:
    """A whole record (game-record.md) from its parts (``hand_entry`` hands)."""
    return {"format": FORMAT, "rules": dict(rules), "seed": seed, "players": list(players),
            "hands": hands, "match_score": list(match_score), "winner": winner}


def append_records(path: str | os.PathLike, records: list[dict[str, Any]]) -> None:
    """Append records, one whole line each, flushed and fsynced, under a lock of the file
    (``files.append_lines``), so processes appending to one file at once each append
    whole records. A file whose last line is damaged (a write cut short) is refused
    (``RecordError`` naming the file and the line), so a new record is never glued onto
    it; a file error (no space, no permission) is a ``FileProblem`` naming the file."""
    try:
        p = writable_file(path, "records file")
    except ValueError as e:
        raise RecordError(str(e)) from None
    text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)
    try:
        append_lines(p, text, doing="append records to", check=lambda f: _check_tail(p, f))
    except DamagedFile as e:
        raise RecordError(str(e)) from None


def check_appendable(path: str | os.PathLike) -> None:
    """``RecordError`` unless records can be appended to ``path``: its folder exists, it
    is not a folder, and its last line (if any) is a whole, well-formed record (read
    under a shared lock, so a writer mid-append is waited for, not taken for damage)."""
    try:
        p = writable_file(path, "records file")
    except ValueError as e:
        raise RecordError(str(e)) from None
    if not p.exists():
        return
    with shared_lock(p, "read the records file") as f:
        try:
            require_complete(f, p, "append records to")
        except DamagedFile as e:
            raise RecordError(str(e)) from None
        _check_tail(p, f)


def _check_tail(p: Path, f: BinaryIO) -> None:
    """``RecordError`` naming the file and the line unless the (complete) last line of
    ``f`` is a well-formed record."""
    line, _, start = last_line(f)
    if not line:
        return
    try:  # the file's first line may start with a BOM
        check_schema(json.loads(line.decode("utf-8-sig" if start == 0 else "utf-8")))
    except (ValueError, RecursionError) as e:  # JSON, UTF-8 and schema errors
        raise RecordError(f"{p}:{line_number(f, start)}: the last line is damaged "
                          f"({' '.join(str(e).split())}); remove or repair it before you "
                          f"append records to this file") from None


def iter_records(path: str | os.PathLike) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, record)`` for each record of a ``.jsonl`` file; a line that
    is not UTF-8, not JSON or not a well-formed record raises ``RecordError`` naming the
    file, the line number and the problem."""
    with file_errors(path, "read records from"):
        f = open(path, "rb")
    with f:
        for n, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8-sig" if n == 1 else "utf-8")
            except UnicodeDecodeError as e:
                raise RecordError(f"{path}:{n}: not UTF-8 text (byte 0x{raw[e.start]:02x} at "
                                  f"column {e.start + 1})") from None
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise RecordError(f"{path}:{n}: not valid JSON ({e.msg} at column {e.colno})"
                                  ) from None
            except (ValueError, RecursionError) as e:  # huge numbers, deep nesting
                raise RecordError(f"{path}:{n}: not usable JSON ({e})") from None
            try:
                check_schema(rec)
            except RecordError as e:
                raise RecordError(f"{path}:{n}: {e}") from None
            yield n, rec


def read_records(path: str | os.PathLike) -> Iterator[dict[str, Any]]:
    """Yield the records of a ``.jsonl`` file (``iter_records`` without line numbers)."""
    for _, rec in iter_records(path):
        yield rec


def _req(d: Any, key: str, typ: Any, where: str) -> Any:
    if not isinstance(d, dict):
        raise RecordError(f"{where} must be a JSON object")
    if key not in d:
        raise RecordError(f"{where} lacks the field {key!r}")
    v = d[key]
    ok = isinstance(v, typ) and not (isinstance(v, bool) and bool not in (
        typ if isinstance(typ, tuple) else (typ,)))
    if not ok:
        raise RecordError(f"{where}.{key} has the wrong type ({type(v).__name__})")
    return v


def _codes_field(d: Any, key: str, where: str) -> list[int]:
    try:
        return [card_id(c) for c in _req(d, key, list, where)]
    except (ValueError, AttributeError, TypeError) as e:
        if isinstance(e, RecordError):
            raise
        raise RecordError(f"{where}.{key}: {e}") from None


def check_schema(rec: Any) -> None:
    """Shape checks of one record (every field's presence and type, card codes, seats)."""
    if not isinstance(rec, dict):
        raise RecordError("a record must be a JSON object")
    if rec.get("format") != FORMAT:
        raise RecordError(f"format is {rec.get('format')!r}, expected {FORMAT!r}")
    rules = _req(rec, "rules", dict, "record")
    missing = [k for k in OPTION_NAMES if k not in rules]
    if missing:
        raise RecordError(f"rules lacks option(s) {', '.join(missing)}")
    try:
        players = make_rules(**rules).players
    except (ValueError, TypeError) as e:
        raise RecordError(f"rules: {e}") from None
    if _req(rec, "seed", int, "record") < 0:
        raise RecordError(f"seed must be a non-negative integer, got {rec['seed']}")
    names = _req(rec, "players", list, "record")
    if len(names) != players or not all(isinstance(x, str) for x in names):
        raise RecordError(f"players must list one agent name (a string) per seat, "
                          f"{players} in all")
    hands = _req(rec, "hands", list, "record")
    for i, h in enumerate(hands):
        w = f"hands[{i}]"
        if not 0 <= _req(h, "dealer", int, w) < players:
            raise RecordError(f"{w}.dealer must be a seat, 0..{players - 1}")
        ids = _codes_field(h, "deck", w)
        if len(ids) != 40 or len(set(ids)) != 40:
            raise RecordError(f"{w}.deck must list all 40 cards once")
        for j, m in enumerate(_req(h, "moves", list, w)):
            mw = f"{w}.moves[{j}]"
            if not 0 <= _req(m, "seat", int, mw) < players:
                raise RecordError(f"{mw}.seat must be a seat, 0..{players - 1}")
            try:
                card_id(_req(m, "card", str, mw))
            except ValueError as e:
                raise RecordError(f"{mw}: {e}") from None
            _codes_field(m, "capture", mw)
            _req(m, "scopa", bool, mw)
        _req(h, "last_capture_team", (int, type(None)), w)
        _codes_field(h, "leftover", w)
        _req(h, "score", list, w)
    score = _req(rec, "match_score", list, "record")
    if len(score) != 2 or not all(isinstance(x, int) and not isinstance(x, bool)
                                  for x in score):
        raise RecordError("match_score must be two integers, one per team")
    _req(rec, "winner", (int, type(None)), "record")


def record_action(state: GameState, move: dict[str, Any]) -> int:
    """The catalogue id of a recorded move in ``state``."""
    card = card_id(move["card"])
    capture = mask_of(card_id(c) for c in move["capture"])
    rules = state.rules
    if RANK[card] == 1 and legal_captures(card, state.table, rules.capture_rule,
                                          rules.ace_takes_all) == (ALL_CARDS,):
        return ACE_ALL_BASE + SUIT[card]  # the ace takes all: the record lists the table
    return action_id(card, capture)


@dataclass
class ReplayStep:
    hand: int
    index: int
    state_before: GameState
    action: int
    result: StepResult


def replay(rec: dict[str, Any]) -> Iterator[ReplayStep]:
    """Replay a record move by move from each hand's dealer and deck, checking each
    move is legal; yields the state before every move and what the move did."""
    rules = make_rules(**rec["rules"])
    hands = rec["hands"]
    if not hands:
        raise RecordError("record has no hands")
    try:
        state = new_match(rules, seed=rec["seed"], deck=hands[0]["deck"])
    except ValueError as e:
        raise RecordError(f"hands[0].deck: {e}") from None
    for i, h in enumerate(hands):
        if state.dealer != h["dealer"]:
            raise RecordError(f"hands[{i}]: dealer is {h['dealer']}, the rotation gives "
                              f"{state.dealer}")
        moves = h["moves"]
        for j, m in enumerate(moves):
            if state.to_move != m["seat"]:
                raise RecordError(f"hands[{i}].moves[{j}]: seat {m['seat']} moves, but it is "
                                  f"seat {state.to_move}'s turn")
            before = state.copy()
            try:
                a = record_action(state, m)
                last = j == len(moves) - 1
                nxt = hands[i + 1]["deck"] if last and i + 1 < len(hands) else None
                res = apply(state, a, next_deck=nxt)
            except (ValueError, IllegalMoveError) as e:
                raise RecordError(f"hands[{i}].moves[{j}] ({m['card']} x "
                                  f"{'+'.join(m['capture'])}): {e}") from None
            yield ReplayStep(i, j, before, a, res)
            if res.hand is not None and j != len(moves) - 1:
                raise RecordError(f"hands[{i}]: the hand ended after move {j}, but the record "
                                  f"lists {len(moves)} moves")
        if state.done and i != len(hands) - 1:
            raise RecordError(f"the match ended after hands[{i}], but the record has "
                              f"{len(hands)} hands")
    if not state.done:
        raise RecordError("the record ends before the match is over")


def verify_record(rec: dict[str, Any]) -> None:
    """Replay ``rec`` and check every recorded field against the engine: each move's
    seat, card, captured cards (an ace that takes all lists every table card) and scopa
    flag, each hand's dealer, deck, last capturing team, leftover and score, and the
    match score and winner; raises ``RecordError`` at the first difference."""
    check_schema(rec)
    last: ReplayStep | None = None
    for st in replay(rec):
        h = rec["hands"][st.hand]
        m = h["moves"][st.index]
        r = st.result
        where = f"hands[{st.hand}].moves[{st.index}]"
        got = move_entry(r.move.seat, CODES[r.move.card], _codes(r.move.capture),
                         r.move.scopa)
        for key, value in got.items():
            if m[key] != value:
                raise RecordError(f"{where}: {key} recorded {m[key]!r}, engine says {value!r}")
        if r.hand is not None:
            entry = hand_entry(r.hand, h["moves"])
            for key in ("last_capture_team", "leftover", "score", "deck", "dealer"):
                if entry[key] != h[key]:
                    raise RecordError(f"hands[{st.hand}].{key}: recorded {h[key]!r}, engine "
                                      f"gives {entry[key]!r}")
        last = st
    assert last is not None
    final = last.state_before.copy()
    apply(final, last.action)
    if list(final.match_score) != list(rec["match_score"]):
        raise RecordError(f"match_score: recorded {rec['match_score']}, engine gives "
                          f"{final.match_score}")
    if final.winner != rec["winner"]:
        raise RecordError(f"winner: recorded {rec['winner']}, engine gives {final.winner}")


def load_and_verify(path: str | Path) -> int:
    """Verify every record of a file; returns how many there were. An error names the
    file and the line of the record."""
    n = 0
    for line, rec in iter_records(path):
        try:
            verify_record(rec)
        except RecordError as e:
            raise RecordError(f"{path}:{line}: {e}") from None
        n += 1
    return n
