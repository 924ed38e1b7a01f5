"""The training configuration: typed sections, a stage, and a recipe of stages.

A config file (YAML) holds sections, each a mapping of settings::

    run:         name, seed, runs_dir, device, torch_threads, max_minutes
    rules:       name, players, options
    rollouts:    num_envs, rollout_steps, episode, reward, backend, ray_address, ray_workers
    opponents:   the opponent pool: a sampling weight per kind or agent spec
    network:     hidden_size, hidden_layers, action_hidden
    KIND'S OWN:  each stage kind's sections, declared in its module (``scopa_train.stages``):
                 ppo, dmc, fit (the fitting kinds'), last_deal, distill, ...
    evaluation:  every_steps, hands, opponents, seed, best_metric
    checkpoints: every_steps, keep

plus either ``kind`` (and ``init_from``) for a run of one stage, or ``stages:``, a list
of stages run in order (a recipe). Each stage names itself (``name``) and its ``kind``,
may set ``init_from`` (default: the previous stage's policy) and may override any
section key by key; ``opponents`` and lists are replaced whole. Every key has a
default, a type and an allowed range; an unknown key, a value of the wrong type or out
of range fails at start with one line naming the key and what is allowed
(``ConfigError``). A key of the old flat layout (``learning_rate: ...``) gets a line
naming its new place (``ppo.learning_rate``). This module holds what every stage shares:
the sections all kinds read, the stage (``StageConfig``), YAML, ``--set`` overrides and
the recipe. The sections every kind reads are ``scopa_train.sections``', a kind's own
its module's; a key's typing and checks are ``scopa_train.settings``'.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import importlib.util
import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from agents import check_spec
from scopa_env.rules import OPTION_NAMES, resolve_rules

from .old_layout import OLD_KEYS
from .sections import (
    SHARED_AFTER,
    SHARED_BEFORE,
    CheckpointsSection,
    EvaluationSection,
    NetworkSection,
    RolloutsSection,
    RulesSection,
    RunSection,
)
from .settings import ConfigError, section_lines, type_of
from .settings import make_section as _make_section
from .stages import BUILTIN, RENAMED, kind_name, kind_sections, kinds

OPPONENT_KINDS = ("self", "past", "random", "greedy", "expert")
# a run or stage name is one folder name: it cannot place the run outside runs_dir
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}")


def sections() -> dict[str, type]:
    """Every config section by name, in the order a saved config lists them: those every
    kind reads, with the stage kinds' own (``scopa_train.stages``) between."""
    return {**SHARED_BEFORE, **kind_sections(), **SHARED_AFTER}


def section_kinds() -> dict[str, tuple[str, ...]]:
    """The stage kinds that read a section, for the sections only some kinds read."""
    ks = kinds()
    return {s: tuple(n for n, k in ks.items() if s in k.sections or s in k.reads)
            for s in sections() if any(s in k.sections or s in k.reads for k in ks.values())}


# the settings of a stage besides its sections (``opponents`` is a mapping of weights)
STAGE_KEYS = ("name", "kind", "init_from", "opponents")
PREVIOUS = "previous-stage"  # init_from of a recipe stage: the policy of the stage before
DEFAULT_OPPONENTS = {"self": 0.75, "past": 0.1, "greedy": 0.15}
OPPONENTS_HELP = ("opponent pool: sampling weight per kind, kinds " + "/".join(OPPONENT_KINDS)
                  + " or any agent spec (pimc:worlds=4, pretrained, py:mybots:Bot, ...)")
INIT_FROM_HELP = ("the weights a stage starts from: a checkpoint or policy file, or "
                  "'pretrained' (the shipped weights for the rules); in a recipe, default "
                  "the previous stage's policy; '' = a fresh network (PPO only)")


def make_section(name: str, data: Any, where: str = "") -> Any:
    """Section ``name`` from a mapping of its keys, every value checked."""
    return _make_section(name, sections()[name], data, where)


