"""The review of a recorded match (``scopa review``): each decision valued by a reviewer.

The record is replayed through the engine (``scopa_env.records.replay``). At every
decision (a move with more than one legal choice; a lone legal move is no decision:
neither listed nor counted) the seat's information set (``info_set``: nothing it may
not know) goes to the reviewing agent's ``analyse(info, played)`` (``agents.move_analysis``),
the method the agent chooses its own moves by. A reviewer is any agent whose
``values_in_points`` is true (``pretrained:search=on``, ``ckpt:PATH,search=on``,
``pimc``); another is refused in one line.

- **The same review whatever else the record holds.** Each decision is analysed by a
  fresh reviewer seeded by ``decision_seed``: the reviewer seed and the information set,
  nothing else (no hidden card, no other decision), so a sampling search draws the same
  worlds for the same decision in any record.
- **The reviewer's own moves lose 0.** ``Reviewer.act`` plays a decision as that same
  fresh agent's ``act``: the move its ``analyse`` calls best.
- **Loss** = the value of the reviewer's move minus that of the move played, in points
  (hand points of the seat's team minus the other's): 0 when the played move is the
  reviewer's. A reviewer values a played move other than its own choice even where its
  play would not (``deep``: the search searches a call it leaves to its network when
  playing, with the played move among those rolled out), so every decision is counted.
  Were a played move left without a value (a reviewer that cannot value it), its loss
  is null, it is counted in ``unvalued`` and left out of the mean.

docs/review.md describes the JSON lines (``MatchReview.lines``) and the page.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from typing import Any

from scopa_env.cards import CODES, cards_of
from scopa_env.files import write_atomic
from scopa_env.moves import action_text
from scopa_env.observation import InfoSet, info_set
from scopa_env.play import derive_seed, has_reset
from scopa_env.records import replay
from scopa_env.rules import Rules, make_rules

from ..move_analysis import MoveAnalysis

FORMAT = "scopa-review/1"
DEFAULT_REVIEWER = "pretrained:search=on"
REVIEWERS = "pretrained:search=on, ckpt:PATH,search=on, pimc[:worlds=N,depth=N]"
COSTLIEST = 3  # decisions listed per seat in the summary


def decision_seed(info: InfoSet, seed: int) -> int:
    """The reviewer's seed for one decision: a function of ``seed`` and the information
    set alone (every field of ``info``, the rules included)."""
    parts = [getattr(info, f.name) for f in fields(info) if f.name != "rules"]
    key = json.dumps([sorted(info.rules.to_dict().items()), *parts])
    digest = hashlib.sha256(key.encode()).digest()
    return derive_seed(seed, *(int.from_bytes(digest[k:k + 4], "big") for k in range(0, 16, 4)))


class Reviewer:
    """The reviewing agent of ``spec``: ``analyse`` and ``act`` each use a fresh agent
    seeded by ``decision_seed(info, seed)``. ``ValueError`` in one line when the agent
    cannot value moves in points."""

    def __init__(self, spec: str = DEFAULT_REVIEWER, seed: int = 0) -> None:
        from .. import agent_factory

        self.make: Callable[[int | None], Any] = agent_factory(spec)
        probe = self.make(seed)
        if not (callable(getattr(probe, "analyse", None))
                and getattr(probe, "values_in_points", False)):
            raise ValueError(f"agent {spec!r} cannot review: it does not value moves in "
                             f"points (reviewers: {REVIEWERS})")
        self._probe = probe
        self.spec: str = probe.spec
        self.seed = seed

    def check_rules(self, rules: Rules) -> None:
        """``ValueError`` naming the problem unless the reviewer plays ``rules``."""
        check = getattr(self._probe, "check_rules", None)
        if check is None:
            return
        try:
            check(rules)
        except ValueError as e:
            raise ValueError(f"reviewer {self.spec!r} cannot play this record's rules: "
                             f"{e}") from None

    def agent(self, info: InfoSet) -> Any:
        """A fresh reviewer for the decision ``info`` (``decision_seed``)."""
        agent = self.make(decision_seed(info, self.seed))
        if has_reset(agent):
            agent.reset()
        return agent

    def analyse(self, info: InfoSet, played: int | None = None) -> MoveAnalysis:
        """The fresh reviewer's ``analyse(info, played)``."""
        return self.agent(info).analyse(info, played)

    def act(self, info: InfoSet) -> int:
        """The move the reviewer plays at ``info`` (the fresh reviewer's ``act``)."""
        if len(info.legal_actions) == 1:
            return info.legal_actions[0]
        return int(self.agent(info).act(info))


