"""The stage kinds, one module each, on the shared framework (``scopa_train.framework``),
each declared once, here (``KINDS``): ``ppo`` (``ppo_selfplay``), ``last_deal``
(``last_deal_scorer``) and ``distill`` (``suit_distill``), the last two on ``fitting``'s
collect-then-fit loop, and ``dmc`` (``dmc``, Deep Monte-Carlo). Each module has
``check_ready(cfg)``, ``build(cfg, folder, ...)`` and ``resume(checkpoint, cfg, folder,
...)``; ``scopa_train.recipe`` runs them in order, ``scopa_train.config`` checks a stage
by what its kind declares. A renamed kind's old name is still read (``RENAMED``)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True)
class StageKind:
    """What a stage kind is: its module here, the config sections it reads besides the
    ones every kind reads, whether it learns from a policy's play (``init_from`` needed)
    and whether its rollouts may run on Ray; ``help``: what it trains, in a few words."""

    module: str
    sections: tuple[str, ...]
    help: str
    from_policy: bool = True
    ray: bool = False


KINDS: dict[str, StageKind] = {
    "ppo": StageKind("ppo_selfplay", ("ppo", "checkpoints"), "self-play PPO",
                     from_policy=False, ray=True),
    "last_deal": StageKind("last_deal_scorer", ("fit", "last_deal"),
                           "fits a last-deal scorer to exact values"),
    "distill": StageKind("suit_distill", ("fit", "distill"),
                         "distils into the network its suit-averaged self and, with "
                         "distill.search, a search's move values (expert iteration when the "
                         "search is the network's own: self:search=on)"),
    "dmc": StageKind("dmc", ("dmc", "checkpoints"),
                     "Deep Monte-Carlo: Q per legal move fitted to self-play returns",
                     from_policy=False),
}
"""Every stage kind by name: the one place a kind is declared."""
RENAMED = {"suit_distill": "distill"}
"""A kind's earlier name -> its name now (configs and checkpoints that say the old one are
still read)."""


def kind_name(name: object) -> object:
    """A stage kind's name now (an earlier name read as the kind it became)."""
    return RENAMED.get(name, name) if isinstance(name, str) else name


def stage_module(kind: str) -> ModuleType:
    """The module that runs stages of ``kind`` (imported on first use)."""
    return importlib.import_module(f"{__name__}.{KINDS[kind].module}")
