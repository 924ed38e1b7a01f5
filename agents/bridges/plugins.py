"""Agents from outside the kit: ``py:`` specs and the ``scopa.agents`` entry-point group.

- ``py:package.module:ATTR`` / ``py:path/to/file.py:ATTR``, optionally with parameters
  (``py:mybots:Bot,depth=3,style=safe``): ``ATTR`` is an agent class or a factory
  ``(seed, **params) -> agent``. A module name is imported as usual (the current folder
  is searched too); a ``.py`` path is loaded from that file (relative to the current
  folder).
- An installed package registers names in the ``scopa.agents`` entry-point group
  (``[project.entry-points."scopa.agents"] mybot = "mybots:Bot"``); ``mybot`` and
  ``mybot:depth=3`` then work wherever a spec does. Built-in names win over entry points.
- An entry point may name a *spec family* instead: an object with ``parse_spec(spec) ->
  params`` (it reads its own spec grammar, e.g. ``ckpt:PATH``) and ``usage`` (its line in
  the list of known agents); called as ``family(seed=..., **params)`` it builds an agent
  that carries its own canonical ``spec``. The layers above register their agents this
  way (``scopa_policy.specs``: ``ckpt:`` and ``pretrained``).

Parameter values are read as integers, numbers, ``true`` / ``false`` or text; a class
with the built-in ``PARAMS`` table (a ``BaseAgent`` subclass) gets them typed and
checked by it. The seed is passed as ``seed=`` when the class or factory takes one.
Worker processes rebuild the agent from the same spec. Anything that goes wrong (the
module or file cannot be imported, no such attribute, a parameter it does not take,
an object that is not an agent) is a ``ValueError`` of one line naming the spec.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import inspect
import os
import sys
from pathlib import Path
from typing import Any

from ..base import Agent, BaseAgent

PREFIX = "py"
GROUP = "scopa.agents"


def _error_text(e: BaseException) -> str:
    return f"{type(e).__name__}: {' '.join(str(e).split())}" if str(e) else type(e).__name__


def literal(raw: str) -> Any:
    """A parameter value: an integer, a number, ``true`` / ``false``, else the text."""
    for cast in (int, float):
        try:
            return cast(raw)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(raw.lower(), raw)


def parse_params(spec: str, text: str) -> dict[str, str]:
    """``"k=v,j=w"`` -> ``{"k": "v", "j": "w"}`` (raw text; ``seed`` is not one)."""
    params: dict[str, str] = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        key, eq, raw = (x.strip() for x in item.partition("="))
        if not key.isidentifier() or not eq or not raw:
            raise ValueError(f"agent spec {spec!r}: parameter {item!r} must look like "
                             f"name=value")
        if key == "seed":
            raise ValueError(f"agent spec {spec!r}: 'seed' is not a parameter (the evaluator "
                             f"and the other commands give each agent its seed)")
        params[key] = raw
    return params


# -- py: specs ---------------------------------------------------------------------------

def parse_py(spec: str) -> tuple[str, str, dict[str, str]]:
    """``py:TARGET:ATTR[,k=v...]`` -> (TARGET, ATTR, raw parameters)."""
    head, _, tail = spec.strip()[len(PREFIX) + 1:].partition(",")
    params = parse_params(spec, tail)
    target, colon, attr = head.strip().rpartition(":")
    target, attr = target.strip(), attr.strip()
    if not colon or not target or not attr:
        raise ValueError(f"agent spec {spec!r} must look like py:package.module:ATTR or "
                         f"py:path/to/file.py:ATTR (ATTR: an agent class or a factory), "
                         f"optionally followed by ,name=value parameters")
    if not all(part.isidentifier() for part in attr.split(".")):
        raise ValueError(f"agent spec {spec!r}: {attr!r} is not a Python attribute name")
    return target, attr, params


def _load_file(spec: str, target: str) -> Any:
    """The module of a ``.py`` file, imported once per absolute path."""
    path = Path(target).expanduser().resolve()
    if not path.is_file():
        raise ValueError(f"agent spec {spec!r}: file {target!r} does not exist "
                         f"(relative paths start at {os.getcwd()})")
    name = "scopa_agent_file_" + hashlib.sha1(str(path).encode()).hexdigest()[:12]
    if name in sys.modules:
        return sys.modules[name]
    loader_spec = importlib.util.spec_from_file_location(name, path)
    if loader_spec is None or loader_spec.loader is None:
        raise ValueError(f"agent spec {spec!r}: {target!r} cannot be imported as Python")
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[name] = module  # before running it: classes defined there then pickle
    try:
        loader_spec.loader.exec_module(module)
    except (Exception, SystemExit) as e:  # whatever the file raises (not Ctrl-C)
        del sys.modules[name]
        raise ValueError(f"agent spec {spec!r}: importing {target} failed: "
                         f"{_error_text(e)}") from None
    return module


def _load_module(spec: str, target: str) -> Any:
    if not all(part.isidentifier() for part in target.split(".")):
        raise ValueError(f"agent spec {spec!r}: {target!r} is neither a module name "
                         f"(package.module) nor a .py file")
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.append(cwd)  # `py:mybots:Bot` finds mybots.py in the current folder
    try:
        return importlib.import_module(target)
    except (Exception, SystemExit) as e:
        raise ValueError(f"agent spec {spec!r}: cannot import module {target!r}: "
                         f"{_error_text(e)}") from None


def load_py(spec: str) -> tuple[Any, dict[str, str]]:
    """The class or factory a ``py:`` spec names, and its raw parameters."""
    target, attr, params = parse_py(spec)
    module = (_load_file(spec, target) if target.endswith(".py") or os.sep in target
              or "/" in target else _load_module(spec, target))
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            public = sorted(n for n in vars(module) if not n.startswith("_"))
            raise ValueError(f"agent spec {spec!r}: {target} has no attribute {attr!r}"
                             + (f"; it defines {', '.join(public[:12])}" if public else ""))
        obj = getattr(obj, part)
    return obj, params


# -- entry points ------------------------------------------------------------------------

def entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    """The ``scopa.agents`` entry points of the installed packages, by name."""
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=GROUP)}


def is_family(obj: Any) -> bool:
    """Whether an entry point's object is a spec family (it parses its own spec)."""
    return callable(getattr(obj, "parse_spec", None)) and isinstance(
        getattr(obj, "usage", None), str)