@dataclass(frozen=True)
class DecisionReview:
    """One reviewed decision: where it is (hand, move: 0-based), whose, what the seat
    saw (its hand and the table), the reviewer's analysis and the loss."""

    hand: int
    move: int
    seat: int
    cards: int
    table: int
    played: int
    analysis: MoveAnalysis
    loss: float | None

    def to_json(self) -> dict[str, Any]:
        a = self.analysis
        return {"hand": self.hand, "move": self.move, "seat": self.seat,
                "cards": [CODES[c] for c in cards_of(self.cards)],
                "table": [CODES[c] for c in cards_of(self.table)],
                "moves": analysis_json(a)["moves"], "played": a.legal.index(self.played),
                "best": a.pick, "loss": _num(self.loss), "how": a.how, "deep": a.deep,
                "position_value": _num(a.value)}


def analysis_json(a: MoveAnalysis) -> dict[str, Any]:
    """An analysis as JSON (a decision line's fields without the played move): each
    legal move's id, text, value and probability, ``best``, ``how``, ``deep``,
    ``position_value``."""
    moves = [{"id": act, "text": action_text(act),
              "value": None if a.values is None else _num(a.values[k]),
              "prob": None if a.probs is None else _num(a.probs[k])}
             for k, act in enumerate(a.legal)]
    return {"moves": moves, "best": a.pick, "how": a.how, "deep": a.deep,
            "position_value": _num(a.value)}


def _num(x: float | None) -> float | None:
    """A JSON number rounded to 4 places (None for None and NaN)."""
    return None if x is None or math.isnan(x) else round(float(x), 4)


@dataclass
class SeatReview:
    """A seat's decisions of one match and what they cost."""

    seat: int
    player: str
    decisions: list[DecisionReview] = field(default_factory=list)

    @property
    def valued(self) -> list[DecisionReview]:
        return [d for d in self.decisions if d.loss is not None]

    @property
    def total_loss(self) -> float:
        return sum(d.loss for d in self.valued if d.loss is not None)

    @property
    def mean_loss(self) -> float | None:
        v = self.valued
        return self.total_loss / len(v) if v else None

    @property
    def agreed(self) -> int:
        return sum(d.played == d.analysis.move for d in self.decisions)

    def costliest(self, n: int = COSTLIEST) -> list[DecisionReview]:
        """The ``n`` decisions of the largest loss (above 0), largest first."""
        lost = [d for d in self.valued if d.loss is not None and d.loss > 0]
        return sorted(lost, key=lambda d: (-(d.loss or 0.0), d.hand, d.move))[:n]

    def to_json(self) -> dict[str, Any]:
        return {"seat": self.seat, "player": self.player, "decisions": len(self.decisions),
                "valued": len(self.valued), "unvalued": len(self.decisions) - len(self.valued),
                "agreed": self.agreed, "mean_loss": _num(self.mean_loss),
                "total_loss": _num(self.total_loss),
                "costliest": [{"hand": d.hand, "move": d.move, "loss": _num(d.loss),
                               "played": action_text(d.played),
                               "best": action_text(d.analysis.move)}
                              for d in self.costliest()]}