# -- a stage ---------------------------------------------------------------------------
@dataclass(init=False)
class StageConfig:
    """Everything one stage of training needs: its name and kind, where it starts from,
    the sections every kind reads, and every stage kind's own sections (``sections``,
    read as attributes: ``cfg.ppo``); see the module docstring. Keyword arguments name
    the kinds' sections too: ``StageConfig(kind="dmc", dmc={"epsilon": 0.2})``."""

    name: str
    kind: str
    init_from: str
    run: RunSection
    rules: RulesSection
    rollouts: RolloutsSection
    opponents: dict
    network: NetworkSection
    evaluation: EvaluationSection
    checkpoints: CheckpointsSection
    sections: dict  # the stage kinds' own sections, by name

    def __init__(self, name: str = "default", kind: str = "ppo", init_from: str = "",
                 run: Any = None, rules: Any = None, rollouts: Any = None,
                 opponents: dict | None = None, network: Any = None, evaluation: Any = None,
                 checkpoints: Any = None, sections: dict | None = None, **own: Any) -> None:
        self.name, self.kind, self.init_from = name, kind, init_from
        self.opponents = dict(DEFAULT_OPPONENTS) if opponents is None else opponents
        given = {"run": run, "rules": rules, "rollouts": rollouts, "network": network,
                 "evaluation": evaluation, "checkpoints": checkpoints}
        for key, value in given.items():
            setattr(self, key, {} if value is None else value)
        own = {**(sections or {}), **own}
        unknown = sorted(set(own) - set(kind_sections()))
        if unknown:
            raise ConfigError(f"unknown config section(s) {', '.join(map(repr, unknown))}; "
                              f"sections: {', '.join(sections())}")
        self.sections = own
        validate(self)

    def __getattr__(self, name: str) -> Any:
        own = self.__dict__.get("sections")
        if own is not None and name in own:
            return own[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def to_dict(self) -> dict[str, Any]:
        """The stage as a mapping, as its run folder's ``config.yaml`` and its checkpoints
        keep it: the sections of the kit's kinds always, another package's kind's
        sections in the stages of that kind."""
        ks = kinds()
        listed = {s for n in BUILTIN for s in ks[n].sections} | set(ks[self.kind].sections)
        out: dict[str, Any] = {"name": self.name, "kind": self.kind, "init_from": self.init_from}
        for key in SHARED_BEFORE:
            out[key] = dataclasses.asdict(getattr(self, key))
            if key == "rollouts":
                out["opponents"] = copy.deepcopy(self.opponents)
        out.update({k: dataclasses.asdict(v) for k, v in self.sections.items() if k in listed})
        out.update({k: dataclasses.asdict(getattr(self, k)) for k in SHARED_AFTER})
        return out

    @property
    def seed(self) -> int:
        return self.run.seed

    @property
    def rules_kwargs(self) -> dict[str, Any]:
        return {**self.rules.options, "players": self.rules.players}

    def make_rules(self) -> Any:
        return resolve_rules(self.rules.name, self.rules.players, self.rules.options)

    def make_env(self, num_envs: int | None = None) -> Any:
        """The batched environment of this stage's rules and rollouts settings."""
        from scopa_env.vector import VectorScopaEnv

        r = self.rollouts
        return VectorScopaEnv(num_envs or r.num_envs, rules=self.rules.name, reward=r.reward,
                              episode=r.episode, seed=self.seed, records=False,
                              **self.rules_kwargs)


def needs_two_player_points(cfg: StageConfig, what: str, why: str) -> None:
    """``ConfigError`` unless the stage plays 2-player hands for points: ``what`` needs
    them, ``why``."""
    r = cfg.rollouts
    if cfg.rules.players != 2 or r.reward != "points" or r.episode != "hand":
        raise ConfigError(f"{what} needs rules.players: 2, rollouts.reward: points and "
                          f"rollouts.episode: hand ({why}); got players={cfg.rules.players}, "
                          f"reward={r.reward!r}, episode={r.episode!r}")


def validate(cfg: StageConfig) -> None:
    """What holds across sections (each value was checked when its section was made)."""
    for name, cls in {**SHARED_BEFORE, **SHARED_AFTER}.items():
        if not isinstance(getattr(cfg, name), cls):
            setattr(cfg, name, make_section(name, getattr(cfg, name) or {}))
    for name, cls in kind_sections().items():
        if not isinstance(cfg.sections.get(name), cls):
            cfg.sections[name] = make_section(name, cfg.sections.get(name) or {})
    cfg.sections = {name: cfg.sections[name] for name in kind_sections()}
    if not NAME_RE.fullmatch(cfg.run.name):
        raise ConfigError(f"config key 'run.name' = {cfg.run.name!r} must be a plain folder "
                          f"name: letters, digits and _ . + - (at most 100, starting with a "
                          f"letter or digit), no '/' or '..'")
    if not NAME_RE.fullmatch(str(cfg.name)):
        raise ConfigError(f"stage name {cfg.name!r} must be a plain folder name: letters, "
                          f"digits and _ . + - (at most 100, starting with a letter or digit)")
    cfg.kind = kind_name(cfg.kind)  # an earlier name (stage_from_dict says so)
    if cfg.kind not in kinds():
        raise ConfigError(f"config key 'kind' must be one of {', '.join(map(repr, kinds()))}"
                          f", got {cfg.kind!r}")
    if not isinstance(cfg.init_from, str):
        raise ConfigError(f"config key 'init_from' must be a string, got {cfg.init_from!r}; "
                          f"{INIT_FROM_HELP}")
    if not cfg.run.runs_dir.strip() or "\0" in cfg.run.runs_dir:
        raise ConfigError(f"config key 'run.runs_dir' must name a folder, got "
                          f"{cfg.run.runs_dir!r}")
    _validate_opponents(cfg)
    ev = cfg.evaluation
    for spec in ev.opponents:
        if not isinstance(spec, str) or not spec:
            raise ConfigError(f"config key 'evaluation.opponents' must list agent specs, got "
                              f"{spec!r}")
        try:
            check_spec(spec)
        except ValueError as e:
            raise ConfigError(f"config key 'evaluation.opponents': {e}") from None
    if len(set(ev.opponents)) != len(ev.opponents):
        raise ConfigError(f"config key 'evaluation.opponents' lists an agent twice: "
                          f"{ev.opponents!r}")
    if ev.every_steps and ev.best_metric not in ev.opponents:
        raise ConfigError(f"config key 'evaluation.best_metric' = {ev.best_metric!r} must be "
                          f"one of evaluation.opponents {ev.opponents!r}")
    r = cfg.rollouts
    if r.backend == "ray" and r.ray_workers > r.num_envs:
        raise ConfigError(f"config key 'rollouts.ray_workers' = {r.ray_workers} exceeds "
                          f"'rollouts.num_envs' = {r.num_envs}: every rollout worker needs "
                          f"a game")
    kind = kinds()[cfg.kind]
    if kind.from_policy and not cfg.init_from:
        raise ConfigError(f"stage kind {cfg.kind!r} needs 'init_from': the policy whose "
                          f"rollouts it learns from")
    if not kind.ray and r.backend != "local":
        raise ConfigError(f"stage kind {cfg.kind!r} runs with rollouts.backend: local")
    kind.check(cfg)  # what the kind's own sections need
    _validate_rules(cfg)
    # last: what this machine lacks, once the config itself holds together
    if r.backend == "ray" and kind.ray and importlib.util.find_spec("ray") is None:
        raise ConfigError("config key 'rollouts.backend' is 'ray' but Ray is not installed: "
                          "pip install -e .[ray]")


def _validate_opponents(cfg: StageConfig) -> None:
    if not isinstance(cfg.opponents, dict):
        raise ConfigError(f"config key 'opponents' must be a mapping of kinds or agent specs "
                          f"to weights, got {cfg.opponents!r}; {OPPONENTS_HELP}")
    for kind in sorted(set(cfg.opponents) - set(OPPONENT_KINDS), key=str):
        try:
            check_spec(str(kind))  # a baseline or any agent spec plays as a frozen opponent
        except (ValueError, AttributeError) as e:
            raise ConfigError(f"config key 'opponents': {kind!r} is neither one of "
                              f"{', '.join(OPPONENT_KINDS)} nor an agent spec ({e})") from None
    for k, w in cfg.opponents.items():
        if isinstance(w, bool) or not isinstance(w, (int, float)) or w < 0 \
                or not math.isfinite(w):
            raise ConfigError(f"config key 'opponents.{k}' must be a weight >= 0, got {w!r}")
    if sum(cfg.opponents.values()) <= 0:
        raise ConfigError("config key 'opponents' needs at least one positive weight, "
                          f"got {cfg.opponents!r}")


def _validate_rules(cfg: StageConfig) -> None:
    options = cfg.rules.options
    unknown = sorted(map(str, set(options) - set(OPTION_NAMES) - {"name", "players"}))
    if unknown:
        raise ConfigError(f"config key 'rules.options' has unknown rules option(s) "
                          f"{', '.join(unknown)}; allowed: {', '.join(OPTION_NAMES[2:])}")
    if "players" in options or "name" in options:
        raise ConfigError("config key 'rules.options' must not hold 'players' or 'name': use "
                          "rules.players and rules.name")
    try:
        cfg.make_rules()
    except (ValueError, TypeError) as e:
        raise ConfigError(f"config keys 'rules.name'/'rules.players'/'rules.options': {e}"
                          ) from None


# -- from mappings: stages and recipes -------------------------------------------------
def _old_keys(data: dict[str, Any], source: str, single: bool = False) -> None:
    """One line per key of the old flat layout, naming its new place (``rules: scopa``
    too, and, in a config of one stage, a ``name`` that is not the run's)."""
    run = data.get("run") if isinstance(data.get("run"), dict) else {}
    old = [k for k, v in data.items() if k in OLD_KEYS and (
        (k not in sections() and k not in STAGE_KEYS)
        or (k in sections() and not isinstance(v, dict))
        or (k == "name" and single and v != run.get("name", RunSection.name)))]
    if old:
        raise ConfigError("\n".join(
            f"{source}: config key {k!r} is from the old flat layout; it is now "
            + (OLD_KEYS[k] if OLD_KEYS[k].startswith("(") else repr(OLD_KEYS[k]))
            for k in old))


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``over`` onto ``base``: sections key by key; ``opponents`` and lists whole."""
    out = copy.deepcopy(base)
    for k, v in over.items():
        if k in sections() and isinstance(v, dict) and isinstance(out.get(k), dict):
            merged = dict(out[k])
            merged.update(copy.deepcopy(v))
            out[k] = merged
        else:
            out[k] = copy.deepcopy(v)
    return out


def stage_from_dict(data: Any, source: str = "config") -> StageConfig:
    """A stage from a mapping of its keys and sections (a checkpoint's saved config)."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source} must be a mapping of keys to values, got "
                          f"{type(data).__name__}")
    _old_keys(data, source)
    if isinstance(data.get("kind"), str) and data["kind"] in RENAMED:  # said in one line
        new = RENAMED[data["kind"]]
        print(f"{source}: stage kind {data['kind']!r} is the earlier name of {new!r}; read as "
              f"{new!r}", file=sys.stderr)
        data = {**data, "kind": new}
    known = sections()
    unknown = sorted(map(str, set(data) - set(known) - set(STAGE_KEYS)))
    if unknown:
        raise ConfigError(f"unknown config key(s) {', '.join(map(repr, unknown))} in {source}; "
                          f"allowed: {', '.join([*STAGE_KEYS, *known])}")
    kwargs = {k: make_section(k, v) if k in known else v for k, v in data.items()}
    return StageConfig(**kwargs)


@dataclass
class Recipe:
    """A config file resolved: its stages in order. ``staged``: written as ``stages:``
    (each stage in a subfolder of the run), else one stage in the run folder itself."""

    data: dict[str, Any]  # the file's mapping after --set: what a resume compares
    stages: list[StageConfig]
    staged: bool

    @property
    def run(self) -> RunSection:
        return self.stages[0].run

    def digest(self) -> str:
        return config_digest(self.data)


def config_digest(data: dict[str, Any]) -> str:
    """A config's fingerprint. Stage kinds count under their first names (``RENAMED``), so
    a run started before a kind was renamed is still found by the same config."""
    first = {new: old for old, new in RENAMED.items()}

    def named(d: Any) -> Any:
        return {**d, "kind": first.get(d["kind"], d["kind"])} \
            if isinstance(d, dict) and isinstance(d.get("kind"), str) else d

    data = named(data)
    if isinstance(data.get("stages"), list):
        data = {**data, "stages": [named(st) for st in data["stages"]]}
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


def recipe_from_dict(data: Any, source: str = "config") -> Recipe:
    """The stages of a config mapping: ``stages:`` merged over the top-level sections,
    each starting from the previous stage's policy unless it sets ``init_from``."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source} must be a mapping of keys to values, got "
                          f"{type(data).__name__}")
    if "stages" not in data:
        return Recipe(data, [stage_from_dict(_single(data, source), source)], staged=False)
    stages = data["stages"]
    if not isinstance(stages, list) or not stages:
        raise ConfigError(f"config key 'stages' in {source} must be a non-empty list of "
                          f"stages, each a mapping with 'name' and 'kind'")
    top = {k: v for k, v in data.items() if k != "stages"}
    for k in ("kind", "init_from", "name"):
        if k in top:
            raise ConfigError(f"config key {k!r} in {source} belongs to each stage when the "
                              f"config lists 'stages'")
    out: list[StageConfig] = []
    for i, entry in enumerate(stages, 1):
        if not isinstance(entry, dict) or "name" not in entry or "kind" not in entry:
            raise ConfigError(f"stage {i} in {source} must be a mapping with 'name' and 'kind' "
                              f"(and any sections to change), got {entry!r}")
        where = f"{source}, stage {entry['name']!r}"
        if entry["name"] in (s.name for s in out):
            raise ConfigError(f"{where}: two stages have this name")
        merged = _merge(top, entry)
        if i > 1 and "init_from" not in entry:
            merged["init_from"] = PREVIOUS  # the recipe runner sets the previous policy
        try:
            out.append(stage_from_dict(merged, where))
        except ConfigError as e:
            msg = str(e)
            raise ConfigError(msg if msg.startswith(where) else f"{where}: {msg}") from None
    return Recipe(data, out, staged=True)


def _single(data: dict[str, Any], source: str) -> dict[str, Any]:
    """A config without ``stages``: one stage named after the run."""
    _old_keys(data, source, single=True)
    run = data.get("run", {})
    name = run.get("name", RunSection.name) if isinstance(run, dict) else RunSection.name
    return {"name": name, **data}


def _yaml_value(item: str, raw: str) -> Any:
    try:
        return yaml.safe_load(raw)
    except (yaml.YAMLError, RecursionError) as e:
        raise ConfigError(f"--set {item}: cannot parse the value "
                          f"({' '.join(str(e).split()) or type(e).__name__})") from None


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` strings onto a config mapping. KEY is ``section.key``
    (``ppo.learning_rate=1e-3``), ``opponents.KIND`` (one weight), ``kind`` or
    ``init_from``, or any of these after a stage's name (``finetune.ppo.gamma=0.99``).
    Values parse as YAML; a string key keeps the text as given."""
    data = copy.deepcopy(data)
    stage_names = [s.get("name") for s in data.get("stages", []) if isinstance(s, dict)]
    known = sections()
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"--set {item!r} must look like key=value")
        key, raw = (s.strip() for s in item.split("=", 1))
        parts = key.split(".")
        target = data
        # a stage's name first, unless it is a section's and a key of that section follows
        is_section_key = parts[0] in known and len(parts) == 2 and parts[1] in {
            f.name for f in dataclasses.fields(known[parts[0]])}
        if parts[0] in stage_names and len(parts) > 1 and not is_section_key:
            target = data["stages"][stage_names.index(parts[0])]
            parts = parts[1:]
        head = parts[0]
        if head in OLD_KEYS and head not in known and head not in STAGE_KEYS:
            raise ConfigError(f"--set {item}: {head!r} is from the old flat layout; it is now "
                              f"{OLD_KEYS[head]!r}")
        if head in known:
            fields = {f.name: f for f in dataclasses.fields(known[head])}
            if len(parts) != 2:
                raise ConfigError(f"--set {item}: give {head}.KEY=VALUE (keys: "
                                  f"{', '.join(fields)})")
            if parts[1] not in fields:
                raise ConfigError(f"unknown config key '{head}.{parts[1]}' in --set {item}; "
                                  f"section {head!r} has: {', '.join(fields)}")
            value = _yaml_value(item, raw)
            if type_of(fields[parts[1]]) is str and not isinstance(value, str):
                value = raw
            section = target.setdefault(head, {})
            if not isinstance(section, dict):
                raise ConfigError(f"config section {head!r} must be a mapping, got {section!r}")
            section[parts[1]] = value
            if target is data:
                _check_reaches_a_stage(data, head, parts[1], item)
        elif head == "opponents" and len(parts) > 1:
            current = target.get("opponents", dict(DEFAULT_OPPONENTS))
            if not isinstance(current, dict):
                raise ConfigError(f"config key 'opponents' must be a mapping, got {current!r}")
            target["opponents"] = {**current, ".".join(parts[1:]): _yaml_value(item, raw)}
        elif head in STAGE_KEYS and len(parts) == 1 and head != "name":
            value = _yaml_value(item, raw)
            target[head] = raw if head != "opponents" and not isinstance(value, str) else value
        else:
            raise ConfigError(f"unknown config key {key!r} in --set {item}; give SECTION.KEY "
                              f"(sections: {', '.join(known)}), opponents.KIND, kind or "
                              f"init_from" + (f", after a stage name ({', '.join(stage_names)})"
                                              if stage_names else ""))
    return data


