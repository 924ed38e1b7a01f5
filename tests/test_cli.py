"""`scopa play` (a human against an agent in the terminal) and agent-interface errors."""

import pytest

from agents.base import BaseAgent
from scopa_cli import main as scopa
from scopa_env.game import apply, new_match
from scopa_env.moves import ACTION_CARD, N_ACTIONS, action_text
from scopa_env.observation import info_set


def test_play_a_whole_match_from_the_terminal(monkeypatch, capsys):
    answers = iter(["7z", "99", "1d x 2c"] + ["0"] * 500)
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    assert scopa(["play", "--opponent", "greedy", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "unknown card code '7z'" in out  # a malformed move is refused, the game goes on
    assert "there is no move [99]: the moves are numbered 0 to " in out  # so is a bad number
    assert "list index" not in out
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


def test_help_is_plain_text(capsys):
    """``scopa --help``: the description without the docstring's reST markup."""
    with pytest.raises(SystemExit) as done:
        scopa(["--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "The scopa command: record, replay" in out and "``" not in out


def test_agent_without_act_or_scores_says_so():
    class Nothing(BaseAgent):
        name = "nothing"

    state = new_match("scopa", seed=0)
    while len(state.legal_actions()) == 1:
        apply(state, state.legal_actions()[0])
    with pytest.raises(NotImplementedError, match="Nothing defines neither act nor scores"):
        Nothing().act(info_set(state, state.to_move))


def test_output_piped_into_head_stops_quietly() -> None:
    """``scopa train --help-config | head -0``: no traceback when the reader is gone."""
    import subprocess
    import sys
    from pathlib import Path

    code = "import sys; from scopa_cli import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.Popen([sys.executable, "-c", code, "train", "--help-config"],
                            cwd=Path(__file__).resolve().parent.parent,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
    assert proc.stdout is not None
    proc.stdout.close()  # long before the command writes (it imports torch first)
    _, err = proc.communicate(timeout=60)
    assert b"Traceback" not in err and proc.returncode == 0
