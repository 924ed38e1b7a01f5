"""Agents: baselines (random, greedy, expert, pimc), learned policies and evaluation.

Layout: ``base`` (the agent interface, ``random``), ``baselines/`` (the rule-based agents
and their batched forms), ``evaluation/`` (evaluator, ladder, leaderboard, statistics),
``bridges/`` (Gymnasium, Stable-Baselines3, plugins), ``commands`` (command-line
plumbing shared by every command).

Agents are named by spec strings everywhere (CLI, configs, records):

- ``random``: uniform over the legal moves;
- ``greedy``: best immediate capture, else the card that gives the opponent least;
- ``expert``: rule-of-thumb player (card counting, no cheap scopa, sevens, last capture);
- ``pimc`` / ``pimc:worlds=12,depth=5``: perfect-information Monte Carlo search;
- ``ckpt:PATH``: a trained policy (checkpoint file or run directory);
- ``pretrained``: the shipped trained policy (the network alone);
  ``ckpt:`` and ``pretrained`` are registered by ``scopa_policy`` (the layer above) in
  the ``scopa.agents`` entry-point group (``scopa_policy.specs``): this layer never
  imports it;
- ``pretrained:endgame=exact``: the same network, with the last deal of a 2-player
  hand (deck empty, every card known) played exactly (``agents.baselines.endgame``);
  ``pretrained:suits=close|last_deal|all|none``: which decisions' scores are averaged
  over the 6 views with the plain suits renamed (default ``close``: the last deal's and
  the close calls; ``scopa_policy.symmetry``);
- ``sb3:PATH``: a Stable-Baselines3 ``MaskablePPO`` model trained on ``scopa/Scopa-v0``
  (``agents.bridges.gym_env``; needs ``pip install -e .[sb3]``);
- ``rllib:PATH``: an RLlib checkpoint of a policy trained on the PettingZoo environment
  (``agents.bridges.rllib_agent``, examples/rllib_ppo.py; needs ``pip install -e .[rllib]``);
- ``openspiel:ismcts[,simulations=N,uct_c=X,...]`` / ``openspiel:mcts``: OpenSpiel's own
  search bots on the ``python_scopa`` game (``agents.bridges.openspiel_search``; needs
  ``pip install -e .[openspiel]``);
- ``py:package.module:ATTR`` / ``py:path/to/file.py:ATTR`` (``,name=value`` parameters
  optional): your own agent class or factory (``agents.bridges.plugins``, docs/agents.md);
- any name an installed package registers in the ``scopa.agents`` entry-point group.

The single-agent Gymnasium environment ``GYM_ENV_ID`` (``scopa/Scopa-v0``, class
``agents.bridges.gym_env.ScopaGymEnv``, imported only by ``gymnasium.make``) is registered
by ``import scopa_env``, which importing this package does.

``make_agent(spec, seed)`` builds one; an unknown name or parameter raises
``ValueError`` listing what exists. Every agent has ``spec`` and ``act(info) -> id``;
built-in ones also ``act_batch(infos)``. ``agents.baselines.vector_moves.batched_actions`` plays
``random``, ``greedy`` and ``expert`` in many games of a ``VectorScopaEnv`` at once.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

from scopa_env import GYM_ENV_ID

from .base import Agent, BaseAgent, RandomAgent
from .baselines.expert import ExpertAgent
from .baselines.greedy import GreedyAgent
from .baselines.pimc import PIMCAgent
from .bridges import plugins

AGENTS: dict[str, type[BaseAgent]] = {
    cls.name: cls for cls in (RandomAgent, GreedyAgent, ExpertAgent, PIMCAgent)}
# built in, from an optional extra (sb3-contrib, ray[rllib])
BRIDGED = {"sb3": "sb3:PATH  (a Stable-Baselines3 MaskablePPO model zip, pip install -e "
                  ".[sb3])",
           "rllib": "rllib:PATH  (an RLlib checkpoint folder, pip install -e .[rllib])",
           "openspiel": "openspiel:ismcts[,simulations=100,uct_c=2.0,rollouts=1,worlds=-1,"
                        "final=max_visit] or openspiel:mcts[,simulations=100,uct_c=2.0,"
                        "rollouts=1]  (OpenSpiel's search bots, pip install -e .[openspiel])"}
BUILTIN = set(AGENTS) | set(BRIDGED)


def known_specs() -> list[str]:
    """One line per agent name: its spec form and what it does."""
    out = []
    for name, cls in AGENTS.items():
        form = name
        if cls.PARAMS:
            form += ":" + ",".join(f"{k}={d}" for k, (_, d, _) in cls.PARAMS.items())
        out.append(f"{form}  ({cls.summary})")
    out.extend(BRIDGED.values())
    out.append("py:MODULE:ATTR or py:FILE.py:ATTR[,name=value...]  (your own agent class or "
               "factory, docs/agents.md)")
    out.extend(plugins.entry_point_lines(BUILTIN))
    return out


def _known_text() -> str:
    return "known agents: " + "; ".join(known_specs())


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"pimc:worlds=8,depth=3"`` -> ``("pimc", {"worlds": 8, "depth": 3})`` (typed and
    checked against the agent's parameters). ``ckpt:PATH`` -> ``("ckpt", {"path": PATH})``
    (an entry point's spec family reads its own spec)."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec {spec!r} is empty; {_known_text()}")
    spec = spec.strip()
    name, _, rest = spec.partition(":")
    name = name.strip()
    if name == "openspiel":  # open-spiel is imported only here
        if importlib.util.find_spec("pyspiel") is None:
            raise ValueError(f"agent spec {spec!r} needs open-spiel, which is not installed: "
                             f"pip install -e .[openspiel]")
        from .bridges import openspiel_search
        return name, openspiel_search.parse_openspiel(spec)
    if name in BRIDGED:
        if not rest.strip():
            raise ValueError(f"agent spec '{name}:' needs a path: {name}:PATH")
        return name, {"path": rest.strip()}
    if name not in AGENTS:
        plugin = plugins.resolve(spec, BUILTIN)
        if plugin is not None:
            return name, plugin[1]
        hint = "" if plugins.entry_points() else (
            " (no package registers agents in the scopa.agents entry points: ckpt: and "
            "pretrained come from the kit's own, installed by pip install -e .)")
        raise ValueError(f"unknown agent {name!r} in spec {spec!r}; {_known_text()}{hint}")
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
        from .bridges import sb3_agent
        sb3_agent.check_available()
        sb3_agent.model_path(params["path"])
    if name == "rllib":
        from .bridges import rllib_agent
        rllib_agent.check_available()
        rllib_agent.module_dir(params["path"])
    if name == "openspiel":
        from .bridges.openspiel_search import OpenSpielSearchAgent
        return OpenSpielSearchAgent(seed=0, **params).spec
    if name not in AGENTS:  # sb3:, rllib:, py: or entry point
        return spec.strip()
    return AGENTS[name](seed=0, **params).spec


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """An agent from its spec string (``"random"``, ``"pimc:worlds=12,depth=5"``, ...)."""
    return agent_factory(spec)(seed)


def agent_factory(spec: str) -> Callable[[int | None], Agent]:
    """``seed -> make_agent(spec, seed)`` with the spec read once (a spec family found
    among the entry points once), for making many agents of one spec."""
    name, params = parse_spec(spec)
    if name == "sb3":  # sb3-contrib is imported only here
        from .bridges.sb3_agent import SB3Agent
        return lambda seed: SB3Agent(params["path"], seed=seed)
    if name == "rllib":  # RLlib is imported only here
        from .bridges.rllib_agent import RLlibAgent
        return lambda seed: RLlibAgent(params["path"], seed=seed)
    if name == "openspiel":
        from .bridges.openspiel_search import OpenSpielSearchAgent
        return lambda seed: OpenSpielSearchAgent(seed=seed, **params)
    if name not in AGENTS:  # py: or entry point (ckpt: and pretrained: scopa_policy's)
        obj, params = plugins.resolve(spec, BUILTIN)  # type: ignore[misc]
        return lambda seed: plugins.build(spec, obj, params, seed)
    cls = AGENTS[name]
    return lambda seed: cls(seed=seed, **params)


__all__ = ["GYM_ENV_ID", "Agent", "BaseAgent", "RandomAgent", "GreedyAgent", "ExpertAgent",
           "PIMCAgent", "agent_factory", "make_agent", "parse_spec", "check_spec", "known_specs",
           "AGENTS"]
