"""Suit symmetry (scopa_env.suit_maps): a hand dealt with the plain suits renamed plays
the same, and agents that average over the views (scopa_policy.symmetry) score each view
alike."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from scopa_env.cards import N_CARDS, SUIT
from scopa_env.game import apply, new_match
from scopa_env.moves import ACE_ALL_BASE, action_move
from scopa_env.observation import encode, info_set
from scopa_env.rules import make_rules
from scopa_env.suit_maps import (
    ACTION_MAPS,
    CARD_MAPS,
    SUIT_PERMUTATIONS,
    permute_mask,
    permute_obs,
    permute_obs_rows,
    permute_obs_views,
)
from scopa_policy.agent import decision_inputs
from scopa_policy.features import SUIT_VIEW_COLUMNS, action_inputs_np
from scopa_policy.last_deal_net import LastDealNet
from scopa_policy.network import PolicyNet
from scopa_policy.symmetry import CloseCalls, SuitAveraged, top_two_gap

VARIANTS = [({}, 2), ({"last_play_scopa": True}, 2), ({"ace_takes_all": True}, 2),
            ({"capture_rule": "fewest"}, 2), ({"napola": True, "re_bello": True}, 2),
            ({"primiera_table": "alt", "primiera_requires_all_suits": False}, 2),
            ({}, 4)]


def test_maps_are_permutations_that_keep_coins_and_ranks() -> None:
    assert SUIT_PERMUTATIONS[0] == (0, 1, 2, 3) and len(set(SUIT_PERMUTATIONS)) == 6
    for k, p in enumerate(SUIT_PERMUTATIONS):
        assert sorted(CARD_MAPS[k]) == list(range(N_CARDS))
        assert all(CARD_MAPS[k, c] % 10 == c % 10 for c in range(N_CARDS))
        assert all(SUIT[CARD_MAPS[k, c]] == p[SUIT[c]] for c in range(N_CARDS))
        assert (CARD_MAPS[k, :10] == np.arange(10)).all()  # coins stay coins
        assert len(set(ACTION_MAPS[k].tolist())) == len(ACTION_MAPS[k])
    assert (ACTION_MAPS[0] == np.arange(ACTION_MAPS.shape[1])).all()


@pytest.mark.parametrize("options,players", VARIANTS,
                         ids=lambda v: str(v) if not isinstance(v, dict) else ",".join(v))
def test_a_hand_with_the_plain_suits_renamed_plays_and_scores_the_same(
        options: dict, players: int) -> None:
    """Every ply of 40 random hands per rule set: the renamed hand's legal moves are the
    mapped legal moves, every seat's observation is the mapped observation, and the
    hand's score is the same, point by point."""
    rng = random.Random(7)
    rules = make_rules("scopa", players=players, **options)
    for g in range(40):
        k = rng.randrange(1, 6)
        s = new_match(rules, seed=g)
        t = new_match(rules, seed=g, deck=[int(CARD_MAPS[k, c]) for c in s.deck])
        while True:
            legal = s.legal_actions()
            assert sorted(ACTION_MAPS[k, legal].tolist()) == t.legal_actions()
            for seat in range(players):
                assert (encode(t, seat) == permute_obs(encode(s, seat), k)).all()
            a = rng.choice(legal)
            mapped = int(ACTION_MAPS[k, a])
            if a < ACE_ALL_BASE:
                m, n = action_move(a), action_move(mapped)
                assert n.card == CARD_MAPS[k, m.card]
                assert n.capture == permute_mask(m.capture, k)
            done_s, done_t = apply(s, a).hand, apply(t, mapped).hand
            assert (done_s is None) == (done_t is None)
            if done_s is not None:
                assert done_s.score == done_t.score
                assert t.piles == [permute_mask(p, k) for p in s.piles]
                break


def test_permute_obs_rows_applies_each_rows_permutation() -> None:
    obs = np.random.default_rng(0).random((6, 216))
    ks = np.array([5, 0, 3, 1, 4, 2])
    rows = permute_obs_rows(obs, ks)
    for i, k in enumerate(ks):
        assert (rows[i] == permute_obs(obs[i], k)).all()


