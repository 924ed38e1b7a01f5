"""The evaluator's typed results: what ``agents.evaluation.evaluate.evaluate`` returns.

``EvalResult.to_json()`` is the JSON object of ``scopa eval --json`` (evaluation.md),
``EvalResult.from_json`` reads one back (the ladder's cached pairs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scopa_env.rules import Rules


@dataclass(frozen=True)
class PointsPerHand:
    """A's points per hand minus B's over the paired deals, with its 95% interval."""

    margin: float
    ci95: tuple[float, float]
    half_width: float
    sd: float
    a: float  # A's mean points per hand
    b: float

    def to_json(self) -> dict[str, Any]:
        return {"margin": self.margin, "ci95": list(self.ci95), "half_width": self.half_width,
                "sd": self.sd, "a": self.a, "b": self.b}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> PointsPerHand:
        return cls(d["margin"], tuple(d["ci95"]), d["half_width"], d["sd"], d["a"], d["b"])


@dataclass(frozen=True)
class Category:
    """One scoring category: each side's mean points per hand and the margin."""

    a: float
    b: float
    margin: float
    ci95: tuple[float, float]

    def to_json(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "margin": self.margin, "ci95": list(self.ci95)}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Category:
        return cls(d["a"], d["b"], d["margin"], tuple(d["ci95"]))


@dataclass(frozen=True)
class Matches:
    """The paired matches to the target score (the rate fields are None when none)."""

    paired: int
    played: int
    a_wins: int
    win_rate: float | None
    ci95: tuple[float, float] | None
    hands_per_match: float | None
    target_score: int

    def to_json(self) -> dict[str, Any]:
        return {"paired": self.paired, "played": self.played, "a_wins": self.a_wins,
                "win_rate": self.win_rate,
                "ci95": None if self.ci95 is None else list(self.ci95),
                "hands_per_match": self.hands_per_match, "target_score": self.target_score}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Matches:
        ci = d["ci95"]
        return cls(d["paired"], d["played"], d["a_wins"], d["win_rate"],
                   None if ci is None else tuple(ci), d["hands_per_match"], d["target_score"])


@dataclass(frozen=True)
class Timing:
    """Time per move of one side, in milliseconds (wall time unless named cpu)."""

    moves: int
    median_ms: float
    p95_ms: float
    mean_ms: float
    median_ms_with_choice: float  # over moves with more than one legal move
    cpu_median_ms: float
    cpu_p95_ms: float

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Timing:
        return cls(**d)


@dataclass(frozen=True)
class EvalResult:
    """An evaluation of agent A against agent B (evaluation.md)."""

    a: str  # canonical specs
    b: str
    rules: Rules
    seed: int
    hands: int  # paired deals
    points_per_hand: PointsPerHand
    categories: dict[str, Category]
    matches: Matches
    timing_a: Timing
    timing_b: Timing
    workers: int
    elapsed_s: float

    @property
    def players(self) -> int:
        return self.rules.players

    @property
    def hand_games(self) -> int:
        """Hands played: each paired deal twice."""
        return 2 * self.hands

    def to_json(self) -> dict[str, Any]:
        """The JSON object of ``scopa eval --json``."""
        return {
            "a": self.a, "b": self.b, "rules": self.rules.to_dict(), "players": self.players,
            "seed": self.seed, "hands": self.hands, "hand_games": self.hand_games,
            "points_per_hand": self.points_per_hand.to_json(),
            "categories": {k: c.to_json() for k, c in self.categories.items()},
            "matches": self.matches.to_json(),
            "timing": {"a": self.timing_a.to_json(), "b": self.timing_b.to_json()},
            "workers": self.workers, "elapsed_s": self.elapsed_s,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> EvalResult:
        """An ``EvalResult`` from its ``to_json`` object (``KeyError`` / ``TypeError`` /
        ``ValueError`` when it is not one)."""
        return cls(
            a=d["a"], b=d["b"], rules=Rules.from_dict(d["rules"]), seed=d["seed"],
            hands=d["hands"], points_per_hand=PointsPerHand.from_json(d["points_per_hand"]),
            categories={k: Category.from_json(c) for k, c in d["categories"].items()},
            matches=Matches.from_json(d["matches"]),
            timing_a=Timing.from_json(d["timing"]["a"]),
            timing_b=Timing.from_json(d["timing"]["b"]),
            workers=d["workers"], elapsed_s=d["elapsed_s"])
