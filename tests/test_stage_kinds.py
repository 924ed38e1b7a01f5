"""A stage kind from another package: installed as ``pip install`` leaves it (the module
and its ``dist-info`` with an entry point in the ``scopa.stage_kinds`` group), trained
for a few updates through ``train.py``, resumed, with its TensorBoard scalars; and the
registry's refusals of kinds that do not hold together."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

from scopa_train import recipe
from scopa_train.config import ConfigError, describe, load_recipe
from scopa_train.stages import kinds

ROOT = Path(__file__).resolve().parent.parent
CONFIG = """
run: {name: tinykind, seed: 5, runs_dir: RUNS}
rollouts: {num_envs: 8, rollout_steps: 36}
opponents: {self: 0.5, past: 0.25, random: 0.25}
network: {hidden_size: 16, hidden_layers: 1, action_hidden: 8}
evaluation: {every_steps: 288, hands: 2, opponents: [random], best_metric: random}
checkpoints: {every_steps: 0}
kind: reinforce
reinforce: {total_env_steps: 576, past_snapshot_every: 1}
"""
PER_UPDATE = 8 * 36


def _install(site: Path, entry: str = "reinforce = my_stage_kind:KIND") -> None:
    """The example kind (examples/my_stage_kind.py) as a package installs it."""
    site.mkdir(exist_ok=True)
    shutil.copy(ROOT / "examples" / "my_stage_kind.py", site / "my_stage_kind.py")
    info = site / "my_stage_kind-0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-stage-kind\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[scopa.stage_kinds]\n{entry}\n")


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The kind installed on this process's path; the registry read afresh (and again
    once the test is over)."""
    site = tmp_path / "site"
    _install(site)
    monkeypatch.syspath_prepend(str(site))
    kinds.cache_clear()
    yield site
    kinds.cache_clear()


