"""The OpenSpiel bridge: ``python_scopa`` passes OpenSpiel's own checks on every named
game, shows each seat only what it may know, plays the engine's game, and the kit's
agents and OpenSpiel's bots play each other both ways."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pyspiel = pytest.importorskip(
    "pyspiel", reason="open-spiel is not installed (pip install -e .[openspiel])")

from agents import check_spec, make_agent  # noqa: E402
from agents.bridges.openspiel_bots import SpecBot  # noqa: E402
from agents.bridges.openspiel_search import game_for, sampled_state  # noqa: E402
from scopa_env.game import apply, new_match  # noqa: E402
from scopa_env.observation import encode_info, info_set  # noqa: E402
from scopa_env.rules import make_rules  # noqa: E402

GAMES = ["python_scopa", "python_scopa(players=4)", "python_scopa(rules=scopone)",
         "python_scopa(rules=scopone,players=4)", "python_scopa(rules=scopone_scientifico)",
         "python_scopa(rules=asso_piglia_tutto)",
         "python_scopa(rules=asso_piglia_tutto,players=4)",
         "python_scopa(episode=match,target_score=4)",
         "python_scopa(episode=match,players=4,target_score=3)",
         "python_scopa(napola=true,re_bello=true,capture_rule=fewest,last_play_scopa=true,"
         "primiera_table=alt)"]


def random_play(state, rng: random.Random, plies: int):
    """Play chance and moves at random for up to ``plies`` actions (not past the end)."""
    for _ in range(plies):
        if state.is_terminal():
            break
        if state.is_chance_node():
            cards, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(rng.choices(cards, probs)[0])
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    return state


@pytest.mark.parametrize("name", GAMES)
def test_random_sim_test(name):
    """OpenSpiel's own consistency checks (chance sums, returns, clone, serialization,
    observation and information-state tensors) on every named game and player count."""
    pyspiel.random_sim_test(pyspiel.load_game(name), num_sims=4, serialize=True,
                            verbose=False)


def test_load_game_and_its_rules():
    g = pyspiel.load_game("python_scopa(rules=scopone,players=4)")
    assert g.rules == make_rules("scopone") and g.num_players() == 4
    assert g.num_distinct_actions() == 16204 and g.max_chance_outcomes() == 40
    assert pyspiel.load_game("python_scopa(rules=scopone)").rules.players == 4
    asso = pyspiel.load_game("python_scopa(rules=asso_piglia_tutto,hand_size=3)").rules
    assert asso.ace_takes_all and asso.hand_size == 3
    g = pyspiel.load_game("python_scopa(napola=true,target_score=21)")
    assert g.rules == make_rules("scopa", napola=True, target_score=21)
    assert str(g) == "python_scopa(napola=True,target_score=21)"


@pytest.mark.parametrize("text,message", [
    ("python_scopa(rules=nope)", "unknown rule set 'nope'"),
    ("python_scopa(players=3)", "players must be 2 or 4"),
    ("python_scopa(episode=forever)", "episode must be 'hand' or 'match'"),
    ("python_scopa(rules=scopone,players=2)", "for 4 players only"),
    ("python_scopa(capture_rule=most)", "capture_rule must be 'any' or 'fewest'"),
    ("python_scopa(nope=1)", "Unknown parameter 'nope'"),
    ("python_scopa(napola=3)", "Wrong type for parameter napola"),
])
def test_bad_parameters_are_one_line(text, message):
    with pytest.raises(Exception, match=message) as e:
        pyspiel.load_game(text)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("name", ["python_scopa", "python_scopa(rules=scopone)",
                                  "python_scopa(players=4,episode=match)"])
def test_hidden_cards_never_change_a_seats_view(name):
    """Dealing again every card hidden from a seat changes none of its tensors and
    strings (observation and information state); it does change the other hands."""
    game = pyspiel.load_game(name)
    rng = random.Random(7)
    changed = 0
    for _ in range(30):
        state = random_play(game.new_initial_state(), rng, rng.randrange(11, 70))
        if state.is_terminal() or state.is_chance_node():
            continue
        for seat in range(game.num_players()):
            other = state.with_hidden_cards(seat, rng)
            assert other.s.hands[seat] == state.s.hands[seat]
            changed += other.s.hands != state.s.hands
            for view in ("observation_tensor", "information_state_tensor"):
                assert getattr(other, view)(seat) == getattr(state, view)(seat)
            for view in ("observation_string", "information_state_string"):
                assert getattr(other, view)(seat) == getattr(state, view)(seat)
            # and the views are the env's: the same information as info_set
            assert np.array_equal(np.array(state.observation_tensor(seat), np.float32),
                                  encode_info(info_set(state.s, seat)))
            s, o = state.s, other.s  # the seat's known cards keep their deal places
            seen = s.hands[seat] | s.table | s.piles[0] | s.piles[1]
            assert len(o.deck) == len(s.deck) and len(set(o.deck)) == len(o.deck)
            assert all(a == b for a, b in zip(s.deck, o.deck, strict=True) if seen >> a & 1)
    assert changed > 20


def test_resample_keeps_the_root_information_state():
    """OpenSpiel's ISMCTS asserts this of every root sample."""
    game = pyspiel.load_game("python_scopa")
    rng = random.Random(3)
    state = random_play(game.new_initial_state(), rng, 20)
    while state.is_chance_node():
        random_play(state, rng, 1)
    player = state.current_player()
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    for _ in range(10):
        other = state.resample_from_infostate(player, sampler)
        assert other.information_state_string(player) == state.information_state_string(
            player)
        assert other.legal_actions() == state.legal_actions()


