"""The training configuration: one typed dataclass, loaded from YAML plus ``--set`` overrides.

Every key has a default, a type and an allowed range; an unknown key, a value of the
wrong type or out of range fails at start with a message naming the key and what is
allowed (``ConfigError``).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from agents import check_spec
from scopa_env.rules import NAMED_RULES, OPTION_NAMES, resolve_rules

OPPONENT_KINDS = ("self", "past", "random", "greedy", "expert")
MAX_SEED = 2**63 - 1
# a run name is one folder name: it cannot place the run outside runs_dir
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}")


class ConfigError(ValueError):
    """A bad training configuration (unknown key, wrong type, out-of-range value)."""


def _f(default: Any, help: str, *, lo: float | None = None, hi: float | None = None,
       choices: tuple[Any, ...] | None = None, lo_open: bool = False) -> Any:
    meta = {"help": help, "lo": lo, "hi": hi, "choices": choices, "lo_open": lo_open}
    if isinstance(default, (dict, list)):
        return field(default_factory=lambda: type(default)(default), metadata=meta)
    return field(default=default, metadata=meta)


@dataclass
class TrainConfig:
    """All hyperparameters of a PPO self-play run (see configs/default.yaml)."""

    # -- run ------------------------------------------------------------------------
    name: str = _f("default", "run name (letters, digits and _ . + -, starting with a letter "
                   "or digit); the run directory is runs/NAME-TIMESTAMP")
    seed: int = _f(1, "seed of everything (deals, sampling, minibatches)", lo=0, hi=MAX_SEED)
    runs_dir: str = _f("runs", "parent folder of run directories")
    torch_threads: int = _f(1, "torch.set_num_threads (0 = one per CPU core)", lo=0, hi=256)
    device: str = _f("auto", "where the learner and the batched policy forward run: 'auto' "
                     "(a CUDA GPU when torch sees one, else the CPU), 'cpu' or 'cuda'",
                     choices=("auto", "cpu", "cuda"))
    algo: str = _f("ppo", "'ppo': PPO self-play; 'last_deal': fit a last-deal scorer "
                   "(scopa_policy.last_deal) to exact values of the last deals of the "
                   "init_from policy's rollouts, 2 players only (scopa_train.last_deal); "
                   "'suit_distill': fit the init_from policy network to its own scores "
                   "averaged over the 6 suit views (scopa_train.suit_distill)",
                   choices=("ppo", "last_deal", "suit_distill"))
    backend: str = _f("local", "where rollouts run: 'local' (this process) or 'ray' (Ray "
                      "actors, the learner stays here; pip install -e .[ray])",
                      choices=("local", "ray"))
    ray_address: str = _f("", "Ray cluster to join with backend=ray: 'auto', HOST:PORT, or "
                          "empty for Ray's default (RAY_ADDRESS, else the cluster `ray "
                          "start` began on this machine, else a new local one)")
    ray_workers: int = _f(2, "rollout workers (Ray actors, one CPU each) with backend=ray; "
                          "each plays its share of the num_envs games", lo=1, hi=4096)
    # -- game -----------------------------------------------------------------------
    rules: str = _f("scopa", "named rule set", choices=tuple(NAMED_RULES))
    players: int = _f(2, "2, or 4 (two teams; partners share the policy and the reward)",
                      choices=(2, 4))
    rules_options: dict = _f({}, "extra rules options (rules.md), e.g. {target_score: 16}")
    episode: str = _f("hand", "one episode = one hand or one match", choices=("hand", "match"))
    reward: str = _f("points", "'points': hand points margin at each hand end (zero-sum); "
                     "'match': +1/-1 at match end (sign of the margin with episode=hand)",
                     choices=("points", "match"))
    reward_scale: float = _f(0.25, "rewards are multiplied by this for learning (value "
                             "targets); logged points stay unscaled", lo=0, lo_open=True)
    # -- budget ---------------------------------------------------------------------
    total_env_steps: int = _f(2_000_000, "environment moves to train for (all seats)", lo=1)
    max_minutes: float = _f(0.0, "wall-clock limit in minutes (0 = none); the run stops "
                            "and saves when reached", lo=0)
    # -- rollouts -------------------------------------------------------------------
    num_envs: int = _f(64, "games played in parallel by the batched environment", lo=1,
                       hi=65536)
    rollout_steps: int = _f(72, "moves per game per rollout (with episode=hand, rounded up "
                            "to whole hands)", lo=1)
    opponents: dict = _f({"self": 0.75, "past": 0.1, "greedy": 0.15},
                         "opponent pool: sampling weight per kind, kinds "
                         + "/".join(OPPONENT_KINDS) + " or any agent spec (pimc:worlds=4, "
                         "pretrained, py:mybots:Bot, ...)")
    past_snapshot_every: int = _f(10, "updates between snapshots added to the past pool",
                                  lo=1)
    past_pool_size: int = _f(5, "past snapshots kept (oldest dropped)", lo=1, hi=100)
    # -- PPO ------------------------------------------------------------------------
    learning_rate: float = _f(3e-4, "Adam learning rate", lo=0, hi=1, lo_open=True)
    lr_final_fraction: float = _f(0.1, "linear schedule, stepped once per update: final lr = "
                                  "learning_rate x this",
                                  lo=0, hi=1)
    gamma: float = _f(1.0, "discount per own move", lo=0, hi=1)
    gae_lambda: float = _f(0.95, "GAE lambda", lo=0, hi=1)
    update_epochs: int = _f(4, "PPO epochs per rollout", lo=1, hi=100)
    num_minibatches: int = _f(4, "minibatches per epoch", lo=1, hi=1024)
    clip_coef: float = _f(0.2, "PPO ratio clip", lo=0, hi=1, lo_open=True)
    clip_vloss: bool = _f(True, "clip the value loss like the policy ratio")
    ent_coef: float = _f(0.01, "entropy bonus at the start", lo=0, hi=1)
    ent_coef_final: float = _f(0.001, "entropy bonus at the end (linear schedule, "
                                 "stepped once per update)", lo=0, hi=1)
    vf_coef: float = _f(0.5, "value loss weight", lo=0, hi=100)
    max_grad_norm: float = _f(0.5, "gradient clipping norm", lo=0, lo_open=True)
    norm_adv: bool = _f(True, "normalise advantages per minibatch")
    target_kl: float = _f(0.0, "stop the epochs early when approx KL exceeds this (0 = off)",
                          lo=0)
    endgame_coef: float = _f(0.0, "2 players: weight of the exact last-deal teacher. Once "
                             "the deck is empty every card is known; the learner's "
                             "decisions there are solved exactly (agents.endgame), their "
                             "value targets become the exact values and the loss gains "
                             "this weight times the policy's expected regret in points "
                             "(0 = off)", lo=0, hi=100)
    # -- network --------------------------------------------------------------------
    hidden_size: int = _f(256, "observation encoder width", lo=8, hi=4096)
    hidden_layers: int = _f(2, "observation encoder depth", lo=1, hi=8)
    action_hidden: int = _f(128, "action scorer hidden width", lo=8, hi=4096)
    init_from: str = _f("", "start a new run from these weights instead of a fresh "
                        "initialisation: a checkpoint or policy file, or 'pretrained' "
                        "(the shipped weights for the config's rules); its network shape "
                        "must match the config's (empty = fresh)")
    # -- algo: last_deal ------------------------------------------------------------
    last_deal_decisions: int = _f(200_000, "last-deal decisions to collect and label "
                                  "exactly before fitting", lo=100)
    last_deal_epochs: int = _f(3, "passes over the collected decisions", lo=1, hi=1000)
    last_deal_batch: int = _f(512, "decisions per minibatch", lo=1, hi=1 << 20)
    last_deal_lr: float = _f(1e-3, "Adam learning rate at the start (cosine to 0)", lo=0,
                             hi=1, lo_open=True)
    last_deal_holdout: float = _f(0.02, "share of the decisions (the last collected) held "
                                  "out to score each epoch", lo=0, hi=0.5, lo_open=True)
    last_deal_width: int = _f(64, "token width of the last-deal scorer", lo=8, hi=1024)
    last_deal_layers: int = _f(3, "its transformer layers", lo=1, hi=16)
    last_deal_heads: int = _f(4, "its attention heads (width must be a multiple)", lo=1,
                              hi=64)
    last_deal_regret_coef: float = _f(0.0, "weight of the expected points lost (under the "
                                      "scorer's softmax) added to the best-set loss", lo=0,
                                      hi=100)
    last_deal_suit_augment: bool = _f(False, "fit each minibatch's decisions under random "
                                      "permutations of the plain suits (cups, swords and "
                                      "clubs play alike: scopa_env.symmetry)")
    last_deal_buckets: int = _f(0, "minibatches drawn together and sorted by the cards in "
                                "play, so that each pads its decisions to fewer tokens "
                                "(about 1.5 times faster at 16); 0 or 1: plain random "
                                "minibatches", lo=0, hi=1 << 16)
    last_deal_ownership_coef: float = _f(0.0, "weight of the ownership loss: a training "
                                         "head predicts, from each move's hidden layer, "
                                         "which cards in play the mover ends up with under "
                                         "best play after it (scopa_train.last_deal)",
                                         lo=0, hi=100)
    # -- algo: suit_distill ------------------------------------------------------------
    distill_decisions: int = _f(1_000_000, "decisions with a choice to collect from the "
                                "init_from policy's rollouts", lo=100)
    distill_epochs: int = _f(3, "passes over the collected decisions", lo=1, hi=1000)
    distill_batch: int = _f(1024, "decisions per minibatch", lo=1, hi=1 << 20)
    distill_lr: float = _f(5e-4, "Adam learning rate at the start (cosine to 0)", lo=0,
                           hi=1, lo_open=True)
    distill_holdout: float = _f(0.02, "share of the decisions (the last collected) held "
                                "out to score each epoch", lo=0, hi=0.5, lo_open=True)
    distill_search: str = _f("", "a search agent whose move values (points) join the "
                             "targets of some decisions outside the last deal, e.g. "
                             "pimc:worlds=48,depth=8 ('': none; scopa_train.search_labels)")
    distill_search_decisions: int = _f(0, "collected decisions (drawn at random) that "
                                       "distill_search scores", lo=0)
    distill_search_beta: float = _f(16.0, "a scored decision's target: the averaged logits "
                                    "+ this x the search values", lo=0, hi=1e6)
    distill_search_workers: int = _f(0, "worker processes scoring them (0: one per CPU "
                                     "core)", lo=0, hi=256)
    distill_search_values: str = _f("", "an earlier run's search values (its "
                                    "search_values.npz, or its run directory) to reuse: "
                                    "where it scored the same decisions (same init_from, "
                                    "seed, rollouts and search) nothing is scored again "
                                    "('': score them)")
    # -- evaluation, checkpoints -------------------------------------------------------
    eval_every_steps: int = _f(500_000, "env steps between evaluations (0 = never)", lo=0)
    eval_hands: int = _f(200, "paired hands per evaluation opponent", lo=1)
    eval_opponents: list = _f(["random", "greedy", "expert"],
                              "baselines evaluated against (agent specs)")
    eval_seed: int = _f(2024, "evaluation seed (fixed: same deals every time)", lo=0,
                        hi=MAX_SEED)
    eval_workers: int = _f(1, "evaluator worker processes", lo=1, hi=64)
    best_metric: str = _f("greedy", "eval opponent whose margin picks the best checkpoint")
    checkpoint_every_steps: int = _f(500_000, "env steps between periodic checkpoints "
                                     "(0 = only at the end)", lo=0)
    keep_checkpoints: int = _f(3, "periodic checkpoints kept (older ones deleted)", lo=1)

    # ------------------------------------------------------------------------------
    def __post_init__(self) -> None:
        validate(self)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @property
    def rules_kwargs(self) -> dict[str, Any]:
        return {**self.rules_options, "players": self.players}

    def make_rules(self) -> Any:
        return resolve_rules(self.rules, self.players, self.rules_options)

    def torch_device(self) -> Any:
        """The resolved ``device`` (a ``torch.device``); ``cuda`` without a GPU that
        torch can use is a ``ConfigError``."""
        import torch

        if self.device == "cpu" or (self.device == "auto" and not torch.cuda.is_available()):
            return torch.device("cpu")
        if not torch.cuda.is_available():
            raise ConfigError("config key 'device' is 'cuda' but torch sees no CUDA GPU "
                              f"(torch {torch.__version__}); use device: auto or cpu")
        return torch.device("cuda")

    def set_up_torch(self, learner_device: Any) -> None:
        """Apply ``torch_threads`` and torch's deterministic algorithms: without them some
        multi-threaded CPU kernels add in an order that varies from run to run (two runs
        with 2 threads drifted 0.09 apart in a weight within 10 updates, BENCHMARKS.md,
        the recipe), and on a GPU the backward of the network's gathers adds with
        atomics. For a CUDA learner ``CUBLAS_WORKSPACE_CONFIG`` is set first (unless the
        user set it), as deterministic cuBLAS requires; it takes effect because no cuBLAS
        call has been made yet. Process-wide, as torch's thread count is."""
        import os

        import torch

        torch.set_num_threads(self.threads())
        if learner_device.type == "cuda":
            os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.use_deterministic_algorithms(True, warn_only=True)

    def threads(self) -> int:
        """``torch_threads`` resolved (0 = the CPU cores this process may use)."""
        import os

        if self.torch_threads:
            return self.torch_threads
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
            else (os.cpu_count() or 1)