def _train(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    return subprocess.run([sys.executable, str(ROOT / "train.py"), "--no-progress", *args],
                          cwd=site.parent, env=env, capture_output=True, text=True,
                          timeout=300)


def _scalars(folder: Path) -> dict[str, list[float]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(folder / "tensorboard"), size_guidance={"scalars": 0})
    acc.Reload()
    return {t: [e.value for e in acc.Scalars(t)] for t in acc.Tags()["scalars"]}


def test_a_kind_from_another_package_trains_resumes_and_logs_through_train_py(
        installed: Path) -> None:
    config = installed.parent / "tiny.yaml"
    config.write_text(CONFIG.replace("RUNS", str(installed.parent / "runs")))
    # its section and kind are the kit's to check and describe
    assert "reinforce" in kinds() and "\nreinforce:\n  total_env_steps (int" in describe()
    with pytest.raises(ConfigError, match=r"config key 'reinforce.learning_rate' = 2.0 is out "
                                          r"of range: allowed \(0, 1\]"):
        load_recipe(config, ["reinforce.learning_rate=2"])
    # two updates through train.py, then two more: the finished stage given a bigger budget
    first = _train(installed, "--config", str(config))
    assert first.returncode == 0, first.stderr
    run = next((installed.parent / "runs").iterdir())
    more = _train(installed, "--resume", str(run),
                  "--set", f"reinforce.total_env_steps={4 * PER_UPDATE}")
    assert more.returncode == 0, more.stderr
    assert f"continuing in {run}" in more.stdout
    final = torch.load(run / "checkpoints" / "final.pt", weights_only=True)
    assert final["config"]["kind"] == "reinforce" and final["counters"]["update"] == 4
    assert final["config"]["reinforce"]["total_env_steps"] == 4 * PER_UPDATE
    assert len(final["past_pool"]) == 5  # the starting network, then one snapshot an update
    saved = yaml.safe_load((run / "config.yaml").read_text())
    assert list(saved)[-4:] == ["distill", "reinforce", "evaluation", "checkpoints"]
    scalars = _scalars(run)
    assert len(scalars["losses/reinforce"]) == 4
    assert len(scalars["eval/margin_vs_random"]) == 4  # every 288 env steps
    assert "rollout/points_per_hand_selfplay" in scalars
    evaluations = [json.loads(x) for x in (run / "evaluations.jsonl").read_text().splitlines()]
    assert [e["update"] for e in evaluations] == [1, 2, 3, 4]
    # the same four updates in one go: the resumed run is the same run
    straight = recipe.run_recipe(load_recipe(config, [
        f"run.runs_dir={installed.parent / 'straight'}",
        f"reinforce.total_env_steps={4 * PER_UPDATE}"]), progress=False, log=lambda _: None)
    one = torch.load(Path(straight["run_dir"]) / "checkpoints" / "final.pt", weights_only=True)
    for k, v in one["model"].items():
        assert torch.equal(v, final["model"][k]), k
    # the policy is an agent, as any kind's
    import agents
    from agents.evaluation.evaluate import evaluate

    assert evaluate(agents.make_agent(f"ckpt:{run}", seed=0), "random", hands=2, seed=1).hands == 2


def test_the_kit_kinds_keep_their_saved_config_with_another_kind_installed(
        installed: Path, tmp_path: Path) -> None:
    """An installed kind's section joins the configs of its own stages only: a PPO
    stage's saved config is the one it has without the package."""
    cfg = load_recipe(None, [f"run.runs_dir={tmp_path}"]).stages[0]
    assert cfg.kind == "ppo" and "reinforce" not in cfg.to_dict()
    assert cfg.reinforce.total_env_steps == 200_000  # a section every stage may set


@pytest.mark.parametrize("entry, words", [
    ("ppo = my_stage_kind:KIND", "stage kind 'ppo' (entry point ppo = my_stage_kind:KIND, "
                                 "group scopa.stage_kinds): the kit has a kind of that name"),
    ("other = my_stage_kind:KIND", "stage kind 'other' (entry point other = "
                                   "my_stage_kind:KIND, group scopa.stage_kinds) calls itself "
                                   "'reinforce'"),
    ("reinforce = my_stage_kind:ReinforceSection", "is a type, not a "
                                                   "scopa_train.stages.StageKind"),
    ("reinforce = no_such_module:KIND", "cannot be loaded: ModuleNotFoundError: No module "
                                        "named 'no_such_module'"),
])
def test_a_kind_that_does_not_hold_together_is_one_line(
        entry: str, words: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    _install(site, entry)
    monkeypatch.syspath_prepend(str(site))
    kinds.cache_clear()
    try:
        with pytest.raises(ConfigError) as e:
            load_recipe(None)
        assert words in str(e.value) and "\n" not in str(e.value)
    finally:
        kinds.cache_clear()
    config = tmp_path / "c.yaml"
    config.write_text("kind: ppo\n")
    out = _train(site, "--config", str(config))
    err = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(err) == 1 and words in err[0], out.stderr
    assert "Traceback" not in out.stderr


def test_the_docs_show_the_example_kind_as_it_is() -> None:
    """docs/stage_kinds.md's file is examples/my_stage_kind.py (the one the tests train),
    from its imports on."""
    doc = (ROOT / "docs" / "stage_kinds.md").read_text()
    src = (ROOT / "examples" / "my_stage_kind.py").read_text()
    block = doc.split("```python\n", 1)[1].split("```", 1)[0]
    assert block == src[src.index("from __future__ import annotations"):]
    assert '"reinforce": "scopa_train.stages.reinforce:KIND"' in doc  # the one registry line


def test_one_registry_line_adds_a_kind_to_the_kit(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The kit's way: the module and one line of ``BUILTIN`` (no entry point)."""
    from scopa_train.stages import BUILTIN

    site = tmp_path / "site"
    site.mkdir()
    shutil.copy(ROOT / "examples" / "my_stage_kind.py", site / "my_stage_kind.py")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setitem(BUILTIN, "reinforce", "my_stage_kind:KIND")
    kinds.cache_clear()
    try:
        cfg = load_recipe(None, ["kind=reinforce", "reinforce.learning_rate=0.01"]).stages[0]
        assert cfg.kind == "reinforce" and cfg.reinforce.learning_rate == 0.01
        assert list(cfg.to_dict())[-3:] == ["reinforce", "evaluation", "checkpoints"]
    finally:
        kinds.cache_clear()
