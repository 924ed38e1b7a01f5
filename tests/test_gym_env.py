"""The single-agent Gymnasium env ``scopa/Scopa-v0`` (agents.bridges.gym_env.ScopaGymEnv)."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import agents
from agents import ExpertAgent, GreedyAgent, RandomAgent
from agents.bridges.gym_env import ScopaGymEnv
from scopa_env.game import IllegalMoveError, apply
from scopa_env.moves import N_ACTIONS, legal_actions
from scopa_env.observation import encode, info_set

ID = agents.GYM_ENV_ID


def first_legal(info: dict) -> int:
    return int(np.flatnonzero(info["action_mask"])[0])


def play_episode(env: gymnasium.Env, seed: int | None, pick=first_legal) -> list:
    """Every (obs, reward, terminated, info mask) of one episode."""
    obs, info = env.reset(seed=seed)
    out = [(obs, 0.0, False, info["action_mask"])]
    terminated = False
    while not terminated:
        obs, reward, terminated, truncated, info = env.step(pick(info))
        assert truncated is False
        out.append((obs, reward, terminated, info["action_mask"]))
    return out


def same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(
        np.array_equal(x[0], y[0]) and x[1] == y[1] and x[2] == y[2]
        and np.array_equal(x[3], y[3]) for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("kwargs", [
    {"opponent": "expert"},
    {"opponent": "greedy", "reward": "points", "episode": "hand", "seat": 1},
    {"players": 4, "opponent": "greedy", "partner": "expert"},
    {"rules": "scopone_scientifico", "opponent": ["random", "greedy"], "partner": "greedy",
     "seat": 2},
])
def test_check_env_passes(kwargs: dict) -> None:
    env = gymnasium.make(ID, **kwargs)
    assert isinstance(env, ScopaGymEnv) and isinstance(env, gymnasium.Env)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env)
    assert [str(w.message) for w in caught] == []  # quiet: the Box's bounds are finite
    assert env.observation_space.shape == (216,) and env.action_space.n == N_ACTIONS
    assert np.isfinite(env.observation_space.high).all()


def test_seeding_is_reproducible() -> None:
    a = gymnasium.make(ID, opponent="random", players=4)
    b = gymnasium.make(ID, opponent="random", players=4)
    # the random opponents' choices too: same seed, same match, move for move
    assert same(play_episode(a, 11), play_episode(b, 11))
    # later unseeded resets continue the seeded sequence
    assert same(play_episode(a, None), play_episode(b, None))
    assert not same(play_episode(a, 11), play_episode(b, 12))
    first = play_episode(a, 11)
    assert same(first, play_episode(a, 11))


def test_masks_are_the_legal_moves() -> None:
    env = gymnasium.make(ID, opponent="greedy", players=4, ace_takes_all=True)
    for seed in range(3):
        obs, info = env.reset(seed=seed)
        terminated = False
        while not terminated:
            s = env.state
            assert s.to_move == env.seat
            legal = sorted(legal_actions(s.hands[env.seat], s.table, s.rules))
            assert sorted(np.flatnonzero(env.action_masks())) == legal
            assert env.action_masks().dtype == bool
            assert sorted(np.flatnonzero(info["action_mask"])) == legal
            assert info["action_mask"].dtype == np.int8
            assert np.array_equal(obs, encode(s, env.seat))
            obs, _, terminated, _, info = env.step(env.action_space.sample(info["action_mask"]))
        assert not env.action_masks().any() and not info["action_mask"].any()


@pytest.mark.parametrize("players,opponent,partner,agents", [
    (2, "greedy", None, {1: GreedyAgent}),
    (4, "greedy", "expert", {1: GreedyAgent, 2: ExpertAgent, 3: GreedyAgent}),
])
def test_the_other_seats_are_the_given_agents(players, opponent, partner, agents) -> None:
    env = gymnasium.make(ID, opponent=opponent, partner=partner, players=players,
                         reward="points")
    assert {s: type(a) for s, a in env.opponents.items()} == agents
    reference = {s: cls(seed=0) for s, cls in agents.items()}  # deterministic players
    rng = np.random.default_rng(5)
    obs, info = env.reset(seed=3)
    terminated, moves = False, 0
    while not terminated:
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        expected = env.state
        apply(expected, action)
        while not expected.done and expected.to_move != env.seat:
            seat = expected.to_move
            apply(expected, reference[seat].act(info_set(expected, seat)))
            moves += 1
        obs, _, terminated, _, info = env.step(action)
        got = env.state
        assert (got.hands, got.table, got.piles, got.scope, got.match_score) == (
            expected.hands, expected.table, expected.piles, expected.scope,
            expected.match_score)
    assert moves > 30
    # a random opponent does not play greedy's moves
    env = gymnasium.make(ID, opponent="random")
    assert isinstance(env.opponents[1], RandomAgent)


def test_rewards_mirror_the_aec_options() -> None:
    env = gymnasium.make(ID, opponent="greedy", reward="points", episode="hand")
    for seed in range(4):
        episode = []
        obs, info = env.reset(seed=seed)
        terminated = False
        while not terminated:
            obs, reward, terminated, _, info = env.step(first_legal(info))
            episode.append(reward)
        own, other = info["hand_points"]
        assert sum(episode) == own - other and episode[:-1] == [0.0] * (len(episode) - 1)
    env = gymnasium.make(ID, opponent="random", reward="match", target_score=5)
    rewards = []
    obs, info = env.reset(seed=1)
    terminated = False
    while not terminated:
        obs, reward, terminated, _, info = env.step(first_legal(info))
        rewards.append(reward)
    own, other = info["match_score"]
    assert max(own, other) >= 5 and rewards[-1] == (1.0 if own > other else -1.0)
    assert set(rewards[:-1]) == {0.0}
    env = gymnasium.make(ID, opponent="random", reward="match", episode="hand")
    obs, info = env.reset(seed=2)
    terminated = False
    while not terminated:
        obs, reward, terminated, _, info = env.step(first_legal(info))
    own, other = info["hand_points"]
    assert reward == float(np.sign(own - other))


def test_illegal_actions() -> None:
    env = gymnasium.make(ID)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    obs, info = env.reset(seed=0)
    bad = int(np.flatnonzero(info["action_mask"] == 0)[0])
    obs, reward, terminated, truncated, info = env.step(bad)
    assert (reward, terminated, truncated) == (-1.0, True, False)
    assert info["illegal_action"] == repr(bad) and not info["action_mask"].any()
    with pytest.raises(RuntimeError, match="episode is over"):
        env.step(0)
    env = gymnasium.make(ID, illegal_action="raise")
    obs, info = env.reset(seed=0)
    with pytest.raises(IllegalMoveError, match="legal"):
        env.step(bad)


def test_rules_options_and_agent_objects() -> None:
    env = gymnasium.make(ID, opponent=GreedyAgent(seed=1), capture_rule="fewest",
                         target_score=21, render_mode="ansi")
    assert env.rules.capture_rule == "fewest" and env.rules.target_score == 21
    assert isinstance(env.opponents[1], GreedyAgent)
    env.reset(seed=0)
    assert "[you]" in env.render() and "target 21" in env.render()


@pytest.mark.parametrize("kwargs,error,text", [
    ({"opponent": "grredy"}, ValueError, "opponent: unknown agent 'grredy'.*known agents"),
    ({"opponent": "pimc:worlds=x"}, ValueError, "opponent: parameter 'worlds'"),
    ({"opponent": "sb3:/no/such/model"}, ValueError, "no such model file|needs sb3-contrib"),
    ({"opponent": 3}, TypeError, "agent spec string"),
    ({"players": 4, "partner": "nobody"}, ValueError, r"partner \(seat 2\): unknown agent"),
    ({"players": 4, "opponent": ["greedy"]}, ValueError, "1 agents given for 2 opponent"),
    ({"players": 4, "opponent": ["greedy", "random"]}, ValueError, "give the partner's spec"),
    ({"partner": "greedy"}, ValueError, "2-player game has no partner"),
    ({"seat": 2}, ValueError, "seat must be an integer from 0 to 1"),
    ({"reward": "score"}, ValueError, "reward must be one of"),
    ({"illegal_action": "ignore"}, ValueError, "illegal_action must be one of"),
    ({"capture_rul": "fewest"}, ValueError, "capture_rul"),
])
def test_bad_arguments_give_clear_errors(kwargs: dict, error: type, text: str) -> None:
    with pytest.raises(error, match=text):
        gymnasium.make(ID, **kwargs)


def test_observations_lie_within_the_finite_bounds() -> None:
    from scopa_env.game import apply, new_match
    from scopa_env.observation import MATCH_SCORE, OBS_HIGH, bounded, encode

    rng = np.random.default_rng(0)
    for seed, rules in enumerate(["scopa", "scopone_scientifico", "asso_piglia_tutto"]):
        s = new_match(rules, seed=seed)
        while not s.done:
            for seat in range(s.rules.players):
                obs = encode(s, seat)
                assert (obs >= 0).all() and (obs <= OBS_HIGH).all()
                assert np.array_equal(bounded(obs.copy()), obs)  # nothing reachable clips
            apply(s, int(rng.choice(s.legal_actions())))
    far = np.zeros(OBS_HIGH.shape, np.float32)
    far[MATCH_SCORE] = 25.0  # a tied match that went on past 10 x target
    assert (bounded(far)[MATCH_SCORE] == OBS_HIGH[MATCH_SCORE]).all()
