"""The exact last-deal solver (agents.baselines.endgame): equal to the engine's own search, read
from observations exactly, and its labels laid out like the rollout's move features."""

from __future__ import annotations

import random

import numpy as np
import pytest

from agents.baselines.endgame import EndgameSolver, is_last_deal, position_from_obs
from agents.baselines.pimc import LeafModel, _Search
from scopa_env.game import GameState, apply, new_match
from scopa_env.observation import encode_info, info_set
from scopa_env.rules import make_rules

VARIANTS = [{}, {"last_play_scopa": True}, {"ace_takes_all": True},
            {"capture_rule": "fewest"}, {"napola": True, "re_bello": True},
            {"primiera_table": "alt", "primiera_requires_all_suits": False}]


def last_deal_states(rules_options: dict, n: int, seed: int) -> list[GameState]:
    """States of random 2-player games with the deck empty (any ply of the last deal)."""
    rng = random.Random(seed)
    rules = make_rules("scopa", **rules_options)
    out: list[GameState] = []
    while len(out) < n:
        s = new_match(rules, seed=rng.randrange(1 << 30))
        while True:
            if s.deck_count == 0 and rng.random() < 0.5:
                out.append(s.copy())
            if apply(s, rng.choice(s.legal_actions())).hand is not None:
                break
    return out


@pytest.mark.parametrize("options", VARIANTS, ids=lambda o: ",".join(o) or "scopa")
def test_solver_equals_the_engines_exact_search(options: dict) -> None:
    """Every legal move's value equals the engine's alpha-beta (pimc's search, exact to
    the end of the hand at depth 12, stepping with ``apply`` and scoring with
    ``score_hand``), read from the seat's observation alone."""
    states = last_deal_states(options, 150, seed=7)
    rules = states[0].rules
    solver = EndgameSolver(rules)
    search = _Search(rules, LeafModel(rules))
    distinct = 0
    for s in states:
        legal = s.legal_actions()
        obs = encode_info(info_set(s, s.to_move))
        assert is_last_deal(obs, 2).all()
        got = solver.move_values(position_from_obs(obs), legal)
        want = [search.child_value(s, a, 12) for a in legal]
        assert got == want
        distinct += len(set(got)) > 1
    assert distinct > 20  # the positions do tell moves apart


def test_not_last_deal_and_four_players() -> None:
    s = new_match("scopa", seed=3)
    assert not is_last_deal(encode_info(info_set(s, s.to_move)), 2).any()
    assert not is_last_deal(np.zeros((3, 216), np.float32), 4).any()
    with pytest.raises(ValueError, match="2-player"):
        EndgameSolver(make_rules("scopa", players=4))


def test_labels_follow_the_flat_move_order() -> None:
    """``label_moves`` gives one value per legal move in ``np.nonzero(valid)`` order
    (``Candidates``' order), NaN for decisions it does not teach (deck not empty, or a
    single legal move)."""
    states = last_deal_states({}, 40, seed=11)
    early = new_match("scopa", seed=5)
    rules = states[0].rules
    infos = [info_set(s, s.to_move) for s in states] + [info_set(early, early.to_move)]
    width = max(len(i.legal_actions) for i in infos)
    ids = np.zeros((len(infos), width), np.int64)
    valid = np.zeros((len(infos), width), bool)
    for b, info in enumerate(infos):
        ids[b, :len(info.legal_actions)] = info.legal_actions
        valid[b, :len(info.legal_actions)] = True
    obs = np.stack([encode_info(i) for i in infos])
    solver = EndgameSolver(rules)
    labels = solver.label_moves(obs, ids, valid)
    row, _ = np.nonzero(valid)
    assert len(labels) == valid.sum()
    for b, info in enumerate(infos):
        mine = labels[row == b]
        if b == len(infos) - 1 or len(info.legal_actions) == 1:
            assert np.isnan(mine).all()
        else:
            want = solver.move_values(position_from_obs(obs[b]), info.legal_actions)
            assert mine.tolist() == want


def test_pretrained_with_the_exact_endgame() -> None:
    """``pretrained:endgame=exact``: the network's move before the last deal, a move of
    best exact value in it (the same one batched or not), the network alone in 4-player
    games."""
    from agents import make_agent

    net, exact = make_agent("pretrained"), make_agent("pretrained:endgame=exact")
    assert exact.spec == "pretrained:endgame=exact"
    solver = EndgameSolver(make_rules("scopa"))
    infos, last_deal = [], 0
    for g in range(40):
        s = new_match("scopa", seed=900 + g)
        while True:
            info = info_set(s, s.to_move)
            infos.append(info)
            a = exact.act(info)
            if info.deck_count:
                assert a == net.act(info)
            elif len(info.legal_actions) > 1:
                last_deal += 1
                q = solver.move_values(position_from_obs(encode_info(info)), info.legal_actions)
                assert q[info.legal_actions.index(a)] == max(q)
            if apply(s, a).hand is not None:
                break
    assert last_deal > 50
    assert exact.act_batch(infos) == [exact.act(i) for i in infos]
    s4 = new_match(make_rules("scopa", players=4), seed=3)
    while s4.deck_count:
        apply(s4, s4.legal_actions()[0])
    info4 = info_set(s4, s4.to_move)
    assert exact.act(info4) == net.act(info4)


def test_an_unknown_endgame_mode_is_refused() -> None:
    from scopa_policy.agent import load_policy_agent

    with pytest.raises(ValueError, match="endgame must be one of net, exact, got 'deep'"):
        load_policy_agent(None, endgame="deep")
