"""The server's reviewer (``scopa serve --hint-agent SPEC``): a hint at a person's turn
and the review of a finished match, both through ``agents.evaluation.match_review``.

A hint is the ``Reviewer``'s ``analyse`` of the seat's own information set
(``scopa_env.observation.info_set``: no other hand, no deck), the analysis the review of
that decision starts from (the same seeding: ``decision_seed``). A finished match is
reviewed by ``review_match`` on its record, in a thread of its own, once: the result is
kept for ``KEEP_REVIEWS`` matches. Costs are bounded: one hint at a time per seat,
``MAX_HINTS`` at once in all, ``MAX_REVIEWING`` match reviews at once.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any

from agents.evaluation.match_review import Reviewer, analysis_json, review_match
from scopa_env.cards import CODES, cards_of
from scopa_env.observation import InfoSet
from scopa_env.rules import Rules, make_rules

from .rooms import ApiError

MAX_HINTS = 4  # hints computed at once, all seats together
MAX_REVIEWING = 2  # match reviews computed at once
KEEP_HINTS = 256  # the last hints kept (a second click shows the same one)
KEEP_REVIEWS = 64  # finished reviews kept in memory (least recently asked first let go)


class Reviews:
    """The reviewer of the server and what it has computed. Thread-safe."""

    def __init__(self, spec: str, seed: int = 0):
        try:
            self.reviewer = Reviewer(spec, seed=seed)
        except ValueError as e:  # an unknown spec, or an agent that cannot review
            raise ValueError(f"--hint-agent {spec}: {e}") from None
        self.spec = self.reviewer.spec
        self.lock = threading.Lock()
        self.hinting: set[tuple[str, int]] = set()
        self.hints: OrderedDict[tuple[str, int, int], dict[str, Any]] = OrderedDict()
        self.done: OrderedDict[str, tuple[dict[str, Any], dict[str, Any]]] = OrderedDict()
        self.running: dict[str, list[int]] = {}  # match id -> [moves reviewed, moves]
        self.failed: dict[str, ApiError] = {}

    def _check_rules(self, rules: Rules) -> None:
        try:
            self.reviewer.check_rules(rules)
        except ValueError as e:
            raise ApiError(409, str(e)) from None

    def hint(self, room: str, moves: int, info: InfoSet) -> dict[str, Any]:
        """The analysis of the decision ``info`` (the seat's information set, ``moves``
        moves into the match ``room``): each legal move's value, the reviewer's move.
        429 while this seat's previous hint is computed, 503 past ``MAX_HINTS``."""
        key, seat = (room, info.seat, moves), (room, info.seat)
        with self.lock:
            if key in self.hints:
                self.hints.move_to_end(key)
                return self.hints[key]
            if seat in self.hinting:
                raise ApiError(429, "a hint for this seat is being computed already: wait "
                                    "for it")
            if len(self.hinting) >= MAX_HINTS:
                raise ApiError(503, f"{MAX_HINTS} hints are being computed already: try "
                                    "again in a moment")
            self.hinting.add(seat)
        try:
            self._check_rules(info.rules)
            t0 = time.perf_counter()
            a = self.reviewer.analyse(info)
            out = {"seat": info.seat, "moves_played": moves, "reviewer": self.spec,
                   "seed": self.reviewer.seed, "cards": [CODES[c] for c in cards_of(info.hand)],
                   "table": [CODES[c] for c in cards_of(info.table)], **analysis_json(a),
                   "played": None, "loss": None,
                   "seconds": round(time.perf_counter() - t0, 3)}
        finally:
            with self.lock:
                self.hinting.discard(seat)
        with self.lock:
            self.hints[key] = out
            while len(self.hints) > KEEP_HINTS:
                self.hints.popitem(last=False)
        return out

    def review(self, match: str, rec: dict[str, Any]
               ) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """The review of the finished match ``match`` (its record ``rec``): the record
        and ``MatchReview.page_data``, or None while it is computed (started here if it
        is not: ``progress`` says how far it is). 503 past ``MAX_REVIEWING``."""
        with self.lock:
            if match in self.done:
                self.done.move_to_end(match)
                return self.done[match]
            if match in self.failed:
                raise self.failed[match]
            if match in self.running:
                return None
            if len(self.running) >= MAX_REVIEWING:
                raise ApiError(503, f"{MAX_REVIEWING} matches are being reviewed already: "
                                    "try again in a moment")
            self._check_rules(make_rules(**rec["rules"]))
            self.running[match] = [0, sum(len(h["moves"]) for h in rec["hands"])]
        threading.Thread(target=self._review, args=(match, rec), daemon=True,
                         name=f"review {match}").start()
        return None

    def _review(self, match: str, rec: dict[str, Any]) -> None:
        count = self.running[match]

        def progress(n: int) -> None:
            count[0] += n

        try:
            review = review_match(rec, self.reviewer, source=f"scopa-{match}.jsonl",
                                  progress=progress)
        except Exception as e:  # a bug: the page says so, the server goes on
            with self.lock:
                self.failed[match] = ApiError(500, f"the review failed: "
                                                   f"{type(e).__name__}: {e}")
                del self.running[match]
            return
        with self.lock:
            self.done[match] = (rec, review.page_data())
            while len(self.done) > KEEP_REVIEWS:
                self.done.popitem(last=False)
            del self.running[match]

    def progress(self, match: str) -> dict[str, Any]:
        """How far the review of ``match`` is: moves reviewed of all."""
        with self.lock:
            done, total = self.running.get(match, (0, 0))
        return {"status": "reviewing", "reviewer": self.spec, "moves_reviewed": done,
                "moves": total}