def _check_reaches_a_stage(data: dict[str, Any], section: str, key: str, item: str) -> None:
    """A top-level ``--set`` that every stage using the section overrides itself would
    change nothing: refused, naming the stages."""
    readers = section_kinds().get(section, tuple(kinds()))
    users = [st for st in data.get("stages") or [] if isinstance(st, dict)
             and kind_name(st.get("kind")) in readers]
    if users and all(isinstance(st.get(section), dict) and key in st[section] for st in users):
        names = ", ".join(str(st.get("name")) for st in users)
        raise ConfigError(f"--set {item} changes no stage: every stage that uses it ({names}) "
                          f"sets {section}.{key} itself; give STAGE.{section}.{key}=VALUE")


def read_config_file(path: str | Path) -> dict[str, Any]:
    """A config file's mapping; ``ConfigError`` naming the file when it cannot be read."""
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"config file {str(p)!r} does not exist")
    if not p.is_file():
        raise ConfigError(f"config file {str(p)!r} is not a file")
    try:
        raw = p.read_bytes()
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[:e.start].count(b"\n") + 1
        raise ConfigError(f"config file {str(p)!r} is not UTF-8 text (line {line})") from None
    except OSError as e:
        raise ConfigError(f"config file {str(p)!r} cannot be read: {e.strerror}") from None
    try:
        loaded = yaml.safe_load(text) or {}
    except yaml.YAMLError as e:
        raise ConfigError(f"config file {str(p)!r} is not valid YAML: "
                          f"{' '.join(str(e).split())}") from None
    except RecursionError:
        raise ConfigError(f"config file {str(p)!r} is nested too deeply") from None
    if not isinstance(loaded, dict):
        raise ConfigError(f"config file {str(p)!r} must be a mapping of keys to values")
    return loaded


