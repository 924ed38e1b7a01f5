"""The batched Gymnasium vector env (``gymnasium.make_vec("scopa/Scopa-v0")``): equal to N
single envs on the same deals, both move interfaces, both autoreset modes, pools, and one
clear line for each kind of bad input."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import scopa_env
from agents.bridges.gym_vector import ScopaVectorEnv
from scopa_env.game import IllegalMoveError
from scopa_env.move_features import ACTION_DIM, action_inputs_np, split_legal_observation
from scopa_env.observation import OBS_DIM


def pick(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """A deterministic legal choice that depends on the observation (the same for the
    batched and the single envs when they see the same position)."""
    legal = np.asarray(mask, bool)
    key = (np.abs(obs[..., :OBS_DIM]) * np.arange(1, OBS_DIM + 1)).sum(-1).astype(np.int64)
    count = legal.sum(-1)
    k = key % np.maximum(count, 1)
    rank = np.cumsum(legal, -1) - 1
    return np.argmax(legal & (rank == k[..., None]), -1)


CASES = [
    dict(opponent="greedy", reward="points", episode="hand"),
    dict(opponent="expert", reward="match", episode="match", moves="legal"),
    dict(opponent="greedy", reward="points", episode="match", players=4, partner="expert"),
    dict(opponent="expert", reward="match", episode="hand", players=4, seat=1, moves="legal"),
    dict(opponent="greedy", reward="points", episode="hand", rules="asso_piglia_tutto",
         autoreset_mode="SameStep"),
    dict(opponent="pretrained", reward="points", episode="hand", moves="legal"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_batched_env_equals_single_envs_on_the_same_deals(case):
    """Observations, masks, rewards and episode ends of every game equal those of a single
    env replaying the same match seed, step after step, across episode ends."""
    case = dict(case)
    mode = AutoresetMode(case.pop("autoreset_mode", "NextStep"))
    n = 6
    envs = gymnasium.make_vec(scopa_env.GYM_ENV_ID, num_envs=n, shuffle="engine",
                              autoreset_mode=mode, **case)
    singles = [gymnasium.make(scopa_env.GYM_ENV_ID, **case) for _ in range(n)]
    obs, info = envs.reset(seed=3)
    for i, env in enumerate(singles):
        o, inf = env.reset(seed=i, options={"match_seed": int(envs.unwrapped.match_seeds[i])})
        np.testing.assert_array_equal(obs[i], o)
        np.testing.assert_array_equal(info["action_mask"][i], inf["action_mask"])
    ends = 0
    pending = np.zeros(n, bool)
    for _ in range(160):
        actions = pick(obs, info["action_mask"])
        np.testing.assert_array_equal(envs.unwrapped.action_masks(),
                                      info["action_mask"].astype(bool))
        obs, rewards, term, trunc, info = envs.step(actions)
        assert not trunc.any()
        for i, env in enumerate(singles):
            if pending[i]:  # NEXT_STEP: this step started game i's new episode
                o, inf = env.reset(options={"match_seed": int(envs.unwrapped.match_seeds[i])})
                r, t = 0.0, False
            else:
                o, r, t, _, inf = env.step(int(actions[i]))
            if mode == AutoresetMode.SAME_STEP and t:
                np.testing.assert_array_equal(info["final_obs"][i], o)
                assert info["_final_obs"][i]
                o, inf = env.reset(options={"match_seed": int(envs.unwrapped.match_seeds[i])})
            np.testing.assert_array_equal(obs[i], o)
            np.testing.assert_array_equal(info["action_mask"][i], inf["action_mask"])
            assert rewards[i] == pytest.approx(r)
            assert term[i] == t
            if "hand_points" in inf:
                assert info["_hand_points"][i]
                assert tuple(info["hand_points"][i]) == inf["hand_points"]
            ends += t
        pending = term.copy() if mode == AutoresetMode.NEXT_STEP else pending
    assert ends >= n  # every game ended an episode at least once


def test_make_vec_gives_the_batched_env_with_gymnasium_spaces():
    envs = gymnasium.make_vec(scopa_env.GYM_ENV_ID, num_envs=4, opponent="random")
    assert isinstance(envs.unwrapped, ScopaVectorEnv)
    assert envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert envs.single_action_space == gymnasium.spaces.Discrete(16204)
    assert envs.observation_space.shape == (4, OBS_DIM)
    obs, info = envs.reset(seed=0)
    assert envs.observation_space.contains(obs)
    assert info["action_mask"].shape == (4, 16204) and info["action_mask"].dtype == np.int8
    envs.close()


def test_the_legal_move_interface_shows_the_move_features_and_maps_slots_to_ids():
    envs = ScopaVectorEnv(5, opponent="greedy", moves="legal", max_moves=8)
    assert envs.single_action_space == gymnasium.spaces.Discrete(8)
    obs, info = envs.reset(seed=1)
    assert envs.observation_space.contains(obs)
    base, feats = split_legal_observation(obs)
    assert feats.shape == (5, 8, ACTION_DIM)
    for g, ids in enumerate(envs.legal_ids()):
        k = min(len(ids), 8)
        np.testing.assert_array_equal(info["action_mask"][g], [1] * k + [0] * (8 - k))
        np.testing.assert_allclose(feats[g, :k], action_inputs_np(base[g], np.array(ids[:k])))
        assert not feats[g, k:].any()
    # slot 0 of every game plays its lowest legal id
    before = [ids[0] for ids in envs.legal_ids()]
    seat_to_move = envs.games.to_move.copy()
    assert (seat_to_move == 0).all()
    cards_before = envs.games.hands[:, 0].copy()
    envs.step(np.zeros(5, np.int64))
    from scopa_env.vector_tables import ACT_BIT
    played = cards_before & ~envs.games.hands[:, 0]
    for g in range(5):
        if envs.games.hand_index[g] == 0 and envs.games._n_moves[g] > 0:
            assert played[g] & ACT_BIT[before[g]]


def test_a_pool_plays_each_game_against_its_own_opponent():
    """set_opponent gives games their own opponent; a callable gets those games'
    observations and masks in the env's own format (self-play against a frozen copy)."""
    seen: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def frozen(obs, mask, games):
        seen.append((obs, mask, games))
        return pick(obs, mask)

    envs = ScopaVectorEnv(8, opponent="greedy", moves="legal")
    envs.set_opponent(frozen, games=[1, 3, 5, 7])
    obs, info = envs.reset(seed=2)
    for _ in range(30):
        obs, *_, info = envs.step(pick(obs, info["action_mask"]))
    assert seen
    for o, m, g in seen:
        assert set(g.tolist()) <= {1, 3, 5, 7}
        assert o.shape == (len(g), envs.moves.obs_dim) and m.shape == (len(g), envs.moves.slots)
        assert (m.sum(1) >= 1).all()


