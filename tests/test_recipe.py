"""Recipes: every stage of a config in one run folder, each from the one before; the same
command again goes on where it stopped; a time limit counts this invocation only; one
TensorBoard axis for the whole recipe."""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

from agents.commands import add_rules_args, rules_flags, rules_from_args
from scopa_env.rules import Rules, make_rules
from scopa_train import recipe
from scopa_train.config import load_recipe
from scopa_train.framework import interpreter, scopa_command

ROOT = Path(__file__).resolve().parent.parent

TINY = """
run: {name: tiny, seed: 7, runs_dir: RUNS}
rollouts: {num_envs: 16, rollout_steps: 36}
opponents: {self: 0.5, random: 0.5}
network: {hidden_size: 32, hidden_layers: 1, action_hidden: 16}
evaluation: {every_steps: 0}
checkpoints: {every_steps: 0}
stages:
  - name: ppo
    kind: ppo
    ppo: {total_env_steps: 2304, update_epochs: 1, num_minibatches: 2}
  - name: scorer
    kind: last_deal
    fit: {decisions: 200, epochs: 2, batch: 64}
    last_deal: {width: 16, layers: 1, heads: 2}
  - name: distill
    kind: distill
    fit: {decisions: 200, epochs: 1, batch: 64}
"""


def _quiet(_: str) -> None:
    pass


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY.replace("RUNS", str(tmp_path / "runs")))
    return path


def _scalars(folder: Path, tag: str) -> list[tuple[int, float]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(folder / "tensorboard"), size_guidance={"scalars": 0})
    acc.Reload()
    return [(e.step, e.value) for e in acc.Scalars(tag)]


def test_a_recipe_trains_every_stage_from_the_one_before(tiny: Path) -> None:
    lines: list[str] = []
    out = recipe.run_recipe(load_recipe(tiny), progress=False, log=lines.append)
    run = Path(out["run_dir"])
    assert out["finished"] and out["policy"] == str(run / "distill" / "policy.pt")
    assert sorted(p.name for p in run.iterdir()) == ["distill", "ppo", "recipe.yaml", "scorer"]
    for stage in ("ppo", "scorer", "distill"):
        assert (run / stage / "checkpoints" / "final.pt").is_file()
    # each stage starts from the policy of the stage before, written into its config
    scorer = yaml.safe_load((run / "scorer" / "config.yaml").read_text())
    assert scorer["init_from"] == str(run / "ppo" / "policy.pt")
    distill = yaml.safe_load((run / "distill" / "config.yaml").read_text())
    assert distill["init_from"] == str(run / "scorer" / "policy.pt")
    final = torch.load(run / "distill" / "policy.pt", weights_only=True)
    assert "last_deal" in final  # the scorer of stage 2, carried by stage 3
    assert lines[-3] == f"the recipe's policy: {run / 'distill' / 'policy.pt'}"
    assert lines[-2] == ("before shipping it, play it against the shipped weights: "
                         f"{scopa_command()} eval ckpt:{run / 'distill' / 'policy.pt'} "
                         "pretrained --hands 4000 --matches 0 --workers 2")
    assert lines[-1] == (f"ship it with: {interpreter()} -m scopa_train.export "
                         f"{run / 'distill' / 'checkpoints' / 'final.pt'} "
                         "scopa_policy/pretrained/default.pt")
    # the run folder is an agent: its last stage's policy
    import agents
    from agents.evaluation.evaluate import evaluate

    assert evaluate(agents.make_agent(f"ckpt:{run}", seed=0), "random", hands=2, seed=1).hands == 2
    # again: nothing is trained, the same run is named
    again: list[str] = []
    out2 = recipe.run_recipe(load_recipe(tiny), progress=False, log=again.append)
    assert out2["run_dir"] == str(run) and out2["finished"]
    assert sum("done" in line for line in again) == 3
    assert not any("run directory" in line for line in again)
    # --new: another run folder
    out3 = recipe.run_recipe(load_recipe(tiny), new=True, progress=False, log=_quiet)
    assert out3["run_dir"] != str(run)