def test_the_game_is_the_engines():
    """Given a seeded match's cards as chance outcomes and the same moves, the game's
    hands score as the engine's and its returns are the margins."""
    game = pyspiel.load_game("python_scopa(episode=match,target_score=11)")
    for seed in range(3):
        ref = new_match("scopa", seed)
        state = game.new_initial_state()
        rng = random.Random(seed)
        while not state.is_terminal():
            if state.is_chance_node():
                card = ref.deck[state.s.deck_pos]
                assert card in dict(state.chance_outcomes())
                state.apply_action(card)
                continue
            assert state.s.hands == ref.hands and state.s.table == ref.table
            assert state.legal_actions() == sorted(ref.legal_actions())
            action = rng.choice(state.legal_actions())
            state.apply_action(action)
            apply(ref, action)
        assert ref.done and state.s.match_score == ref.match_score
        assert state.returns() == ([1.0, -1.0] if ref.winner == 0 else [-1.0, 1.0])


@pytest.mark.parametrize("players", [2, 4])
def test_default_hand_returns_are_the_engines_hand_score(players):
    """``episode=hand`` (the default): given the engine's deal as chance outcomes and the
    same moves, the game ends with the hand and each seat's return is its team's margin
    of the engine's hand score, in points."""
    name = "python_scopa" if players == 2 else "python_scopa(players=4)"
    game = pyspiel.load_game(name)
    margins = set()
    for seed in range(6):
        ref = new_match(make_rules("scopa", players=players), seed)
        state = game.new_initial_state()
        rng = random.Random(seed)
        hand = None
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(ref.deck[state.s.deck_pos])
                continue
            assert hand is None, "the game went on past the engine's hand"
            action = rng.choice(state.legal_actions())
            state.apply_action(action)
            hand = apply(ref, action, deal_next=False).hand
        assert hand is not None, "the game ended before the engine's hand"
        points = [hand.score[t]["points"]["total"] for t in range(2)]
        margin = float(points[0] - points[1])
        assert state.returns() == [margin if seat % 2 == 0 else -margin
                                   for seat in range(players)]
        margins.add(margin)
    assert len(margins) > 1  # not one figure by chance


def test_hand_returns_are_team_margins():
    game = pyspiel.load_game("python_scopa(players=4)")
    state = random_play(game.new_initial_state(), random.Random(1), 10_000)
    r = state.returns()
    assert state.is_terminal() and r[0] == r[2] == -r[1] == -r[3] and sum(r) == 0


def test_rl_environment_observes_the_info_set():
    from open_spiel.python import rl_environment
    env = rl_environment.Environment("python_scopa")
    step = env.reset()
    player = step.observations["current_player"]
    assert len(step.observations["info_state"][player]) == 216
    while not step.last():
        player = step.observations["current_player"]
        step = env.step([random.choice(step.observations["legal_actions"][player])])
    assert sum(step.rewards) == 0


def test_openspiel_search_specs_play_legal_moves():
    for spec in ("openspiel:ismcts,simulations=8", "openspiel:mcts,simulations=8"):
        agent = make_agent(spec, seed=1)
        assert agent.spec == spec
        s = new_match("scopa", 5)
        for _ in range(6):
            info = info_set(s, s.to_move)
            a = agent.act(info)
            assert a in info.legal_actions
            apply(s, a)
    # seeded: the same seed plays the same moves
    s = new_match("scopone", 2)
    info = info_set(s, s.to_move)
    moves = {make_agent("openspiel:ismcts,simulations=20", seed=9).act(info) for _ in range(3)}
    assert len(moves) == 1


