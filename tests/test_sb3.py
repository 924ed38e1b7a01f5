"""The Stable-Baselines3 bridge: MaskablePPO learns on the batched env's VecEnv
(examples/sb3_maskable_ppo.py, both move interfaces) and plays as the agent spec
``sb3:PATH``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import agents
from agents.bridges.sb3_agent import SB3Agent, model_moves
from agents.evaluation.evaluate import evaluate
from scopa_env.observation import encode_info
from tests.helpers import random_play_infos

ROOT = Path(__file__).resolve().parent.parent
HAVE_SB3 = importlib.util.find_spec("sb3_contrib") is not None
needs_sb3 = pytest.mark.skipif(
    not HAVE_SB3, reason="sb3-contrib is not installed (pip install -e .[sb3]): the SB3 "
    "bridge is not tested")
STEPS = 6 * 256 * 32  # learner decisions: six updates on 256 games, about 10 s


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
    """A MaskablePPO model (moves="legal") trained briefly against random, by the
    example's main()."""
    out = tmp_path_factory.mktemp("sb3") / "model"
    assert example.main(["--minutes", "10", "--steps", str(STEPS), "--opponent", "random",
                         "--out", str(out), "--eval-hands", "0"]) == 0
    path = out.with_name("model.zip")
    assert path.is_file()
    return path


@pytest.fixture(scope="module")
def trained_catalogue(example, tmp_path_factory) -> Path:
    """A catalogue model (one output per id): one short update on 8 games."""
    out = tmp_path_factory.mktemp("sb3") / "catalogue"
    path = example.train(out, steps=8 * 32, opponent="greedy", n_envs=8, moves="catalogue",
                         batch_size=64)
    assert path.is_file()
    return path


@needs_sb3
@pytest.mark.learning
def test_maskable_ppo_beats_random_after_brief_training(trained: Path) -> None:
    # training is seeded and stopped by steps
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
@pytest.mark.parametrize("which", ["trained", "trained_catalogue"])
def test_the_sb3_agent_plays_the_models_masked_argmax(which: str, request) -> None:
    """SB3Agent plays what model.predict plays on the env's observation and mask, for a
    legal-move model (slots mapped back to ids) and a catalogue one (only the legal ids'
    logits computed)."""
    agent = agents.make_agent(f"sb3:{request.getfixturevalue(which)}")
    infos = random_play_infos(6)
    width = max(len(i.legal_actions) for i in infos)
    ids = np.zeros((len(infos), width), np.int64)
    valid = np.zeros((len(infos), width), bool)
    for row, info in enumerate(infos):
        ids[row, :len(info.legal_actions)] = info.legal_actions
        valid[row, :len(info.legal_actions)] = True
    moves = model_moves(agent.model)
    assert moves.legal == (which == "trained")
    obs, masks = moves.encode(np.stack([encode_info(i) for i in infos]), ids, valid)
    expected, _ = agent.model.predict(obs, action_masks=masks.astype(bool),
                                      deterministic=True)
    if moves.legal:
        expected = ids[np.arange(len(infos)), expected]
    assert len(infos) > 500
    assert agent.act_batch(infos) == [int(a) for a in expected]
    assert agent.act(infos[7]) == int(expected[7])


@needs_sb3
def test_the_sb3_vec_env_gives_masks_and_terminal_observations() -> None:
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    from agents.bridges.sb3_vec import ScopaSB3VecEnv

    env = ScopaSB3VecEnv(4, opponent="greedy", reward="points", episode="hand",
                         moves="legal", max_moves=8)
    assert is_masking_supported(env)
    env.seed(3)
    obs = env.reset()
    assert obs.shape == (4, env.observation_space.shape[0])
    ended = 0
    for _ in range(40):
        masks = get_action_masks(env)
        assert masks.shape == (4, 8) and masks.any(1).all()
        obs, rewards, dones, infos = env.step(masks.argmax(1))
        for g in np.flatnonzero(dones):
            assert infos[g]["terminal_observation"].shape == obs[g].shape
            ended += 1
    assert ended >= 4  # a hand is 18 learner moves: every game ended at least twice


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


def test_the_sb3_vec_env_without_sb3_names_the_install(monkeypatch) -> None:
    # As if not installed: the package and every submodule an earlier test imported (a
    # dotted import already in sys.modules would be found without its parent).
    for name in [m for m in sys.modules if m.split(".")[0] == "stable_baselines3"]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "stable_baselines3", None)
    monkeypatch.delitem(sys.modules, "agents.bridges.sb3_vec", raising=False)
    with pytest.raises(ImportError, match=r"needs Stable-Baselines3, which is not installed: "
                       r"pip install -e \.\[sb3\]"):
        import agents.bridges.sb3_vec  # noqa: F401
