"""The shipped ``pretrained`` agent plays each game with the closest weights for its rules,
says once what differs, and refuses in one line the games no weights fit."""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from scopa_env.game import new_match, step
from scopa_env.moves import legal_actions
from scopa_env.observation import encode_info, info_set
from scopa_env.rules import OPTION_NAMES, make_rules
from scopa_policy import agent as learned
from scopa_policy.checkpoint import CheckpointError, load_checkpoint, save_atomic
from scopa_train.recipe import ship_command

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted(learned.PRETRAINED_DIR.glob("*.pt"))
pytestmark = pytest.mark.skipif(not learned.PRETRAINED.is_file(),
                                reason="no shipped weights in this checkout")


@pytest.fixture
def weights_dir(tmp_path, monkeypatch):
    """A pretrained folder with only the 2-player weights."""
    shutil.copy(learned.PRETRAINED, tmp_path / "default.pt")
    monkeypatch.setattr(learned, "PRETRAINED_DIR", tmp_path)
    monkeypatch.setattr(learned, "PRETRAINED", tmp_path / "default.pt")
    learned.shipped_weights.cache_clear()
    yield tmp_path
    learned.shipped_weights.cache_clear()


def test_every_shipped_file_knows_its_rules():
    for path in SHIPPED:
        rules = load_checkpoint(path)["rules"]
        assert learned.pretrained_path(make_rules(**rules)) == path


def test_two_player_weights_for_any_match_length(weights_dir):
    assert learned.pretrained_path(make_rules()) == weights_dir / "default.pt"
    assert learned.pretrained_path(make_rules(target_score=21)) == weights_dir / "default.pt"


@pytest.mark.parametrize("rules, message", [
    (dict(name="scopa", players=4), r"no weights for scopa with 4 players; it has weights "
                                    r"for: scopa with 2 players"),
    (dict(name="scopone_scientifico"), r"no weights for scopone_scientifico with 4 players"),
    (dict(name="scopone", redeal_three_kings=False), r"no weights for scopone with 4 players"),
    (dict(name="scopa", ace_takes_all=True), r"differs in ace_takes_all=True, trained with False"),
    (dict(name="asso_piglia_tutto", napola=True, redeal_three_kings=False),
     r"differs in ace_takes_all=True, trained with False\)"),
    (dict(name="scopa", capture_rule="fewest"),
     r"differs in capture_rule='fewest', trained with 'any'\)"),
    (dict(name="scopa", table_size=10), r"differs in table_size=10, trained with 4\)"),
])
def test_refuses_rules_it_was_not_trained_for(weights_dir, rules, message):
    r = make_rules(**rules)
    agent = learned.load_policy_agent(None, seed=0)
    with pytest.raises(CheckpointError, match=message) as refused:
        agent.check_rules(r)
    assert "\n" not in str(refused.value)
    s = new_match(r, seed=3)
    with pytest.raises(CheckpointError, match=message):
        agent.act(info_set(s, s.to_move))


def test_every_option_is_played_across_or_must_match():
    """An option is either free (label, match length), played across (deal odds, score) or
    must equal the weights' (it changes the observation, the deal's shape or the moves):
    an option added to the rules must be placed here on purpose."""
    must_match = set(OPTION_NAMES) - learned.SILENT - learned.PLAYS_ACROSS
    assert must_match == {"players", "hand_size", "table_size", "capture_rule",
                          "ace_takes_all"}
    assert not learned.SILENT & learned.PLAYS_ACROSS


OTHER_VALUES = {"redeal_three_kings": False, "last_play_scopa": True,
                "primiera_table": "alt", "primiera_requires_all_suits": False,
                "re_bello": True, "napola": True}


@pytest.mark.parametrize("option", sorted(learned.PLAYS_ACROSS))
def test_plays_each_option_the_network_neither_sees_nor_moves_by(weights_dir, option,
                                                                   monkeypatch):
    monkeypatch.setenv(learned.SAID_ENV, "")
    rules = make_rules(**{option: OTHER_VALUES[option]})
    choice = learned.choose_weights(rules)
    assert (choice.path, choice.differs) == (weights_dir / "default.pt", (option,))
    agent = learned.load_policy_agent(None, seed=0)
    s = new_match(rules, seed=5)
    info = info_set(s, s.to_move)
    assert agent.act(info) in info.legal_actions
    assert agent.policy(rules) is agent.policy(make_rules())


