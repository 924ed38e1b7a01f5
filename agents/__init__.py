"""Agents: baselines (random, greedy, expert, pimc), learned policies and evaluation.

Agents are named by spec strings everywhere (CLI, configs, records):

- ``random``: uniform over the legal moves;
- ``greedy``: best immediate capture, else the card that gives the opponent least;
- ``expert``: rule-of-thumb player (card counting, no cheap scopa, sevens, last capture);
- ``pimc`` / ``pimc:worlds=12,depth=5``: perfect-information Monte Carlo search;
- ``ckpt:PATH``: a trained policy (checkpoint file or run directory);
- ``pretrained``: the shipped trained policy (the network alone);
- ``pretrained:endgame=exact``: the same network, with the last deal of a 2-player
  hand (deck empty, every card known) played exactly (``agents.endgame``);
  ``pretrained:suits=close|last_deal|all|none``: which decisions' scores are averaged
  over the 6 views with the plain suits renamed (default ``close``: the last deal's and
  the close calls; ``scopa_policy.symmetry``);
- ``sb3:PATH``: a Stable-Baselines3 ``MaskablePPO`` model trained on ``scopa/Scopa-v0``
  (``agents.gym_env``; needs ``pip install -e .[sb3]``);
- ``rllib:PATH``: an RLlib checkpoint of a policy trained on the PettingZoo environment
  (``agents.rllib_agent``, examples/rllib_ppo.py; needs ``pip install -e .[rllib]``);
- ``py:package.module:ATTR`` / ``py:path/to/file.py:ATTR`` (``,name=value`` parameters
  optional): your own agent class or factory (``agents.plugins``, docs/agents.md);
- any name an installed package registers in the ``scopa.agents`` entry-point group.

``make_agent(spec, seed)`` builds one; an unknown name or parameter raises
``ValueError`` listing what exists. Every agent has ``spec`` and ``act(info) -> id``;
built-in ones also ``act_batch(infos)``. ``agents.batched.batched_actions`` plays
``random``, ``greedy`` and ``expert`` in many games of a ``VectorScopaEnv`` at once.
"""

from __future__ import annotations

from typing import Any

from . import plugins
from .base import Agent, BaseAgent, RandomAgent
from .expert import ExpertAgent
from .greedy import GreedyAgent
from .pimc import PIMCAgent

AGENTS: dict[str, type[BaseAgent]] = {
    cls.name: cls for cls in (RandomAgent, GreedyAgent, ExpertAgent, PIMCAgent)}
ENDGAME_MODES = ("net", "exact")  # pretrained:endgame=... (scopa_policy.agent)
SUIT_MODES = ("close", "last_deal", "all", "none")  # pretrained:suits=... (the first: default)
DEFAULT_SUITS = SUIT_MODES[0]
PRETRAINED_PARAMS = {"endgame": ENDGAME_MODES, "suits": SUIT_MODES}
LEARNED = {"ckpt": "ckpt:PATH  (a trained policy: checkpoint file or run directory)",
           "pretrained": "pretrained[:endgame=exact][,suits=close|last_deal|all|none]  (the "
                         "shipped trained policy; endgame=exact: the last deal of a "
                         "2-player hand played exactly; suits: which decisions average the "
                         "6 suit-renamed views)",
           "sb3": "sb3:PATH  (a Stable-Baselines3 MaskablePPO model zip, pip install -e .[sb3])",
           "rllib": "rllib:PATH  (an RLlib checkpoint folder, pip install -e .[rllib])"}


def known_specs() -> list[str]:
    """One line per agent name: its spec form and what it does."""
    out = []
    for name, cls in AGENTS.items():
        form = name
        if cls.PARAMS:
            form += ":" + ",".join(f"{k}={d}" for k, (_, d, _) in cls.PARAMS.items())
        out.append(f"{form}  ({cls.summary})")
    out.extend(LEARNED.values())
    out.append("py:MODULE:ATTR or py:FILE.py:ATTR[,name=value...]  (your own agent class or "
               "factory, docs/agents.md)")
    out.extend(plugins.entry_point_lines(set(AGENTS) | set(LEARNED)))
    return out