FIELDS = {f.name: f for f in dataclasses.fields(TrainConfig)}


def _type_name(t: Any) -> str:
    return {int: "an integer", float: "a number", bool: "true or false", str: "a string",
            dict: "a mapping", list: "a list"}[t]


def _field_type(name: str) -> type:
    t = FIELDS[name].type
    return {"int": int, "float": float, "bool": bool, "str": str, "dict": dict,
            "list": list}[t if isinstance(t, str) else t.__name__]


def _check_type(name: str, value: Any) -> Any:
    t = _field_type(name)
    ok = (isinstance(value, bool) if t is bool
          else isinstance(value, int) and not isinstance(value, bool) if t is int
          else isinstance(value, (int, float)) and not isinstance(value, bool) if t is float
          else isinstance(value, t))
    if not ok:
        raise ConfigError(f"config key {name!r} must be {_type_name(t)}, got {value!r} "
                          f"({type(value).__name__}); {FIELDS[name].metadata['help']}")
    return float(value) if t is float else value


def search_values_file(path: str) -> Path:
    """The search-values file ``distill_search_values`` names: the file, or the
    ``search_values.npz`` of a run directory."""
    p = Path(path)
    return p / "search_values.npz" if p.is_dir() else p


def validate(cfg: TrainConfig) -> None:
    for name, f in FIELDS.items():
        value = _check_type(name, getattr(cfg, name))
        object.__setattr__(cfg, name, value)
        m = f.metadata
        if m["choices"] is not None and value not in m["choices"]:
            raise ConfigError(f"config key {name!r} must be one of "
                              f"{', '.join(map(repr, m['choices']))}, got {value!r}")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            if isinstance(value, float) and not math.isfinite(value):
                raise ConfigError(f"config key {name!r} must be finite, got {value!r}")
            lo, hi = m["lo"], m["hi"]
            bad_lo = lo is not None and (value <= lo if m["lo_open"] else value < lo)
            bad_hi = hi is not None and value > hi
            if bad_lo or bad_hi:
                rng = (("(" if m["lo_open"] else "[") + (str(lo) if lo is not None else "-inf")
                       + ", " + (str(hi) if hi is not None else "inf") + "]")
                raise ConfigError(f"config key {name!r} = {value!r} is out of range: "
                                  f"allowed {rng}; {m['help']}")
    # structured keys
    if not NAME_RE.fullmatch(cfg.name):
        raise ConfigError(f"config key 'name' = {cfg.name!r} must be a plain folder name: "
                          f"letters, digits and _ . + - (at most 100, starting with a letter "
                          f"or digit), no '/' or '..'")
    if not cfg.runs_dir.strip() or "\0" in cfg.runs_dir:
        raise ConfigError(f"config key 'runs_dir' must name a folder, got {cfg.runs_dir!r}")
    for kind in sorted(set(cfg.opponents) - set(OPPONENT_KINDS), key=str):
        try:
            check_spec(kind)  # a baseline or any agent spec plays as a frozen opponent
        except (ValueError, AttributeError) as e:
            raise ConfigError(f"config key 'opponents': {kind!r} is neither one of "
                              f"{', '.join(OPPONENT_KINDS)} nor an agent spec ({e})") from None
    for k, w in cfg.opponents.items():
        if isinstance(w, bool) or not isinstance(w, (int, float)) or w < 0 or not math.isfinite(w):
            raise ConfigError(f"config key 'opponents.{k}' must be a weight >= 0, got {w!r}")
    if sum(cfg.opponents.values()) <= 0:
        raise ConfigError("config key 'opponents' needs at least one positive weight, "
                          f"got {cfg.opponents!r}")
    for spec in cfg.eval_opponents:
        if not isinstance(spec, str) or not spec:
            raise ConfigError(f"config key 'eval_opponents' must list agent specs, got {spec!r}")
        try:
            check_spec(spec)
        except ValueError as e:
            raise ConfigError(f"config key 'eval_opponents': {e}") from None
    if len(set(cfg.eval_opponents)) != len(cfg.eval_opponents):
        raise ConfigError(f"config key 'eval_opponents' lists an agent twice: "
                          f"{cfg.eval_opponents!r}")
    if cfg.eval_every_steps and cfg.best_metric not in cfg.eval_opponents:
        raise ConfigError(f"config key 'best_metric' = {cfg.best_metric!r} must be one of "
                          f"eval_opponents {cfg.eval_opponents!r}")
    if cfg.backend == "ray":
        if cfg.ray_workers > cfg.num_envs:
            raise ConfigError(f"config key 'ray_workers' = {cfg.ray_workers} exceeds 'num_envs' "
                              f"= {cfg.num_envs}: every rollout worker needs a game")
    if cfg.ent_coef_final > cfg.ent_coef:
        raise ConfigError(f"config key 'ent_coef_final' ({cfg.ent_coef_final}) must not exceed "
                          f"'ent_coef' ({cfg.ent_coef})")
    if cfg.endgame_coef > 0 and (cfg.players != 2 or cfg.reward != "points"
                                 or cfg.episode != "hand"):
        raise ConfigError("config key 'endgame_coef' needs players: 2, reward: points and "
                          "episode: hand (the exact last-deal values are hand points "
                          "margins, and only 2-player seats know every card once the deck "
                          f"is empty); got players={cfg.players}, reward={cfg.reward!r}, "
                          f"episode={cfg.episode!r}")
    if cfg.algo == "last_deal":
        if cfg.players != 2 or cfg.reward != "points" or cfg.episode != "hand":
            raise ConfigError("config key 'algo' = 'last_deal' needs players: 2, reward: "
                              "points and episode: hand (the exact values are hand points "
                              "margins of 2-player last deals); got "
                              f"players={cfg.players}, reward={cfg.reward!r}, "
                              f"episode={cfg.episode!r}")
        if not cfg.init_from:
            raise ConfigError("config key 'algo' = 'last_deal' needs 'init_from': the "
                              "policy whose rollouts are labelled and which the scorer joins")
        if cfg.backend != "local":
            raise ConfigError("config key 'algo' = 'last_deal' runs with backend: local")
        if cfg.last_deal_width % cfg.last_deal_heads:
            raise ConfigError(f"config key 'last_deal_width' = {cfg.last_deal_width} must be "
                              f"a multiple of 'last_deal_heads' = {cfg.last_deal_heads}")
    if cfg.algo == "suit_distill":
        if not cfg.init_from:
            raise ConfigError("config key 'algo' = 'suit_distill' needs 'init_from': the "
                              "policy whose suit-averaged scores are distilled")
        if cfg.backend != "local":
            raise ConfigError("config key 'algo' = 'suit_distill' runs with backend: local")
        if cfg.distill_search_decisions and not cfg.distill_search:
            raise ConfigError("config key 'distill_search_decisions' is "
                              f"{cfg.distill_search_decisions} but 'distill_search' names "
                              "no search agent")
        if cfg.distill_search:
            from .search_labels import search_agent

            try:
                search_agent(cfg.distill_search, 0)
            except ValueError as e:
                raise ConfigError(f"config key 'distill_search': {e}") from None
        if cfg.distill_search_values:
            if not cfg.distill_search_decisions:
                raise ConfigError("config key 'distill_search_values' is set but "
                                  "'distill_search_decisions' is 0: nothing is scored")
            if not search_values_file(cfg.distill_search_values).is_file():
                raise ConfigError(f"config key 'distill_search_values': no file "
                                  f"{search_values_file(cfg.distill_search_values)}")
    unknown = sorted(map(str, set(cfg.rules_options) - set(OPTION_NAMES) - {"name", "players"}))
    if unknown:
        raise ConfigError(f"config key 'rules_options' has unknown rules option(s) "
                          f"{', '.join(unknown)}; allowed: {', '.join(OPTION_NAMES[2:])}")
    if "players" in cfg.rules_options or "name" in cfg.rules_options:
        raise ConfigError("config key 'rules_options' must not hold 'players' or 'name': "
                          "use the top-level keys 'players' and 'rules'")
    try:
        cfg.make_rules()
    except (ValueError, TypeError) as e:
        raise ConfigError(f"config keys 'rules'/'players'/'rules_options': {e}") from None
    # last: what this machine lacks, once the config itself holds together
    if cfg.backend == "ray" and importlib.util.find_spec("ray") is None:
        raise ConfigError("config key 'backend' is 'ray' but Ray is not installed: "
                          "pip install -e .[ray]")