HOUSE = dict(redeal_three_kings=False, primiera_requires_all_suits=False)
"""The issue's example: a common house rule set (and an independent engine's rules)."""


def test_house_rules_play_with_the_two_player_weights_said_once(weights_dir, monkeypatch,
                                                                capsys):
    monkeypatch.setenv(learned.SAID_ENV, "")
    rules = make_rules(players=2, **HOUSE)
    agent = learned.load_policy_agent(None, seed=0)
    agent.check_rules(rules)
    agent.check_rules(rules)
    s = new_match(rules, seed=6)
    for _ in range(6):
        info = info_set(s, s.to_move)
        a = agent.act(info)
        assert a in info.legal_actions
        s, _ = step(s, a)
    learned.load_policy_agent(None, seed=1).check_rules(rules)  # another instance: said
    learned.load_policy_agent(None, seed=0).check_rules(make_rules())  # trained rules
    err = capsys.readouterr().err.splitlines()
    said = [line for line in err if line.startswith("pretrained: the weights default.pt")]
    assert len(said) == 1, err
    assert ("primiera_requires_all_suits=False (trained with True), redeal_three_kings=False "
            "(trained with True)") in said[0]
    agent.check_rules(make_rules(napola=True))  # another rule set: said once for it
    agent.check_rules(make_rules(napola=True, target_score=21))  # the match length is free
    assert len(capsys.readouterr().err.splitlines()) == 1


def test_played_across_options_change_neither_the_observation_nor_the_moves():
    """Through every position of a few hands, each ``PLAYS_ACROSS`` option's other value
    encodes the seat's information the same and allows the same moves."""
    base = make_rules()
    others = [make_rules(**{k: v}) for k, v in OTHER_VALUES.items()]
    rng = np.random.default_rng(8)
    positions = 0
    for seed in range(3):
        s = new_match(base, seed=seed)
        while s.hand_index == 0:
            info = info_set(s, s.to_move)
            obs = encode_info(info)
            for rules in others:
                assert np.array_equal(encode_info(replace(info, rules=rules)), obs)
                assert legal_actions(s.hands[s.to_move], s.table, rules) == list(
                    info.legal_actions)
            positions += 1
            s, _ = step(s, int(rng.choice(info.legal_actions)))
    assert positions == 3 * 36  # every card of 3 hands after the opening table


def _with_team_weights(weights_dir):
    """The 4-player rules and a ``pretrained`` agent over ``weights_dir`` with a
    ``team4.pt`` beside ``default.pt`` (the 2-player weights relabelled)."""
    four = make_rules(players=4)
    ck = load_checkpoint(learned.PRETRAINED)
    ck["rules"] = four.to_dict()
    save_atomic(ck, weights_dir / "team4.pt")
    learned.shipped_weights.cache_clear()
    return four, learned.load_policy_agent(None, seed=0)


def test_picks_the_weights_of_the_game_it_plays(weights_dir):
    four, agent = _with_team_weights(weights_dir)
    for rules, name in ((make_rules(), "default.pt"), (four, "team4.pt")):
        s = new_match(rules, seed=4)
        info = info_set(s, s.to_move)
        assert agent.act(info) in info.legal_actions
        assert agent.policy(rules).meta["rules"]["players"] == rules.players
        assert learned.pretrained_path(rules).name == name


CLI = "import sys; from scopa_cli import main; sys.exit(main(sys.argv[1:]))"