@pytest.mark.parametrize("spec,message", [
    ("openspiel:ismcts,simulations=-5", "simulations must be at least 1, got -5"),
    ("openspiel:ismcts,simulations=x", "takes a int, got 'x'"),
    ("openspiel:alphazero", "unknown OpenSpiel bot 'alphazero'"),
    ("openspiel:ismcts,depth=3", "has no parameter 'depth'"),
    ("openspiel:ismcts,final=best", "final must be one of max_visit"),
    ("openspiel:mcts,worlds=3", "worlds and final are ismcts's"),
    ("openspiel:ismcts,uct_c=0", "uct_c must be above 0"),
])
def test_bad_openspiel_specs(spec, message):
    with pytest.raises(ValueError, match=message):
        check_spec(spec)


def test_cli_bad_spec_is_one_line():
    r = subprocess.run([sys.executable, "-m", "scopa_cli", "eval",
                        "openspiel:ismcts,simulations=-5", "greedy", "--hands", "2"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "simulations must be at least 1" in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_sampled_state_is_consistent_with_the_info_set():
    rng = random.Random(4)
    s = new_match("scopa", 8, players=4)
    for _ in range(9):
        apply(s, rng.choice(s.legal_actions()))
    info = info_set(s, s.to_move)
    state = sampled_state(info, rng)
    assert state.s.hands[info.seat] == info.hand and state.s.table == info.table
    assert info_set(state.s, info.seat) == info
    assert state.current_player() == info.seat and game_for(info.rules) is state.get_game()


def test_spec_bots_play_each_other_and_openspiel_bots():
    """Kit agents as pyspiel Bots against each other and OpenSpiel's ISMCTS, through
    OpenSpiel's own evaluate_bots (the pure-Python one and the C++ one)."""
    from open_spiel.python.algorithms import evaluate_bots, ismcts, mcts
    game = pyspiel.load_game("python_scopa")
    bots = [SpecBot("greedy", seed=1), SpecBot("pimc:worlds=4,depth=3", seed=2)]
    r = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, np.random.RandomState(0))
    assert r[0] == -r[1]
    rs = np.random.RandomState(1)
    theirs = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rs), 2.0, 10,
                              random_state=rs)
    r = pyspiel.evaluate_bots(game.new_initial_state(), [SpecBot("expert", seed=3), theirs], 5)
    assert r[0] == -r[1]
    with pytest.raises(TypeError, match="plays python_scopa states only"):
        bots[0].step(pyspiel.load_game("kuhn_poker").new_initial_state())


ROOT = Path(__file__).resolve().parent.parent


def test_openspiel_dqn_example_trains_and_plays_as_an_agent_spec(tmp_path):
    """OpenSpiel's own DQN trains on python_scopa at a tiny budget (past its first
    learning steps) and the saved network plays through a py: spec."""
    out = tmp_path / "dqn"
    r = subprocess.run([sys.executable, str(ROOT / "examples/openspiel_dqn.py"), "--steps",
                        "800", "--hidden", "16", "--out", str(out)],
                       capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    meta = json.loads((out / "dqn.json").read_text())
    assert meta["env_steps"] >= 800 and meta["hidden"] == [16]
    agent = make_agent(f"py:{ROOT}/examples/openspiel_dqn.py:agent,path={out}/player0.pt",
                       seed=0)
    s = new_match("scopa", 3)
    for _ in range(10):
        info = info_set(s, s.to_move)
        a = agent.act(info)
        assert a in info.legal_actions
        apply(s, a)
    with pytest.raises(ValueError, match="not a DQN saved by examples/openspiel_dqn.py"):
        make_agent(f"py:{ROOT}/examples/openspiel_dqn.py:agent,path={tmp_path}/none.pt")


def test_openspiel_bots_example_runs():
    r = subprocess.run([sys.executable, str(ROOT / "examples/openspiel_bots.py"), "--ours",
                        "greedy", "--simulations", "5", "--deals", "2"],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "greedy vs OpenSpiel ISMCTS (5 simulations)" in r.stdout


@pytest.mark.parametrize("game,status,text", [
    ("python_scopa(rules=scopone)", 0, "random_sim_test: 2 random games passed"),
    ("python_scopa(rules=nope)", 2, "unknown rule set 'nope'"),
    ("python_scopa(players=3)", 2, "players must be 2 or 4"),
    ("python_scopa(foo=1)", 2, "Unknown parameter 'foo'"),
])
def test_game_string_checker_command(game, status, text):
    r = subprocess.run([sys.executable, "-m", "agents.bridges.openspiel_game", game, "--sims",
                        "2"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == status
    if status:
        assert text in r.stderr and len(r.stderr.strip().splitlines()) == 1
        assert "Traceback" not in r.stderr
    else:
        assert text in r.stdout


def test_openspiel_spec_without_the_extra_names_it(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "pyspiel" else real(name, *a))
    with pytest.raises(ValueError, match=r"needs open-spiel, which is not installed: "
                                         r"pip install -e \.\[openspiel\]"):
        check_spec("openspiel:ismcts")
