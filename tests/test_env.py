"""The PettingZoo AEC environment: API conformance, seeding, rewards, hidden information."""

import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import scopa_env
from scopa_env.cards import FULL_DECK, cards_of
from scopa_env.game import IllegalMoveError, hidden_cards, new_match
from scopa_env.moves import N_ACTIONS, action_text
from scopa_env.observation import OBS_DIM, encode, info_set

CONFIGS = [
    ("scopa", 2), ("scopa", 4), ("asso_piglia_tutto", 2), ("asso_piglia_tutto", 4),
    ("scopone", 4), ("scopone_scientifico", 4),
]


@pytest.mark.parametrize("rules, players", CONFIGS)
def test_pettingzoo_api_and_seed(rules, players):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(scopa_env.env(rules=rules, players=players), num_cycles=1000)
        seed_test(lambda: scopa_env.env(rules=rules, players=players), num_cycles=300)


def play_random(env, seed, max_steps=100_000):
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    steps = 0
    for agent in env.agent_iter(max_steps):
        obs, reward, term, trunc, _ = env.last()
        totals[agent] += reward
        if term or trunc:
            env.step(None)
            continue
        assert obs["observation"].shape == (OBS_DIM,) and obs["action_mask"].shape == (N_ACTIONS,)
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        steps += 1
    return totals, steps


@pytest.mark.parametrize("players", [2, 4])
def test_match_reward(players):
    env = scopa_env.env(players=players)
    totals, _ = play_random(env, 3)
    winner = env.unwrapped._state.winner
    for agent, total in totals.items():
        seat = env.unwrapped.agent_name_mapping[agent]
        assert total == (1.0 if seat % 2 == winner else -1.0)
    rec = env.unwrapped.record
    assert rec["winner"] == winner and len(rec["hands"]) >= 1


def test_points_reward_per_hand_episode():
    env = scopa_env.env(reward="points", episode="hand")
    totals, steps = play_random(env, 11)
    assert steps == 36  # one hand of 2-player scopa
    hand = env.unwrapped.record["hands"][0]
    pts = [e["points"]["total"] for e in hand["score"]]
    assert totals["player_0"] == pts[0] - pts[1] == -totals["player_1"]


def test_points_reward_over_a_match_sums_hand_margins():
    env = scopa_env.env(reward="points", players=4)
    totals, _ = play_random(env, 5)
    s = env.unwrapped._state
    margin = s.match_score[0] - s.match_score[1]
    assert totals["player_0"] == totals["player_2"] == margin
    assert totals["player_1"] == totals["player_3"] == -margin


def test_action_mask_only_for_agent_to_move():
    env = scopa_env.env(players=4)
    env.reset(seed=2)
    for agent in env.possible_agents:
        mask = env.observe(agent)["action_mask"]
        if agent == env.agent_selection:
            legal = env.unwrapped._state.legal_actions()
            assert np.flatnonzero(mask).tolist() == legal
        else:
            assert not mask.any()


def test_illegal_action_raise_names_move_seat_and_legal():
    env = scopa_env.env()
    env.reset(seed=0)
    mask = env.observe(env.agent_selection)["action_mask"]
    bad = int(np.flatnonzero(mask == 0)[0])
    with pytest.raises(IllegalMoveError, match=rf"illegal move {action_text(bad)}.*seat 0.*"
                                                r"legal moves: "):
        env.step(bad)


def test_illegal_action_lose():
    env = scopa_env.env(illegal_action="lose", players=4)
    env.reset(seed=0)
    offender = env.agent_selection
    mask = env.observe(offender)["action_mask"]
    env.step(int(np.flatnonzero(mask == 0)[0]))
    assert all(env.terminations.values())
    rewards = {a: env._cumulative_rewards[a] for a in env.agents}
    assert rewards[offender] == -1 and sum(rewards.values()) == -1


def test_bad_options():
    for kwargs, problem in [({"reward": "win"}, "reward must be"),
                            ({"episode": "game"}, "episode must be"),
                            ({"illegal_action": "ignore"}, "illegal_action must be"),
                            ({"players": 3}, "players must be 2 or 4"),
                            ({"rules": "scopone", "players": 2}, "4 players only"),
                            ({"render_mode": "rgb"}, "render_mode")]:
        with pytest.raises(ValueError, match=problem):
            scopa_env.env(**kwargs)


def test_render_ansi_shows_only_the_viewers_hand():
    env = scopa_env.env(render_mode="ansi")
    env.reset(seed=4)
    text = env.render()
    s = env.unwrapped._state
    assert "Table:" in text and "Legal moves:" in text and "Match score" in text
    assert "3 cards" in text  # the opponent's hand is a count
    from scopa_env.cards import CODES
    for c in cards_of(s.hands[1]):
        assert f" {CODES[c]} " not in text.split("Seat 1")[1].split("\n")[0] + " "


