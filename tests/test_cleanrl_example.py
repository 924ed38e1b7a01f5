"""examples/cleanrl_ppo.py, the single-file masked PPO on ``gymnasium.make_vec``: it trains
at a tiny budget against its pool (self-play, an older copy, greedy, expert), saves its
network atomically with its settings, and plays as a kit agent (``py:`` spec) whose
slots map back to legal catalogue ids."""

from __future__ import annotations

from pathlib import Path

import torch

from agents import make_agent
from agents.evaluation.evaluate import evaluate
from tests.helpers import import_example, random_play_infos

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "cleanrl_ppo.py"

TINY = ["--minutes", "0", "--total-decisions", "1024", "--num-envs", "32", "--num-steps",
        "8", "--hidden", "16", "--move-hidden", "8", "--num-minibatches", "2",
        "--update-epochs", "1", "--snapshots", "2"]


def test_the_cleanrl_script_trains_saves_and_plays(tmp_path: Path) -> None:
    example = import_example("cleanrl_ppo")
    out = tmp_path / "ppo.pt"
    agent = example.main([*TINY, "--out", str(out)])
    assert agent.updates == 4 and agent.env_steps >= 2 * 1024 - 32
    assert [Path(s["path"]).name for s in agent.snapshots] == ["ppo-00.pt"]  # and the final
    saved = torch.load(out, map_location="cpu", weights_only=True)
    assert saved["args"]["max_moves"] == 16 and saved["args"]["num_envs"] == 32
    assert not list(tmp_path.glob("*.tmp"))
    player = make_agent(f"py:{EXAMPLE}:agent,path={out}")
    infos = random_play_infos(4)
    chosen = player.act_batch(infos)
    assert all(c in i.legal_actions for c, i in zip(chosen, infos, strict=True))
    assert chosen[:50] == [player.act(i) for i in infos[:50]]
    res = evaluate(f"py:{EXAMPLE}:agent,path={out}", "greedy", hands=4,
                   seed=1, matches=0)
    assert res.hands == 4