def _yaml_value(item: str, raw: str) -> Any:
    try:
        return yaml.safe_load(raw)
    except (yaml.YAMLError, RecursionError) as e:
        raise ConfigError(f"--set {item}: cannot parse the value "
                          f"({' '.join(str(e).split()) or type(e).__name__})") from None


def parse_value(name: str, raw: str) -> Any:
    """A ``--set key=value`` value, parsed as YAML (``0.1``, ``true``, ``[a, b]``,
    ``{self: 1}``); strings stay strings."""
    value = _yaml_value(f"{name}={raw}", raw)
    t = _field_type(name)
    if t is str and not isinstance(value, str):
        value = raw
    return _coerce_float(name, value)


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply ``key=value`` strings (``opponents.greedy=0.3`` sets one mapping entry)."""
    data = dict(data)
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"--set {item!r} must look like key=value")
        key, raw = (s.strip() for s in item.split("=", 1))
        top, _, sub = key.partition(".")
        if top not in FIELDS:
            raise ConfigError(f"unknown config key {top!r} in --set {item}; "
                              f"allowed keys: {', '.join(FIELDS)}")
        if sub:
            if _field_type(top) is not dict:
                raise ConfigError(f"config key {top!r} is not a mapping: use --set {top}=VALUE")
            current = data.get(top, getattr(TrainConfig(), top))
            if not isinstance(current, dict):
                raise ConfigError(f"config key {top!r} must be a mapping, got {current!r}")
            data[top] = {**current, sub: _yaml_value(item, raw)}
        else:
            data[top] = parse_value(top, raw)
    return data


def config_from_dict(data: dict[str, Any], source: str = "config") -> TrainConfig:
    if not isinstance(data, dict):
        raise ConfigError(f"{source} must be a mapping of keys to values, got "
                          f"{type(data).__name__}")
    unknown = sorted(map(repr, set(data) - set(FIELDS)))
    if unknown:
        raise ConfigError(f"unknown config key(s) {', '.join(unknown)} in {source}; "
                          f"allowed keys: {', '.join(FIELDS)}")
    data = {name: _coerce_float(name, value) for name, value in data.items()}
    return TrainConfig(**data)


def _coerce_float(name: str, value: Any) -> Any:
    """Integers and YAML 1.1's unparsed exponents (``1e-3``) for float keys."""
    if _field_type(name) is not float or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def load_config(path: str | Path | None, overrides: list[str] | None = None,
                base: dict[str, Any] | None = None) -> TrainConfig:
    """YAML file (or ``base`` dict) + ``key=value`` overrides -> validated config."""
    data: dict[str, Any] = dict(base or {})
    source = "config"
    if path is not None:
        p = Path(path)
        if not p.exists():
            raise ConfigError(f"config file {str(p)!r} does not exist")
        if not p.is_file():
            raise ConfigError(f"config file {str(p)!r} is not a file")
        try:
            text = p.read_bytes().decode("utf-8")
        except UnicodeDecodeError as e:
            line = p.read_bytes()[:e.start].count(b"\n") + 1
            raise ConfigError(f"config file {str(p)!r} is not UTF-8 text (line {line})"
                              ) from None
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
        data.update(loaded)
        source = str(p)
    data = apply_overrides(data, overrides or [])
    return config_from_dict(data, source)


def describe() -> str:
    """One line per key: name, type, default, allowed values, help (for --help-config)."""
    lines = []
    defaults = TrainConfig()
    for name, f in FIELDS.items():
        m = f.metadata
        allowed = (f" one of {list(m['choices'])}" if m["choices"] else
                   f" range {'(' if m['lo_open'] else '['}{m['lo']}, {m['hi']}]"
                   if m["lo"] is not None or m["hi"] is not None else "")
        lines.append(f"{name} ({_field_type(name).__name__}, default "
                     f"{getattr(defaults, name)!r}{';' if allowed else ''}{allowed}): {m['help']}")
    return "\n".join(lines)
