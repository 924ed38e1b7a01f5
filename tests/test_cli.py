"""`scopa play` (a human against an agent in the terminal) and agent-interface errors."""

import pytest

from agents.base import BaseAgent
from scopa_env.cli import main as scopa
from scopa_env.game import apply, new_match
from scopa_env.moves import ACTION_CARD, N_ACTIONS, action_text
from scopa_env.observation import info_set


def test_play_a_whole_match_from_the_terminal(monkeypatch, capsys):
    answers = iter(["7z", "99", "1d x 2c"] + ["0"] * 500)
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    assert scopa(["play", "--opponent", "greedy", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "unknown card code '7z'" in out  # a malformed move is refused, the game goes on
    assert "match over: team" in out and "hand over" in out


def test_play_quits_and_rejects_an_illegal_text_move(monkeypatch, capsys):
    state = new_match("scopa", seed=3)  # the position `scopa play --seed 3` opens with
    legal = set(state.legal_actions())
    # a real move of a card in the hand, but not a legal one here
    illegal = next(action_text(a) for a in range(N_ACTIONS)
                   if a not in legal and state.hands[0] >> int(ACTION_CARD[a]) & 1)
    answers = iter([illegal, "q"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    assert scopa(["play", "--seed", "3"]) == 0
    assert f"{illegal} is not legal here" in capsys.readouterr().out


def test_agent_without_act_or_scores_says_so():
    class Nothing(BaseAgent):
        name = "nothing"

    state = new_match("scopa", seed=0)
    while len(state.legal_actions()) == 1:
        apply(state, state.legal_actions()[0])
    with pytest.raises(NotImplementedError, match="Nothing defines neither act nor scores"):
        Nothing().act(info_set(state, state.to_move))