@pytest.mark.parametrize("args, message", [
    (["--rules", "scopone", "--option", "hand_size=5", "--option", "table_size=0"],
     "no weights for scopone with 4 players (differs in hand_size=5, trained with 10)"),
    (["--option", "capture_rule=fewest", "--option", "napola=true"],
     "differs in capture_rule='fewest', trained with 'any')"),
])
def test_cli_refusal_is_one_line(args, message):
    out = subprocess.run([sys.executable, "-c", CLI, "eval", "pretrained", "greedy",
                          "--hands", "2", *args],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode != 0
    assert "Traceback" not in out.stderr
    assert message in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_cli_evaluates_house_rules_saying_the_weights_once(monkeypatch):
    """The issue's example: ``scopa eval pretrained greedy`` under the house rules plays
    (in two worker processes), and the weights are said once, by the parent."""
    monkeypatch.delenv(learned.SAID_ENV, raising=False)
    out = subprocess.run([sys.executable, "-c", CLI, "eval", "pretrained", "greedy",
                          "--hands", "20", "--matches", "0", "--players", "2",
                          "--workers", "2", "--seed", "3", "--no-progress",
                          "--option", "redeal_three_kings=false",
                          "--option", "primiera_requires_all_suits=false"],
                         capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    said = [line for line in out.stderr.splitlines() if line.startswith("pretrained:")]
    assert len(said) == 1, out.stderr
    assert "the weights default.pt (trained for scopa with 2 players) play scopa with 2 " \
           "players with primiera_requires_all_suits=False" in said[0]
    assert "points per hand" in out.stdout


def test_fingerprint_per_rules_follows_only_the_weights_that_play_them(weights_dir):
    """A ladder's cached pairs for 4 players survive re-shipped 2-player weights."""
    four, agent = _with_team_weights(weights_dir)
    before = (agent.fingerprint(), agent.fingerprint(make_rules()), agent.fingerprint(four))
    assert len(set(before)) == 3
    ck2 = load_checkpoint(weights_dir / "default.pt")
    ck2["counters"] = {**ck2.get("counters", {}), "re-shipped": 1}
    save_atomic(ck2, weights_dir / "default.pt")
    after = (agent.fingerprint(), agent.fingerprint(make_rules()), agent.fingerprint(four))
    assert after[0] != before[0] and after[1] != before[1]
    assert after[2] == before[2]


def test_plays_with_the_closest_weights(weights_dir, monkeypatch, capsys):
    """Among weights that fit, those trained with the fewest other options play; weights
    trained for the game's own rules play without a word, and a pair's fingerprint says
    which weights play."""
    monkeypatch.setenv(learned.SAID_ENV, "")
    ck = load_checkpoint(learned.PRETRAINED)
    ck["rules"] = make_rules(napola=True).to_dict()
    save_atomic(ck, weights_dir / "napola.pt")
    learned.shipped_weights.cache_clear()
    napola, house_napola = make_rules(napola=True), make_rules(napola=True, **HOUSE)
    assert learned.choose_weights(napola).path.name == "napola.pt"
    assert learned.choose_weights(house_napola).path.name == "napola.pt"
    assert learned.choose_weights(house_napola).differs == tuple(sorted(HOUSE))
    assert learned.choose_weights(make_rules(**HOUSE)).path.name == "default.pt"
    assert learned.choose_weights(make_rules(re_bello=True)).path.name == "default.pt"
    agent = learned.load_policy_agent(None, seed=0)
    agent.check_rules(napola)
    assert capsys.readouterr().err == ""
    agent.check_rules(house_napola)
    assert "pretrained: the weights napola.pt" in capsys.readouterr().err
    assert agent.fingerprint(house_napola) == agent.fingerprint(napola)
    assert agent.fingerprint(make_rules(**HOUSE)) == agent.fingerprint(make_rules())
    assert agent.fingerprint(napola) != agent.fingerprint(make_rules())


def test_ship_command_names_only_weights_trained_for_the_rules(weights_dir):
    """A stage trained for rules the 2-player weights only play across is shipped beside
    them, never over them."""
    ck = Path("final.pt")
    assert ship_command(ck, make_rules()).endswith(str(weights_dir / "default.pt"))
    assert ship_command(ck, make_rules(**HOUSE)).endswith("mine.pt")
    # a named rule set with no weights of its own gets a file named for it
    assert ship_command(ck, make_rules("asso_piglia_tutto")).endswith(
        "scopa_policy/pretrained/asso_piglia_tutto.pt")
    assert ship_command(ck, make_rules("asso_piglia_tutto", players=4)).endswith(
        "asso_piglia_tutto_4p.pt")
    assert ship_command(ck, make_rules("asso_piglia_tutto", capture_rule="fewest")).endswith(
        "mine.pt")
    with pytest.raises(CheckpointError, match=r"no weights trained for scopa with 2 players "
                                              r"with napola=True \(the closest, default.pt"):
        learned.pretrained_path(make_rules(napola=True), exact=True)
