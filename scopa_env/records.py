"""Game records (game-record.md): build while playing, write/read JSON Lines, replay, verify."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .cards import CODES, RANK, RANK_MASK, SUIT, card_id, cards_of, mask_of
from .game import GameState, HandResult, IllegalMoveError, StepResult, apply, new_match
from .moves import ACE_ALL_BASE, action_id
from .rules import OPTION_NAMES, make_rules

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
        self._head: dict[str, Any] = {"format": FORMAT, "rules": state.rules.to_dict(),
                                      "seed": state.seed, "players": list(players)}
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
        hands = [hand_entry(h, [{"seat": seat, "card": CODES[card], "capture": _codes(cap),
                                 "scopa": scopa} for seat, card, cap, scopa in moves])
                 for h, moves in self._hands]
        return {**self._head, "hands": hands, "match_score": list(self._result[0]),
                "winner": self._result[1]}


def hand_entry(h: HandResult, moves: list[dict[str, Any]]) -> dict[str, Any]:
    return {"dealer": h.dealer, "deck": [CODES[c] for c in h.deck], "moves": moves,
            "last_capture_team": h.last_capture_team, "leftover": _codes(h.leftover),
            "score": h.score}


def append_records(path: str | os.PathLike, records: list[dict[str, Any]]) -> None:
    """Append records, one whole line each, flushed and fsynced."""
    text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def read_records(path: str | os.PathLike) -> Iterator[dict[str, Any]]:
    """Yield records of a ``.jsonl`` file; a malformed line raises ``RecordError``
    naming the file, the line number and the problem."""
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise RecordError(f"{path}:{n}: not valid JSON ({e.msg} at column {e.colno})"
                                  ) from None
            try:
                check_schema(rec)
            except RecordError as e:
                raise RecordError(f"{path}:{n}: {e}") from None
            yield rec


def _req(d: Any, key: str, typ: Any, where: str) -> Any:
    if not isinstance(d, dict) or key not in d:
        raise RecordError(f"{where} lacks the field {key!r}")
    v = d[key]
    ok = isinstance(v, typ) and not (typ is int and isinstance(v, bool))
    if not ok:
        raise RecordError(f"{where}.{key} has the wrong type ({type(v).__name__})")
    return v


def check_schema(rec: Any) -> None:
    """Shape checks of one record (fields, types, card codes)."""
    if not isinstance(rec, dict):
        raise RecordError("a record must be a JSON object")
    if rec.get("format") != FORMAT:
        raise RecordError(f"format is {rec.get('format')!r}, expected {FORMAT!r}")
    rules = _req(rec, "rules", dict, "record")
    missing = [k for k in OPTION_NAMES if k not in rules]
    if missing:
        raise RecordError(f"rules lacks option(s) {', '.join(missing)}")
    try:
        make_rules(**rules)
    except (ValueError, TypeError) as e:
        raise RecordError(f"rules: {e}") from None
    _req(rec, "seed", int, "record")
    _req(rec, "players", list, "record")
    hands = _req(rec, "hands", list, "record")
    for i, h in enumerate(hands):
        w = f"hands[{i}]"
        _req(h, "dealer", int, w)
        deck = _req(h, "deck", list, w)
        try:
            ids = [card_id(c) for c in deck]
        except (ValueError, AttributeError) as e:
            raise RecordError(f"{w}.deck: {e}") from None
        if len(ids) != 40 or len(set(ids)) != 40:
            raise RecordError(f"{w}.deck must list all 40 cards once")
        for j, m in enumerate(_req(h, "moves", list, w)):
            mw = f"{w}.moves[{j}]"
            _req(m, "seat", int, mw)
            try:
                card_id(_req(m, "card", str, mw))
                [card_id(c) for c in _req(m, "capture", list, mw)]
            except (ValueError, AttributeError) as e:
                raise RecordError(f"{mw}: {e}") from None
            _req(m, "scopa", bool, mw)
        _req(h, "score", list, w)
    _req(rec, "match_score", list, "record")


def record_action(state: GameState, move: dict[str, Any]) -> int:
    """The catalogue id of a recorded move in ``state``."""
    card = card_id(move["card"])
    capture = mask_of(card_id(c) for c in move["capture"])
    rules = state.rules
    if (rules.ace_takes_all and RANK[card] == 1 and state.table
            and not state.table & RANK_MASK[1]):
        return ACE_ALL_BASE + SUIT[card]
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
    state = new_match(rules, seed=rec["seed"], deck=hands[0]["deck"])
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
    """Replay ``rec`` and check every recorded flag, score and the result;
    raises ``RecordError`` at the first difference."""
    check_schema(rec)
    moves_seen: list[dict[str, Any]] = []
    last: ReplayStep | None = None
    for st in replay(rec):
        h = rec["hands"][st.hand]
        m = h["moves"][st.index]
        r = st.result
        if m["scopa"] != r.move.scopa:
            raise RecordError(f"hands[{st.hand}].moves[{st.index}]: scopa recorded "
                              f"{m['scopa']}, engine says {r.move.scopa}")
        moves_seen.append(m)
        if r.hand is not None:
            got = hand_entry(r.hand, h["moves"])
            for key in ("last_capture_team", "leftover", "score", "deck", "dealer"):
                if got[key] != h[key]:
                    raise RecordError(f"hands[{st.hand}].{key}: recorded {h[key]!r}, engine "
                                      f"gives {got[key]!r}")
        last = st
    assert last is not None
    final = last.state_before.copy()
    apply(final, last.action)
    if list(final.match_score) != list(rec["match_score"]):
        raise RecordError(f"match_score: recorded {rec['match_score']}, engine gives "
                          f"{final.match_score}")
    if final.winner != rec.get("winner"):
        raise RecordError(f"winner: recorded {rec.get('winner')}, engine gives {final.winner}")


def load_and_verify(path: str | Path) -> int:
    """Verify every record of a file; returns how many there were."""
    n = 0
    for n, rec in enumerate(read_records(path), 1):
        try:
            verify_record(rec)
        except RecordError as e:
            raise RecordError(f"{path}: record {n}: {e}") from None
    return n
