"""Periodic evaluation of the current policy against baselines, through the evaluator.

Every evaluation uses the same fixed seed, so successive points of a curve are played
on the same deals (evaluation.md: paired, seat-swapped hands). The rating is an Elo
(Bradley–Terry) fit on the evaluator's matches won, anchored at ``random`` = 0: each
baseline's own rating is measured once per run against ``random`` (``calibrate``), and
the policy's rating is the maximum-likelihood value given its results against every
baseline.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from scopa_policy.network import PolicyNet

Status = Callable[[str], None]
ELO = 400.0 / math.log(10.0)


def margin_of(result: dict[str, Any]) -> tuple[float, float, float]:
    """(mean points per hand of A minus B, 95% CI low, high) of an evaluator result."""
    p = result["points_per_hand"]
    lo, hi = p["ci95"]
    return float(p["margin"]), float(lo), float(hi)


def match_score_of(result: dict[str, Any]) -> tuple[float, int]:
    """(A's share of matches won, smoothed by half a win and half a loss; games)."""
    m = result.get("matches") or {}
    games = int(m.get("played") or 0)
    wins = float(m.get("a_wins") or 0)
    return (wins + 0.5) / (games + 1), games + 1


def fit_rating(results: list[tuple[float, float, int]]) -> float:
    """MLE Elo of a player given (opponent rating, score share, games) triples."""
    if not results:
        return 0.0
    r = sum(opp for opp, _, _ in results) / len(results)
    for _ in range(100):  # Newton on the Bradley-Terry log-likelihood
        g = h = 0.0
        for opp, share, n in results:
            p = 1.0 / (1.0 + math.exp(-(r - opp) / ELO))
            g += n * (share - p) / ELO
            h -= n * p * (1 - p) / ELO ** 2
        if h == 0:
            break
        step = g / h
        r -= max(-400.0, min(400.0, step))
        if abs(step) < 1e-6:
            break
    return r


def run_evaluator(a: Any, b: Any, hands: int, seed: int, rules: str, players: int,
                  options: dict[str, Any], workers: int = 1,
                  on_progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    from agents.evaluate import evaluate

    return evaluate(a, b, hands=hands, seed=seed, rules=rules, players=players,
                    workers=workers, options=options or None, progress=False,
                    matches=max(1, hands // 10), on_progress=on_progress)


def calibrate(opponents: list[str], hands: int, seed: int, rules: str, players: int,
              options: dict[str, Any], workers: int = 1, status: Status | None = None
              ) -> dict[str, float]:
    """Each baseline's Elo against ``random`` (anchored at 0). ``status(text)`` is told
    what is being played (for a progress display)."""
    ratings = {"random": 0.0}
    for spec in opponents:
        if spec == "random":
            continue
        res = run_evaluator(spec, "random", hands, seed + 1, rules, players, options, workers,
                            _reporter(status, f"calibrating {spec} vs random"))
        share, _ = match_score_of(res)
        ratings[spec] = ELO * math.log(share / (1 - share))
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

    def __init__(self, net: PolicyNet) -> None:
        self.net = net

    def __call__(self, seed: int) -> Any:
        from scopa_policy.agent import PolicyAgent

        return PolicyAgent(self.net, spec=self.spec, seed=seed)


def evaluate_policy(net: PolicyNet, opponents: list[str], hands: int, seed: int, rules: str,
                    players: int, options: dict[str, Any], anchors: dict[str, float],
                    status: Status | None = None) -> dict[str, Any]:
    """Margins (with 95% intervals) against each opponent and the fitted rating.
    ``status(text)`` is told which opponent is being played and how far it is."""
    agent = PolicyFactory(net)
    out: dict[str, Any] = {"margins": {}}
    fits = []
    for spec in opponents:
        res = run_evaluator(agent, spec, hands, seed, rules, players, options, 1,
                            _reporter(status, f"evaluating vs {spec}"))
        mean, lo, hi = margin_of(res)
        share, n = match_score_of(res)
        out["margins"][spec] = {"mean": mean, "low": lo, "high": hi, "match_win_share": share,
                                "hands": int(res["hands"]),
                                "ms_per_move": res["timing"]["a"].get("mean_ms")}
        if spec in anchors:
            fits.append((anchors[spec], share, n))
    out["rating"] = fit_rating(fits)
    return out
