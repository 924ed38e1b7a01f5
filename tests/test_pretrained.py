"""The shipped ``pretrained`` agent plays each game with the weights trained for its rules."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scopa_env.game import new_match
from scopa_env.observation import info_set
from scopa_env.rules import make_rules
from scopa_policy import agent as learned
from scopa_policy.checkpoint import CheckpointError, load_checkpoint, save_atomic

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
    (dict(name="scopa", ace_takes_all=True), r"differs in ace_takes_all=True, trained with False"),
])
def test_refuses_rules_it_was_not_trained_for(weights_dir, rules, message):
    r = make_rules(**rules)
    agent = learned.load_policy_agent(None, seed=0)
    with pytest.raises(CheckpointError, match=message):
        agent.check_rules(r)
    s = new_match(r, seed=3)
    with pytest.raises(CheckpointError, match=message):
        agent.act(info_set(s, s.to_move))


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


def test_cli_refusal_is_one_line():
    code = "import sys; from scopa_cli import main; sys.exit(main(sys.argv[1:]))"
    out = subprocess.run([sys.executable, "-c", code, "eval", "pretrained", "greedy",
                          "--hands", "2", "--rules", "scopone_scientifico"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode != 0
    assert "Traceback" not in out.stderr
    assert "no weights for scopone_scientifico with 4 players" in out.stderr


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