def load_recipe(path: str | Path | None, overrides: list[str] | None = None,
                base: dict[str, Any] | None = None) -> Recipe:
    """YAML file (over ``base``) + ``--set`` overrides -> every stage, validated."""
    data: dict[str, Any] = dict(base or {})
    source = "config"
    if path is not None:
        data = _merge(data, read_config_file(path))
        source = str(path)
    return recipe_from_dict(apply_overrides(data, overrides or []), source)


def load_config(path: str | Path | None, overrides: list[str] | None = None,
                base: dict[str, Any] | None = None, stage: str | None = None) -> StageConfig:
    """The one stage of a config without ``stages:``, or the stage named ``stage`` of a
    recipe (for tools that train or measure one stage)."""
    recipe = load_recipe(path, overrides, base)
    if stage is not None:
        names = [s.name for s in recipe.stages]
        if stage not in names:
            raise ConfigError(f"config file {str(path)!r} has no stage {stage!r}; its "
                              f"stages: {', '.join(names)}")
        return recipe.stages[names.index(stage)]
    if recipe.staged:
        raise ConfigError(f"config file {str(path)!r} lists stages; this command trains one "
                          f"stage: use train.py --config for a recipe")
    return recipe.stages[0]


def describe() -> str:
    """Every key by section: type, default, allowed values, help (``--help-config``)."""
    lines = [
        "Top-level keys (or each stage's, in a recipe's `stages:` list):",
        f"  kind (str, default 'ppo'; one of {list(kinds())}): what the stage trains: "
        + "; ".join(f"{name!r} {kind.help}" for name, kind in kinds().items())
        + "".join(f" ({old!r}: the earlier name of {new!r})" for old, new in RENAMED.items()),
        f"  init_from (str, default ''): {INIT_FROM_HELP}",
        f"  opponents (mapping, default {DEFAULT_OPPONENTS}): {OPPONENTS_HELP}",
        "  stages (list): a recipe: each stage a mapping with name, kind, optional "
        "init_from and any sections to change",
    ]
    for name, cls in sections().items():
        lines += section_lines(name, cls)
    return "\n".join(lines)
