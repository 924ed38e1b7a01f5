"""A policy agent plays the same moves one decision at a time and in a batch."""

from __future__ import annotations

import numpy as np
import pytest

from scopa_env.game import apply, new_match
from scopa_env.observation import encode_info, info_set
from scopa_env.rules import make_rules
from scopa_policy.agent import load_policy_agent


def _positions(agent, rules: str, players: int, games: int) -> list:
    infos = []
    for g in range(games):
        s = new_match(make_rules(rules, players=players), seed=100 + g)
        while True:
            info = info_set(s, s.to_move)
            infos.append(info)
            if apply(s, agent.act(info)).hand is not None:
                break
    return infos


def test_act_batch_equals_act_on_every_position() -> None:
    """The shipped weights, 2 and 4 players: the batched scorer (one set of products for
    all decisions, one BLAS thread) picks what ``act`` picks, and its logits agree."""
    for players in (2, 4):
        agent = load_policy_agent(None).policy(make_rules("scopa", players=players))
        infos = _positions(agent, "scopa", players, 60)
        assert sum(len(i.legal_actions) > 1 for i in infos) > 500
        assert agent.act_batch(infos) == [agent.act(i) for i in infos]
        choice = [i for i in infos if len(i.legal_actions) > 1][:300]
        obs = np.stack([encode_info(i) for i in choice])
        ids = np.concatenate([np.asarray(i.legal_actions) for i in choice])
        row = np.repeat(np.arange(len(choice)), [len(i.legal_actions) for i in choice])
        flat = agent.scorer.logits_flat(obs, ids, row)
        one = np.concatenate([agent.scorer.logits(encode_info(i), np.asarray(i.legal_actions))
                              for i in choice])
        assert np.allclose(flat, one, rtol=0, atol=1e-9)


@pytest.mark.parametrize("suits", ["all", "none"])
def test_act_batch_equals_act_whatever_is_averaged_over_suit_views(suits: str) -> None:
    """The same with the policy network's scores averaged over the 6 suit views (moves
    that a renaming maps onto each other tie exactly and the first wins), and with no
    averaging at all (the last-deal scorer in one view)."""
    agent = load_policy_agent(None, suits=suits).policy(make_rules("scopa"))
    infos = _positions(agent, "scopa", 2, 40)
    assert agent.act_batch(infos) == [agent.act(i) for i in infos]


def test_act_batch_handles_forced_and_empty_batches() -> None:
    agent = load_policy_agent(None).policy(make_rules("scopa"))
    assert agent.act_batch([]) == []
    s = new_match("scopa", seed=3)
    while len(s.legal_actions()) != 1:
        apply(s, s.legal_actions()[0])
    info = info_set(s, s.to_move)
    assert agent.act_batch([info, info]) == [info.legal_actions[0]] * 2
