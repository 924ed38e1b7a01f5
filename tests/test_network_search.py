"""Search with the network (``pretrained:search=on``, scopa_policy.search): the spec and
its one-line refusals, legal and deterministic moves, moves that depend only on the
seat's information set, and the batched rollouts equal to the one-game reference."""

from __future__ import annotations

import math
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.worlds import sample_worlds
from scopa_env.game import GameState, apply, new_match
from scopa_env.observation import info_set
from scopa_env.rules import make_rules
from scopa_env.vector import VectorScopaEnv
from scopa_policy.agent import PretrainedAgent, load_policy_agent
from scopa_policy.modes import SearchParams
from scopa_policy.search import (
    RolloutPolicy,
    SearchAgent,
    move_margins,
    reference_margins,
    rollout_margins,
)
from scopa_policy.specs import PRETRAINED, parse_pretrained

ROOT = Path(__file__).resolve().parents[1]


def positions(rules_name: str, n: int, seed: int, players: int = 2,
              deck: bool = True) -> list[GameState]:
    """States of random games at a decision with a choice (deck not empty if ``deck``)."""
    rng = random.Random(seed)
    rules = make_rules(rules_name, players=players)
    out: list[GameState] = []
    while len(out) < n:
        s = new_match(rules, seed=rng.randrange(1 << 30))
        for _ in range(rng.randrange(0, 24)):
            apply(s, rng.choice(s.legal_actions()))
        if len(s.legal_actions()) > 1 and (s.deck_count > 0 or not deck):
            out.append(s)
    return out


def test_spec_parses_the_search_settings():
    assert parse_pretrained("pretrained:search=on") == {"search": SearchParams()}
    got = parse_pretrained("pretrained:search=on,worlds=8,horizon=4,prior=0.5,gap=2,top=3,"
                           "leaf=piles,suits=none")
    assert got == {"suits": "none",
                   "search": SearchParams(worlds=8, horizon=4, prior=0.5, gap=2.0, top=3,
                                          leaf="piles")}
    assert parse_pretrained("pretrained:search=on,horizon=end")["search"].horizon is None
    assert parse_pretrained("pretrained:search=off") == {}
    assert SearchParams(worlds=8, gap=3.0).spec() == "worlds=8,gap=3"
    assert SearchParams(horizon=None, gap=math.inf).spec() == "horizon=end,gap=inf"
    assert SearchParams().spec() == ""


@pytest.mark.parametrize("spec, message", [
    ("pretrained:worlds=8", "the search settings worlds need search=on"),
    ("pretrained:search=off,top=3", "the search settings top need search=on"),
    ("pretrained:search=yes", "search=off|on"),
    ("pretrained:search=on,worlds=x", "search setting worlds takes a whole number, got 'x'"),
    ("pretrained:search=on,worlds=0", "search worlds must be at least 1, got 0"),
    ("pretrained:search=on,horizon=-2", "search horizon must be end or 0 plies or more"),
    ("pretrained:search=on,horizon=far", "takes a whole number or end, got 'far'"),
    ("pretrained:search=on,prior=-1", "search prior must be 0 or more"),
    ("pretrained:search=on,prior=nan", "search prior must be 0 or more"),
    ("pretrained:search=on,gap=0", "search gap must be more than 0"),
    ("pretrained:search=on,top=1", "search top must be 0 (every move) or 2 or more"),
    ("pretrained:search=on,leaf=value", "search leaf must be one of net, piles"),
    ("pretrained:search=on,depth=3", "got 'depth=3'"),
    ("pretrained:search=on,sampler=nope", "search sampler must be one of uniform, policy, "
                                          "got 'nope'"),
    ("pretrained:search=on,candidates=0", "search candidates must be at least 1, got 0"),
    ("pretrained:search=on,temperature=0", "search temperature must be more than 0"),
    ("pretrained:search=on,floor=1", "search floor must be at least 0 and below 1"),
    ("pretrained:search=on,floor=x", "search setting floor takes a number, got 'x'"),
])
def test_spec_refuses_bad_settings_in_one_line(spec, message):
    with pytest.raises(ValueError) as e:
        parse_pretrained(spec)
    assert message in str(e.value)
    assert spec in str(e.value)
    assert "\n" not in str(e.value)


