"""Typed config sections: a key's default, type, allowed range and help, written once.

A section is a dataclass whose fields are made by ``setting(default, help, lo=, hi=,
choices=)``; ``make_section`` builds one from a mapping of its keys, checking each
value's type and range, and ``section_lines`` describes its keys (``--help-config``).
The sections every stage reads are in ``scopa_train.config``; a stage kind's own
sections are in its module (``scopa_train.stages``). A bad value is a ``ConfigError``
of one line naming the key and what is allowed.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from dataclasses import field
from typing import Any


class ConfigError(ValueError):
    """A bad training configuration (unknown key, wrong type, out-of-range value)."""


def setting(default: Any, help: str, *, lo: float | None = None, hi: float | None = None,
            choices: tuple[Any, ...] | None = None, lo_open: bool = False) -> Any:
    """A section's key: its default, what it does (``help``) and its allowed values (a
    range ``[lo, hi]``, ``(lo, hi]`` with ``lo_open``, or ``choices``)."""
    meta = {"help": help, "lo": lo, "hi": hi, "choices": choices, "lo_open": lo_open}
    if isinstance(default, (dict, list)):
        return field(default_factory=lambda: copy.deepcopy(default), metadata=meta)
    return field(default=default, metadata=meta)


def type_of(f: dataclasses.Field) -> type:
    """The Python type of a section's key."""
    t = f.type
    return {"int": int, "float": float, "bool": bool, "str": str, "dict": dict,
            "list": list}[t if isinstance(t, str) else t.__name__]


def _type_name(t: type) -> str:
    return {int: "an integer", float: "a number", bool: "true or false", str: "a string",
            dict: "a mapping", list: "a list"}[t]


def _coerce(t: type, value: Any) -> Any:
    """Integers and YAML 1.1's unparsed exponents (``1e-3``) for float keys."""
    if t is float and not isinstance(value, bool):
        if isinstance(value, int):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                return value
    return value


def check_value(key: str, f: dataclasses.Field, value: Any) -> Any:
    """``value`` of config key ``key`` (field ``f``) checked against its type and range."""
    t, m = type_of(f), f.metadata
    value = _coerce(t, value)
    ok = (isinstance(value, bool) if t is bool
          else isinstance(value, int) and not isinstance(value, bool) if t is int
          else isinstance(value, (int, float)) and not isinstance(value, bool) if t is float
          else isinstance(value, t))
    if not ok:
        raise ConfigError(f"config key {key!r} must be {_type_name(t)}, got {value!r} "
                          f"({type(value).__name__}); {m['help']}")
    if m["choices"] is not None and value not in m["choices"]:
        raise ConfigError(f"config key {key!r} must be one of "
                          f"{', '.join(map(repr, m['choices']))}, got {value!r}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"config key {key!r} must be finite, got {value!r}")
        lo, hi = m["lo"], m["hi"]
        if ((lo is not None and (value <= lo if m["lo_open"] else value < lo))
                or (hi is not None and value > hi)):
            raise ConfigError(f"config key {key!r} = {value!r} is out of range: allowed "
                              f"{value_range(m)}; {m['help']}")
    return value


def value_range(m: Any) -> str:
    """A key's allowed range as text (``[0, 1]``, ``(0, inf]``)."""
    return (("(" if m["lo_open"] else "[") + (str(m["lo"]) if m["lo"] is not None else "-inf")
            + ", " + (str(m["hi"]) if m["hi"] is not None else "inf") + "]")


def make_section(name: str, cls: type, data: Any, where: str = "") -> Any:
    """Section ``name`` (class ``cls``) from a mapping of its keys, every value checked."""
    if not isinstance(data, dict):
        raise ConfigError(f"config section {where}{name!r} must be a mapping of keys to "
                          f"values, got {data!r}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(map(str, set(data) - set(fields)))
    if unknown:
        raise ConfigError(f"unknown config key(s) {', '.join(f'{name}.{k}' for k in unknown)}"
                          f"{' in ' + where.rstrip('.') if where else ''}; section {name!r} "
                          f"has: {', '.join(fields)}")
    return cls(**{k: check_value(f"{where}{name}.{k}", fields[k], v)
                  for k, v in data.items()})


def section_lines(name: str, cls: type) -> list[str]:
    """A section's keys described, one line each: type, default, allowed values, help."""
    lines = [f"\n{name}:"]
    defaults = cls()
    for f in dataclasses.fields(cls):
        m = f.metadata
        allowed = (f" one of {list(m['choices'])}" if m["choices"] else
                   f" range {value_range(m)}" if m["lo"] is not None or m["hi"] is not None
                   else "")
        lines.append(f"  {f.name} ({type_of(f).__name__}, default "
                     f"{getattr(defaults, f.name)!r}{';' if allowed else ''}{allowed}): "
                     f"{m['help']}")
    return lines


__all__ = ["ConfigError", "check_value", "make_section", "section_lines", "setting",
           "type_of", "value_range"]
