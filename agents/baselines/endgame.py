"""Exact values of the last deal of a 2-player hand, where every card is known.

Once the deck is empty in a 2-player game, the cards a seat has not seen are exactly
the other seat's hand: the rest of the hand is a perfect-information, zero-sum game of
at most ``2 x hand_size`` plies. ``move_values`` solves it to the end (negamax over
bitmasks, memoised) and gives, for each legal move of the seat to move, the hand's
final points margin (own team minus other, scope included) under best play by both
sides from there on; ``move_outcomes`` the mover's final pile on that line (which of
the cards in play each move wins, a training target of ``scopa_train.stages.last_deal``).

The rules are the engine's: legal moves (``legal_actions``), what a move takes and the
scopa predicate (``scopa_env.rules.capture``), the scoring (``score_hand``); ``_play``
below plays a move with the engine's own transition (``scopa_env.rules.capture.play_card``,
which ``scopa_env.game.apply`` calls too) on a compact state. Every
move's value equals the engine's own alpha-beta search (``agents.baselines.pimc``, stepping with
``apply``, exact to the end of the hand) on random last deals under six rule
configurations (``tests/test_endgame.py``).

It reads a position from the seat's observation alone, so it serves both the trainer
(the exact teacher, ``endgame_coef``) and an agent (``pretrained:endgame=exact``,
``scopa_policy.agent``) without seeing anything a seat may not know.
"""

from __future__ import annotations

import time
from functools import lru_cache

import numpy as np

from scopa_env.catalogue import captured
from scopa_env.moves import ACE_ALL_BASE, ACTION_CARD_LIST, legal_actions
from scopa_env.observation import (
    DECK_COUNT,
    HAND,
    LAST_CAPTURE,
    NOBODY,
    OTHER_PILE,
    OWN_PILE,
    SCOPE,
    SCOPE_SCALE,
    TABLE,
    UNSEEN,
    card_mask,
)
from scopa_env.rules import Rules
from scopa_env.rules.capture import give_leftover, play_card
from scopa_env.rules.scoring import score_hand

# a position: (mover's hand, other hand, table, mover's pile, other pile,
#              mover's scope - other's, last capturer: 1 mover, -1 other, 0 nobody)
Position = tuple[int, int, int, int, int, int, int]


def position_from_obs(obs: np.ndarray) -> Position:
    """The position of the seat observing ``obs`` (a 2-player observation with the deck
    empty: its unseen cards are the other hand)."""
    scope = np.rint(obs[SCOPE] * SCOPE_SCALE).astype(int)
    last = int(np.argmax(obs[LAST_CAPTURE]))
    return (card_mask(obs[HAND]), card_mask(obs[UNSEEN]), card_mask(obs[TABLE]),
            card_mask(obs[OWN_PILE]), card_mask(obs[OTHER_PILE]), int(scope[0] - scope[1]),
            0 if last == NOBODY else (1 if last == 0 else -1))


def is_last_deal(obs: np.ndarray, players: int) -> np.ndarray:
    """Which observations (B, 216) are 2-player ones with the deck empty: positions
    ``position_from_obs`` reads exactly."""
    obs = np.atleast_2d(obs)
    if players != 2:
        return np.zeros(len(obs), bool)
    return obs[:, DECK_COUNT.start] == 0


_LAST_TEAM = {1: 0, -1: 1, 0: None}  # a position's last capturer (mover 1, other -1) as a team