def test_bad_input_is_one_clear_line_and_the_other_games_go_on():
    for bad in (0, -3, 2.5, "8", True):
        with pytest.raises(ValueError, match="num_envs must be a positive integer"):
            gymnasium.make_vec(scopa_env.GYM_ENV_ID, num_envs=bad)
    with pytest.raises(ValueError, match="opponent 'pimc:worlds=12,depth=5' cannot play a batch"):
        ScopaVectorEnv(4, opponent="pimc")
    with pytest.raises(ValueError, match="opponent: unknown agent"):
        ScopaVectorEnv(4, opponent="nobody")
    with pytest.raises(ValueError, match="moves must be one of"):
        ScopaVectorEnv(4, moves="slots")
    # an id outside the mask ends that game's episode with -1; the others go on
    envs = ScopaVectorEnv(4, opponent="greedy", reward="points", episode="hand")
    obs, info = envs.reset(seed=5)
    actions = info["action_mask"].argmax(1)
    actions[2] = int(np.flatnonzero(info["action_mask"][2] == 0)[0])
    obs, r, term, _, info = envs.step(actions)
    assert term.tolist() == [False, False, True, False] and r[2] == -1
    assert info["illegal_action"].tolist() == [False, False, True, False]
    assert (envs.games._n_moves[[0, 1, 3]] >= 2).all()
    # a slot past the legal moves, likewise; under "raise" one line and nothing applied
    envs = ScopaVectorEnv(3, opponent="greedy", moves="legal", illegal_action="raise")
    obs, info = envs.reset(seed=6)
    state = envs.games.hands.copy()
    with pytest.raises(IllegalMoveError, match=r"game 1, seat 0: slot 31 names no legal move: "
                       r"this decision has \d+ \(slots 0 to \d+\)"):
        envs.step(np.array([0, 31, 0]))
    np.testing.assert_array_equal(envs.games.hands, state)
    envs.step(np.zeros(3, np.int64))  # the batch is still usable
    with pytest.raises(ValueError, match=r"actions must be 3 integer actions"):
        envs.step(np.zeros(4, np.int64))
    # a callable opponent that names an illegal slot
    envs = ScopaVectorEnv(2, opponent=lambda obs, mask: np.full(len(obs), 40), moves="legal")
    with pytest.raises(ValueError, match=r"opponent '<lambda>', game \d: slot 40 names no legal"):
        obs, info = envs.reset(seed=0)
        envs.step(pick(obs, info["action_mask"]))


def test_the_documented_example_runs():
    """The environments page's batched section opens with make_vec: its code runs as
    written."""
    from pathlib import Path

    page = (Path(__file__).resolve().parent.parent / "docs" / "environments.md").read_text()
    section = page[page.index("## Batched: `gymnasium.make_vec`"):]
    code = section[section.index("```python\n") + 10:section.index("```\n", 10)]
    assert "gymnasium.make_vec(" in code.split("gymnasium.make(")[0]  # make_vec first
    scope: dict = {}
    exec(compile(code, "environments.md", "exec"), scope)  # noqa: S102 - our own docs
    assert scope["obs"].shape == (216,) and scope["envs"].num_envs == 1024