def entry_point_lines(builtin: set[str]) -> list[str]:
    """One line per registered agent name (for the list of known agents): a spec
    family's ``usage``, else where the name comes from."""
    out = []
    for name, ep in sorted(entry_points().items()):
        if name in builtin:
            continue
        try:
            obj = ep.load()
        except Exception:  # listed by its origin; building it names the error
            obj = None
        if obj is not None and is_family(obj):
            out.append(obj.usage)
            continue
        dist = getattr(ep, "dist", None)
        origin = f"from {dist.name}" if dist is not None else ep.value
        out.append(f"{name}  ({origin}, entry point {ep.value})")
    return out


def load_entry_point(spec: str, name: str) -> Any:
    """The class or factory registered under ``name``."""
    ep = entry_points()[name]
    try:
        return ep.load()
    except (Exception, SystemExit) as e:
        raise ValueError(f"agent spec {spec!r}: the entry point {name} = {ep.value} "
                         f"(group {GROUP}) cannot be loaded: {_error_text(e)}") from None


# -- building ----------------------------------------------------------------------------

def typed_params(spec: str, obj: Any, raw: dict[str, str]) -> dict[str, Any]:
    """Parameter values for ``obj``: typed by a ``BaseAgent`` class's ``PARAMS``, else
    read by ``literal``; a parameter ``obj`` does not take is an error."""
    if isinstance(obj, type) and issubclass(obj, BaseAgent):
        who = f"{obj.__name__} (agent spec {spec!r})"
        return {key: obj.param_value(key, text, who) for key, text in raw.items()}
    params = {k: literal(v) for k, v in raw.items()}
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):  # a builtin without a signature: let the call decide
        return params
    takes_any = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
    names = [n for n, p in sig.parameters.items()
             if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and n != "seed"]
    bad = [k for k in params if k not in names and not takes_any]
    if bad:
        raise ValueError(f"agent spec {spec!r}: {_name(obj)} takes no parameter "
                         f"{bad[0]!r}; " + (f"its parameters: {', '.join(names)}" if names
                                            else "it takes none"))
    return params


def _name(obj: Any) -> str:
    return getattr(obj, "__qualname__", None) or type(obj).__name__


def _takes_seed(obj: Any) -> bool:
    try:
        ps = inspect.signature(obj).parameters
    except (TypeError, ValueError):
        return True
    return "seed" in ps or any(p.kind is p.VAR_KEYWORD for p in ps.values())


def build(spec: str, obj: Any, params: dict[str, Any], seed: int | None) -> Agent:
    """Call the class, factory or spec family ``obj`` and check that it made an agent."""
    if is_family(obj):  # its errors are one-line ValueErrors; the agent keeps its spec
        return obj(seed=seed, **params)
    if not callable(obj):
        raise ValueError(f"agent spec {spec!r} names a {type(obj).__name__}, not an agent "
                         f"class or a factory (seed, **params) -> agent")
    try:
        agent = obj(seed=seed, **params) if _takes_seed(obj) else obj(**params)
    except (Exception, SystemExit) as e:
        raise ValueError(f"agent spec {spec!r}: building {_name(obj)} failed: "
                         f"{_error_text(e)}") from None
    if not callable(getattr(agent, "act", None)):
        raise ValueError(f"agent spec {spec!r}: {_name(obj)} made a "
                         f"{type(agent).__name__}, which is not an agent: an agent has a "
                         f"method act(info) -> int (docs/agents.md)")
    try:
        agent.spec = spec.strip()  # it goes by the spec that rebuilds it (reports, errors)
    except (AttributeError, TypeError):
        if not isinstance(getattr(agent, "spec", None), str):
            raise ValueError(f"agent spec {spec!r}: {_name(obj)} made an agent without a "
                             f"'spec' attribute that cannot be given one") from None
    return agent


def resolve(spec: str, builtin: set[str]) -> tuple[Any, dict[str, Any]] | None:
    """(class or factory, typed parameters) of a ``py:`` or entry-point spec; None when
    ``spec`` is neither (a built-in name, or nothing known)."""
    name, _, rest = spec.strip().partition(":")
    name = name.strip()
    if name == PREFIX:
        obj, raw = load_py(spec)
    elif name not in builtin and name in entry_points():
        obj = load_entry_point(spec, name)
        if is_family(obj):
            return obj, obj.parse_spec(spec)
        raw = parse_params(spec, rest)
    else:
        return None
    return obj, typed_params(spec, obj, raw)
