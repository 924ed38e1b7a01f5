"""Batched baselines (``agents.baselines.vector_moves``) play exactly as the per-game agents.

Games of a ``VectorScopaEnv`` are played with a mix of random, greedy and expert moves
through every phase of a hand (deals, the last plays with an empty deck, later hands
with another dealer) in every named rule set and the options that change a move's value;
at every step the batched greedy and expert choices must equal ``GreedyAgent`` /
``ExpertAgent`` on ``env.info_set(g)`` for every game, ties included.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from agents import ExpertAgent, GreedyAgent
from agents.baselines.vector_moves import BATCHED, batched_actions
from scopa_env.cards import N_CARDS
from scopa_env.moves import action_id, card_moves
from scopa_env.rules import NAMED_RULES
from scopa_env.vector import VectorScopaEnv
from scopa_env.vector_tables import to_rank_major

# (rules, options, games, steps): two hands or more of each game
CONFIGS = [
    ("scopa", {}, 96, 100),
    ("scopa", {"players": 4}, 48, 90),
    ("scopa", {"capture_rule": "fewest", "re_bello": True, "last_play_scopa": True}, 48, 90),
    ("scopa", {"primiera_table": "alt", "napola": True, "hand_size": 6}, 32, 80),
    ("scopa", {"table_size": 10, "ace_takes_all": True, "re_bello": True}, 32, 70),
    ("scopa", {"players": 4, "hand_size": 1, "last_play_scopa": True}, 32, 80),
    ("scopone", {}, 48, 80),
    ("scopone", {"capture_rule": "fewest", "last_play_scopa": True}, 32, 80),
    ("scopone_scientifico", {}, 48, 90),
    ("scopone_scientifico", {"ace_takes_all": True, "re_bello": True}, 32, 90),
    ("asso_piglia_tutto", {}, 64, 100),
    ("asso_piglia_tutto", {"players": 4, "last_play_scopa": True, "capture_rule": "fewest"},
     32, 80),
]


def play_and_compare(env: VectorScopaEnv, steps: int, seed: int) -> set[str]:
    """Play ``steps`` steps, each game's move random, greedy's or expert's at random, and
    compare every game's batched choices with the per-game agents' at every step. Returns
    the phases seen (to check the test reaches them)."""
    n = env.num_envs
    games = np.arange(n)
    rng = np.random.default_rng(seed)
    agents = {"greedy": GreedyAgent(), "expert": ExpertAgent()}
    seen: set[str] = set()
    for step in range(steps):
        infos = [env.info_set(i) for i in range(n)]
        chosen = {}
        for name, agent in agents.items():
            want = np.array([agent.act(info) for info in infos])
            got = batched_actions(name, env, games)
            bad = np.flatnonzero(got != want)
            assert not len(bad), (f"{name} step {step}, game {bad[0]}: batched "
                                  f"{got[bad[0]]}, per-game {want[bad[0]]}; "
                                  f"{infos[bad[0]]}")
            chosen[name] = want
        for info in infos:
            if info.deck_count == 0:
                seen.add("empty deck")
                if sum(info.hand_sizes) == 1:
                    seen.add("last play")
            if info.dealer != env.players - 1:
                seen.add("another dealer")
            if info.own_pile.bit_count() > 20:
                seen.add("carte settled")
        pick = (rng.random(n) * env.legal_count).astype(np.int64)
        mode = rng.integers(0, 3, n)
        actions = np.where(mode == 1, chosen["greedy"], np.where(
            mode == 2, chosen["expert"], env.legal_ids[games, pick]))
        env.step(actions)
    return seen


@pytest.mark.parametrize(("rules", "options", "games", "steps"), CONFIGS,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CONFIGS)])
def test_same_moves_as_the_per_game_agents(rules: str, options: dict, games: int,
                                           steps: int) -> None:
    env = VectorScopaEnv(games, rules=rules, seed=games + steps, records=False, **options)
    seen = play_and_compare(env, steps, seed=steps)
    assert {"empty deck", "last play", "another dealer", "carte settled"} <= seen, seen


def test_every_named_rule_set_is_covered() -> None:
    assert {c[0] for c in CONFIGS} == set(NAMED_RULES)
    assert {c[1].get("players", NAMED_RULES[c[0]].get("players", 2)) for c in CONFIGS} \
        == {2, 4}


def test_crowded_tables() -> None:
    """A 34-card opening table: many sum captures, ace-takes-all of a full table, piles
    past 20 cards; for each capture rule."""
    for opts in ({"ace_takes_all": True}, {"capture_rule": "fewest", "re_bello": True}):
        env = VectorScopaEnv(6, rules="scopa", table_size=34, redeal_three_kings=False,
                             seed=5, records=False, **opts)
        play_and_compare(env, 6, seed=6)


def test_subsets_of_games() -> None:
    """Any selection of games, in any order, and none."""
    env = VectorScopaEnv(40, rules="scopa", seed=11, records=False)
    rng = np.random.default_rng(12)
    for _ in range(20):
        env.step(batched_actions("random", env, np.arange(40), rng))
    games = np.array([33, 2, 7, 7, 18, 0, 39])
    for name, agent in (("greedy", GreedyAgent()), ("expert", ExpertAgent())):
        want = [agent.act(env.info_set(int(g))) for g in games]
        assert batched_actions(name, env, games).tolist() == want
        assert batched_actions(name, env, games.tolist()).tolist() == want
        assert batched_actions(name, env, np.array([], np.int64)).shape == (0,)


def test_random_is_uniform_over_the_legal_moves() -> None:
    env = VectorScopaEnv(32, rules="scopone_scientifico", seed=2, records=False)
    rng = np.random.default_rng(3)
    games = np.arange(32)
    for _ in range(5):
        env.step(batched_actions("random", env, games, rng))
    draws = np.stack([batched_actions("random", env, games, rng) for _ in range(600)], 1)
    for g in range(32):
        legal = env.info_set(g).legal_actions
        ids, counts = np.unique(draws[g], return_counts=True)
        assert ids.tolist() == sorted(legal)  # legal only, and every legal move drawn
        expected = 600 / len(legal)
        assert np.all(np.abs(counts - expected) < 6 * np.sqrt(expected)), counts


def test_unknown_name() -> None:
    assert BATCHED == ("random", "greedy", "expert")
    env = VectorScopaEnv(2, seed=0, records=False)
    with pytest.raises(ValueError, match="pimc"):
        batched_actions("pimc", env, np.arange(2))


@pytest.mark.parametrize("options", [{}, {"capture_rule": "fewest"}, {"ace_takes_all": True}])
def test_card_moves_on_any_table(options: dict) -> None:
    """``VectorScopaEnv.card_moves`` (the generator the replies use) equals the engine's
    ``moves.card_moves`` for any card on any table, also with ``captures_only``."""
    env = VectorScopaEnv(1, rules="scopa", seed=0, records=False, **options)
    rnd = random.Random(4)
    tables, cards = [], []
    for _ in range(400):
        card = rnd.randrange(N_CARDS)
        size = rnd.choice([0, 1, 2, 3, 4, 6, 9, 14, 25])
        table = sum(1 << c for c in rnd.sample([c for c in range(N_CARDS) if c != card], size))
        tables.append(table)
        cards.append(card)
    table_rm = np.array([to_rank_major(t) for t in tables], np.int64)
    rows = np.arange(len(tables))
    for captures_only in (False, True):
        got_rows, got_ids = env.card_moves(rows, np.array(cards), table_rm, captures_only)
        got: list[list[int]] = [[] for _ in rows]
        for r, a in zip(got_rows.tolist(), got_ids.tolist(), strict=True):
            got[r].append(a)
        for r, (card, table) in enumerate(zip(cards, tables, strict=True)):
            want = card_moves(card, table, env.rules)
            if captures_only:
                want = [a for a in want if a != action_id(card, 0)]
            assert sorted(got[r]) == want, (card, table, captures_only)
