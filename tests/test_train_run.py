"""Training runs end to end (small, fixed seeds): smoke run, rollout returns, resume
equivalence, SIGTERM, learning against ``random``, checkpoints as agents."""

from __future__ import annotations

import copy
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

import agents
from agents.evaluation.evaluate import evaluate
from scopa_env.rules import make_rules
from scopa_env.vector import VectorScopaEnv
from scopa_policy.agent import PolicyAgent, load_policy_agent
from scopa_policy.network import NetConfig, PolicyNet
from scopa_train import recipe
from scopa_train.config import load_config
from scopa_train.device import set_up_torch
from scopa_train.framework import make_run_dir
from scopa_train.rollout import RolloutCollector
from scopa_train.stages.ppo import PPOStage

ROOT = Path(__file__).resolve().parent.parent
SMOKE = ROOT / "configs" / "smoke.yaml"


def _quiet(_: str) -> None:
    pass


def test_smoke_config_writes_events_checkpoints_and_evaluations(tmp_path: Path) -> None:
    cfg = load_config(SMOKE, [f"run.runs_dir={tmp_path}"])
    out = recipe.start(cfg, progress=False, log=_quiet)
    run = Path(out["run_dir"])
    assert out["finished"] and run.parent == tmp_path and run.name.startswith("smoke-")
    assert (run / "config.yaml").is_file()
    assert list((run / "tensorboard").glob("events.out.tfevents.*"))
    for name in ("final.pt", "latest.pt", "best.pt"):
        assert (run / "checkpoints" / name).is_file()
    assert (run / "policy.pt").is_file() and (run / "evaluations.jsonl").is_file()
    assert not list(run.rglob("*.tmp"))
    raw = torch.load(run / "checkpoints" / "final.pt", weights_only=True)
    assert raw["kind"] == "training" and raw["counters"]["update"] == 2
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    ea = EventAccumulator(str(run / "tensorboard"))
    ea.Reload()
    tags = set(ea.Tags()["scalars"])
    for tag in ("losses/policy", "losses/value", "losses/entropy", "losses/approx_kl",
                "losses/clip_fraction", "losses/explained_variance",
                "charts/env_steps_per_second", "charts/learner_samples_per_second",
                "eval/margin_vs_random", "eval/margin_vs_random_ci_low", "eval/rating_elo"):
        assert tag in tags, tag
    # any checkpoint is an agent: a run directory, a training file, the policy file
    for path in (run, run / "checkpoints" / "best.pt", run / "policy.pt"):
        agent = agents.make_agent(f"ckpt:{path}", seed=0)
        res = evaluate(agent, "random", hands=4, seed=3)
        assert res.hands == 4


def test_rollout_returns_are_each_seats_hand_margin() -> None:
    """gamma = lambda = 1: every decision's return is its side's final hand margin, for
    self-play games (both seats learn) and games against a baseline alike."""
    torch.manual_seed(0)
    net = PolicyNet(NetConfig(16, 1, 8))
    for players in (2, 4):
        env = VectorScopaEnv(8, reward="points", episode="hand", seed=0, records=False,
                             players=players)
        col = RolloutCollector(env, 0.5, agents.make_agent)
        kinds = ["self"] * 4 + ["greedy"] * 4
        batch, stats = col.collect(net, None, kinds, np.array([0, 1] * 4), 36,
                                   reset_seed=5, agent_seed=5, gamma=1.0, lam=1.0)
        assert len(batch) == 4 * 36 + 4 * 18  # every move of self-play games, half of others
        margins = {round(0.5 * (a - b), 4) for kind in stats.hand_points
                   for a, b in stats.hand_points[kind]}
        margins |= {-m for m in margins}
        assert set(np.round(batch.returns.numpy(), 4)) <= margins
        assert ((batch.actions >= 0) & (batch.actions < batch.move_count)).all()
        assert int(batch.move_count.sum()) == len(batch.feats)