class EndgameSolver:
    """Exact move values of 2-player last deals under one rules configuration."""

    def __init__(self, rules: Rules) -> None:
        if rules.players != 2:
            raise ValueError("the last-deal solver is for 2-player games (in 4-player games "
                             "a seat never sees its partner's and opponents' hands)")
        self.rules = rules
        self._last_play_scopa = rules.last_play_scopa
        self.value = lru_cache(maxsize=1 << 19)(self._value)
        self.final_piles = lru_cache(maxsize=1 << 19)(self._final_piles)
        self._points = lru_cache(maxsize=1 << 18)(self._points_diff)
        self.seconds = 0.0  # spent in label_moves

    def _points_diff(self, p_me: int, p_other: int) -> int:
        """Hand points (scope aside) of the mover minus the other, from the final piles."""
        sc = score_hand([p_me, p_other], [0, 0], self.rules)
        return sc[0]["points"]["total"] - sc[1]["points"]["total"]

    def _play(self, pos: Position, action: int) -> tuple[Position, bool]:
        """The position after the mover plays ``action``, seen by the other seat (who
        moves next), and whether that ended the hand (then the table has gone to the
        last capturer and the position is final)."""
        me, other, table, p_me, p_other, scope, last = pos
        card, capture, takes_all = (ACTION_CARD_LIST[action], captured(action, table),
                                    action >= ACE_ALL_BASE)
        last_play = (me | other) == 1 << card
        me, table, p_me, scopa = play_card(me, table, p_me, card, capture, takes_all, last_play,
                                           self._last_play_scopa)
        if capture:
            last = 1
            scope += scopa
        if last_play:  # piles by team seen from the mover: 0 the mover's, 1 the other's
            piles = [p_me, p_other]
            give_leftover(piles, _LAST_TEAM[last], table)
            (p_me, p_other), table = piles, 0
        return (other, me, table, p_other, p_me, -scope, -last), last_play

    def _final(self, pos: Position) -> int:
        """Margin of a final position for the seat it is seen by."""
        _, _, _, p_me, p_other, scope, _ = pos
        return self._points(p_me, p_other) + scope

    def _child_value(self, pos: Position, action: int) -> int:
        """Margin for the mover of playing ``action``, under best play afterwards."""
        nxt, over = self._play(pos, action)
        return -self._final(nxt) if over else -self.value(nxt)

    def _value(self, pos: Position) -> int:
        """Margin for the mover under best play by both sides."""
        return max(self._child_value(pos, a) for a in legal_actions(pos[0], pos[2], self.rules))

    def _final_piles(self, pos: Position) -> tuple[int, int]:
        """The final piles (the mover's, the other's; card bitmasks) when both sides play
        best from ``pos`` (of tied best moves, the first legal one)."""
        actions = legal_actions(pos[0], pos[2], self.rules)
        best = max(actions, key=lambda a: self._child_value(pos, a))
        nxt, over = self._play(pos, best)
        if over:
            return nxt[4], nxt[3]
        other, mover = self.final_piles(nxt)
        return mover, other

    def move_outcomes(self, pos: Position, actions: list[int] | tuple[int, ...]) -> list[int]:
        """The mover's final pile (a card bitmask) after each of ``actions``, both sides
        playing best afterwards: which of the cards in play end up the mover's."""
        out = []
        for a in actions:
            nxt, over = self._play(pos, int(a))
            out.append(nxt[4] if over else self.final_piles(nxt)[1])
        return out

    def move_values(self, pos: Position, actions: list[int] | tuple[int, ...] | None = None
                    ) -> list[int]:
        """Final margin for the mover of each of ``actions`` (default: every legal move,
        ascending) under best play afterwards."""
        if actions is None:
            actions = legal_actions(pos[0], pos[2], self.rules)
        return [self._child_value(pos, int(a)) for a in actions]

    def label_moves(self, obs: np.ndarray, ids: np.ndarray, valid: np.ndarray) -> np.ndarray:
        """Exact values (M,) of the legal moves of B decisions, flat in the order of
        ``np.nonzero(valid)`` (``scopa_policy.features.Candidates``): ``obs`` (B, 216),
        padded legal ``ids`` and their mask (B, L). Decisions of the last deal with more
        than one legal move get each move's final margin; the others NaN."""
        t0 = time.perf_counter()
        row, col = np.nonzero(valid)
        out = np.full(len(row), np.nan)
        first = np.searchsorted(row, np.arange(len(obs)))
        count = valid.sum(1)
        for b in np.flatnonzero(is_last_deal(obs, 2) & (count > 1)).tolist():
            legal = ids[b, valid[b]].tolist()
            out[first[b]:first[b] + len(legal)] = self.move_values(position_from_obs(obs[b]),
                                                                   legal)
        self.seconds += time.perf_counter() - t0
        return out

    def clear(self) -> None:
        """Forget memoised positions."""
        self.value.cache_clear()
        self.final_piles.cache_clear()
        self._points.cache_clear()