def test_permute_obs_views_stacks_each_view_of_every_row() -> None:
    obs = np.random.default_rng(2).random((3, 216))
    views = np.array([4, 0, 2])
    got = permute_obs_views(obs, views)
    assert got.shape == (9, 216)
    for v, k in enumerate(views):
        assert (got[3 * v:3 * v + 3] == permute_obs(obs, k)).all()


def _decisions(players: int = 2, n: int = 12) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Observations, legal ids and each id's decision of the first ``n`` random plies."""
    rules = make_rules("scopa", players=players)
    rng = random.Random(3)
    infos = []
    s = new_match(rules, seed=5)
    while len(infos) < n:
        infos.append(info_set(s, s.to_move))
        apply(s, rng.choice(s.legal_actions()))
    obs, ids, row = decision_inputs(infos)
    return obs.astype(np.float64), ids, row


def test_each_views_move_features_are_a_permutation_of_the_columns() -> None:
    obs, ids, row = _decisions()
    feats = action_inputs_np(obs, ids, row)
    for k in range(6):
        assert (action_inputs_np(permute_obs(obs, k), ACTION_MAPS[k, ids], row)
                == feats[:, SUIT_VIEW_COLUMNS[k]]).all()


@pytest.mark.parametrize("which", ["policy", "last_deal"])
def test_suit_averaged_scores_are_the_mean_over_views_and_the_same_in_every_view(
        which: str) -> None:
    torch.manual_seed(0)
    base = (PolicyNet() if which == "policy" else LastDealNet()).numpy_scorer()
    avg = SuitAveraged(base)
    obs, ids, row = _decisions()
    got = avg.logits_flat(obs, ids, row)
    want = np.mean([base.logits_flat(permute_obs(obs, k), ACTION_MAPS[k, ids], row)
                    for k in range(6)], 0)
    assert np.allclose(got, want, atol=1e-8)
    for k in range(1, 6):  # the averaged scores of a renamed decision are the same
        assert np.allclose(avg.logits_flat(permute_obs(obs, k), ACTION_MAPS[k, ids], row),
                           got, atol=1e-8)
    assert not np.allclose(base.logits_flat(obs, ids, row), got)


def test_top_two_gap_is_the_best_score_less_the_next_best_per_decision() -> None:
    scores = np.array([1.0, 3.0, 4.0, 2.5, 5.0, 5.0, 7.0, -1.0])
    row = np.array([0, 0, 1, 0, 2, 2, 3, 1])  # decisions' moves need not be contiguous
    assert top_two_gap(scores, row, 5).tolist() == [0.5, 5.0, 0.0, np.inf, np.inf]


def test_close_calls_average_only_the_decisions_one_view_finds_close() -> None:
    torch.manual_seed(0)
    base = PolicyNet().numpy_scorer()
    obs, ids, row = _decisions(n=40)
    feats = action_inputs_np(obs, ids, row)
    one = np.round(base.scores(obs, feats, row), 8)
    every = SuitAveraged(base).scores(obs, feats, row)
    gap = top_two_gap(one, row, len(obs))
    cut = float(np.median(gap[np.isfinite(gap)]))
    got = CloseCalls(base, gap=cut).scores(obs, feats, row)
    close = (gap < cut)[row]
    assert 0 < close.sum() < (np.isfinite(gap)[row]).sum()
    assert np.allclose(got[close], every[close], rtol=0, atol=2e-8)
    assert (got[~close] == one[~close]).all()
    assert (CloseCalls(base, gap=0.0).scores(obs, feats, row) == one).all()
    choice = (np.bincount(row) > 1)[row]  # a lone move is never a close call
    assert np.allclose(CloseCalls(base, gap=1e9).scores(obs, feats, row)[choice],
                       every[choice], rtol=0, atol=2e-8)


def test_an_unknown_suits_mode_is_refused() -> None:
    from scopa_policy.agent import load_policy_agent

    with pytest.raises(ValueError,
                       match="suits must be one of close, last_deal, all, none, got 'two'"):
        load_policy_agent(None, suits="two")