def _shuffle_hidden(state, seat, rng):
    """Same state for ``seat``, with the other hands and the undealt deck reshuffled."""
    s = state.copy()
    hidden = cards_of(hidden_cards(state, seat))
    perm = list(rng.permutation(hidden))
    others = [o for o in range(state.players) if o != seat]
    new_hands = {}
    for o in others:
        k = s.hands[o].bit_count()
        new_hands[o] = sum(1 << int(c) for c in perm[:k])
        perm = perm[k:]
    for o in others:
        s.hands[o] = new_hands[o]
    dealt = list(s.deck[: s.deck_pos])
    s.deck = tuple(dealt + [int(c) for c in perm])
    return s


@pytest.mark.parametrize("players", [2, 4])
def test_hidden_cards_never_change_a_seats_observation(players):
    rng = np.random.default_rng(0)
    state = new_match("scopa", seed=9, players=players)
    changed = 0
    for _ in range(40):
        for seat in range(players):
            twin = _shuffle_hidden(state, seat, rng)
            changed += (twin.hands, twin.deck) != (state.hands, state.deck)
            assert np.array_equal(encode(state, seat), encode(twin, seat))
            a, b = info_set(state, seat), info_set(twin, seat)
            assert a == b
            assert a.unseen == hidden_cards(state, seat) == FULL_DECK & ~(
                a.hand | a.table | a.own_pile | a.other_pile)
        from scopa_env.game import apply
        apply(state, int(rng.choice(state.legal_actions())))
        if state.done:
            break
    assert changed > 40  # the hidden cards really were different in most twins


def test_calls_before_reset_are_refused():
    env = scopa_env.env()
    for call in (lambda: env.step(0), lambda: env.observe("player_0"), env.agent_iter):
        with pytest.raises(RuntimeError, match="call reset"):
            call()



def test_the_documented_observation_layout_is_the_one_definition() -> None:
    """The layout table (the observation module's docstring, which the documentation
    site renders as it is) lists the slices of ``observation.LAYOUT`` in order."""
    import re

    from scopa_env import observation

    want = [(s.start, s.stop) for s in observation.SLICES.values()]
    rows = re.findall(r"^\| (\d+)(?::(\d+))? +\|", observation.__doc__, re.M)
    assert [(int(a), int(b) if b else int(a) + 1) for a, b in rows] == want


@pytest.mark.parametrize("rules, players, reward, episode", [
    ("scopa", 2, "match", "match"), ("scopa", 4, "points", "match"),
    ("asso_piglia_tutto", 2, "points", "hand"), ("scopone", 4, "match", "hand")])
def test_every_step_equals_the_engine_played_beside_it(rules, players, reward, episode):
    """The environment's fast paths (observations without an ``InfoSet``, rewards left
    alone between hand ends) against the engine played move for move beside it: every
    seat's observation is the encoded information set, the mask the legal moves of the
    seat to move, the rewards the hands' margins or the match's result, the record the
    one the engine's moves make."""
    from scopa_env.game import apply
    from scopa_env.observation import bounded, encode_info
    from scopa_env.records import MatchRecorder

    env = scopa_env.env(rules=rules, players=players, reward=reward, episode=episode)
    for seed in (1, 2):
        env.reset(seed=seed)
        ref = new_match(env.unwrapped.rules, seed=seed)
        recorder = MatchRecorder(ref, ["env"] * players)
        rng = np.random.default_rng(seed)
        totals = dict.fromkeys(env.possible_agents, 0.0)
        for agent in env.agent_iter():
            obs, cumulative, term, trunc, _ = env.last()
            assert cumulative == totals[agent]
            totals[agent] = 0.0
            if term or trunc:
                env.step(None)
                continue
            assert env.agent_name_mapping[agent] == ref.to_move
            for other in env.possible_agents:
                seat = env.agent_name_mapping[other]
                seen = env.observe(other)
                assert np.array_equal(seen["observation"],
                                      bounded(encode_info(info_set(ref, seat))))
                assert seen["observation"].dtype == np.float32
                legal = ref.legal_actions() if other == agent else []
                assert np.flatnonzero(seen["action_mask"]).tolist() == legal
            action = int(rng.choice(ref.legal_actions()))
            env.step(action)
            result = apply(ref, action)
            recorder.observe(result, ref)
            expected = dict.fromkeys(env.possible_agents, 0.0)
            if result.hand is not None:
                margin = (result.hand.score[0]["points"]["total"]
                          - result.hand.score[1]["points"]["total"])
                for a in env.possible_agents:
                    own = 1 if env.agent_name_mapping[a] % 2 == 0 else -1
                    if reward == "points":
                        expected[a] = float(own * margin)
                    elif result.match_over or episode == "hand":
                        won = ref.winner == 0 if result.match_over else margin > 0
                        expected[a] = 0.0 if episode == "hand" and margin == 0 else \
                            float(own if won else -own)
            assert env.rewards == expected
            for a in env.possible_agents:
                totals[a] += expected[a]
        assert env.unwrapped.record == recorder.record
