"""Small statistics for evaluation: paired means, Wilson intervals, quantiles, ratings."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

Z95 = 1.959963984540054


def mean_ci(values: Sequence[float]) -> dict[str, float]:
    """Mean with its 95% normal interval (standard error x 1.96)."""
    x = np.asarray(values, dtype=np.float64)
    n = len(x)
    if n == 0:
        return {"mean": 0.0, "half_width": 0.0, "low": 0.0, "high": 0.0, "sd": 0.0, "n": 0}
    m = float(x.mean())
    sd = float(x.std(ddof=1)) if n > 1 else 0.0
    h = Z95 * sd / math.sqrt(n) if n > 1 else float("inf")
    return {"mean": m, "half_width": h, "low": m - h, "high": m + h, "sd": sd, "n": n}


def wilson(successes: float, n: int) -> tuple[float, float]:
    """Wilson score 95% interval of a proportion."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    z2 = Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def quantiles_ms(times_s: Sequence[float]) -> dict[str, float]:
    """Median, 95th percentile and mean of times given in seconds, in milliseconds."""
    if not len(times_s):
        return {"moves": 0, "median_ms": 0.0, "p95_ms": 0.0, "mean_ms": 0.0}
    t = np.asarray(times_s, dtype=np.float64) * 1e3
    return {"moves": int(len(t)), "median_ms": float(np.median(t)),
            "p95_ms": float(np.percentile(t, 95)), "mean_ms": float(t.mean())}


ELO_SCALE = 400.0 / math.log(10.0)
"""Elo points per unit of log strength (400 Elo = a 10:1 strength ratio)."""


def bradley_terry(n: int, wins: np.ndarray, anchor: int = 0, prior: float = 0.5,
                  iters: int = 10000, tol: float = 1e-10,
                  fixed: dict[int, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Bradley-Terry fit of ``wins[i, j]`` (times i beat j) as Elo ratings: the one
    rating fitter of the kit (the ladder, and the trainer's rating of its policy).

    Every pair that met gets ``prior`` virtual wins each way (keeps ratings finite
    when one side won every match). Returns (elo, standard error), both 0 at
    ``anchor``; the errors come from the inverse Fisher information. ``fixed``
    ({player: Elo}) holds those players' ratings at known values instead (no anchor):
    the others are fitted against them, and only they have a standard error."""
    w = np.asarray(wins, dtype=np.float64).copy()
    games = w + w.T
    met = games > 0
    w = w + prior * met
    games = w + w.T
    gamma = np.ones(n)
    held = np.zeros(n, bool)
    for i, elo in (fixed or {}).items():
        gamma[i], held[i] = math.exp(elo / ELO_SCALE), True
    total_wins = w.sum(axis=1)
    for _ in range(iters):
        denom = np.where(met, games / (gamma[:, None] + gamma[None, :]), 0.0).sum(axis=1)
        new = np.where(denom > 0, total_wins / np.maximum(denom, 1e-300), gamma)
        if fixed:
            new = np.where(held, gamma, new)
        else:
            new /= new[anchor]
        if np.max(np.abs(np.log(new) - np.log(gamma))) < tol:
            gamma = new
            break
        gamma = new
    theta = np.log(gamma)
    p = gamma[:, None] / (gamma[:, None] + gamma[None, :])
    info = np.where(met, games * p * (1 - p), 0.0)
    hess = np.diag(info.sum(axis=1)) - info
    keep = [i for i in range(n) if not held[i]] if fixed else [i for i in range(n) if i != anchor]
    var = np.zeros(n)
    if keep:
        try:
            cov = np.linalg.inv(hess[np.ix_(keep, keep)])
            var[keep] = np.diag(cov)
        except np.linalg.LinAlgError:
            var[keep] = np.inf
    origin = 0.0 if fixed else theta[anchor]
    return ELO_SCALE * (theta - origin), ELO_SCALE * np.sqrt(var)


def additive_ratings(n: int, pairs: Sequence[tuple[int, int, float, float]], anchor: int = 0
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Weighted least squares ``margin(i, j) ~ r_i - r_j`` from ``(i, j, margin, se)``
    rows; ratings and standard errors, 0 at ``anchor``."""
    keep = [i for i in range(n) if i != anchor]
    col = {k: c for c, k in enumerate(keep)}
    x = np.zeros((len(pairs), len(keep)))
    y = np.zeros(len(pairs))
    wts = np.zeros(len(pairs))
    for row, (i, j, m, se) in enumerate(pairs):
        if i in col:
            x[row, col[i]] += 1
        if j in col:
            x[row, col[j]] -= 1
        y[row] = m
        wts[row] = 1.0 / max(se, 1e-9) ** 2
    r = np.zeros(n)
    se_out = np.zeros(n)
    if keep and len(pairs):
        xtw = x.T * wts
        a = xtw @ x
        try:
            cov = np.linalg.inv(a)
        except np.linalg.LinAlgError:
            cov = np.linalg.pinv(a)
        beta = cov @ (xtw @ y)
        r[keep] = beta
        se_out[keep] = np.sqrt(np.maximum(np.diag(cov), 0.0))
    return r, se_out
