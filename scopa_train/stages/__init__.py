"""The stage kinds: one module each, on the shared framework (``scopa_train.framework``).

A kind's module holds all of it: its config sections (``scopa_train.settings``), its
checks, its update and its stage, and one ``StageKind`` that says so. It is registered
by one line: in ``BUILTIN`` below for the kit's kinds, ``ppo`` (``ppo``), ``dmc``
(``dmc``, Deep Monte-Carlo; what the two share is ``pool``), ``last_deal`` and
``distill`` (both on ``fitting``'s collect-then-fit loop); or, for a kind from another
package, by an entry point in the ``scopa.stage_kinds`` group of that package::

    [project.entry-points."scopa.stage_kinds"]
    mykind = "mypackage.mykind:KIND"

``scopa_train.config`` checks a stage by what its kind declares, ``scopa_train.recipe``
runs the kinds in order. A kind is loaded by its ``module:object`` name on first use
(``kinds()``), the kit's as another package's. A renamed kind's old name is still read
(``RENAMED``).
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..settings import ConfigError

GROUP = "scopa.stage_kinds"
"""The entry-point group through which a package adds stage kinds."""


@dataclass(frozen=True)
class StageKind:
    """What a stage kind is.

    - ``name``: what a config's ``kind:`` says; ``help``: what it trains, in a few words;
    - ``sections``: its own config sections, by name (a section class made with
      ``scopa_train.settings.setting``), in the order ``--help-config`` and a stage's
      saved config list them; two kinds may share one (``fit``), the same class;
    - ``reads``: the sections of the framework it reads besides those every kind reads
      (``checkpoints``: the periodic checkpoints of the kinds that count env steps);
    - ``check(cfg)``: what must hold across keys for this kind (``ConfigError``);
    - ``check_ready(cfg)``: what can fail before the run folder exists (the device, the
      starting weights, the evaluation opponents);
    - ``build(cfg, folder, **kw)`` -> a new ``Stage``; ``resume(checkpoint, cfg, folder,
      **kw)`` -> the stage of a training checkpoint;
    - ``from_policy``: it learns from a policy's play (``init_from`` needed); ``ray``:
      its rollouts may run on Ray; ``frozen``: keys of its sections that a resume may not
      change (a network's shape).
    """

    name: str
    help: str
    sections: dict[str, type]
    build: Callable[..., Any]
    resume: Callable[..., Any]
    check_ready: Callable[[Any], None]
    check: Callable[[Any], None] = lambda cfg: None
    reads: tuple[str, ...] = ()
    from_policy: bool = True
    ray: bool = False
    frozen: dict[str, tuple[str, ...]] = field(default_factory=dict)


BUILTIN: dict[str, str] = {
    "ppo": "scopa_train.stages.ppo:KIND",
    "dmc": "scopa_train.stages.dmc:KIND",
    "last_deal": "scopa_train.stages.last_deal:KIND",
    "distill": "scopa_train.stages.distill:KIND",
}
"""The kit's stage kinds, each by the ``module:object`` of its ``StageKind``."""
RENAMED = {"suit_distill": "distill"}
"""A kind's earlier name -> its name now (configs and checkpoints that say the old one are
still read)."""


class KindError(ConfigError):
    """A stage kind that cannot be loaded or does not hold together (one line)."""


def kind_name(name: object) -> object:
    """A stage kind's name now (an earlier name read as the kind it became)."""
    return RENAMED.get(name, name) if isinstance(name, str) else name


def _load(name: str, target: str, where: str, kit: bool = False) -> StageKind:
    """The ``StageKind`` at ``module:object`` ``target`` (``where``: where it is named,
    for the error), checked. A kit kind's import error is the kit's own and goes up as
    it is (a missing torch: the commands name the extra to install); another package's
    is one line naming its entry point."""
    module, _, attr = target.partition(":")
    try:
        obj: Any = importlib.import_module(module)
        for part in attr.split(".") if attr else ():
            obj = getattr(obj, part)
    except (Exception, SystemExit) as e:
        if kit:
            raise
        text = str(e).strip().splitlines()[0] if str(e).strip() else ""
        raise KindError(f"stage kind {name!r} ({where}) cannot be loaded: "
                        f"{type(e).__name__}{': ' + text if text else ''}") from None
    if not isinstance(obj, StageKind):
        raise KindError(f"stage kind {name!r} ({where}) is a "
                        f"{type(obj).__name__}, not a scopa_train.stages.StageKind")
    if obj.name != name:
        raise KindError(f"stage kind {name!r} ({where}) calls itself {obj.name!r}")
    return obj


@functools.cache
def kinds() -> dict[str, StageKind]:
    """Every stage kind by name: the kit's (``BUILTIN``), then those of the installed
    packages' ``scopa.stage_kinds`` entry points (read once a process; a name or a
    section the kit has already is refused)."""
    out = {name: _load(name, target, target, kit=True) for name, target in BUILTIN.items()}
    owner = {s: k.sections[s] for k in out.values() for s in k.sections}
    for ep in sorted(importlib.metadata.entry_points(group=GROUP), key=lambda e: e.name):
        where = f"entry point {ep.name} = {ep.value}, group {GROUP}"
        if ep.name in out or ep.name in RENAMED:
            raise KindError(f"stage kind {ep.name!r} ({where}): the kit has a kind of that "
                            f"name")
        kind = _load(ep.name, ep.value, where)
        for s, cls in kind.sections.items():
            if owner.setdefault(s, cls) is not cls:
                raise KindError(f"stage kind {ep.name!r} ({where}): its section {s!r} is "
                                f"another kind's")
        out[ep.name] = kind
    return out


def kind(name: str) -> StageKind:
    """The stage kind called ``name``."""
    return kinds()[name]


def kind_sections() -> dict[str, type]:
    """The stage kinds' own sections, by name, in the order of their kinds."""
    out: dict[str, type] = {}
    for k in kinds().values():
        for s, cls in k.sections.items():
            out.setdefault(s, cls)
    return out


__all__ = ["BUILTIN", "GROUP", "RENAMED", "KindError", "StageKind", "kind", "kind_name",
           "kind_sections", "kinds"]