def _tiny(tmp_path: Path, name: str) -> object:
    return load_config(SMOKE, [f"run.runs_dir={tmp_path / name}", "evaluation.every_steps=0",
                               "checkpoints.every_steps=0", "ppo.total_env_steps=2304",
                               "opponents={self: 0.5, past: 0.25, random: 0.25}"])


def test_stopped_and_resumed_run_equals_a_straight_run(tmp_path: Path) -> None:
    straight = recipe.start(_tiny(tmp_path, "a"), progress=False, log=_quiet)
    part = recipe.start(_tiny(tmp_path, "b"), progress=False, stop_after_updates=2,
                         log=_quiet)
    assert not part["finished"] and part["counters"]["update"] == 2
    resumed = recipe.resume(part["run_dir"], progress=False, log=_quiet)
    assert resumed["finished"] and resumed["counters"]["update"] == 4
    a = torch.load(straight["checkpoint"], weights_only=True)
    b = torch.load(resumed["checkpoint"], weights_only=True)
    assert a["counters"]["env_steps"] == b["counters"]["env_steps"]
    for k, v in a["model"].items():
        assert torch.equal(v, b["model"][k]), k
    sa, sb = a["optimizer"]["state"], b["optimizer"]["state"]
    for k in sa:
        assert torch.equal(sa[k]["exp_avg"], sb[k]["exp_avg"])
    assert torch.equal(a["rng"]["torch"], b["rng"]["torch"])