def test_a_one_stage_run_ends_without_offering_to_replace_the_shipped_weights(
        tmp_path: Path) -> None:
    """A one-stage config (configs/quick.yaml's kind) names its policy and how to measure
    it; only a recipe of several stages prints the command that ships its weights."""
    flat = tmp_path / "one.yaml"
    flat.write_text(TINY.split("stages:")[0].replace("RUNS", str(tmp_path / "runs"))
                    + "ppo: {total_env_steps: 1152, update_epochs: 1, num_minibatches: 2}\n")
    lines: list[str] = []
    out = recipe.run_recipe(load_recipe(flat), progress=False, log=lines.append)
    run = Path(out["run_dir"])
    assert out["finished"]
    assert lines[-2] == f"this run's policy: {run / 'policy.pt'}"
    assert lines[-1].startswith("one stage alone (ppo), not a recipe of the shipped weights")
    assert lines[-1].endswith(f"scopa eval ckpt:{run} greedy --hands 1000 --workers 2")
    assert not any("ship it" in line or "pretrained/" in line for line in lines)


def test_the_same_command_again_goes_on_where_it_stopped(tiny: Path) -> None:
    part = recipe.run_recipe(load_recipe(tiny), progress=False, log=_quiet,
                             stop_after_updates=2)
    run = Path(part["run_dir"])
    assert not part["finished"] and part["counters"]["update"] == 2
    assert (run / "ppo" / "checkpoints" / "latest.pt").is_file()
    assert not (run / "scorer").exists()
    cmd = [sys.executable, str(ROOT / "train.py"), "--config", str(tiny), "--no-progress"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"continuing {run}" in done.stdout
    assert "stage 1/3 'ppo' (ppo): continuing" in done.stdout
    assert [p.name for p in (tiny.parent / "runs").iterdir()] == [run.name]
    ck = torch.load(run / "ppo" / "checkpoints" / "final.pt", weights_only=True)
    assert ck["counters"]["update"] == 4  # 2 before the stop, 2 after
    assert (run / "distill" / "checkpoints" / "final.pt").is_file()
    # a run folder given to --resume is the same thing
    again = subprocess.run([sys.executable, str(ROOT / "train.py"), "--resume", str(run),
                            "--no-progress"], cwd=ROOT, capture_output=True, text=True,
                           timeout=300)
    assert again.returncode == 0 and "the recipe's policy" in again.stdout, again.stderr


def test_time_spent_before_a_resume_does_not_count_against_its_limit(tiny: Path) -> None:
    """The old trap: a run resumed after 90 minutes of training with max_minutes: 90
    stopped after one update. The limit is this invocation's: a resumed stage with hours
    on its clock trains on."""
    part = recipe.run_recipe(load_recipe(tiny), progress=False, log=_quiet,
                             stop_after_updates=1)
    latest = Path(part["run_dir"]) / "ppo" / "checkpoints" / "latest.pt"
    ck = torch.load(latest, weights_only=True)
    ck["counters"]["wall_seconds"] = 5 * 3600.0  # five hours of training before
    torch.save(ck, latest)
    out = recipe.resume(part["run_dir"], ["run.max_minutes=30"], progress=False, log=_quiet)
    assert out["finished"], out["reason"]
    doc = yaml.safe_load((Path(part["run_dir"]) / "recipe.yaml").read_text())
    assert doc["config"]["run"]["max_minutes"] == 30  # the limit was on
    final = torch.load(Path(part["run_dir"]) / "ppo" / "checkpoints" / "final.pt",
                       weights_only=True)
    assert final["counters"]["update"] == 4
    assert final["counters"]["wall_seconds"] > 5 * 3600.0  # the clock keeps the past
    # a limit already reached: no stage starts, the same command later goes on
    over = load_recipe(tiny, ["run.max_minutes=1e-9", "run.name=over"])
    stopped = recipe.run_recipe(over, progress=False, log=_quiet)
    assert not stopped["finished"] and "max_minutes" in stopped["reason"]
    assert [p.name for p in Path(stopped["run_dir"]).iterdir()] == ["recipe.yaml"]


def test_tensorboard_reads_the_recipe_as_one_curve(tiny: Path) -> None:
    out = recipe.run_recipe(load_recipe(tiny), progress=False, log=_quiet)
    run = Path(out["run_dir"])
    ppo_steps = _scalars(run / "ppo", "charts/env_steps")
    scorer_steps = _scalars(run / "scorer", "charts/env_steps")
    distill_minutes = _scalars(run / "distill", "charts/wall_minutes")
    ppo_minutes = _scalars(run / "ppo", "charts/wall_minutes")
    # env steps add up over the stages; the step axis is seconds since the recipe began
    assert ppo_steps[-1][1] == 2304
    assert all(v > 2304 for _, v in scorer_steps)
    assert distill_minutes[0][1] >= ppo_minutes[-1][1]
    assert distill_minutes[0][0] >= ppo_minutes[-1][0]
    assert _scalars(run / "scorer", "last_deal/heldout_best_move_rate")
    assert _scalars(run / "distill", "suit_distill/heldout_teacher_agreement")


def test_recipe_refusals_are_one_line(tiny: Path, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    import train
    from scopa_train import report
    from scopa_train.config import ConfigError, load_config

    def one_line(status: int, *words: str) -> None:
        err = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
        assert status == 2 and len(err) == 1 and "Traceback" not in err[0], err
        for w in words:
            assert w in err[0], (w, err[0])

    # a stage that starts from the one before cannot run alone
    lone = load_config(tiny, stage="scorer")
    with pytest.raises(ConfigError, match="starts from the previous stage's policy: run it "
                                          "as part of its recipe"):
        recipe.start(lone, progress=False, log=_quiet)
    one_line(train.main(["--config", str(tiny), "--new", "--resume", str(tmp_path)]),
             "drop --config/--new")
    out = recipe.run_recipe(load_recipe(tiny), progress=False, log=_quiet)
    run = Path(out["run_dir"])
    # the fitting stages have no PPO throughput, nor evaluations against opponents here
    for args, words in ((["throughput", str(run / "scorer")], "has no PPO throughput scalars"),
                        (["curve", str(run / "scorer"), str(tmp_path / "c.png")],
                         "holds no evaluation against opponents")):
        with pytest.raises(SystemExit) as e:
            report.main(args)
        err = capsys.readouterr().err
        assert e.value.code == 2 and "Traceback" not in err  # argparse: usage, then one line
        assert words in err.splitlines()[-1]
    # a damaged recipe.yaml is named
    (run / "recipe.yaml").write_text("- not\n- a mapping\n")
    one_line(train.main(["--resume", str(run), "--no-progress"]), "recipe.yaml is damaged")
    # a kind or a network changed on a resume: refused, nothing written
    (run / "recipe.yaml").write_text(yaml.safe_dump({"digest": "x", "config": yaml.safe_load(
        tiny.read_text())}))
    before = (run / "recipe.yaml").read_text()
    one_line(train.main(["--resume", str(run), "--set", "scorer.kind=ppo"]),
             "holds a 'last_deal' stage; 'kind' cannot change on a resume")
    one_line(train.main(["--resume", str(run), "--set", "network.hidden_size=64"]),
             "the network section", "does not fit")
    assert (run / "recipe.yaml").read_text() == before


def test_a_ppo_stage_without_a_budget_in_moves_runs_until_stopped(tmp_path: Path) -> None:
    from scopa_train.config import load_config

    cfg = load_config(ROOT / "configs" / "smoke.yaml", [
        f"run.runs_dir={tmp_path}", "ppo.total_env_steps=0", "evaluation.every_steps=0",
        "checkpoints.every_steps=0"])
    lines: list[str] = []
    out = recipe.start(cfg, progress=False, log=lines.append, stop_after_updates=3)
    assert not out["finished"] and out["reason"] == "stopped after 3 updates"
    assert any("updates of 16 games x 36 moves until stopped" in x for x in lines), lines


@pytest.mark.parametrize("rules", [
    make_rules("scopa"), make_rules("scopa", players=4), make_rules("scopone"),
    make_rules("asso_piglia_tutto", players=4), make_rules("scopa", target_score=16),
    make_rules("scopa", capture_rule="fewest", re_bello=True),
])
def test_the_comparison_names_the_recipes_rules_as_the_commands_read_them(rules: Rules) -> None:
    """The flags of the end-of-recipe comparison give back the recipe's rules when a
    ``scopa`` command parses them (none for 2-player scopa)."""
    parser = argparse.ArgumentParser()
    add_rules_args(parser)
    flags = rules_flags(rules)
    args = parser.parse_args(shlex.split(flags))
    assert rules_from_args(args.rules, args.players, args.option) == rules
    assert (flags == "") == (rules == make_rules("scopa"))


def test_no_comparison_is_offered_for_rules_without_shipped_weights(tmp_path: Path) -> None:
    """A recipe for rules that no shipped weights play as they stand ends with the
    command that ships its own file, and no comparison against weights of other rules."""
    rules = make_rules("scopa", capture_rule="fewest")
    assert recipe.compare_command(tmp_path / "policy.pt", rules) is None
    assert recipe.compare_command(tmp_path / "policy.pt", make_rules("scopone")) == (
        f"{scopa_command()} eval ckpt:{tmp_path / 'policy.pt'} pretrained --rules scopone "
        "--hands 4000 --matches 0 --workers 2")
    assert recipe.ship_command(tmp_path / "final.pt", rules).endswith(
        "scopa_policy/pretrained/mine.pt")
