"""benchmarks/train_throughput.py: its figures, and the matrix-product FLOPs it counts."""

from __future__ import annotations

import json

import pytest

from scopa_env.observation import OBS_DIM
from scopa_policy.features import ACTION_DIM
from tests.helpers import import_benchmark


def test_the_figures_and_the_flops_of_the_networks_products(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A short run of the smoke config gives every figure; the learner's FLOPs a decision
    are those of the network's products: forward, the weights' gradients, and the inputs'
    gradients except those of the observation and of the move features."""
    bench = import_benchmark("train_throughput")
    smoke = str(bench.ROOT / "configs" / "smoke.yaml")
    assert bench.main(["--config", smoke, "--updates", "1", "--repeats", "1",
                       "--raw-steps", "5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("raw_env_steps_per_s", "learner_samples_per_s", "overall_env_steps_per_s",
                "matmul_gflops", "train_flops_per_env_step", "learner_gflops",
                "overall_matmul_gflops"):
        assert out[key] > 0, key
    assert out["overall_vs_raw"] == pytest.approx(
        out["overall_env_steps_per_s"] / out["raw_env_steps_per_s"])
    assert out["matmul_ceiling_vs_raw"] == pytest.approx(
        out["matmul_gflops"] * 1e9 / out["train_flops_per_env_step"]
        / out["raw_env_steps_per_s"])

    from scopa_train.config import load_config
    net = load_config(smoke).network
    h, a, m = net.hidden_size, net.action_hidden, out["moves_per_decision"]
    widths = [OBS_DIM] + [h] * net.hidden_layers
    encoder = sum(2 * i * o for i, o in zip(widths[:-1], widths[1:], strict=True))
    per_move = 2 * (ACTION_DIM * a + a * a + a)
    forward = encoder + 2 * h + 2 * h * a + m * per_move
    expected = 3 * forward - 2 * OBS_DIM * h - m * 2 * ACTION_DIM * a
    assert out["learner_flops_per_sample"] == pytest.approx(expected, rel=1e-9)


def test_the_learner_profile_gives_the_products_share(
        capsys: pytest.CaptureFixture[str]) -> None:
    """benchmarks/learner_profile.py (BENCHMARKS.md's learner-profile figure): one
    profiled update of the smoke config; the products' share of its CPU time is the mm and
    addmm rows of the operators it ranks."""
    bench = import_benchmark("learner_profile")
    smoke = str(bench.ROOT / "configs" / "smoke.yaml")
    assert bench.main(["--config", smoke, "--json"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert 0 < out["matmul_share"] < 1 and out["matmul_gflops_while_running"] > 0
    assert out["samples"] >= out["decisions"] > 0
    top = out["top_self_cpu_share"]
    assert sum(top.values()) <= 1 + 1e-9
    shown = sum(v for k, v in top.items() if k in ("aten::mm", "aten::addmm"))
    assert shown <= out["matmul_share"] + 1e-9