def test_sigterm_saves_a_checkpoint_and_exits_cleanly(tmp_path: Path) -> None:
    cmd = [sys.executable, str(ROOT / "train.py"), "--config", str(SMOKE), "--no-progress",
           "--set", f"run.runs_dir={tmp_path}", "--set", "ppo.total_env_steps=100000000",
           "--set", "evaluation.every_steps=0", "--set", "checkpoints.every_steps=0"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    deadline = time.time() + 90
    while time.time() < deadline and not list(tmp_path.glob("*/tensorboard/events*")):
        time.sleep(0.2)
    time.sleep(1.0)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM, out  # saved, but not finished
    assert "stopped by SIGTERM" in out
    # the hint to go on names the interpreter that ran it, as typed from the repository
    python = Path(sys.executable)
    typed = python.relative_to(ROOT) if python.is_relative_to(ROOT) else python
    assert f"(or: {typed} train.py --resume {tmp_path}" in out, out
    ck = torch.load(next(tmp_path.glob("*/checkpoints/latest.pt")), weights_only=True)
    assert 0 < ck["counters"]["update"] < 1000


@pytest.mark.learning
def test_short_run_improves_against_random(tmp_path: Path) -> None:
    cfg = load_config(SMOKE, [
        f"run.runs_dir={tmp_path}", "run.seed=3", "evaluation.every_steps=0",
        "checkpoints.every_steps=0", "rollouts.num_envs=32", "rollouts.rollout_steps=36",
        "ppo.total_env_steps=13824",  # 12 updates
        "opponents={self: 0.5, random: 0.5}", "ppo.learning_rate=0.002",
        "ppo.lr_final_fraction=1.0", "network.hidden_size=64", "network.action_hidden=32",
        "ppo.update_epochs=3", "ppo.num_minibatches=4"])
    t = PPOStage(cfg, make_run_dir(cfg), progress=False, log=_quiet)
    initial = copy.deepcopy(t.net)
    t.train()
    before = evaluate(PolicyAgent(initial), "random", hands=150, seed=11)
    after = evaluate(PolicyAgent(t.net), "random", hands=150, seed=11)
    gain = after.points_per_hand.margin - before.points_per_hand.margin
    assert gain > 0.4, (before.points_per_hand, after.points_per_hand)
    assert after.points_per_hand.ci95[0] > 0


@pytest.mark.skipif(not (ROOT / "scopa_policy" / "pretrained" / "default.pt").is_file(),
                    reason="no shipped weights in this checkout")
def test_pretrained_agent_loads() -> None:
    agent = agents.make_agent("pretrained", seed=0)
    assert agent.spec == "pretrained"
    res = evaluate(agent, "random", hands=8, seed=1)
    assert res.points_per_hand.margin > 0
    assert load_policy_agent(None).policy(make_rules()).net.cfg.hidden_size > 0


def test_numpy_scorer_matches_the_network() -> None:
    from scopa_env.game import apply, new_match
    from scopa_env.observation import encode_info, info_set

    torch.manual_seed(1)
    net = PolicyNet(NetConfig(32, 2, 16))
    scorer = net.numpy_scorer()
    s = new_match("asso_piglia_tutto", seed=4)
    for _ in range(30):
        info = info_set(s, s.to_move)
        ids = torch.tensor([info.legal_actions])
        obs = torch.from_numpy(encode_info(info))[None]
        logits, _ = net(obs, ids, torch.ones_like(ids, dtype=torch.bool))
        np_logits = scorer.logits(encode_info(info), ids[0].numpy())
        assert np.allclose(logits[0].detach().numpy(), np_logits, atol=1e-4)
        apply(s, info.legal_actions[-1])


@pytest.mark.parametrize("overrides", [
    ["rules.players=4"],
    ["rules.name=scopone_scientifico", "rules.players=4", "rollouts.rollout_steps=40"],
    # open decisions bootstrapped
    ["rollouts.episode=match", "rollouts.reward=match", "rollouts.rollout_steps=30"],
    ["rules.name=asso_piglia_tutto", "opponents={self: 0.5, greedy: 0.5}"],
])
def test_variants_train(tmp_path: Path, overrides: list[str]) -> None:
    cfg = load_config(SMOKE, [f"run.runs_dir={tmp_path}", "evaluation.every_steps=0",
                              "checkpoints.every_steps=0", "rollouts.num_envs=8",
                              "ppo.total_env_steps=1", *overrides])
    out = recipe.start(cfg, progress=False, log=_quiet)
    assert out["finished"] and out["counters"]["learner_samples"] > 0


def test_two_runs_with_two_torch_threads_give_the_same_weights(tmp_path: Path) -> None:
    """With several torch threads a seed still fixes a run's weights (the trainer turns
    on torch's deterministic algorithms on the CPU). Each run is its own process."""
    weights = []
    for name in ("a", "b"):
        cmd = [sys.executable, str(ROOT / "train.py"), "--config", str(SMOKE), "--no-progress",
               "--set", f"run.runs_dir={tmp_path / name}", "--set", "run.torch_threads=2",
               "--set", "run.device=cpu", "--set", "rollouts.num_envs=256",
               "--set", "ppo.total_env_steps=27648",
               "--set", "ppo.num_minibatches=2", "--set", "evaluation.every_steps=0",
               "--set", "checkpoints.every_steps=0", "--set", "network.hidden_size=256",
               "--set", "network.hidden_layers=2", "--set", "network.action_hidden=128"]
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        weights.append(torch.load(next((tmp_path / name).glob("*/policy.pt")),
                                  weights_only=True)["model"])
    a, b = weights
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), k


def test_training_on_the_cpu_turns_on_deterministic_algorithms() -> None:
    before = (torch.are_deterministic_algorithms_enabled(),
              torch.is_deterministic_algorithms_warn_only_enabled(), torch.get_num_threads())
    try:
        torch.use_deterministic_algorithms(False)
        set_up_torch(load_config(SMOKE, ["run.torch_threads=1"]), torch.device("cpu"))
        assert torch.are_deterministic_algorithms_enabled()
        assert torch.get_num_threads() == 1
    finally:
        torch.use_deterministic_algorithms(before[0], warn_only=before[1])
        torch.set_num_threads(before[2])
