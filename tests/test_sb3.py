"""The Stable-Baselines3 bridge: MaskablePPO learns on scopa/Scopa-v0
(examples/sb3_maskable_ppo.py) and plays as the agent spec ``sb3:PATH``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import agents
from agents.bridges.sb3_agent import SB3Agent
from agents.evaluation.evaluate import evaluate
from scopa_env.game import apply, new_match
from scopa_env.moves import N_ACTIONS
from scopa_env.observation import encode_info, info_set

ROOT = Path(__file__).resolve().parent.parent
HAVE_SB3 = importlib.util.find_spec("sb3_contrib") is not None
needs_sb3 = pytest.mark.skipif(
    not HAVE_SB3, reason="sb3-contrib is not installed (pip install -e .[sb3]): the SB3 "
    "bridge is not tested")
STEPS = 6144  # learner decisions: about 50 s on a 2-core machine


@pytest.fixture(scope="module")
def example():
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import sb3_maskable_ppo
    finally:
        sys.path.remove(str(ROOT / "examples"))
    return sb3_maskable_ppo


@pytest.fixture(scope="module")
def trained(example, tmp_path_factory) -> Path:
    """A MaskablePPO model trained briefly against random, by the example's main()."""
    out = tmp_path_factory.mktemp("sb3") / "model"
    assert example.main(["--minutes", "10", "--steps", str(STEPS), "--opponent", "random",
                         "--out", str(out), "--eval-hands", "0"]) == 0
    path = out.with_name("model.zip")
    assert path.is_file()
    return path


@needs_sb3
@pytest.mark.learning
def test_maskable_ppo_beats_random_after_brief_training(trained: Path) -> None:
    # training is seeded and stopped by steps: +0.48 [+0.30, +0.66] here
    res = evaluate(f"sb3:{trained}", "random", hands=400, seed=3, matches=0)
    margin = res.points_per_hand
    assert margin.margin > 0.2 and margin.ci95[0] > 0, margin


@needs_sb3
def test_scopa_eval_and_the_gym_env_take_the_sb3_agent(trained: Path, capsys) -> None:
    from scopa_cli import main

    assert main(["eval", f"sb3:{trained}", "greedy", "--hands", "10", "--matches", "0"]) == 0
    out = capsys.readouterr().out
    assert f"sb3:{trained}" in out and "greedy" in out
    bare = str(trained)[: -len(".zip")]  # SB3's own convention: the path without .zip
    env = gymnasium.make(agents.GYM_ENV_ID, opponent=f"sb3:{bare}", reward="points",
                         episode="hand")
    assert isinstance(env.opponents[1], SB3Agent)
    obs, info = env.reset(seed=0)
    terminated, steps = False, 0
    while not terminated:
        obs, reward, terminated, _, info = env.step(int(info["action_mask"].argmax()))
        steps += 1
    assert steps == 18 and "hand_points" in info and "illegal_action" not in info


@needs_sb3
def test_the_sb3_agent_plays_the_models_masked_argmax(trained: Path) -> None:
    """SB3Agent computes only the legal ids' logits: the same moves as model.predict."""
    agent = agents.make_agent(f"sb3:{trained}")
    rng = np.random.default_rng(0)
    infos = []
    for seed in range(6):
        s = new_match("scopa", seed=seed)
        while not s.done:
            infos.append(info_set(s, s.to_move))
            apply(s, int(rng.choice(s.legal_actions())))
    obs = np.stack([encode_info(i) for i in infos])
    masks = np.zeros((len(infos), N_ACTIONS), dtype=bool)
    for row, info in enumerate(infos):
        masks[row, list(info.legal_actions)] = True
    expected, _ = agent.model.predict(obs, action_masks=masks, deterministic=True)
    assert len(infos) > 500
    assert agent.act_batch(infos) == [int(a) for a in expected]
    assert agent.act(infos[7]) == int(expected[7])


@needs_sb3
def test_sb3_spec_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="needs a path: sb3:PATH"):
        agents.check_spec("sb3:")
    with pytest.raises(ValueError, match="no such model file"):
        agents.check_spec(f"sb3:{tmp_path / 'missing'}")
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"not a zip")
    assert agents.check_spec(f"sb3:{junk}") == f"sb3:{junk}"
    with pytest.raises(ValueError, match="is not a MaskablePPO model"):
        agents.make_agent(f"sb3:{junk}")


def test_sb3_spec_without_sb3_contrib_names_the_install(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "sb3_contrib", None)  # as if it were not installed
    model = tmp_path / "m.zip"
    model.write_bytes(b"")
    for call in (agents.check_spec, agents.make_agent):
        with pytest.raises(ValueError, match=r"needs sb3-contrib.*pip install -e \.\[sb3\]"):
            call(f"sb3:{model}")
    assert any("sb3:PATH" in line for line in agents.known_specs())
