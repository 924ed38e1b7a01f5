"""A policy agent plays the same moves one decision at a time and in a batch."""

from __future__ import annotations

import numpy as np
import pytest

from scopa_env.game import apply, new_match
from scopa_env.observation import encode_info, info_set
from scopa_env.rules import make_rules
from scopa_policy.agent import decision_inputs, load_policy_agent


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
        obs, ids, row = decision_inputs(choice)
        net = agent.net.numpy_scorer()  # the network's own scores, one view
        flat = net.logits_flat(obs, ids, row)
        one = np.concatenate([net.logits(encode_info(i), np.asarray(i.legal_actions))
                              for i in choice])
        assert np.allclose(flat, one, rtol=0, atol=1e-9)


@pytest.mark.parametrize("suits", ["last_deal", "all", "none"])
def test_act_batch_equals_act_whatever_is_averaged_over_suit_views(suits: str) -> None:
    """The same with the policy network's scores averaged over the 6 suit views on every
    decision rather than on the close calls only (the default; moves that a renaming
    maps onto each other tie exactly and the first wins), on the last deal only, and
    with no averaging at all (the last-deal scorer in one view)."""
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


def test_one_blas_thread_limits_blas_inside_the_block_and_restores_it() -> None:
    from threadpoolctl import threadpool_info, threadpool_limits

    from scopa_policy.network import one_blas_thread

    def blas_threads() -> list[int]:
        return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]

    with threadpool_limits(limits=2, user_api="blas"):
        assert blas_threads() and set(blas_threads()) == {2}
        with one_blas_thread():
            assert set(blas_threads()) == {1}
        assert set(blas_threads()) == {2}
