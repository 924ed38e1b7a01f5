"""The config sections every stage kind reads: ``run``, ``rules``, ``rollouts`` and
``network`` (listed before the kinds' own sections), ``evaluation`` and ``checkpoints``
(after them). A kind's own sections are in its module (``scopa_train.stages``); a key's
typing and checks are ``scopa_train.settings``'.
"""

from __future__ import annotations

from dataclasses import dataclass

from scopa_env.rules import NAMED_RULES

from .settings import setting as _f

MAX_SEED = 2**63 - 1


@dataclass
class RunSection:
    name: str = _f("default", "run name (letters, digits and _ . + -, starting with a letter "
                   "or digit); the run directory is runs_dir/NAME-TIMESTAMP")
    seed: int = _f(1, "seed of everything (deals, sampling, minibatches)", lo=0, hi=MAX_SEED)
    runs_dir: str = _f("runs", "parent folder of run directories")
    device: str = _f("auto", "where the learner and the batched policy forward run: 'auto' "
                     "(a CUDA GPU when torch sees one, else the CPU), 'cpu' or 'cuda'",
                     choices=("auto", "cpu", "cuda"))
    torch_threads: int = _f(1, "torch.set_num_threads (0 = one per CPU core)", lo=0, hi=256)
    max_minutes: float = _f(0.0, "wall-clock limit of this invocation in minutes (0 = none): "
                            "the stage in progress saves and the command stops; running the "
                            "command again continues, with a fresh limit", lo=0)


@dataclass
class RulesSection:
    name: str = _f("scopa", "named rule set", choices=tuple(NAMED_RULES))
    players: int = _f(2, "2, or 4 (two teams; partners share the policy and the reward)",
                      choices=(2, 4))
    options: dict = _f({}, "extra rules options (docs/spec/rules.md), e.g. {target_score: 16}")


@dataclass
class RolloutsSection:
    num_envs: int = _f(64, "games played in parallel by the batched environment", lo=1,
                       hi=65536)
    rollout_steps: int = _f(72, "moves per game per rollout (with episode=hand, rounded up "
                            "to whole hands)", lo=1)
    episode: str = _f("hand", "one episode = one hand or one match", choices=("hand", "match"))
    reward: str = _f("points", "'points': hand points margin at each hand end (zero-sum); "
                     "'match': +1/-1 at match end (sign of the margin with episode=hand)",
                     choices=("points", "match"))
    backend: str = _f("local", "where rollouts run: 'local' (this process) or 'ray' (Ray "
                      "actors, the learner stays here; pip install -e .[ray]); PPO stages",
                      choices=("local", "ray"))
    ray_address: str = _f("", "Ray cluster to join with backend=ray: 'auto', HOST:PORT, or "
                          "empty for Ray's default (RAY_ADDRESS, else the cluster `ray "
                          "start` began on this machine, else a new local one)")
    ray_workers: int = _f(2, "rollout workers (Ray actors, one CPU each) with backend=ray; "
                          "each plays its share of the num_envs games", lo=1, hi=4096)


@dataclass
class NetworkSection:
    hidden_size: int = _f(256, "observation encoder width", lo=8, hi=4096)
    hidden_layers: int = _f(2, "observation encoder depth", lo=1, hi=8)
    action_hidden: int = _f(128, "action scorer hidden width", lo=8, hi=4096)


@dataclass
class EvaluationSection:
    every_steps: int = _f(500_000, "PPO, DMC: env steps between evaluations; other kinds "
                          "are evaluated once, at their end (0 = never)", lo=0)
    hands: int = _f(200, "paired hands per evaluation opponent", lo=1)
    opponents: list = _f(["random", "greedy", "expert"],
                         "baselines evaluated against (agent specs)")
    seed: int = _f(2024, "evaluation seed (fixed: same deals every time)", lo=0, hi=MAX_SEED)
    best_metric: str = _f("greedy", "evaluation opponent whose margin picks the best "
                          "checkpoint")


@dataclass
class CheckpointsSection:
    every_steps: int = _f(500_000, "PPO, DMC: env steps between periodic checkpoints (0 = only "
                          "at the end; every stage saves latest.pt on a stop)", lo=0)
    keep: int = _f(3, "periodic checkpoints kept (older ones deleted)", lo=1)


SHARED_BEFORE: dict[str, type] = {"run": RunSection, "rules": RulesSection,
                                   "rollouts": RolloutsSection, "network": NetworkSection}
SHARED_AFTER: dict[str, type] = {"evaluation": EvaluationSection,
                                  "checkpoints": CheckpointsSection}
"""The sections every stage has besides its kinds' own: before them and after them."""


__all__ = ["MAX_SEED", "SHARED_AFTER", "SHARED_BEFORE", "CheckpointsSection",
           "EvaluationSection", "NetworkSection", "RolloutsSection", "RulesSection",
           "RunSection"]
