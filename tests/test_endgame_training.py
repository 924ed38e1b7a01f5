"""The exact last-deal teacher in training (``ppo.endgame_coef``) and ``init_from``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import agents
from agents.baselines.endgame import EndgameSolver
from scopa_env.observation import DECK_COUNT
from scopa_env.rules import make_rules
from scopa_env.vector import VectorScopaEnv
from scopa_policy.network import NetConfig, PolicyNet
from scopa_train import recipe
from scopa_train.config import load_config
from scopa_train.framework import starting_weights
from scopa_train.rollout import RolloutCollector
from scopa_train.stages.ppo import ppo_update

SMOKE = Path(__file__).resolve().parent.parent / "configs" / "smoke.yaml"
SCALE = 0.25


def _rollout(seed: int, net: PolicyNet, games: int = 24):
    env = VectorScopaEnv(games, reward="points", episode="hand", seed=0, records=False)
    teacher = EndgameSolver(make_rules("scopa"))
    col = RolloutCollector(env, SCALE, agents.make_agent, teacher=teacher)
    kinds = ["self"] * (games // 2) + ["greedy"] * (games - games // 2)
    return col.collect(net, None, kinds, np.arange(games) % 2, 36, reset_seed=seed,
                       agent_seed=seed, gamma=1.0, lam=0.95)


def test_taught_decisions_get_exact_targets() -> None:
    """Taught = the learner's last-deal decisions with a choice; their value target is
    the exact value, each move's regret is its exact loss against the best move (one
    at least has none); nothing else is taught."""
    torch.manual_seed(0)
    batch, stats = _rollout(3, PolicyNet(NetConfig(16, 1, 8)))
    last_deal = batch.obs[:, DECK_COUNT.start] == 0
    assert torch.equal(batch.taught, last_deal & (batch.move_count > 1))
    assert 0 < int(batch.taught.sum()) < len(batch)
    assert stats.teacher_seconds > 0
    solver = EndgameSolver(make_rules("scopa"))
    from agents.baselines.endgame import position_from_obs

    for t in torch.nonzero(batch.taught).squeeze(1).tolist():
        lo, n = int(batch.move_start[t]), int(batch.move_count[t])
        regret = batch.move_regret[lo:lo + n]
        assert (regret >= 0).all() and (regret == 0).any()
        # the moves' features name their cards: solve them again from the observation
        pos = position_from_obs(batch.obs[t].numpy())
        best = max(solver.move_values(pos))
        assert float(batch.returns[t]) == pytest.approx(best * SCALE)
    untaught = ~batch.taught
    rows = torch.repeat_interleave(untaught, batch.move_count)
    assert (batch.move_regret[rows] == 0).all()


def test_the_teacher_lowers_the_expected_regret() -> None:
    """Updates with only the teacher's term (zero advantages, no value or entropy
    weight) lower the policy's expected regret on the taught decisions."""
    torch.manual_seed(1)
    net = PolicyNet(NetConfig(32, 1, 16))
    batch, _ = _rollout(5, net, games=64)
    batch.advantages.zero_()
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    rng = np.random.default_rng(0)
    first = last = None
    for _ in range(60):
        st = ppo_update(net, opt, batch, rng, epochs=1, num_minibatches=1, clip_coef=0.2,
                        clip_vloss=False, ent_coef=0.0, vf_coef=0.0, max_grad_norm=10.0,
                        norm_adv=False, target_kl=0.0, endgame_coef=1.0)
        first = st.endgame_loss if first is None else first
        last = st.endgame_loss
    assert st.taught_fraction > 0
    assert last < 0.5 * first


def test_a_run_with_the_teacher_logs_it_and_starts_from_init_from(tmp_path: Path) -> None:
    """``init_from``: the new run's first weights are the file's; ``ppo.endgame_coef``:
    the run logs the teacher's scalars."""
    first = recipe.start(load_config(SMOKE, [f"run.runs_dir={tmp_path / 'a'}",
                                             "evaluation.every_steps=0"]),
                         progress=False, log=lambda _: None)
    policy = Path(first["policy"])
    cfg = load_config(SMOKE, [f"run.runs_dir={tmp_path / 'b'}", "evaluation.every_steps=0",
                              f"init_from={policy}", "ppo.endgame_coef=1",
                              "ppo.total_env_steps=576"])
    got = starting_weights(cfg)
    want = torch.load(policy, weights_only=True)["model"]
    assert all(torch.equal(got[k], want[k]) for k in want)
    out = recipe.start(cfg, progress=False, log=lambda _: None)
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    ea = EventAccumulator(str(Path(out["run_dir"]) / "tensorboard"))
    ea.Reload()
    tags = set(ea.Tags()["scalars"])
    assert {"endgame/taught_fraction", "endgame/expected_regret_points",
            "charts/teacher_seconds"} <= tags


def test_learning_curve_plots_every_evaluated_opponent(tmp_path: Path) -> None:
    """``report curve``: every opponent of the run's evaluations but random by default,
    shifted by the minutes of an earlier stage."""
    import json

    from scopa_train.report import main as report

    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text("name: finetune\nkind: ppo\nrun: {name: recipe}\n"
                                     "rules: {players: 2}\n")
    m = {"mean": 0.1, "low": -0.1, "high": 0.3, "hands": 200}
    with open(run / "evaluations.jsonl", "w") as fh:
        for minute in (5, 10):
            fh.write(json.dumps({"wall_seconds": 60 * minute,
                                 "margins": {"random": m, "expert": m, "pimc": m}}) + "\n")
    out = tmp_path / "curve.png"
    assert report(["curve", str(run), str(out), "--after-minutes", "72"]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    import matplotlib.pyplot as plt

    from scopa_train.report import plot_curve

    plot_curve(run, out, after_minutes=72)
    ax = plt.gcf().axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["vs expert (evaluation)",
                                                                  "vs pimc (evaluation)"]
    assert min(ax.lines[0].get_xdata()) == 77