def test_cli_refusal_is_one_line():
    out = subprocess.run([sys.executable, "-c",
                          "import sys; from scopa_cli import main; sys.exit(main(sys.argv[1:]))",
                          "eval", "pretrained:search=on,worlds=0", "greedy", "--hands", "2"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode != 0
    assert "Traceback" not in out.stderr
    assert "search worlds must be at least 1" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_rules_no_weights_fit_are_refused_before_play():
    """``check_rules`` (which the evaluator calls before any game) raises the network
    agent's one-line ``CheckpointError`` for rules no shipped weights fit."""
    from scopa_policy.checkpoint import CheckpointError

    with pytest.raises(CheckpointError, match="no weights for scopa with 2 players .*"
                                              "capture_rule='fewest'") as e:
        small().check_rules(make_rules("scopa", capture_rule="fewest"))
    assert "\n" not in str(e.value)


def test_usage_names_the_search():
    assert "search=on" in PRETRAINED.usage and "worlds=N" in PRETRAINED.usage


def test_family_builds_a_search_agent_named_by_its_spec():
    agent = PRETRAINED(seed=1, **parse_pretrained("pretrained:search=on,worlds=4,top=2"))
    assert isinstance(agent, SearchAgent)
    assert agent.spec == "pretrained:search=on,worlds=4,top=2"
    assert agent.params == SearchParams(worlds=4, top=2)
    net = PRETRAINED(seed=1, **parse_pretrained("pretrained:search=on,endgame=net"))
    assert net.spec == "pretrained:endgame=net,search=on"
    assert agent.fingerprint() != net.fingerprint()
    assert not isinstance(PRETRAINED(seed=1, **parse_pretrained("pretrained")), SearchAgent)


def small(seed: int = 0, **kw) -> SearchAgent:
    agent = load_policy_agent(None, seed=seed,
                              search=SearchParams(**{"worlds": 3, "gap": math.inf, **kw}))
    assert isinstance(agent, SearchAgent)
    return agent


@pytest.mark.parametrize("players", [2, 4])
def test_plays_legal_moves_and_searches(players):
    rules = "scopa" if players == 2 else "scopa"
    agent = small(seed=2)
    states = positions(rules, 6, seed=players, players=players, deck=False)
    infos = [info_set(s, s.to_move) for s in states]
    moves = agent.act_batch(infos)
    assert all(m in i.legal_actions for m, i in zip(moves, infos, strict=True))
    assert agent.searched > 0 and agent.rollouts > 0


def test_plays_whole_hands_in_four_players():
    agent = small(seed=5, worlds=2)
    s = new_match(make_rules("scopa", players=4), seed=9)
    while True:
        info = info_set(s, s.to_move)
        a = agent.act(info)
        assert a in info.legal_actions
        if apply(s, a).hand is not None:
            break


def test_last_deal_of_two_players_is_the_exact_solvers():
    """With the deck empty in a 2-player hand every card is known: the search plays the
    network agent's exact move (``endgame=exact``) and rolls nothing out."""
    agent = small(seed=1)
    exact = PretrainedAgent(seed=1, endgame="exact")
    for s in positions("scopa", 60, seed=4, deck=False):
        if s.deck_count:
            continue
        info = info_set(s, s.to_move)
        assert agent.act(info) == exact.act(info)
    assert agent.rollouts == 0


def test_moves_depend_only_on_the_information_set():
    """Two states with the same information set for the seat to move but other hidden
    cards (the unseen cards dealt again) give the same move for the same seed."""
    rng = random.Random(7)
    for s in positions("scopa", 5, seed=11):
        info = info_set(s, s.to_move)
        other, _ = sample_worlds(info, 1, rng)[0]
        assert other.hands != s.hands or other.deck != s.deck
        twin = info_set(other, other.to_move)
        assert twin == info
        assert small(seed=3).act(info) == small(seed=3).act(twin)


def test_same_seed_same_moves_and_batch_equals_one_at_a_time():
    infos = [info_set(s, s.to_move) for s in positions("scopa", 6, seed=13)]
    one = [small(seed=21).act(i) for i in infos]
    assert small(seed=21).act_batch(infos[:1]) == one[:1]
    # one agent answering a batch draws its worlds in the batch's order, as one at a time
    batch_agent, single_agent = small(seed=21), small(seed=21)
    assert batch_agent.act_batch(infos) == [single_agent.act(i) for i in infos]


@pytest.mark.parametrize("players, horizon, leaf", [
    (2, None, "net"), (2, 0, "net"), (2, 5, "net"), (2, 5, "piles"), (4, None, "net"),
    (4, 3, "net"), (4, 3, "piles")])
def test_batched_rollouts_equal_the_one_game_reference(players, horizon, leaf):
    """The vector-environment rollouts give the margins of the single-game engine played
    one decision at a time (float64 network: no rounding difference between the two)."""
    rules = make_rules("scopa", players=players)
    policy = RolloutPolicy(PretrainedAgent(seed=0).policy(rules).net, 0.25, np.float64)
    rng = random.Random(players)
    states, teams = [], []
    for s in positions("scopa", 8, seed=17 + players, players=players, deck=False):
        info = info_set(s, s.to_move)
        for world, _ in sample_worlds(info, 2, rng):
            states.append(world)
            teams.append(rng.randrange(2))
    before = [s.copy() for s in states]
    got = rollout_margins(policy, states, teams, horizon, leaf)
    want = reference_margins(policy, states, teams, horizon, leaf)
    assert got.shape == (len(states),)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    if horizon is None:
        assert np.all(got == np.round(got))  # whole hand points
    assert [s.__dict__ for s in states] == [s.__dict__ for s in before]


def test_move_values_are_the_mean_margins_of_the_rollouts():
    """``move_values``: each move's mean over the worlds of its rolled-out margin, the
    worlds those the agent's RNG draws, the moves that ``top`` leaves out NaN."""
    s = positions("scopa", 1, seed=23)[0]
    info = info_set(s, s.to_move)
    agent = small(seed=5, worlds=4, top=2, sampler="uniform")  # worlds: sample_worlds's
    values = agent.move_values(info)
    policy = agent.policy_for(info.rules)
    logits = policy.logits(info)
    kept = sorted(np.argsort(-logits, kind="stable")[:2].tolist())
    assert [i for i in range(len(values)) if not math.isnan(values[i])] == kept
    worlds = sample_worlds(info, 4, random.Random(5))
    rollout = agent.rollout_policy(policy)
    want = []
    for m in kept:
        states = []
        for w, _ in worlds:
            c = w.copy()
            apply(c, info.legal_actions[m], False, None, False)
            states.append(c)
        margins = reference_margins(rollout, states, [info.team] * len(states),
                                    agent.params.horizon, agent.params.leaf)
        weights = np.array([k for _, k in worlds], float)
        want.append(weights @ margins / weights.sum())
    np.testing.assert_allclose(values[kept], want, atol=1e-9)


def test_sure_calls_under_gap_are_the_networks():
    """With ``gap`` the decisions whose best two logits are far apart play the network's
    move without rolling out."""
    agent = small(seed=1, gap=1e-9)
    plain = PretrainedAgent(seed=1, endgame="exact")
    for s in positions("scopa", 6, seed=29):
        info = info_set(s, s.to_move)
        logits = np.sort(plain.policy(info.rules).logits(info))
        if logits[-1] - logits[-2] >= 1e-9:
            assert agent.act(info) == int(info.legal_actions[int(np.argmax(
                plain.policy(info.rules).logits(info)))])
    assert agent.rollouts == 0


def test_evaluation_is_the_same_for_any_number_of_workers():
    from agents.evaluation.evaluate import evaluate

    runs = [evaluate("pretrained:search=on,worlds=2,top=2", "greedy", hands=8, matches=0,
                     seed=5, workers=w) for w in (1, 2)]
    assert runs[0].points_per_hand == runs[1].points_per_hand
    assert runs[0].categories == runs[1].categories


def test_latency_benchmark_times_both_agents_on_the_same_decisions():
    from tests.helpers import import_benchmark

    bench = import_benchmark("network_search")
    infos = bench.decisions(1, 3)
    assert infos and all(len(i.legal_actions) > 1 and i.deck_count for i in infos)
    res = bench.measure(1, 3, "pretrained:search=on,worlds=2,top=2", "pimc:worlds=2,depth=2")
    assert res["decisions"] == len(infos)
    assert res["search"]["spec"] == "pretrained:search=on,worlds=2,top=2"
    assert res["search"]["median_ms"] > 0 and res["reference"]["median_ms"] > 0
    assert res["ratio"] == res["search"]["median_ms"] / res["reference"]["median_ms"]


@pytest.mark.parametrize("players, horizon, leaf", [(2, None, "net"), (2, 4, "piles"),
                                                    (4, 2, "net")])
def test_root_moves_rolled_out_together_equal_the_reference(players, horizon, leaf):
    """``move_margins`` (each root loaded once, copied for its moves, the move the first
    step) equals applying each move to a copy and rolling it out one game at a time."""
    rules = make_rules("scopa", players=players)
    policy = RolloutPolicy(PretrainedAgent(seed=0).policy(rules).net, 0.25, np.float64)
    rng = random.Random(31 + players)
    roots, moves, teams = [], [], []
    for s in positions("scopa", 6, seed=37 + players, players=players, deck=False):
        for world, _ in sample_worlds(info_set(s, s.to_move), 2, rng):
            roots.append(world)
            moves.append(world.legal_actions())
            teams.append(s.to_move % 2)
    got = move_margins(policy, roots, moves, teams, horizon, leaf)
    for root, ms, team, g in zip(roots, moves, teams, got, strict=True):
        after = []
        ended = {}
        for j, a in enumerate(ms):
            c = root.copy()
            res = apply(c, a, False, None, False)
            if res.hand is not None:
                pts = [e["points"]["total"] for e in res.hand.score]
                ended[j] = pts[team] - pts[1 - team]
                c = root
            after.append(c)
        want = reference_margins(policy, after, [team] * len(after), horizon, leaf)
        for j, v in ended.items():
            want[j] = v
        np.testing.assert_allclose(g, want, rtol=0, atol=1e-9)


def test_copied_games_play_as_loaded_ones():
    """``VectorScopaEnv.copy_games``: copies of a loaded game step exactly as the game
    loaded again would (same legal moves, observations and results)."""
    from scopa_env.vector import VectorScopaEnv

    states = positions("scopa", 3, seed=41)
    env = VectorScopaEnv(6, rules=states[0].rules, episode="hand", reward="points",
                         records=False)
    env.load_states([0, 1, 2], states)
    env.copy_games([3, 4, 5], [2, 0, 1])
    ref = VectorScopaEnv(6, rules=states[0].rules, episode="hand", reward="points",
                         records=False)
    ref.load_states(range(6), states + [states[2], states[0], states[1]])
    rng = np.random.default_rng(0)
    for _ in range(12):
        np.testing.assert_array_equal(env.legal_ids, ref.legal_ids)
        np.testing.assert_array_equal(env.observe(), ref.observe())
        pick = np.array([rng.choice(env.legal_ids[g, env.legal_valid[g]]) for g in range(6)])
        a, b = env.step(pick), ref.step(pick)
        np.testing.assert_array_equal(a.hand_points, b.hand_points)
    with pytest.raises(ValueError, match="records=False"):
        VectorScopaEnv(2).copy_games([0], [1])


def test_noise_benchmark_compares_two_draws():
    from tests.helpers import import_benchmark

    bench = import_benchmark("network_search")
    res = bench.noise(1, 3, "pretrained:search=on,worlds=2,gap=inf", 3)
    assert res["decisions"] == 3
    assert 0 <= res["same_choice"] <= 1 and res["noise_sd"] >= 0 and res["spread"] >= 0
    with pytest.raises(ValueError, match="needs a pretrained:search=on spec"):
        bench.noise(1, 3, "pretrained", 3)


@pytest.mark.parametrize("dst, src, message", [
    ([0, 1], [2], "2 destination games but 1 sources"),
    ([0], [4], r"game indices must be in 0\.\.3"),
    ([-1], [0], r"game indices must be in 0\.\.3"),
])
def test_copy_games_refuses_bad_indices(dst, src, message):
    env = VectorScopaEnv(4, records=False)
    with pytest.raises(ValueError, match=message):
        env.copy_games(dst, src)


def test_a_searching_agent_cannot_sample():
    with pytest.raises(ValueError, match="a searching agent plays its best move: it cannot "
                                         "sample"):
        load_policy_agent(None, seed=0, sample=True, search=SearchParams(worlds=2))
