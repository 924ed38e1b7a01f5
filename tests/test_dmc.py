"""Stage kind ``dmc`` (Deep Monte-Carlo): it trains through the framework (TensorBoard,
checkpoints, evaluation), resumes bit for bit, its actors play epsilon-greedy on Q, its
checkpoint is a ``ckpt:`` agent that plays the argmax of Q, its config is checked, and a
short run learns."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

import agents
from agents.evaluation.evaluate import evaluate
from scopa_env.vector import VectorScopaEnv
from scopa_policy.agent import PolicyAgent, decision_inputs
from scopa_policy.features import Candidates
from scopa_policy.network import NetConfig, PolicyNet
from scopa_train import recipe
from scopa_train.config import ConfigError, StageConfig, load_config
from scopa_train.framework import make_run_dir
from scopa_train.rollout import RolloutCollector
from scopa_train.stages.dmc import DMCStage, EpsilonGreedy, q_update

ROOT = Path(__file__).resolve().parent.parent
SMOKE = ROOT / "configs" / "smoke.yaml"
DMC = ["kind=dmc", "dmc.total_env_steps=1152", "dmc.past_snapshot_every=1",
       "dmc.past_pool_size=2", "dmc.num_minibatches=2"]


def _quiet(_: str) -> None:
    pass


def _tiny(tmp: Path, sub: str, *more: str) -> StageConfig:
    return load_config(SMOKE, [f"run.runs_dir={tmp / sub}", *DMC, *more])


def test_dmc_trains_through_the_framework_and_is_a_ckpt_agent(tmp_path: Path) -> None:
    out = recipe.start(_tiny(tmp_path, "a"), progress=False, log=_quiet)
    run = Path(out["run_dir"])
    assert out["finished"] and out["counters"]["update"] == 2
    for name in ("final.pt", "latest.pt", "best.pt"):
        assert (run / "checkpoints" / name).is_file()
    assert (run / "policy.pt").is_file() and (run / "evaluations.jsonl").is_file()
    assert not list(run.rglob("*.tmp"))
    raw = torch.load(run / "checkpoints" / "final.pt", weights_only=True)
    assert raw["kind"] == "training" and raw["config"]["kind"] == "dmc"
    assert len(raw["past_pool"]) == 2
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    ea = EventAccumulator(str(run / "tensorboard"))
    ea.Reload()
    tags = set(ea.Tags()["scalars"])
    for tag in ("losses/q_mse", "losses/q_explained_variance", "values/q_chosen_mean",
                "values/return_mean", "charts/epsilon", "charts/env_steps_per_second",
                "charts/env_steps", "rollout/margin_per_hand_vs_random",
                "eval/margin_vs_random", "eval/rating_elo"):
        assert tag in tags, tag
    assert not any(t.startswith("losses/policy") for t in tags)
    for path in (run, run / "policy.pt"):
        res = evaluate(agents.make_agent(f"ckpt:{path}", seed=0), "random", hands=4, seed=3)
        assert res.hands == 4


def test_stopped_and_resumed_dmc_equals_a_straight_run(tmp_path: Path) -> None:
    more = ("dmc.total_env_steps=2304", "evaluation.every_steps=0",
            "checkpoints.every_steps=0")
    straight = recipe.start(_tiny(tmp_path, "a", *more), progress=False, log=_quiet)
    part = recipe.start(_tiny(tmp_path, "b", *more), progress=False, stop_after_updates=2,
                        log=_quiet)
    assert not part["finished"] and part["counters"]["update"] == 2
    resumed = recipe.resume(part["run_dir"], progress=False, log=_quiet)
    assert resumed["finished"] and resumed["counters"]["update"] == 4
    a = torch.load(straight["checkpoint"], weights_only=True)
    b = torch.load(resumed["checkpoint"], weights_only=True)
    assert a["counters"]["env_steps"] == b["counters"]["env_steps"] == 2304
    for k, v in a["model"].items():
        assert torch.equal(v, b["model"][k]), k
    sa, sb = a["optimizer"]["state"], b["optimizer"]["state"]
    for k in sa:
        assert torch.equal(sa[k]["exp_avg"], sb[k]["exp_avg"])


def _decisions(n: int = 6) -> tuple[VectorScopaEnv, torch.Tensor, Candidates]:
    env = VectorScopaEnv(n, reward="points", episode="hand", seed=4, records=False)
    env.reset(seed=4)
    obs = np.asarray(env.observe(), np.float32)
    cand = Candidates.from_padded(obs, np.asarray(env.legal_ids), np.asarray(env.legal_valid))
    return env, torch.from_numpy(obs), cand


def test_epsilon_greedy_probabilities() -> None:
    """epsilon / legal moves on each move, plus 1 - epsilon on the best by Q."""
    torch.manual_seed(0)
    net = PolicyNet(NetConfig(16, 1, 8))
    _, obs, cand = _decisions()
    q, _ = net.forward_moves(obs, cand)
    count = torch.bincount(cand.row, minlength=len(obs)).double()
    for eps in (0.0, 0.2, 1.0):
        logp, _ = EpsilonGreedy(net, eps).forward_moves(obs, cand)
        p = logp.double().exp()
        legal = q > -1e8
        assert torch.allclose(p.sum(-1), torch.ones(len(obs), dtype=torch.float64))
        want = legal * (eps / count)[:, None]
        want[torch.arange(len(obs)), q.argmax(-1)] += 1 - eps
        assert torch.allclose(p, want, atol=1e-6)


def test_the_ckpt_agent_plays_the_argmax_of_q(tmp_path: Path) -> None:
    out = recipe.start(_tiny(tmp_path, "a", "evaluation.every_steps=0"), progress=False,
                       log=_quiet)
    agent = agents.make_agent(f"ckpt:{out['policy']},suits=none", seed=0)
    net = agent.net
    env, _, _ = _decisions(8)
    infos = [env.info_set(i) for i in range(8)]
    obs, ids, row = decision_inputs(infos)
    with torch.no_grad():
        q, _ = net.forward_moves(torch.from_numpy(obs).float(),
                                 Candidates.from_padded(obs, np.asarray(env.legal_ids),
                                                        np.asarray(env.legal_valid)))
    for i, info in enumerate(infos):
        assert agent.act(info) == info.legal_actions[int(q[i].argmax())]


def test_dmc_rollout_targets_are_monte_carlo_returns() -> None:
    """The actors' decisions carry their side's whole-hand margin, scaled."""
    torch.manual_seed(0)
    env = VectorScopaEnv(4, reward="points", episode="hand", seed=0, records=False)
    col = RolloutCollector(env, 0.25, agents.make_agent)
    batch, stats = col.collect(EpsilonGreedy(PolicyNet(NetConfig(16, 1, 8)), 0.3), None,
                               ["self"] * 4, np.zeros(4, np.int64), 36, reset_seed=1,
                               agent_seed=1, gamma=1.0, lam=1.0)
    margins = {round(0.25 * (a - b), 4) for a, b in stats.hand_points["self"]}
    margins |= {-m for m in margins}
    assert len(batch) == 4 * 36
    assert {round(float(r), 4) for r in batch.returns} <= margins


def test_q_update_fits_the_returns() -> None:
    torch.manual_seed(0)
    net = PolicyNet(NetConfig(32, 1, 16))
    env = VectorScopaEnv(8, reward="points", episode="hand", seed=0, records=False)
    batch, _ = RolloutCollector(env, 0.25, agents.make_agent).collect(
        EpsilonGreedy(net, 0.5), None, ["self"] * 8, np.zeros(8, np.int64), 36,
        reset_seed=2, agent_seed=2, gamma=1.0, lam=1.0)
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    rng = np.random.default_rng(0)
    first = q_update(net, opt, batch, rng, epochs=1, num_minibatches=4, max_grad_norm=1.0)
    for _ in range(30):
        last = q_update(net, opt, batch, rng, epochs=1, num_minibatches=4, max_grad_norm=1.0)
    assert last.q_loss < 0.5 * first.q_loss
    assert last.explained_variance > 0.3


@pytest.mark.parametrize("bad, message", [
    (["rollouts.episode=match"], "stage kind 'dmc' needs rollouts.episode: hand"),
    (["dmc.epsilon=0.01", "dmc.epsilon_final=0.1"], "'dmc.epsilon_final' (0.1) must not"),
    (["dmc.epsilon=1.5"], "'dmc.epsilon' = 1.5 is out of range"),
    (["dmc.learnin_rate=1"], "unknown config key 'dmc.learnin_rate'"),
    (["rollouts.backend=ray"], "'dmc' runs with rollouts.backend: local"),
])
def test_bad_dmc_configs_are_one_line(bad: list[str], message: str) -> None:
    with pytest.raises(ConfigError) as e:
        load_config(SMOKE, [*DMC, *bad])
    assert message in str(e.value) and "\n" not in str(e.value)


def test_dmc_starts_fresh_or_from_a_policy(tmp_path: Path) -> None:
    """No init_from: a fresh network (as PPO); a PPO policy file: its weights."""
    cfg = _tiny(tmp_path, "a")
    assert cfg.kind == "dmc" and cfg.init_from == ""
    ppo = recipe.start(load_config(SMOKE, [f"run.runs_dir={tmp_path / 'p'}",
                                           "evaluation.every_steps=0"]),
                       progress=False, log=_quiet)
    from scopa_train.stages import dmc

    stage = dmc.build(_tiny(tmp_path, "b", f"init_from={ppo['policy']}"),
                      tmp_path / "b" / "run", progress=False, log=_quiet)
    want = torch.load(ppo["policy"], weights_only=True)["model"]
    for k, v in stage.net.state_dict().items():
        assert torch.equal(v, want[k]), k


@pytest.mark.learning
def test_short_dmc_run_improves_against_random(tmp_path: Path) -> None:
    cfg = _tiny(tmp_path, "a", "run.seed=3", "evaluation.every_steps=0",
                "checkpoints.every_steps=0", "rollouts.num_envs=32",
                "dmc.total_env_steps=13824",  # 12 updates
                "opponents={self: 0.5, random: 0.5}", "dmc.learning_rate=0.002",
                "network.hidden_size=64", "network.action_hidden=32",
                "dmc.update_epochs=2", "dmc.num_minibatches=4")
    t = DMCStage(cfg, make_run_dir(cfg), progress=False, log=_quiet)
    initial = copy.deepcopy(t.net)
    t.train()
    before = evaluate(PolicyAgent(initial), "random", hands=150, seed=11)
    after = evaluate(PolicyAgent(t.net), "random", hands=150, seed=11)
    gain = after.points_per_hand.margin - before.points_per_hand.margin
    assert gain > 0.4, (before.points_per_hand, after.points_per_hand)
    assert after.points_per_hand.ci95[0] > 0


def test_a_run_finished_before_the_dmc_section_existed_is_still_done(tmp_path: Path) -> None:
    """Its saved config.yaml has no ``dmc`` section: the same command finds it done (it is
    neither trained nor evaluated again)."""
    cfg = load_config(SMOKE, [f"run.runs_dir={tmp_path}"])
    out = recipe.start(cfg, progress=False, log=_quiet)
    run = Path(out["run_dir"])
    saved = yaml.safe_load((run / "config.yaml").read_text())
    del saved["dmc"]
    (run / "config.yaml").write_text(yaml.safe_dump(saved, sort_keys=False))
    final = run / "checkpoints" / "final.pt"
    stamp = final.stat().st_mtime_ns
    lines: list[str] = []
    again = recipe.resume(run, progress=False, log=lines.append)
    assert again["finished"] and any(": done (" in line for line in lines), lines
    assert final.stat().st_mtime_ns == stamp