def test_the_single_env_passes_gymnasiums_checker_with_each_interface():
    from gymnasium.utils.env_checker import check_env

    for kw in ({"moves": "legal"}, {"moves": "legal", "max_moves": 4, "mask_in_obs": True},
               {"mask_in_obs": True}):
        env = gymnasium.make(scopa_env.GYM_ENV_ID, opponent="greedy", **kw).unwrapped
        check_env(env, skip_render_check=True)
        obs, info = env.reset(seed=1)
        assert env.observation_space.contains(obs)


def test_mask_in_obs_puts_the_same_mask_in_the_observation():
    envs = ScopaVectorEnv(6, opponent="expert", moves="legal", mask_in_obs=True,
                          autoreset_mode="SameStep", episode="hand")
    plain = ScopaVectorEnv(6, opponent="expert", moves="legal", autoreset_mode="SameStep",
                           episode="hand")
    (obs, info), (obs2, _) = envs.reset(seed=4), plain.reset(seed=4)
    for _ in range(40):
        assert envs.observation_space.contains(obs)
        np.testing.assert_array_equal(obs["observation"], obs2)
        np.testing.assert_array_equal(obs["action_mask"], info["action_mask"])
        a = pick(obs2, info["action_mask"])
        obs, _, term, _, info = envs.step(a)
        obs2, *_ = plain.step(a)
        if term.any():
            assert set(info["final_obs"]) == {"observation", "action_mask"}


def test_four_players_set_opponent_per_seat_and_keep_the_partner():
    envs = ScopaVectorEnv(4, players=4, opponent="greedy", partner="expert")
    envs.set_opponent(["random", "expert"], games=[0, 1])
    who = {s: [envs._players[s][k].spec for k in envs._who[s]] for s in (1, 2, 3)}
    assert who == {1: ["random", "random", "greedy", "greedy"],
                   2: ["expert"] * 4,
                   3: ["expert", "expert", "greedy", "greedy"]}
    with pytest.raises(ValueError, match=r"opponent: 3 players given for 2 opponent seat"):
        envs.set_opponent(["random"] * 3)
    with pytest.raises(ValueError, match="games: indices must be 0 to 3"):
        envs.set_opponent("random", games=[7])
    obs, info = envs.reset(seed=0)
    for _ in range(30):
        obs, *_, info = envs.step(pick(obs, info["action_mask"]))


@pytest.mark.parametrize("kwargs, error, message", [
    ({"autoreset_mode": "Disabled"}, ValueError, "autoreset_mode must be AutoresetMode"),
    ({"seat": 2}, ValueError, "seat must be an integer from 0 to 1, got 2"),
    ({"partner": "greedy"}, ValueError, "partner: a 2-player game has no partner seat"),
    ({"players": 4, "opponent": ["greedy", "expert"]}, ValueError,
     "partner: with one opponent per seat, give the partner too"),
    ({"moves": "legal", "max_moves": 0}, ValueError, "max_moves must be an integer from 1"),
    ({"max_moves": 8}, ValueError, "max_moves is an option of moves='legal'"),
    ({"opponent": 3}, TypeError, "opponent must be an agent spec string, an agent object or"),
])
def test_each_bad_option_is_one_clear_line(kwargs, error, message):
    with pytest.raises(error, match=message):
        ScopaVectorEnv(2, **kwargs)


def test_bad_calls_are_one_clear_line():
    envs = ScopaVectorEnv(2, opponent="greedy")
    with pytest.raises(ValueError, match="set_partner: a 2-player game has no partner seat"):
        envs.set_partner("greedy")
    with pytest.raises(ValueError, match="seed: give one int for the batch"):
        envs.reset(seed=[1, 2])
    with pytest.raises(ValueError, match=r"reset options: unknown \['deck'\]; known: decks"):
        envs.reset(options={"deck": []})
    with pytest.raises(ValueError, match="games: each game may move once a step"):
        envs.games.step(np.array([0, 0]), games=np.array([1, 1]))
    single = gymnasium.make(scopa_env.GYM_ENV_ID).unwrapped
    with pytest.raises(ValueError, match=r"reset options: unknown \['decks'\]; known: deck, "
                       "match_seed"):
        single.reset(options={"decks": []})
    wrong = ScopaVectorEnv(2, opponent=lambda obs, mask: np.zeros(5, np.int64))
    with pytest.raises(ValueError, match=r"opponent '<lambda>' returned actions of shape "
                       r"\(5,\) for \d games"):
        obs, info = wrong.reset(seed=0)
        wrong.step(info["action_mask"].argmax(1))