def _known_text() -> str:
    return "known agents: " + "; ".join(known_specs())


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"pimc:worlds=8,depth=3"`` -> ``("pimc", {"worlds": 8, "depth": 3})`` (typed and
    checked against the agent's parameters). ``ckpt:PATH`` -> ``("ckpt", {"path": PATH})``."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec {spec!r} is empty; {_known_text()}")
    spec = spec.strip()
    name, _, rest = spec.partition(":")
    name = name.strip()
    if name in ("ckpt", "sb3", "rllib"):
        if not rest.strip():
            raise ValueError(f"agent spec '{name}:' needs a path: {name}:PATH")
        return name, {"path": rest.strip()}
    if name == "pretrained":
        params = {}
        for item in filter(None, (x.strip() for x in rest.split(","))):
            key, _, raw = (x.strip() for x in item.partition("="))
            if raw not in PRETRAINED_PARAMS.get(key, ()):
                allowed = ", ".join(f"{k}={'|'.join(v)}" for k, v in PRETRAINED_PARAMS.items())
                raise ValueError(f"agent 'pretrained' takes the parameters {allowed}; got "
                                 f"{item!r} in {spec!r}")
            params[key] = raw
        return name, params
    if name not in AGENTS:
        plugin = plugins.resolve(spec, set(AGENTS) | set(LEARNED))
        if plugin is not None:
            return name, plugin[1]
        raise ValueError(f"unknown agent {name!r} in spec {spec!r}; {_known_text()}")
    cls = AGENTS[name]
    params: dict[str, Any] = {}
    for item in filter(None, (x.strip() for x in rest.split(","))):
        key, eq, raw = (x.strip() for x in item.partition("="))
        if key in cls.PARAMS and not (eq and raw):
            raise ValueError(f"parameter {key!r} of agent {name!r} needs a value: {key}=VALUE")
        params[key] = cls.param_value(key, raw, f"agent {name!r}")
    return name, params


def check_spec(spec: str) -> str:
    """``ValueError`` naming the problem unless ``spec`` names an agent that can be built;
    cheap (a learned agent's checkpoint is not read; a ``py:`` module is imported): its
    canonical form."""
    name, params = parse_spec(spec)
    if name == "sb3":
        from . import sb3_agent
        sb3_agent.check_available()
        sb3_agent.model_path(params["path"])
    if name == "rllib":
        from . import rllib_agent
        rllib_agent.check_available()
        rllib_agent.module_dir(params["path"])
    if name in LEARNED or name not in AGENTS:  # learned, py: or entry point
        return spec.strip()
    return AGENTS[name](seed=0, **params).spec


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """An agent from its spec string (``"random"``, ``"pimc:worlds=12,depth=5"``, ...)."""
    name, params = parse_spec(spec)
    if name == "sb3":  # sb3-contrib is imported only here
        from .sb3_agent import SB3Agent
        return SB3Agent(params["path"], seed=seed)
    if name == "rllib":  # RLlib is imported only here
        from .rllib_agent import RLlibAgent
        return RLlibAgent(params["path"], seed=seed)
    if name in LEARNED:
        try:  # the inference layer above this one, loaded only for learned agents
            from scopa_policy import agent as learned
        except ImportError as e:
            raise ValueError(f"agent spec {spec!r} needs scopa_policy (trained policies, "
                             f"with torch), which could not be imported: {e}") from e
        return learned.load_policy_agent(params.get("path"), seed=seed,
                                         endgame=params.get("endgame", "net"),
                                         suits=params.get("suits", DEFAULT_SUITS))
    if name not in AGENTS:  # py: or entry point
        obj, params = plugins.resolve(spec, set(AGENTS) | set(LEARNED))  # type: ignore[misc]
        return plugins.build(spec, obj, params, seed)
    return AGENTS[name](seed=seed, **params)


__all__ = ["Agent", "BaseAgent", "RandomAgent", "GreedyAgent", "ExpertAgent", "PIMCAgent",
           "make_agent", "parse_spec", "check_spec", "known_specs", "AGENTS"]
