"""Search labels (``scopa_train.search_labels``): observations decode to the information
sets that made them, a search agent's values do not depend on the worker count, and
teachers without values or inconsistent inputs are refused in one line."""

from __future__ import annotations

import os
import random
from pathlib import Path

import numpy as np
import pytest

from agents.baselines.pimc import PIMCAgent
from scopa_env.game import apply, new_match
from scopa_env.moves import legal_actions
from scopa_env.observation import decode_info, encode_info, info_set
from scopa_env.rules import make_rules
from scopa_env.vector import VectorScopaEnv
from scopa_train.config import ConfigError, load_recipe
from scopa_train.search_labels import CHUNK, chunk_seed, search_values

ROOT = Path(__file__).resolve().parent.parent
SPEC = "pimc:worlds=3,depth=2"


@pytest.mark.parametrize("rules", ["scopa", "scopone"])
def test_an_observation_decodes_to_the_information_set_that_made_it(rules: str) -> None:
    checked = 0
    for seed in range(4):
        s = new_match(rules, seed=seed)
        rng = random.Random(seed)
        while not s.done and s.hand_index < 1:
            for seat in range(s.rules.players):
                info = info_set(s, seat)
                obs = encode_info(info)
                got = decode_info(obs, s.rules, info.legal_actions)
                assert np.array_equal(encode_info(got), obs)
                same = ("hand", "table", "own_pile", "other_pile", "unseen", "deck_count",
                        "match_score", "scope", "last_capture", "legal_actions")
                assert all(getattr(got, k) == getattr(info, k) for k in same)
                p = s.rules.players
                assert (got.seat - got.dealer) % p == (info.seat - info.dealer) % p
                assert [got.hand_sizes[(got.seat + k) % p] for k in range(p)] == \
                       [info.hand_sizes[(info.seat + k) % p] for k in range(p)]
                checked += 1
            apply(s, rng.choice(s.legal_actions()))
    assert checked > 100


def test_decode_refuses_a_vector_of_the_wrong_size() -> None:
    with pytest.raises(ValueError, match="216 entries"):
        decode_info(np.zeros(10), make_rules("scopa"))


def _decisions(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` decisions with a choice, outside the last deal, of random play."""
    env = VectorScopaEnv(32, "scopa", reward="points", episode="hand", seed=5, records=False)
    rng = np.random.default_rng(5)
    obs, count = [], []
    while sum(map(len, count)) < n:
        o = env.observe()
        keep = (env.legal_count > 1) & (o[:, 204] > 0)
        obs.append(o[keep])
        count.append(env.legal_count[keep])
        env.step(env.legal_ids[np.arange(32), rng.integers(0, env.legal_count)])
    return np.concatenate(obs)[:n], np.concatenate(count)[:n].astype(np.int64)


def test_search_values_are_the_agents_scores_whatever_the_workers() -> None:
    rules = make_rules("scopa")
    obs, count = _decisions(CHUNK + 20)  # two chunks
    one = search_values(SPEC, rules, obs, count, 9, workers=1, log=lambda _: None)
    two = search_values(SPEC, rules, obs, count, 9, workers=2, log=lambda _: None)
    assert len(one) == count.sum() and np.array_equal(one, two)
    # chunk 1's first decision, scored by hand with that chunk's agent
    agent = PIMCAgent(seed=chunk_seed(9, 1), worlds=3, depth=2)
    info = decode_info(obs[CHUNK], rules)
    legal = tuple(legal_actions(info.hand, info.table, rules))
    want = agent.scores(decode_info(obs[CHUNK], rules, legal))
    at = int(count[:CHUNK].sum())
    assert np.allclose(one[at:at + len(legal)], want)


def test_a_teacher_without_values_and_bad_counts_are_refused() -> None:
    rules = make_rules("scopa")
    obs, count = _decisions(4)
    with pytest.raises(ValueError, match="'greedy' gives no move values"):
        search_values("greedy", rules, obs, count, 0, workers=1)
    with pytest.raises(ValueError, match="disagree"):
        search_values(SPEC, rules, obs, count + 1, 0, workers=1)


@pytest.mark.parametrize(("extra", "message"), [
    (["distill.search=greedy"], "'distill.search': 'greedy' gives no move values"),
    (["distill.search=nosuchagent"], "'distill.search'"),
    (["distill.search=", "distill.search_decisions=10"], "names no search agent"),
])
def test_bad_search_teacher_configs_are_refused(extra: list[str], message: str) -> None:
    """On the shipped recipe's suit_distill stage."""
    with pytest.raises(ConfigError, match=message):
        load_recipe(ROOT / "configs" / "recipe.yaml", [f"suit_distill.{o}" for o in extra])


def _die(_: object) -> None:
    os._exit(3)  # a worker killed mid-job


def test_workers_that_keep_dying_stop_the_labelling_with_one_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import agents.evaluation.evaluate as ev

    monkeypatch.setattr(ev, "POOL_RESTARTS", 1)
    with pytest.raises(ev.WorkersDiedError,
                       match=r"search-label worker processes died 2 times .*2 unit"):
        list(ev.run_in_pool(_die, [0, 1], 2, "search-label"))


def test_a_cache_keeps_the_chunks_scored_and_a_later_call_scores_only_the_rest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import scopa_train.search_labels as sl

    rules = make_rules("scopa")
    obs, count = _decisions(250)
    monkeypatch.setattr(sl, "CHUNK", 100)  # three chunks
    want = search_values(SPEC, rules, obs, count, 4, workers=1, log=lambda _: None)
    cache = tmp_path / "values.npz"
    calls: list[int] = []
    stop_after = [1]

    def halted() -> str | None:
        return "stop" if len(calls) >= stop_after[0] else None

    real = sl.label_chunk
    monkeypatch.setattr(sl, "label_chunk", lambda job: calls.append(job.chunk) or real(job))
    assert search_values(SPEC, rules, obs, count, 4, 1, lambda _: None, halted, cache) is None
    assert calls == [0] and cache.exists()
    lines: list[str] = []
    stop_after[0] = 99
    got = search_values(SPEC, rules, obs, count, 4, 1, lines.append, halted, cache)
    assert calls == [0, 1, 2] and np.array_equal(got, want)
    assert "1 of 3 chunks already scored" in lines[0]
    # a finished cache: nothing scored again
    assert np.array_equal(search_values(SPEC, rules, obs, count, 4, 1, lambda _: None,
                                        cache=cache), want) and calls == [0, 1, 2]


@pytest.mark.parametrize("damage", ["other decisions", "other seed", "garbage"])
def test_a_cache_of_something_else_is_set_aside_in_one_line(
        tmp_path: Path, damage: str) -> None:
    rules = make_rules("scopa")
    obs, count = _decisions(20)
    cache = tmp_path / "values.npz"
    want = search_values(SPEC, rules, obs, count, 4, 1, lambda _: None, cache=cache)
    if damage == "other decisions":
        search_values(SPEC, rules, obs[:10], count[:10], 4, 1, lambda _: None, cache=cache)
    elif damage == "other seed":
        search_values(SPEC, rules, obs, count, 5, 1, lambda _: None, cache=cache)
    else:
        cache.write_bytes(b"not an npz file")
    lines: list[str] = []
    got = search_values(SPEC, rules, obs, count, 4, 1, lines.append, cache=cache)
    assert np.array_equal(got, want)
    assert "scoring afresh" in lines[0] and str(cache) in lines[0]
