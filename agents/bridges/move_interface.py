"""The two action interfaces of the Gymnasium environments (``moves=``).

- ``"catalogue"`` (the default): ``Discrete(16204)``, the fixed catalogue of
  docs/spec/actions.md; the observation is the 216 columns of ``scopa_env.observation``
  and the mask covers every catalogue id. An id means the same move in every state.
- ``"legal"``: ``Discrete(K)`` over the legal moves of the decision in ascending
  catalogue-id order (slot 0 is the lowest legal id); the observation is the 216
  columns followed by each slot's move features (``scopa_env.move_features``: the
  played and captured cards, the table left, scopa, coins, settebello, what the
  replies can do: what the kit's own network scores a move by), zeros in empty slots,
  and the mask marks the filled slots. A slot means "the k-th legal move": a generic
  network (an MLP over the flat vector, or one scorer shared by the slots) learns from
  the features, and the environment maps the slot back to the catalogue id, so records
  and evaluation see catalogue ids as always.

``K`` is ``max_moves`` (default ``default_slots``: 32 where a hand holds at most 3 cards,
64 for bigger hands, above every legal-move count seen in a million decisions of each rule
set; docs/spec/actions.md gives 75 as the theoretical bound for 3-card hands). A
decision with more legal moves than ``K`` offers its first ``K``; the environments count
such decisions (``moves_left_out``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium import spaces

from scopa_env.move_features import ACTION_DIM, legal_move_inputs
from scopa_env.moves import N_ACTIONS
from scopa_env.observation import OBS_DIM, OBS_HIGH, InfoSet, bounded, encode_info
from scopa_env.rules import Rules

MOVES = ("catalogue", "legal")


def default_slots(rules: Rules) -> int:
    """The default ``max_moves`` of ``moves="legal"`` for ``rules``."""
    return 32 if rules.hand_size <= 3 else 64


@dataclass(frozen=True)
class MoveInterface:
    """One of ``MOVES`` with its spaces, and the conversions between its observation /
    mask / action and the catalogue's, for a batch of decisions."""

    kind: str = "catalogue"
    slots: int = 0  # K of moves="legal"

    @staticmethod
    def make(moves: str, max_moves: int | None, rules: Rules) -> MoveInterface:
        """The interface a constructor's ``moves`` and ``max_moves`` ask for (a clear
        ``ValueError`` for anything else)."""
        if moves not in MOVES:
            raise ValueError(f"moves must be one of {', '.join(map(repr, MOVES))}, got "
                             f"{moves!r}")
        if moves == "catalogue":
            if max_moves is not None:
                raise ValueError("max_moves is an option of moves='legal' (the catalogue has "
                                 "16204 ids)")
            return MoveInterface()
        k = default_slots(rules) if max_moves is None else max_moves
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= 1024:
            raise ValueError(f"max_moves must be an integer from 1 to 1024, got {k!r}")
        return MoveInterface("legal", int(k))

    @staticmethod
    def of_spaces(obs_shape: Any, n: Any) -> MoveInterface | None:
        """The interface whose spaces these are (a saved model's), or None."""
        if obs_shape == (OBS_DIM,) and n == N_ACTIONS:
            return MoveInterface()
        if isinstance(n, (int, np.integer)) and n >= 1 \
                and obs_shape == (OBS_DIM + int(n) * ACTION_DIM,):
            return MoveInterface("legal", int(n))
        return None

    def encode_infos(self, infos: Sequence[InfoSet]) -> tuple[np.ndarray, np.ndarray,
                                                               np.ndarray]:
        """Observations and int8 masks of the seats' information sets (what the env
        showed them), and their legal ids padded (B, L), for an agent to map its
        choices back: action k of row b is ``ids[b, k]`` (``moves="legal"``) or k."""
        width = max(len(i.legal_actions) for i in infos)
        ids = np.zeros((len(infos), width), np.int64)
        valid = np.zeros((len(infos), width), bool)
        for row, info in enumerate(infos):
            ids[row, :len(info.legal_actions)] = sorted(info.legal_actions)
            valid[row, :len(info.legal_actions)] = True
        obs, mask = self.encode(np.stack([encode_info(i) for i in infos]), ids, valid)
        return obs, mask, ids

    def chosen_ids(self, actions: np.ndarray, ids: np.ndarray) -> list[int]:
        """The catalogue ids of actions chosen on ``encode_infos``' rows."""
        if self.legal:
            return [int(ids[row, k]) for row, k in enumerate(np.asarray(actions).tolist())]
        return [int(a) for a in np.asarray(actions).tolist()]

    @property
    def legal(self) -> bool:
        return self.kind == "legal"

    @property
    def n(self) -> int:
        """The size of the action space."""
        return self.slots if self.legal else N_ACTIONS

    @property
    def obs_dim(self) -> int:
        return OBS_DIM + self.slots * ACTION_DIM if self.legal else OBS_DIM

    def observation_space(self) -> spaces.Box:
        if not self.legal:
            return spaces.Box(0.0, OBS_HIGH, (OBS_DIM,), np.float32)
        # move features lie in [0, 1] but for taken / 5 and coins / 5 (40 cards: 8) and
        # the cards left on the table / 10 (4)
        high = np.concatenate([OBS_HIGH, np.full(self.slots * ACTION_DIM, 8.0, np.float32)])
        return spaces.Box(0.0, high, (self.obs_dim,), np.float32)

    def action_space(self) -> spaces.Discrete:
        return spaces.Discrete(self.n)

    def dict_space(self) -> spaces.Dict:
        """``mask_in_obs=True``: the observation and the mask together, PettingZoo's
        convention (RLlib's masked modules read the mask there)."""
        return spaces.Dict({"observation": self.observation_space(),
                            "action_mask": spaces.Box(0, 1, (self.n,), np.int8)})

    def encode(self, obs: np.ndarray, ids: np.ndarray, valid: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
        """Observations and int8 masks of B decisions from the 216 columns ``obs``
        (B, 216) and the legal ids (B, L) ascending, padded, ``valid`` marking them."""
        obs = bounded(obs)
        if self.legal:
            return legal_move_inputs(obs, ids, valid, self.slots)
        mask = np.zeros((len(obs), N_ACTIONS), np.int8)
        row, col = np.nonzero(valid)
        mask[row, ids[row, col]] = 1
        return obs, mask

    def to_ids(self, actions: np.ndarray, ids: np.ndarray, valid: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
        """The catalogue ids the actions (B,) name, and whether each is legal (an id
        outside the mask, a slot past the legal moves or outside the space: False, its
        id then -1)."""
        a = np.asarray(actions).astype(np.int64, copy=False).reshape(-1)
        if self.legal:
            count = valid[:, :self.slots].sum(1)
            ok = (a >= 0) & (a < count)
            out = np.where(ok, ids[np.arange(len(a)), np.clip(a, 0, ids.shape[1] - 1)], -1)
            return out, ok
        ok = (valid & (ids == a[:, None])).any(1) & (a >= 0) & (a < N_ACTIONS)
        return np.where(ok, a, -1), ok

    def describe(self, action: int, ids: np.ndarray, valid: np.ndarray) -> str:
        """What an illegal action was, in words, for an error line."""
        legal = ids[valid].tolist()
        if self.legal:
            k = len(legal[:self.slots])
            return f"slot {action} names no legal move: this decision has {k} (slots 0 to {k - 1})"
        return f"id {action} is not a legal move here (legal ids: {legal})"


__all__ = ["MOVES", "MoveInterface", "default_slots"]
