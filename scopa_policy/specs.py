"""The learned agents' spec strings, registered in the agents layer's ``scopa.agents``
entry-point group (pyproject.toml): ``ckpt:PATH`` and
``pretrained[:endgame=...,suits=...,search=on,worlds=...]``.

Each is a *spec family* (``agents.bridges.plugins``): it reads its own spec (``parse_spec``),
names itself in the list of known agents (``usage``) and, called with a seed and the
parameters, builds the agent with ``scopa_policy.agent.load_policy_agent``. This module
imports neither torch nor the network: checking a spec stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agents.commands import missing_extra

from .modes import (
    DEFAULT_SUITS,
    PLAY_MODES,
    SEARCH_HELP,
    SEARCH_KEYS,
    SearchParams,
    parse_search_param,
)


def _load_policy_agent(spec: str) -> Callable[..., Any]:
    try:  # torch and the network, loaded only to build a learned agent
        from .agent import load_policy_agent
    except ImportError as e:
        raise ValueError(f"agent spec {spec!r}: {missing_extra(e)}" if missing_extra(e)
                         else f"agent spec {spec!r} needs scopa_policy (trained policies, "
                         f"with torch), which could not be imported: {e}") from e
    return load_policy_agent


def _is_param(item: str) -> bool:
    """Whether ``item`` reads as a play parameter (``suits=all``, ``worlds=64``, ...)."""
    key = item.partition("=")[0].strip()
    return "=" in item and (key in PLAY_MODES or key in SEARCH_KEYS)


def parse_checkpoint(spec: str) -> dict[str, Any]:
    """``ckpt:PATH`` -> ``{"path": PATH}`` (the path may hold colons);
    ``ckpt:PATH,search=on,worlds=64`` adds ``pretrained``'s parameters
    (``parse_pretrained``): what follows the first comma that starts parameters."""
    name, _, rest = spec.strip().partition(":")
    name = name.strip()
    parts = rest.split(",")
    cut = next((k for k in range(1, len(parts)) if all(map(_is_param, parts[k:]))),
               len(parts))
    path = ",".join(parts[:cut]).strip()
    if not path:
        raise ValueError(f"agent spec '{name}:' needs a path: {name}:PATH")
    return {"path": path, **play_params(name, parts[cut:], spec)}


def parse_pretrained(spec: str) -> dict[str, Any]:
    """``pretrained:endgame=exact,suits=all`` -> ``{"endgame": "exact", "suits": "all"}``;
    ``search=on`` with its settings (``worlds=8,horizon=end,...``) -> ``{"search":
    SearchParams(worlds=8, ...)}``. A setting of the search without ``search=on``, an
    unknown parameter or a bad value: one ``ValueError`` line naming it."""
    return play_params("pretrained", spec.strip().partition(":")[2].split(","), spec)


def play_params(name: str, items: list[str], spec: str) -> dict[str, Any]:
    """The play parameters ``items`` (``key=value`` texts) of agent ``name`` as keyword
    arguments of ``LearnedFamily.__call__``."""
    params: dict[str, Any] = {}
    settings: dict[str, Any] = {}
    for item in filter(None, (x.strip() for x in items)):
        key, _, raw = (x.strip() for x in item.partition("="))
        if key in SEARCH_KEYS:
            try:
                settings[key] = parse_search_param(key, raw)
            except ValueError as e:
                raise ValueError(f"agent '{name}': {e} in {spec!r}") from None
            continue
        if raw not in PLAY_MODES.get(key, ()):
            allowed = ", ".join(f"{k}={'|'.join(v)}" for k, v in PLAY_MODES.items()
                                if k != "search")
            raise ValueError(f"agent '{name}' takes the parameters {allowed}; got "
                             f"{item!r} in {spec!r} (and search=off|on, with search=on "
                             f"{SEARCH_HELP})")
        params[key] = raw
    search = params.pop("search", "off")
    if settings and search != "on":
        raise ValueError(f"agent '{name}': the search settings "
                         f"{', '.join(sorted(settings))} need search=on, in {spec!r}")
    if search == "on":
        try:
            params["search"] = SearchParams(**settings)
        except ValueError as e:
            raise ValueError(f"agent '{name}': {e} in {spec!r}") from None
    return params


@dataclass(frozen=True)
class LearnedFamily:
    """A learned agent's spec family: ``parse_spec``, ``usage`` and the build call."""

    name: str
    usage: str
    parse: Callable[[str], dict[str, Any]]

    def parse_spec(self, spec: str) -> dict[str, Any]:
        return self.parse(spec)

    def __call__(self, seed: int | None = None, path: str | None = None,
                 endgame: str | None = None, suits: str = DEFAULT_SUITS,
                 search: SearchParams | None = None) -> Any:
        """The agent; ``endgame`` defaults to ``exact`` with ``search``, else ``net``."""
        load = _load_policy_agent(self.name if path is None else f"{self.name}:{path}")
        if search is None:
            return load(path, seed=seed, endgame=endgame or "net", suits=suits)
        return load(path, seed=seed, endgame=endgame, suits=suits, search=search)


CHECKPOINT = LearnedFamily(
    "ckpt", "ckpt:PATH[,endgame=...,suits=...,search=on,...]  (a trained policy: "
    "checkpoint file or run directory; the parameters are pretrained's)",
    parse_checkpoint)
PRETRAINED = LearnedFamily(
    "pretrained",
    "pretrained[:endgame=exact][,suits=close|last_deal|all|none][,search=on[,worlds=N]"
    "[,horizon=end|N][,prior=X][,gap=X][,top=K]]  (the shipped trained policy; "
    "endgame=exact: the last deal of a 2-player hand played exactly; suits: which "
    "decisions average the 6 suit-renamed views; search=on: network rollouts in sampled "
    "deals at play time, endgame=exact by default)", parse_pretrained)

__all__ = ["CHECKPOINT", "PRETRAINED", "LearnedFamily", "parse_checkpoint", "play_params",
           "parse_pretrained"]


def shipped_sampler(rules: Any) -> Any:
    """The inference sampler (``scopa_policy.inference``) with the shipped weights for
    ``rules`` as the model of the others' play, at the search's default settings: the
    ``policy`` entry of the ``scopa.samplers`` group (``pimc:sampler=policy``)."""
    try:
        from .agent import PretrainedAgent
        from .inference import policy_sampler
        from .search import RolloutPolicy, value_scale
    except ImportError as e:
        raise ValueError(missing_extra(e) or f"sampler=policy needs scopa_policy (with "
                         f"torch), which could not be imported: {e}") from e
    net = PretrainedAgent(seed=0).policy(rules)
    p = SearchParams()
    return policy_sampler(RolloutPolicy(net.net, value_scale(net.meta)), p.candidates,
                          p.temperature, p.floor)
