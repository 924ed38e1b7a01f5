"""The Ray backend (``.[ray]``) on a local 2-CPU cluster: evaluation and ladders equal
the local runs, training rollouts are the workers' local computation, a run is
deterministic (a stopped and resumed run equals a straight one), and dead workers are
replaced (rollouts) or retried (evaluation tasks) without changing any result."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from agents.base import RandomAgent
from agents.evaluation.evaluate import evaluate
from agents.evaluation.ladder import ladder
from scopa_policy.network import NetConfig, PolicyNet
from scopa_train import recipe
from scopa_train.config import ConfigError, load_config

ROOT = Path(__file__).resolve().parent.parent
SMOKE = ROOT / "configs" / "smoke.yaml"
HAVE_RAY = importlib.util.find_spec("ray") is not None
pytestmark = pytest.mark.skipif(
    not HAVE_RAY, reason="Ray is not installed (pip install -e .[ray]): the Ray backend "
    "is not tested")


def _quiet(_: str) -> None:
    pass


def _same_figures(a: dict[str, Any], b: dict[str, Any]) -> None:
    """Two evaluation results agree on everything but the timings."""
    a, b = dict(a), dict(b)
    for d in (a, b):
        d.pop("timing"), d.pop("elapsed_s")
    assert a == b


# -- evaluation -----------------------------------------------------------------------
def test_scopa_eval_on_ray_gives_the_local_numbers(ray_cluster, capsys) -> None:
    from scopa_cli import main

    args = ["eval", "expert", "greedy", "--hands", "200", "--seed", "5", "--json"]
    assert main(args) == 0
    local = json.loads(capsys.readouterr().out)
    assert main([*args, "--backend", "ray"]) == 0
    on_ray = json.loads(capsys.readouterr().out)
    _same_figures(local, on_ray)
    assert local["matches"]["played"] == 40


def test_a_ladder_on_ray_equals_the_local_ladder(ray_cluster, tmp_path: Path) -> None:
    specs = ["random", "greedy", "expert"]
    runs = {backend: ladder(specs, hands=16, seed=2, out=tmp_path / backend, matches=8,
                            backend=backend) for backend in ("local", "ray")}
    assert runs["local"]["ratings"] == runs["ray"]["ratings"]
    for name in (tmp_path / "local" / "pairs").iterdir():
        pair = [json.loads((tmp_path / b / "pairs" / name.name).read_text())["result"]
                for b in ("local", "ray")]
        _same_figures(*pair)


def claim_death(marker: Path) -> bool:
    """Whether this process takes the one death ``marker`` stands for, writing its pid
    there: an exclusive create, so of two processes asking at once only one does."""
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    os.write(fd, str(os.getpid()).encode())
    os.close(fd)
    return True


class DiesOnce:
    """An agent factory whose first call anywhere kills its process (the marker file
    records that it happened); later calls build a random agent."""

    spec = "dies_once"

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __call__(self, seed: int) -> RandomAgent:
        if claim_death(self.marker):
            os._exit(1)
        return RandomAgent(seed)


def test_a_failed_evaluation_task_is_retried(ray_cluster, tmp_path: Path) -> None:
    marker = tmp_path / "died"
    on_ray = evaluate(DiesOnce(marker), "greedy", hands=24, seed=4, matches=0,
                      backend="ray")
    assert marker.exists() and int(marker.read_text()) != os.getpid()  # a worker died
    local = evaluate(DiesOnce(marker), "greedy", hands=24, seed=4, matches=0)
    _same_figures(local.to_json(), on_ray.to_json())


def test_an_agent_error_on_ray_is_raised_as_itself(ray_cluster) -> None:
    class Illegal(RandomAgent):
        def act(self, info: Any) -> int:
            return -1

    from scopa_env.game import IllegalMoveError

    with pytest.raises(IllegalMoveError, match="returned -1"):
        evaluate(lambda seed: Illegal(seed), "greedy", hands=8, seed=0, matches=0,
                 backend="ray")


# -- training -------------------------------------------------------------------------
def _cfg(tmp_path: Path, *sets: str) -> Any:
    return load_config(SMOKE, [f"run.runs_dir={tmp_path}", "rollouts.backend=ray",
                               "rollouts.ray_workers=2", "rollouts.num_envs=6",
                               "evaluation.every_steps=0", "checkpoints.every_steps=0", *sets])


def _rollout_args(cfg: Any, net: PolicyNet, update: int) -> dict[str, Any]:
    rng = np.random.default_rng(update)
    n = cfg.rollouts.num_envs
    kinds = [["self", "random", "greedy"][k] for k in rng.integers(0, 3, n)]
    return dict(net=net, past_net=None, kinds=kinds, learner_team=rng.integers(0, 2, n), steps=36,
                reset_seed=1000 + update, agent_seed=2000 + update, gamma=1.0, lam=0.95)


def _assert_same_batch(a: Any, b: Any) -> None:
    for k, v in a.__dict__.items():
        assert torch.equal(v, getattr(b, k)), k


def dies_in_first_rollout(marker: Path) -> type:
    """A rollout worker class (wrapping ``RolloutWorker``) whose first rollout anywhere
    kills its process after playing, before the result is returned (``marker`` records
    it). Defined in a function, so Ray ships the class with its marker by value."""
    from scopa_train.ray_backend import RolloutWorker

    class DiesInFirstRollout:
        def __init__(self, *args: Any) -> None:
            self.worker = RolloutWorker(*args)

        def pid(self) -> int:
            return os.getpid()

        def collect(self, *args: Any) -> Any:
            out = self.worker.collect(*args)
            if claim_death(marker):
                os._exit(1)
            return out

    return DiesInFirstRollout


def test_ray_rollouts_are_the_workers_local_rollouts_and_survive_dead_workers(
        ray_cluster, tmp_path: Path) -> None:
    from scopa_train.ray_backend import (
        RayRolloutCollector,
        RolloutWorker,
        merge_batches,
        worker_seed,
    )

    cfg = _cfg(tmp_path)
    torch.manual_seed(0)
    net = PolicyNet(NetConfig(32, 1, 16)).eval()
    args = _rollout_args(cfg, net, update=1)
    # the same computation without Ray: one plain worker per block of games
    n = cfg.rollouts.num_envs
    blocks = np.array_split(np.arange(n), 2)
    plain = []
    for w, g in enumerate(blocks):
        worker = RolloutWorker(cfg, len(g), *_baselines())
        batch, _ = worker.collect(net.cfg, net.state_dict(), None,
                                  [args["kinds"][i] for i in g], args["learner_team"][g], 36,
                                  worker_seed(args["reset_seed"], w),
                                  worker_seed(args["agent_seed"], w), 1.0, 0.95)
        plain.append(batch)
    expected = merge_batches(plain)

    # the first worker to finish its first rollout dies before returning it: it is
    # replaced and its games played again, counted once
    marker = tmp_path / "died"
    collector = RayRolloutCollector(cfg, *_baselines(),
                                    worker_cls=dies_in_first_rollout(marker), log=_quiet)
    try:
        batch, stats = collector.collect(**args)
        assert marker.exists() and collector.replaced == 1
        _assert_same_batch(expected, batch)
        assert stats.env_steps == n * 36 and stats.episodes == n
        # a worker killed between rollouts is replaced too; the rollout is the same
        ray_cluster.kill(collector.actors[1])
        batch, stats = collector.collect(**args)
        _assert_same_batch(expected, batch)
        assert collector.replaced == 2 and stats.env_steps == n * 36
    finally:
        collector.close()


def _baselines() -> tuple[Any, Any]:
    import agents
    from scopa_train.rollout import batched_baseline

    return agents.make_agent, batched_baseline


def test_train_py_with_backend_ray_is_deterministic_across_stop_and_resume(
        ray_cluster, tmp_path: Path, capsys) -> None:
    from scopa_train.cli import main

    sets = ["rollouts.backend=ray", "rollouts.ray_workers=2"]
    assert main(["--config", str(SMOKE), "--no-progress",
                 *(f"--set={s}" for s in [f"run.runs_dir={tmp_path / 'a'}", *sets])]) == 0
    assert "finished: 2 updates, 1,152 env steps" in capsys.readouterr().out
    straight = next((tmp_path / "a").glob("smoke-*/checkpoints/final.pt"))
    cfg = load_config(SMOKE, [f"run.runs_dir={tmp_path / 'b'}", *sets])
    part = recipe.start(cfg, progress=False, stop_after_updates=1, log=_quiet)
    resumed = recipe.resume(part["run_dir"], progress=False, log=_quiet)
    assert resumed["finished"]
    a = torch.load(straight, weights_only=True)
    b = torch.load(resumed["checkpoint"], weights_only=True)
    for key in ("update", "env_steps", "learner_samples"):
        assert a["counters"][key] == b["counters"][key], key
    for k, v in a["model"].items():
        assert torch.equal(v, b["model"][k]), k


def test_ray_config_keys_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ConfigError,
                       match="'rollouts.ray_workers' = 7 exceeds 'rollouts.num_envs' = 6"):
        _cfg(tmp_path, "rollouts.ray_workers=7")
    with pytest.raises(ConfigError, match="'rollouts.backend' must be one of 'local', 'ray'"):
        _cfg(tmp_path, "rollouts.backend=dask")
    assert load_config(SMOKE).rollouts.backend == "local"
