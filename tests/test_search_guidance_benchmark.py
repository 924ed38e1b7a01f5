"""benchmarks/search_guidance.py: the search-guided probe agent and its disagreement count."""

from __future__ import annotations

import numpy as np
import pytest

from scopa_env.game import apply, new_match
from scopa_env.observation import info_set
from scopa_policy.agent import PretrainedAgent
from tests.helpers import import_benchmark

CHEAP = "pimc:worlds=2,depth=2"


def _decisions(hands: int, seed: int):
    """Information sets of the shipped agent's self-play, every decision."""
    agent = PretrainedAgent(seed=0)
    for i in range(hands):
        s = new_match("scopa", seed=seed + i)
        while True:
            info = info_set(s, s.to_move)
            yield info
            if apply(s, agent.act(info)).hand is not None:
                break


def test_deal_of_counts_deals_from_the_deck() -> None:
    bench = import_benchmark("search_guidance")
    deals = {(info.deck_count, bench.deal_of(info)) for info in _decisions(1, 3)}
    assert deals == {(30, 1), (24, 2), (18, 3), (12, 4), (6, 5), (0, 6)}


def test_logits_rank_moves_as_the_agent_plays() -> None:
    shipped = PretrainedAgent(seed=0)
    for info in _decisions(2, 11):
        policy = shipped.policy(info.rules)
        logits = policy.logits(info)
        assert logits.shape == (len(info.legal_actions),)
        assert info.legal_actions[int(np.argmax(logits))] == policy.act(info)


def test_logits_refuse_a_seat_with_no_move() -> None:
    import dataclasses

    info = next(_decisions(1, 11))
    policy = PretrainedAgent(seed=0).policy(info.rules)
    with pytest.raises(ValueError, match="has no legal move to choose from"):
        policy.logits(dataclasses.replace(info, legal_actions=()))


class _Refuses:
    def scores(self, info):  # pragma: no cover - must not be called
        raise AssertionError("the search was consulted")


def test_no_beta_plays_the_network_and_gaps_and_deals_keep_the_search_out() -> None:
    bench = import_benchmark("search_guidance")
    shipped = PretrainedAgent(seed=0)
    plain = bench.SearchGuided(seed=1, worlds=2, depth=2, beta=0.0)
    no_gap = bench.SearchGuided(seed=1, gap=0.0)
    no_gap.search = _Refuses()
    last_only = bench.SearchGuided(seed=1, deals="6-6")
    last_only.search = _Refuses()
    guided = 0
    for info in _decisions(2, 21):
        want = shipped.act(info)
        assert plain.act(info) == want
        assert no_gap.act(info) == want
        assert last_only.act(info) == want
        guided += plain.guided(info)
    assert guided > 10  # the search was asked on the earlier deals' decisions with a choice


def test_a_large_beta_plays_the_searchs_best_move() -> None:
    bench = import_benchmark("search_guidance")
    agent = bench.SearchGuided(seed=4, worlds=2, depth=2, beta=1e6)
    checked = 0
    for info in _decisions(1, 31):
        if not agent.guided(info):
            continue
        values = np.asarray(bench.search_agent(CHEAP, 4).scores(info))
        if np.sort(values)[-1] - np.sort(values)[-2] < 1e-3:
            continue  # a near tie: the network's log-probabilities may break it
        agent.search = bench.search_agent(CHEAP, 4)  # the same seed: the same values
        assert agent.act(info) == info.legal_actions[int(np.argmax(values))]
        checked += 1
    assert checked > 3


def test_bad_deals_are_refused() -> None:
    with pytest.raises(ValueError, match="deals must be A-B"):
        import_benchmark("search_guidance").SearchGuided(deals="3")


def test_measure_counts_add_up() -> None:
    bench = import_benchmark("search_guidance")
    res = bench.measure(hands=2, seed=9, search=CHEAP, beta=16.0)
    assert res["decisions"] > 10
    assert [d["deal"] for d in res["by_deal"]] == [1, 2, 3, 4, 5]
    assert sum(d["decisions"] for d in res["by_deal"]) == res["decisions"]
    assert sum(d["differ"] for d in res["by_deal"]) == res["differ"]
    assert sum(k["differ"] for k in res["by_kind"]) == res["differ"]
    assert res["credit_per_hand"] >= 0  # the guided move is at least as good by the values
    unguided = bench.measure(hands=2, seed=9, search=CHEAP, beta=0.0)
    assert unguided["decisions"] == res["decisions"] and unguided["differ"] == 0


@pytest.mark.parametrize(("argv", "message"), [
    (["--hands", "0"], "--hands must be at least 1, got 0"),
    (["--beta", "-1"], "--beta must not be negative, got -1"),
    (["--search", "greedy"], "--search: 'greedy' gives no move values"),
])
def test_bad_arguments_get_one_line(argv: list[str], message: str,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        import_benchmark("search_guidance").main(argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err
