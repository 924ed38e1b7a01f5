"""Rules configuration: every option of rules.md, the named rule sets, validation."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

PRIMIERA_TABLES = {
    # index = rank - 1
    "standard": (16, 12, 13, 14, 15, 18, 21, 10, 10, 10),
    "alt": (12, 13, 14, 15, 16, 18, 21, 10, 10, 10),
}

NAMED_RULES: dict[str, dict[str, Any]] = {
    "scopa": {},
    "scopone_scientifico": {
        "players": 4, "hand_size": 10, "table_size": 0, "redeal_three_kings": False,
    },
    "scopone": {"players": 4, "hand_size": 9, "table_size": 4},
    "asso_piglia_tutto": {"ace_takes_all": True},
}
FOUR_PLAYER_ONLY = ("scopone_scientifico", "scopone")


@dataclass(frozen=True)
class Rules:
    """A resolved rules configuration (every option of rules.md, none implicit)."""

    name: str = "scopa"
    players: int = 2
    hand_size: int = 3
    table_size: int = 4
    capture_rule: str = "any"
    ace_takes_all: bool = False
    last_play_scopa: bool = False
    redeal_three_kings: bool = True
    primiera_table: str = "standard"
    primiera_requires_all_suits: bool = True
    re_bello: bool = False
    napola: bool = False
    target_score: int = 11

    def __post_init__(self) -> None:
        _validate(self)

    @property
    def primiera_values(self) -> tuple[int, ...]:
        return PRIMIERA_TABLES[self.primiera_table]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Rules:
        return make_rules(**d)


_BOOL = ("ace_takes_all", "last_play_scopa", "redeal_three_kings",
         "primiera_requires_all_suits", "re_bello", "napola")
_INT = ("players", "hand_size", "table_size", "target_score")
OPTION_NAMES = tuple(f.name for f in dataclasses.fields(Rules))


def _validate(r: Rules) -> None:
    if r.name not in NAMED_RULES:
        raise ValueError(f"unknown rule set {r.name!r}; known: {', '.join(NAMED_RULES)}")
    for k in _BOOL:
        if not isinstance(getattr(r, k), bool):
            raise ValueError(f"rules option {k} must be true or false, got {getattr(r, k)!r}")
    for k in _INT:
        v = getattr(r, k)
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"rules option {k} must be an integer, got {v!r}")
    if r.players not in (2, 4):
        raise ValueError(f"players must be 2 or 4 (4 plays in two teams), got {r.players}")
    if r.name in FOUR_PLAYER_ONLY and r.players != 4:
        raise ValueError(f"rule set {r.name!r} is for 4 players only, got players={r.players}")
    if r.capture_rule not in ("any", "fewest"):
        raise ValueError(f"capture_rule must be 'any' or 'fewest', got {r.capture_rule!r}")
    if r.primiera_table not in PRIMIERA_TABLES:
        raise ValueError(
            f"primiera_table must be one of {sorted(PRIMIERA_TABLES)}, got {r.primiera_table!r}")
    if r.hand_size < 1:
        raise ValueError(f"hand_size must be at least 1, got {r.hand_size}")
    if not 0 <= r.table_size <= 40 - r.players * r.hand_size:
        raise ValueError(f"table_size {r.table_size} leaves no room to deal "
                         f"{r.players} hands of {r.hand_size}")
    if (40 - r.table_size) % (r.players * r.hand_size):
        raise ValueError(
            f"{40 - r.table_size} cards after the table do not deal in whole rounds of "
            f"{r.players} x {r.hand_size}: (40 - table_size) must be a multiple of "
            f"players x hand_size")
    if r.target_score < 1:
        raise ValueError(f"target_score must be at least 1, got {r.target_score}")


def make_rules(name: str = "scopa", **options: Any) -> Rules:
    """Named rule set plus any option on top: ``make_rules("scopa", players=4)``."""
    if isinstance(name, Rules):
        return dataclasses.replace(name, **options) if options else name
    if name not in NAMED_RULES:
        raise ValueError(f"unknown rule set {name!r}; known: {', '.join(NAMED_RULES)}")
    unknown = sorted(set(options) - set(OPTION_NAMES) - {"name"})
    if unknown:
        raise ValueError(f"unknown rules option(s) {', '.join(unknown)}; "
                         f"known: {', '.join(OPTION_NAMES[1:])}")
    if name in FOUR_PLAYER_ONLY and options.get("players", 4) != 4:
        raise ValueError(
            f"rule set {name!r} is for 4 players only, got players={options['players']}")
    merged = {**NAMED_RULES[name], **options, "name": name}
    return Rules(**merged)


def parse_option(text: str) -> tuple[str, Any]:
    """Parse ``key=value`` from the command line into a typed rules option."""
    if "=" not in text:
        raise ValueError(f"option {text!r} must look like key=value")
    key, raw = (s.strip() for s in text.split("=", 1))
    if key not in OPTION_NAMES or key == "name":
        raise ValueError(f"unknown rules option {key!r}; known: {', '.join(OPTION_NAMES[1:])}")
    if key in _BOOL:
        low = raw.lower()
        if low not in ("true", "false", "1", "0", "yes", "no", "on", "off"):
            raise ValueError(f"rules option {key} takes true/false, got {raw!r}")
        return key, low in ("true", "1", "yes", "on")
    if key in _INT:
        try:
            return key, int(raw)
        except ValueError:
            raise ValueError(f"rules option {key} takes an integer, got {raw!r}") from None
    return key, raw


# -- command-line arguments (scopa record/play/eval/ladder) -------------------------
def resolve_rules(rules: str | Rules = "scopa", players: int | None = None,
                  options: dict[str, Any] | None = None) -> Rules:
    """A ``Rules`` from a name (or ``Rules``), a player count (None: the rule set's) and
    extra options."""
    opts = dict(options or {})
    if players is not None:
        opts["players"] = players
    return make_rules(rules, **opts)
