"""How a hand and a match end: the match's winner once a team has reached the target
score, and the rewards at a hand's end; the per-game form and the array form side by side.

A match is over after a hand when a team has ``target_score`` points or more and the two
teams' scores differ (a tie plays another hand); the higher score wins. Rewards, per team
(``reward``, ``episode`` as the environments take them): ``"points"``, the hand's margin;
``"match"``, +1 / -1 at the match's end, and with one-hand episodes the sign of the
hand's margin.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def match_winner(score: Sequence[int], target: int) -> int | None:
    """The winning team once the match is over (else None), from the match score."""
    a, b = score
    if (a >= target or b >= target) and a != b:
        return 0 if a > b else 1
    return None


def match_winner_np(score: np.ndarray, target: int) -> tuple[np.ndarray, np.ndarray]:
    """``match_winner`` of many matches: ``score`` (G, 2) -> (over (G,) bool, winner (G,)
    int64, -1 where not over)."""
    done = ((score >= target).any(1)) & (score[:, 0] != score[:, 1])
    return done, np.where(done, (score[:, 1] > score[:, 0]).astype(np.int64), -1)


def hand_end(reward: str, episode: str, totals: Sequence[int], match_over: bool,
             winner: int | None) -> tuple[bool, tuple[float, float]]:
    """At a hand's end: whether the episode ends, and the reward of each team (team 0,
    team 1), from the hand's points per team and the match's outcome."""
    done = match_over or episode == "hand"
    if reward == "points":
        return done, (float(totals[0] - totals[1]), float(totals[1] - totals[0]))
    if match_over:
        return done, (1.0 if winner == 0 else -1.0, 1.0 if winner == 1 else -1.0)
    if done:  # one-hand episode, match reward: the sign of the hand's margin
        m = float(np.sign(totals[0] - totals[1]))
        return done, (m, -m)
    return done, (0.0, 0.0)


def hand_end_np(reward: str, episode: str, totals: np.ndarray, match_over: np.ndarray,
                winner: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``hand_end`` of many hands: ``totals`` (G, 2) -> (episode over (G,) bool, team 0's
    reward (G,) float32; team 1's is its negation)."""
    margin = totals[:, 0] - totals[:, 1]
    if reward == "points":
        team0 = margin.astype(np.float32)
    else:
        team0 = np.where(match_over, 1 - 2 * winner, 0).astype(np.float32)
        if episode == "hand":
            team0 = np.where(match_over, team0, np.sign(margin)).astype(np.float32)
    done = np.ones(len(totals), bool) if episode == "hand" else match_over
    return done, team0
