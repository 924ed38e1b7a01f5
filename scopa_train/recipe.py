"""Run a config: its stages in order, in one run folder, resumable by running it again.

    runs/NAME-TIMESTAMP/
        recipe.yaml        the config the run goes on with (after --set) and the
                           digest of the config it was started with
        STAGE/             one folder a stage (a config without `stages:` trains in the
                           run folder itself): config.yaml, checkpoints/, tensorboard/,
                           evaluations.jsonl, policy.pt

A stage whose ``checkpoints/final.pt`` exists is done and skipped; one with
``checkpoints/latest.pt`` goes on from it; a stage that names no ``init_from`` starts
from the policy of the stage before. Running the same config again (same file, same
``--set``) finds the newest run of it and goes on where it stopped; ``--new`` starts
another. ``run.max_minutes`` limits this invocation only.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from agents.commands import rules_flags
from scopa_env.files import write_atomic
from scopa_env.rules import make_rules
from scopa_policy.checkpoint import CheckpointError, load_checkpoint

from .config import (
    PREVIOUS,
    ConfigError,
    Recipe,
    StageConfig,
    apply_overrides,
    recipe_from_dict,
    stage_from_dict,
)
from .device import torch_device
from .framework import (
    Log,
    clean_run_temps,
    interpreter,
    make_run_dir,
    resume_command,
    scopa_command,
    write_config,
)
from .stages import kind, kind_name, kinds

RECIPE_FILE = "recipe.yaml"


def stage_dir(run_dir: Path, recipe: Recipe, cfg: StageConfig) -> Path:
    return run_dir / cfg.name if recipe.staged else run_dir


def stage_state(folder: Path) -> str:
    """'done' (``final.pt``), 'stopped' (``latest.pt``) or 'new'."""
    ck = folder / "checkpoints"
    return "done" if (ck / "final.pt").is_file() else \
        "stopped" if (ck / "latest.pt").is_file() else "new"


def write_recipe(run_dir: Path, recipe: Recipe) -> None:
    """``recipe.yaml``: the config the run goes on with, and the digest of the config it
    was started with (kept: the command that started the run finds it again after a
    ``--resume RUN --set ...``)."""
    f = run_dir / RECIPE_FILE
    digest = recipe.digest()
    if f.is_file():
        try:
            digest = yaml.safe_load(f.read_text()).get("digest") or digest
        except (OSError, yaml.YAMLError, AttributeError):
            pass
    doc = {"digest": digest, "config": recipe.data}
    write_atomic(yaml.safe_dump(doc, sort_keys=False).encode(), f, "write the run's recipe to")


def read_recipe(run_dir: Path) -> dict[str, Any]:
    try:
        doc = yaml.safe_load((run_dir / RECIPE_FILE).read_text())
    except (OSError, yaml.YAMLError) as e:
        raise ConfigError(f"{run_dir / RECIPE_FILE} cannot be read: "
                          f"{' '.join(str(e).split())}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("config"), dict):
        raise ConfigError(f"{run_dir / RECIPE_FILE} is damaged: no 'config' mapping")
    return doc


def find_run(recipe: Recipe) -> Path | None:
    """The newest run folder of this very config (same digest), if any."""
    runs = Path(recipe.run.runs_dir)
    if not runs.is_dir():
        return None
    digest = recipe.digest()
    for folder in sorted(runs.glob(f"{recipe.run.name}-*"), reverse=True):
        f = folder / RECIPE_FILE
        if f.is_file():
            try:
                if yaml.safe_load(f.read_text()).get("digest") == digest:
                    return folder
            except (OSError, yaml.YAMLError, AttributeError):
                continue
    return None


def clean_runs(runs: Path, log: Log) -> None:
    """Temp files that killed saves left in the run folders (and their stage folders)."""
    if runs.is_dir():
        for folder in sorted(runs.iterdir()):
            if folder.is_dir():
                clean_run_temps(folder, log)
                for sub in sorted(folder.iterdir()):
                    if (sub / "checkpoints").is_dir():
                        clean_run_temps(sub, log)


def check_fits(recipe: Recipe, run_dir: Path) -> None:
    """Each stage that has saved a checkpoint keeps the network shapes it was trained
    with: ``--set`` on a resume may change a budget, not a network."""
    for cfg in recipe.stages:
        folder = stage_dir(run_dir, recipe, cfg)
        saved = folder / "config.yaml"
        if stage_state(folder) == "new" or not saved.is_file():
            continue
        try:
            old = yaml.safe_load(saved.read_text()) or {}
        except (OSError, yaml.YAMLError):
            continue  # unreadable: the stage's own checkpoint is checked when it resumes
        if not isinstance(old, dict):
            continue
        if kind_name(old.get("kind")) != cfg.kind:
            raise ConfigError(f"{folder} holds a {old.get('kind')!r} stage; 'kind' cannot "
                              f"change on a resume: start a new run instead")
        shapes = {"network": dataclasses.asdict(cfg.network)}
        for k in kinds().values():  # the kinds' own shapes (the last-deal scorer's)
            for section, keys in k.frozen.items():
                shapes[section] = {key: getattr(getattr(cfg, section), key) for key in keys}
        for section, shape in shapes.items():
            was = {k: (old.get(section) or {}).get(k) for k in shape}
            if was != shape:
                raise ConfigError(f"{folder}: the {section} section {shape} does not fit this "
                                  f"config's network as trained there ({was}); start a new "
                                  f"run to change it")


def ship_name(rules: Any) -> str:
    """The file name of new shipped weights for ``rules``: the rule set's name (with the
    player count where it is not the set's own, ``asso_piglia_tutto_4p.pt``) when the
    rules are a named set as it stands (any match length), else ``mine.pt``."""
    named = make_rules(rules.name, players=rules.players, target_score=rules.target_score)
    if named != rules:
        return "mine.pt"
    own = make_rules(rules.name).players
    return f"{rules.name}.pt" if rules.players == own else f"{rules.name}_{rules.players}p.pt"


def compare_command(policy: Path, rules: Any) -> str | None:
    """The command that plays a recipe's final policy against the shipped weights of its
    rules, head to head on 4,000 paired hands; None where none are shipped for them."""
    from scopa_policy.agent import pretrained_path

    try:
        pretrained_path(rules, exact=True)
    except ValueError:
        return None
    return (f"{scopa_command()} eval ckpt:{policy} pretrained{rules_flags(rules)} "
            "--hands 4000 --matches 0 --workers 2")


def ship_command(policy_ck: Path, rules: Any) -> str:
    """The command that exports a finished stage as the shipped weights for its rules
    (those trained for the same rules; a new file, ``ship_name``, when none are, never
    the weights that play them across options)."""
    from scopa_policy.agent import pretrained_path

    try:
        target = pretrained_path(rules, exact=True)
    except ValueError:
        target = Path("scopa_policy/pretrained") / ship_name(rules)
    if target.is_absolute() and target.is_relative_to(Path.cwd()):
        target = target.relative_to(Path.cwd())  # as the user types it, from here
    return f"{interpreter()} -m scopa_train.export {policy_ck} {target}"


def run_recipe(recipe: Recipe, *, new: bool = False, run_dir: Path | None = None,
               progress: bool = True, log: Log = print,
               stop_after_updates: int | None = None) -> dict[str, Any]:
    """Train every stage not yet done, in order; the outcome of the last stage run, with
    ``run_dir``, ``finished`` (all stages done) and ``policy``. Given ``run_dir`` (a
    resume), its ``recipe.yaml`` becomes this recipe once a stage accepts it."""
    for i, cfg in enumerate(recipe.stages):  # what can fail before any folder exists
        if i == 0 or cfg.init_from != PREVIOUS:  # a first stage cannot start from one before
            kind(cfg.kind).check_ready(cfg)
    clean_runs(Path(recipe.run.runs_dir), log)
    if run_dir is None and not new:
        run_dir = find_run(recipe)
        if run_dir is not None:
            log(f"continuing {run_dir} (the newest run of this config; --new starts another)")
    if run_dir is None:
        run_dir = make_run_dir(recipe.stages[0])
        write_recipe(run_dir, recipe)
    deadline = (time.perf_counter() + recipe.run.max_minutes * 60
                if recipe.run.max_minutes else None)
    clock, steps, previous = 0.0, 0, None
    out: dict[str, Any] = {}
    for i, cfg in enumerate(recipe.stages, 1):
        folder = stage_dir(run_dir, recipe, cfg)
        if cfg.init_from == PREVIOUS:
            cfg = dataclasses.replace(cfg, init_from=str(previous))
        state = stage_state(folder)
        if state == "done" and _changed(cfg, folder):
            state = "stopped"  # e.g. a bigger budget given on a resume: it trains on
        label = f"stage {i}/{len(recipe.stages)} {cfg.name!r} ({cfg.kind})"
        if state == "done":
            log(f"{label}: done ({folder})")
        elif deadline is not None and time.perf_counter() >= deadline:
            log(f"run.max_minutes={recipe.run.max_minutes:g} of this invocation reached "
                f"before {label}; run the same command again to continue")
            return {**out, "run_dir": str(run_dir), "finished": False,
                    "reason": "run.max_minutes reached"}
        else:
            log(f"{label}: {'continuing' if state == 'stopped' else 'starting'} in {folder}")
            out = _run_stage(cfg, folder, state, ready=lambda: write_recipe(run_dir, recipe),
                             progress=progress, log=log,
                             clock_offset=clock, steps_offset=steps, deadline=deadline,
                             stop_after_updates=stop_after_updates)
            if not out["finished"]:
                out.update(run_dir=str(run_dir), finished=False)
                log(f"{label} stopped ({out['reason']}); run the same command again to "
                    f"continue (or: {resume_command(run_dir)})")
                return out
        previous = folder / "policy.pt"
        counters = load_checkpoint(previous).get("counters", {})
        clock += float(counters.get("wall_seconds", 0.0))
        steps += int(counters.get("env_steps", 0))
    final = stage_dir(run_dir, recipe, recipe.stages[-1])
    if len(recipe.stages) > 1:
        rules = recipe.stages[-1].make_rules()
        log(f"the recipe's policy: {final / 'policy.pt'}")
        compare = compare_command(final / "policy.pt", rules)
        if compare is not None:
            log(f"before shipping it, play it against the shipped weights: {compare}")
        log(f"ship it with: {ship_command(final / 'checkpoints' / 'final.pt', rules)}")
    else:  # e.g. configs/quick.yaml: never offered as the shipped weights
        log(f"this run's policy: {final / 'policy.pt'}")
        log(f"one stage alone ({recipe.stages[0].kind}), not a recipe of the shipped weights "
            f"(those are the last stage of a full recipe: make train, configs/recipe.yaml); "
            f"measure it: {scopa_command()} eval ckpt:{run_dir} greedy --hands 1000 "
            "--workers 2")
    return {**out, "run_dir": str(run_dir), "finished": True,
            "policy": str(final / "policy.pt"), "minutes": clock / 60}


def _changed(cfg: StageConfig, folder: Path) -> bool:
    """Whether a stage's config differs from the one it was trained with, aside from
    where it starts (the same file may be named another way) and the invocation's time
    limit."""
    try:
        saved = yaml.safe_load((folder / "config.yaml").read_text()) or {}
    except (OSError, yaml.YAMLError):
        return False
    # a section the saved config lacks (``dmc``, say) came to the kit after it trained
    now = {k: v for k, v in cfg.to_dict().items() if k in saved}
    if isinstance(saved, dict) and "kind" in saved:  # a kind renamed since is the same
        saved["kind"] = kind_name(saved["kind"])
    for d in (saved, now):
        d.pop("init_from", None)
        if isinstance(d.get("run"), dict):
            d["run"].pop("max_minutes", None)
    return saved != now


def _run_stage(cfg: StageConfig, folder: Path, state: str, *, stop_after_updates: int | None,
               ready: Callable[[], None] = lambda: None, **kw: Any) -> dict[str, Any]:
    """Build (or resume) one stage in ``folder`` and train it; ``ready()`` is called
    once the stage is built (a refused resume changes nothing)."""
    stage_kind = kind(cfg.kind)
    if state == "stopped":
        clean_run_temps(folder, kw["log"])
        ck = load_checkpoint(folder / "checkpoints" / "latest.pt", kind="training")
        if kind_name(ck["config"].get("kind")) != cfg.kind:
            raise ConfigError(f"{folder} holds a {ck['config'].get('kind')!r} stage; 'kind' "
                              f"cannot change on a resume: start a new run instead")
        stage = stage_kind.resume(ck, cfg, folder, **kw)
    else:
        folder.mkdir(parents=True, exist_ok=True)
        stage = stage_kind.build(cfg, folder, **kw)
    ready()
    write_config(cfg, folder)
    return stage.train(stop_after_updates)


def start(cfg: StageConfig, progress: bool = True, stop_after_updates: int | None = None,
          log: Log = print, **kw: Any) -> dict[str, Any]:
    """A new run of one stage: ``runs_dir/NAME-TIMESTAMP/`` (resumable as any run)."""
    recipe = recipe_from_dict({**cfg.to_dict(), "name": cfg.run.name}, "config")
    return run_recipe(recipe, new=True, progress=progress, log=log,
                      stop_after_updates=stop_after_updates, **kw)


def resume(path: str | Path, overrides: list[str] | None = None, progress: bool = True,
           stop_after_updates: int | None = None, log: Log = print) -> dict[str, Any]:
    """Continue a run: a run folder (every stage not yet done), a stage folder, or a
    stage's training checkpoint. ``overrides`` (``--set``) may change what does not
    alter a network (e.g. ``ppo.total_env_steps``)."""
    p = Path(path)
    if p.is_dir() and (p / RECIPE_FILE).is_file():
        doc = read_recipe(p)
        recipe = recipe_from_dict(apply_overrides(doc["config"], overrides or []),
                                  str(p / RECIPE_FILE))
        check_fits(recipe, p)
        return run_recipe(recipe, run_dir=p, progress=progress, log=log,
                          stop_after_updates=stop_after_updates)
    return _resume_stage(p, overrides or [], progress, stop_after_updates, log)


def _resume_stage(path: Path, overrides: list[str], progress: bool,
                  stop_after_updates: int | None, log: Log) -> dict[str, Any]:
    ck = load_checkpoint(path, kind="training")
    ck_path = Path(ck["path"]).resolve()
    if ck_path.parent.name != "checkpoints":
        raise CheckpointError(f"checkpoint {ck['path']!r} is not in a run directory "
                              f"(RUN/checkpoints/NAME.pt): resume a run directory written by "
                              f"train.py, or one of its checkpoints")
    data = apply_overrides(ck["config"], overrides)
    if kind_name(data.get("kind")) != kind_name(ck["config"].get("kind")):
        raise ConfigError(f"--resume continues the stage's kind ({ck['config'].get('kind')!r});"
                          f" 'kind' cannot be changed with --set: start a new run instead")
    cfg = stage_from_dict(data, f"checkpoint {ck['path']}")
    torch_device(cfg)
    folder = ck_path.parent.parent
    clean_run_temps(folder, log)
    stage = kind(cfg.kind).resume(ck, cfg, folder, progress=progress, log=log)
    write_config(cfg, folder)  # only once the checkpoint fits the config
    log(f"resuming {folder} at update {stage.counters.update}, "
        f"{stage.counters.env_steps:,} env steps")
    return stage.train(stop_after_updates)


__all__ = ["compare_command", "find_run", "resume", "run_recipe", "ship_command",
           "stage_state", "start"]
