"""Suit symmetry: the three plain suits play alike.

Only coins (``d``, denari) is special in the rules: the denari point, the settebello, and
the optional re bello and napola. Cups, swords and clubs (``c``, ``s``, ``b``) differ in
nothing but their names, and primiera scores each suit alike. So each of the 6
permutations of the plain suits maps a position to one that plays the same: the same
legal moves (mapped), the same scores. An agent may average its move scores over the 6
views of a decision (``scopa_policy.symmetry``).

``SUIT_PERMUTATIONS[k]`` maps suit -> suit (the identity first); ``CARD_MAPS[k]`` card id
-> card id, ``ACTION_MAPS[k]`` catalogue id -> catalogue id, ``permute_obs(obs, k)`` the
observation's card slices (``permute_obs_rows``: a permutation per row;
``permute_obs_views``: several views of each row), ``permute_mask``
a card bitmask.
"""

from __future__ import annotations

from itertools import permutations

import numpy as np

from .cards import N_CARDS, RANK, SUIT, cards_of, mask_of
from .moves import ACE_ALL_BASE, ACTION_CAPTURE, ACTION_CARD, N_ACTIONS, action_id
from .observation import CARD_SETS, OBS_DIM

SUIT_PERMUTATIONS: tuple[tuple[int, ...], ...] = tuple(
    (0, *p) for p in permutations((1, 2, 3)))
"""Suit -> suit for each permutation of the plain suits; coins (0) stays; identity first."""

CARD_MAPS = np.array([[p[SUIT[c]] * 10 + RANK[c] - 1 for c in range(N_CARDS)]
                      for p in SUIT_PERMUTATIONS], np.int64)
"""(6, 40): ``CARD_MAPS[k, c]`` is card ``c`` under permutation ``k``."""


def permute_mask(mask: int, k: int) -> int:
    """A card bitmask under permutation ``k``."""
    return mask_of(int(CARD_MAPS[k, c]) for c in cards_of(mask))


def _action_maps() -> np.ndarray:
    out = np.empty((len(SUIT_PERMUTATIONS), N_ACTIONS), np.int64)
    for k, p in enumerate(SUIT_PERMUTATIONS):
        for a in range(ACE_ALL_BASE):
            out[k, a] = action_id(int(CARD_MAPS[k, ACTION_CARD[a]]),
                                  permute_mask(ACTION_CAPTURE[a], k))
        out[k, ACE_ALL_BASE:] = [ACE_ALL_BASE + p[s] for s in range(4)]
    out.setflags(write=False)
    return out


ACTION_MAPS = _action_maps()
"""(6, 16204): ``ACTION_MAPS[k, a]`` is catalogue id ``a`` under permutation ``k``."""

def _obs_index() -> np.ndarray:
    """(6, 216): ``obs[..., _OBS_INDEX[k]]`` is the observation under permutation ``k``
    (each 40-card slice's entry for card ``map[c]`` is the old entry for ``c``)."""
    out = np.tile(np.arange(OBS_DIM), (len(SUIT_PERMUTATIONS), 1))
    for k in range(len(SUIT_PERMUTATIONS)):
        for start in range(CARD_SETS.start, CARD_SETS.stop, N_CARDS):
            out[k, start + CARD_MAPS[k]] = start + np.arange(N_CARDS)
    out.setflags(write=False)
    return out


_OBS_INDEX = _obs_index()


def permute_obs(obs: np.ndarray, k: int) -> np.ndarray:
    """Observations (..., 216) under permutation ``k``: each card slice's cards mapped."""
    return obs[..., _OBS_INDEX[k]]


def permute_obs_views(obs: np.ndarray, views: np.ndarray) -> np.ndarray:
    """Observations (B, 216) under each permutation of ``views`` (V,) -> (V * B, 216),
    view-major: rows ``v * B .. v * B + B - 1`` are ``permute_obs(obs, views[v])``."""
    return obs[:, _OBS_INDEX[views]].transpose(1, 0, 2).reshape(-1, obs.shape[1])


def permute_obs_rows(obs: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """Observations (N, 216), row ``i`` under permutation ``ks[i]``."""
    return obs[np.arange(len(obs))[:, None], _OBS_INDEX[ks]]


__all__ = ["ACTION_MAPS", "CARD_MAPS", "SUIT_PERMUTATIONS", "permute_mask", "permute_obs",
           "permute_obs_rows", "permute_obs_views"]
