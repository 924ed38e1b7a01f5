"""Periodic evaluation of the current policy against baselines, through the evaluator.

Every evaluation uses the same fixed seed, so successive points of a curve are played
on the same deals (evaluation.md: paired, seat-swapped hands). The rating is an Elo
(Bradley–Terry, ``agents.evaluation.stats.bradley_terry``) fit on the evaluator's matches won,
anchored at ``random`` = 0: each baseline's own rating is measured once per run against
``random`` (``calibrate``), and the policy's rating is the maximum-likelihood value given
its results against every baseline, their ratings held fixed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from agents.evaluation.results import EvalResult
from agents.evaluation.stats import bradley_terry
from scopa_policy.network import PolicyNet

Status = Callable[[str], None]


def match_win_share(result: EvalResult) -> float:
    """A's share of matches won, smoothed by half a win and half a loss."""
    m = result.matches
    return (m.a_wins + 0.5) / (m.played + 1)


def rating_against(results: list[tuple[float, EvalResult]]) -> float:
    """The Elo of A given its ``(opponent's Elo, evaluation)`` results (0 with none)."""
    if not results:
        return 0.0
    n = len(results) + 1
    wins = np.zeros((n, n))
    for k, (_, res) in enumerate(results, 1):
        wins[0, k] = res.matches.a_wins
        wins[k, 0] = res.matches.played - res.matches.a_wins
    elo, _ = bradley_terry(n, wins, fixed={k: opp for k, (opp, _) in enumerate(results, 1)})
    return float(elo[0])


def run_evaluator(a: Any, b: Any, *, hands: int, seed: int, rules: str, players: int,
                  options: dict[str, Any], workers: int = 1,
                  on_progress: Callable[[int, int], None] | None = None) -> EvalResult:
    from agents.evaluation.evaluate import evaluate

    return evaluate(a, b, hands=hands, seed=seed, rules=rules, players=players,
                    workers=workers, options=options or None, progress=False,
                    matches=max(1, hands // 10), on_progress=on_progress)


def calibrate(opponents: list[str], *, hands: int, seed: int, rules: str, players: int,
              options: dict[str, Any], workers: int = 1, status: Status | None = None
              ) -> dict[str, float]:
    """Each baseline's Elo against ``random`` (anchored at 0). ``status(text)`` is told
    what is being played (for a progress display)."""
    ratings = {"random": 0.0}
    for spec in opponents:
        if spec == "random":
            continue
        res = run_evaluator(spec, "random", hands=hands, seed=seed + 1, rules=rules,
                            players=players, options=options, workers=workers,
                            on_progress=_reporter(status, f"calibrating {spec} vs random"))
        ratings[spec] = rating_against([(0.0, res)])
    return ratings


def _reporter(status: Status | None, what: str) -> Callable[[int, int], None] | None:
    if status is None:
        return None
    status(f"{what}: starting")
    return lambda done, total: status(f"{what}: {done}/{total} deals and matches")


class PolicyFactory:
    """The current policy as an agent factory ``seed -> PolicyAgent``: the evaluator
    makes a fresh agent for each seating of each unit (evaluation.md, fair play)."""

    spec = "current-policy"

    def __init__(self, net: PolicyNet, last_deal: Any = None) -> None:
        self.net, self.last_deal = net, last_deal

    def __call__(self, seed: int) -> Any:
        from scopa_policy.agent import PolicyAgent

        return PolicyAgent(self.net, spec=self.spec, seed=seed, last_deal=self.last_deal)


def evaluate_policy(net: PolicyNet, opponents: list[str], *, hands: int, seed: int,
                    rules: str, players: int, options: dict[str, Any],
                    anchors: dict[str, float], status: Status | None = None,
                    last_deal: Any = None) -> dict[str, Any]:
    """Margins (with 95% intervals) against each opponent and the fitted rating of the
    policy ``net`` (with its last-deal scorer ``last_deal``, if any). ``status(text)`` is
    told which opponent is being played and how far it is."""
    agent = PolicyFactory(net, last_deal)
    out: dict[str, Any] = {"margins": {}}
    rated = []
    for spec in opponents:
        res = run_evaluator(agent, spec, hands=hands, seed=seed, rules=rules, players=players,
                            options=options,
                            on_progress=_reporter(status, f"evaluating vs {spec}"))
        p = res.points_per_hand
        out["margins"][spec] = {"mean": float(p.margin), "low": float(p.ci95[0]),
                                "high": float(p.ci95[1]),
                                "match_win_share": match_win_share(res), "hands": res.hands,
                                "ms_per_move": res.timing_a.mean_ms}
        if spec in anchors:
            rated.append((anchors[spec], res))
    out["rating"] = rating_against(rated)
    return out
