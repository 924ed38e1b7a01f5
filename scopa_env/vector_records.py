"""The record archive of ``VectorScopaEnv``: per-game logs of the current match's hands
(deal order, dealer, moves, scopas, what an ace took, how each hand ended), held as
arrays over all games and turned into a game-record.md dict when a match ends
(``scopa_env.records``' ``hand_entry``, ``move_entry`` and ``match_record``, as the
single-game recorder writes them)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from .cards import CODES, N_CARDS, cards_of
from .catalogue import ACE_ALL_BASE, ACTION_CAPTURE, ACTION_CARD
from .game import HandResult
from .records import hand_entry, match_record, move_entry
from .rules import Rules
from .rules.scoring import COUNT_KEYS, POINT_KEYS, SCORE_ROW, score_entry

_NCOUNTS = len(COUNT_KEYS)
_PRIMIERA = COUNT_KEYS.index("primiera")
_LOGS = ("dealer", "deck", "action", "scopa", "last", "leftover", "score")


class MatchArchive:
    """The logs of ``num_envs`` games' current matches, room for ``hands`` hands each at
    first (doubled as needed). ``capture`` (what an ace taking all took) is kept only
    under ``ace_takes_all``; every other capture follows from the move's id."""

    def __init__(self, num_envs: int, rules: Rules, agent_names: list[str],
                 hands: int = 8) -> None:
        n, p = num_envs, rules.players
        self.rules, self.agent_names = rules, agent_names
        self._rules_dict = rules.to_dict()
        self._move_seats = [[(d + 1 + j) % p for j in range(N_CARDS - rules.table_size)]
                            for d in range(p)]  # by dealer: the seat of each move
        self.dealer = np.zeros((n, hands), np.int8)
        self.deck = np.zeros((n, hands, N_CARDS), np.int8)
        self.action = np.zeros((n, hands, N_CARDS), np.int16)
        self.capture = np.zeros((n, hands if rules.ace_takes_all else 0, N_CARDS), np.uint64)
        self.scopa = np.zeros((n, hands, N_CARDS), bool)
        self.last = np.zeros((n, hands), np.int8)
        self.leftover = np.zeros((n, hands), np.uint64)
        self.score = np.zeros((n, hands, 2, SCORE_ROW), np.int16)
        self.nhands = np.zeros(n, np.int64)

    def arrays(self) -> list[np.ndarray]:
        """Every per-game log (for the environment's bytes per game)."""
        return [getattr(self, name) for name in (*_LOGS, "capture", "nhands")]

    def grow(self, hand: int) -> None:
        """Make room for hand number ``hand`` (doubling the capacity)."""
        cap = self.dealer.shape[1]
        if hand < cap:
            return
        new_cap = max(2 * cap, hand + 1)
        for name in _LOGS + (("capture",) if self.rules.ace_takes_all else ()):
            old = getattr(self, name)
            new = np.zeros((old.shape[0], new_cap) + old.shape[2:], old.dtype)
            new[:, :cap] = old
            setattr(self, name, new)

    def new_matches(self, games: np.ndarray) -> None:
        """``games`` start a new match: their logs are empty."""
        self.nhands[games] = 0

    def hand_start(self, games: np.ndarray, hand_index: np.ndarray, dealer: np.ndarray,
                   decks: np.ndarray) -> None:
        """A hand was dealt in ``games`` (its index in the match, dealer and deal order)."""
        self.grow(int(hand_index.max()))
        self.dealer[games, hand_index] = dealer
        self.deck[games, hand_index] = decks
        self.nhands[games] = hand_index + 1

    def move_slots(self, games: np.ndarray, hand_index: np.ndarray, n_moves: np.ndarray
                   ) -> np.ndarray:
        """Where in the flat move logs the next move of each of ``games`` goes (its
        hand's index and the moves played in that hand so far, per game)."""
        return (games * self.action.shape[1] + hand_index) * N_CARDS + n_moves

    def log_moves(self, at: np.ndarray, actions: np.ndarray, scopa: np.ndarray,
                  captures: np.ndarray | None) -> None:
        """One move per game at ``move_slots``: its id, whether it swept, and (under
        ``ace_takes_all``) the cards it took."""
        self.action.reshape(-1)[at] = actions
        if captures is not None:
            self.capture.reshape(-1)[at] = captures
        self.scopa.reshape(-1)[at] = scopa

    def hand_end(self, games: np.ndarray, hand_index: np.ndarray, last: np.ndarray,
                 leftover: np.ndarray, score: np.ndarray) -> None:
        """The hand ``hand_index`` of ``games`` ended: the last capturing team (-1 nobody),
        the cards left on the table, the score rows (``score_hands_np``)."""
        self.last[games, hand_index] = last
        self.leftover[games, hand_index] = leftover
        self.score[games, hand_index] = score

    def record(self, g: int, seed: int, match_score: list[int]) -> dict[str, Any]:
        """Game ``g``'s finished match (its ``seed`` and final score) as a game-record.md
        dict."""
        n_moves, nh = N_CARDS - self.rules.table_size, int(self.nhands[g])
        actions = self.action[g, :nh, :n_moves].tolist()
        scopas = self.scopa[g, :nh, :n_moves].tolist()
        captures = (self.capture[g, :nh, :n_moves].tolist() if self.rules.ace_takes_all
                    else None)
        card_code, takes = _action_codes()
        hands = []
        for h in range(nh):
            dealer = int(self.dealer[g, h])
            seats = self._move_seats[dealer]
            if captures is None:
                moves = [move_entry(seat, card_code[a], takes[a].copy(), sc)
                         for seat, a, sc in zip(seats, actions[h], scopas[h], strict=True)]
            else:  # what an ace takes when it takes all is in the log
                moves = [move_entry(seat, card_code[a], takes[a].copy() if a < ACE_ALL_BASE
                                    else [CODES[x] for x in cards_of(cap)], sc)
                         for seat, a, sc, cap in zip(seats, actions[h], scopas[h], captures[h],
                                                     strict=True)]
            score = [score_entry([None if k == _PRIMIERA and x < 0 else x
                                  for k, x in enumerate(v[:_NCOUNTS])],
                                 dict(zip(POINT_KEYS, v[_NCOUNTS:], strict=True)))
                     for v in self.score[g, h].tolist()]
            last = int(self.last[g, h])
            hands.append(hand_entry(HandResult(
                dealer=dealer, deck=tuple(self.deck[g, h].tolist()),
                last_capture_team=None if last < 0 else last,
                leftover=int(self.leftover[g, h]), score=score), moves))
        return match_record(self._rules_dict, seed=seed, players=self.agent_names,
                            hands=hands, match_score=match_score,
                            winner=0 if match_score[0] > match_score[1] else 1)


@lru_cache(maxsize=1)
def _action_codes() -> tuple[list[str], list[list[str]]]:
    """Per catalogue id: the played card's code and the captured cards' codes."""
    return ([CODES[c] for c in ACTION_CARD.tolist()],
            [[CODES[x] for x in cards_of(m)] for m in ACTION_CAPTURE])
