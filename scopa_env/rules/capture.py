"""Captures: what a move takes off the table, the scopa predicate and the leftover table;
the per-game form and the array form side by side.

A capture takes its cards (an ace playing ``ace_takes_all`` takes the whole table); it
*sweeps* for a scopa when it leaves the table empty, except an ace taking all and, unless
``last_play_scopa``, the last play of the hand. At the hand's end the cards left on the
table go to the team that captured last (to nobody if nobody captured). Which captures
are legal is the move generator's (``scopa_env.moves.card_moves`` per game,
``VectorScopaEnv.card_moves`` for arrays of games).
"""

from __future__ import annotations

import numpy as np

from ..moves import ACE_ALL_BASE, ACTION_CAPTURE

_CAPTURE_NP = np.array(ACTION_CAPTURE, dtype=np.uint64).view(np.int64)


def captured(action: int, table: int) -> int:
    """Bitmask of the table cards ``action`` takes (ace takes all: the whole table)."""
    return table if action >= ACE_ALL_BASE else ACTION_CAPTURE[action]


def captured_np(actions: np.ndarray, tables: np.ndarray) -> np.ndarray:
    """``captured`` of many moves: catalogue ids and int64 table masks -> int64 masks."""
    return np.where(actions >= ACE_ALL_BASE, tables, _CAPTURE_NP.take(actions))


def is_scopa(captures: bool, table_after: int, takes_all: bool, last_play: bool,
             last_play_scopa: bool) -> bool:
    """Whether a move scores a scopa: it captures (``captures``) and leaves the table
    empty (``table_after == 0``), it is not an ace taking all, and it is not the hand's
    last play unless ``last_play_scopa``."""
    return (captures and not table_after and not takes_all
            and (not last_play or last_play_scopa))


def give_leftover(piles: list[int], last_capture_team: int | None, table: int) -> None:
    """The hand is over: the table's cards join the last capturing team's pile (in place)."""
    if last_capture_team is not None:
        piles[last_capture_team] |= table


def is_scopa_np(captures: np.ndarray, table_after: np.ndarray,
                takes_all: np.ndarray | None = None, last_play: np.ndarray | None = None,
                last_play_scopa: bool = True) -> np.ndarray:
    """``is_scopa`` of many moves (bool arrays; ``takes_all`` None: no ace takes all;
    ``last_play`` None: no move is a hand's last play)."""
    scopa = captures & (table_after == 0)
    if takes_all is not None:
        scopa &= ~takes_all
    if last_play is not None and not last_play_scopa:
        scopa &= ~last_play
    return scopa


def give_leftover_np(piles: np.ndarray, games: np.ndarray, last_capture_team: np.ndarray,
                     table: np.ndarray) -> None:
    """``give_leftover`` in ``games`` of ``piles`` (N, 2) (in place): ``last_capture_team``
    and ``table`` per game of ``games``, -1 where nobody captured."""
    swept = last_capture_team >= 0
    piles[games[swept], last_capture_team[swept]] |= table[swept]