@dataclass
class MatchReview:
    """The review of one recorded match by one reviewer."""

    match: int
    source: str
    record: dict[str, Any]
    reviewer: str
    seed: int
    seats: list[SeatReview]
    seconds: float

    @property
    def decisions(self) -> list[DecisionReview]:
        """Every decision in the order played."""
        return sorted((d for s in self.seats for d in s.decisions), key=lambda d: (d.hand, d.move))

    def header(self) -> dict[str, Any]:
        rec = self.record
        return {"type": "review", "format": FORMAT, "source": self.source, "match": self.match,
                "reviewer": self.reviewer, "seed": self.seed, "rules": rec["rules"],
                "record_seed": rec["seed"], "players": rec["players"],
                "match_score": rec["match_score"], "winner": rec["winner"],
                "decisions": sum(len(s.decisions) for s in self.seats),
                "seconds": round(self.seconds, 2)}

    def lines(self) -> list[dict[str, Any]]:
        """The JSON lines of the review (docs/review.md): the header, each decision,
        each seat."""
        out = [self.header()]
        out += [{"type": "decision", "match": self.match, **d.to_json()} for d in self.decisions]
        out += [{"type": "seat", "match": self.match, **s.to_json()} for s in self.seats]
        return out

    def page_data(self) -> dict[str, Any]:
        """What the review page shows (``scopa_web.html``): the header, the decisions and
        the seats."""
        return {**self.header(), "decisions": [d.to_json() for d in self.decisions],
                "seats": [s.to_json() for s in self.seats]}

    def table(self) -> str:
        """The review as text for the terminal: a row per seat, its costliest decisions."""
        r = self.record["rules"]
        head = (f"=== match {self.match} of {self.source}: {r['name']}, {r['players']} "
                f"players, final score {self.record['match_score'][0]}-"
                f"{self.record['match_score'][1]}; reviewer {self.reviewer} (seed {self.seed}),"
                f" {sum(len(s.decisions) for s in self.seats)} decisions in "
                f"{self.seconds:.1f} s")
        rows = [["seat", "player", "decisions", "agreed", "mean loss", "total loss"]]
        for s in self.seats:
            mean = "-" if s.mean_loss is None else f"{s.mean_loss:.3f}"
            unvalued = len(s.decisions) - len(s.valued)
            rows.append([str(s.seat), s.player, str(len(s.decisions)), str(s.agreed),
                         mean + (f" ({unvalued} unvalued)" if unvalued else ""),
                         f"{s.total_loss:.2f}"])
        widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
        lines = [head] + ["  " + "  ".join(
            c.ljust(w) if k < 2 else c.rjust(w)
            for k, (c, w) in enumerate(zip(row, widths, strict=True))) for row in rows]
        costly = [(s, d) for s in self.seats for d in s.costliest()]
        if costly:
            lines.append("  costliest decisions (points lost against the reviewer's move):")
        for s, d in costly:
            lines.append(f"    seat {s.seat} ({s.player}), hand {d.hand + 1} move "
                         f"{d.move + 1}: played {action_text(d.played)}, best "
                         f"{action_text(d.analysis.move)}: -{d.loss:.2f}"
                         f"{' (searched for the review)' if d.analysis.deep else ''}")
        return "\n".join(lines)


def review_match(rec: dict[str, Any], reviewer: Reviewer, *, match: int = 1, source: str = "",
                 progress: Callable[[int], None] | None = None) -> MatchReview:
    """Review every decision of the (verified) record ``rec``; ``progress(n)`` is called
    after each move. ``ValueError`` in one line when the reviewer does not play the
    record's rules; ``RecordError`` when the record does not replay."""
    rules = make_rules(**rec["rules"])
    reviewer.check_rules(rules)
    seats = [SeatReview(s, name) for s, name in enumerate(rec["players"])]
    t0 = time.perf_counter()
    for st in replay(rec):
        state = st.state_before
        info = info_set(state, state.to_move)
        if len(info.legal_actions) > 1:
            seats[info.seat].decisions.append(review_decision(reviewer, info, st.action,
                                                              st.hand, st.index))
        if progress is not None:
            progress(1)
    return MatchReview(match, source, rec, reviewer.spec, reviewer.seed, seats,
                       time.perf_counter() - t0)


def review_decision(reviewer: Reviewer, info: InfoSet, played: int, hand: int = 0,
                    move: int = 0) -> DecisionReview:
    """The review of one decision: ``played`` (a legal id) at the information set
    ``info`` (hand ``hand``, move ``move`` of the record)."""
    a = reviewer.analyse(info, played)
    return DecisionReview(hand, move, info.seat, info.hand, info.table, played, a,
                          a.loss(played))


def write_lines(path: str, reviews: Iterable[MatchReview]) -> int:
    """Write the reviews' JSON lines to ``path`` (replacing it at once: ``write_atomic``);
    returns the lines written."""
    text = "".join(json.dumps(line, separators=(",", ":")) + "\n"
                   for r in reviews for line in r.lines())
    write_atomic(text.encode("utf-8"), path, "write the review to")
    return text.count("\n")


__all__ = ["DEFAULT_REVIEWER", "FORMAT", "DecisionReview", "MatchReview", "Reviewer",
           "SeatReview", "analysis_json", "decision_seed", "review_decision", "review_match",
           "write_lines"]
