"""How a learned agent plays its decisions: the ``endgame`` and ``suits`` modes
(``pretrained:endgame=...,suits=...``) and the search settings (``search=on,worlds=...``,
``scopa_policy.search``), named once for the agent and its spec."""

from __future__ import annotations

from dataclasses import dataclass, fields

ENDGAME_MODES = ("net", "exact")  # net: the network alone; exact: agents.baselines.endgame's solver
SUIT_MODES = ("close", "last_deal", "all", "none")  # the first is the default
DEFAULT_SUITS = SUIT_MODES[0]
LEAF_MODES = ("net", "piles")  # the estimate at a search horizon
SAMPLER_MODES = ("uniform", "policy")  # how worlds are dealt (agents.worlds)
SEARCH_MODES = ("off", "on")  # on: scopa_policy.search's rollouts at play time
PLAY_MODES = {"endgame": ENDGAME_MODES, "suits": SUIT_MODES, "search": SEARCH_MODES}


def check_modes(endgame: str, suits: str) -> None:
    """``ValueError`` unless both are known modes."""
    if endgame not in ENDGAME_MODES:
        raise ValueError(f"endgame must be one of {', '.join(ENDGAME_MODES)}, got {endgame!r}")
    if suits not in SUIT_MODES:
        raise ValueError(f"suits must be one of {', '.join(SUIT_MODES)}, got {suits!r}")


@dataclass(frozen=True)
class SearchParams:
    """The settings of the search with the network (``pretrained:search=on,...``; the
    defaults are the best measured, docs/research/2026-12-05-network-search.md):
    ``worlds`` sampled deals of the unseen cards a decision; ``horizon`` plies rolled out
    after the move before the network's value head estimates the rest (None, ``end``:
    to the end of the hand); ``prior`` x the network's log-probability added to each
    move's mean margin; ``gap``: search only the decisions whose best two logits are
    closer than this (``inf``: every one); ``top``: roll out only the network's ``top``
    best moves (0: every legal move); ``leaf``: the estimate at the horizon, the
    network's value head (``net``) or ``pimc``'s expected points of the piles plus the
    scope so far (``piles``); ``sampler``: how the worlds are dealt, every consistent deal
    alike (``uniform``) or weighted by how likely the others' moves this round make them
    under the network's policy (``policy``: ``agents.worlds.InferenceSampler``, from
    ``candidates`` x ``worlds`` uniform deals, the network's probabilities at
    ``temperature``, mixed with ``floor`` of the uniform over the legal moves)."""

    worlds: int = 128
    horizon: int | None = 8
    prior: float = 0.0
    gap: float = 2.0
    top: int = 3
    leaf: str = "piles"
    sampler: str = "policy"
    candidates: int = 4
    temperature: float = 1.0
    floor: float = 0.1

    def __post_init__(self) -> None:
        if self.worlds < 1:
            raise ValueError(f"search worlds must be at least 1, got {self.worlds}")
        if self.horizon is not None and self.horizon < 0:
            raise ValueError(f"search horizon must be end or 0 plies or more, got "
                             f"{self.horizon}")
        if not self.prior >= 0:  # NaN too
            raise ValueError(f"search prior must be 0 or more, got {self.prior}")
        if not self.gap > 0:
            raise ValueError(f"search gap must be more than 0, got {self.gap}")
        if self.top < 0 or self.top == 1:
            raise ValueError(f"search top must be 0 (every move) or 2 or more, got {self.top}")
        if self.leaf not in LEAF_MODES:
            raise ValueError(f"search leaf must be one of {', '.join(LEAF_MODES)}, got "
                             f"{self.leaf!r}")
        if self.sampler not in SAMPLER_MODES:
            raise ValueError(f"search sampler must be one of {', '.join(SAMPLER_MODES)}, "
                             f"got {self.sampler!r}")
        if self.candidates < 1:
            raise ValueError(f"search candidates must be at least 1, got {self.candidates}")
        if not self.temperature > 0:
            raise ValueError(f"search temperature must be more than 0, got "
                             f"{self.temperature}")
        if not 0 <= self.floor < 1:
            raise ValueError(f"search floor must be at least 0 and below 1, got {self.floor}")

    def spec(self) -> str:
        """The settings that differ from the defaults, as spec parameters (``k=v,...``)."""
        default = SearchParams()
        return ",".join(f"{f.name}={_show(getattr(self, f.name))}" for f in fields(self)
                        if getattr(self, f.name) != getattr(default, f.name))


def _show(v: object) -> str:
    return "end" if v is None else format(v, "g") if isinstance(v, float) else str(v)


SEARCH_HELP = ("worlds=N (128), horizon=end|N plies (8), prior=X (0), gap=X (2; inf: every "
               "decision), top=K (3; 0: every move), leaf=net|piles (piles), "
               "sampler=policy|uniform (policy), candidates=K (4), temperature=X (1), "
               "floor=X (0.1)")


def parse_search_param(key: str, raw: str) -> object:
    """A search setting's value from its spec text (``ValueError`` naming the setting
    when the text is no value of its type)."""
    kind = {"worlds": int, "horizon": int, "prior": float, "gap": float, "top": int,
            "leaf": str, "sampler": str, "candidates": int, "temperature": float,
            "floor": float}[key]
    if key == "horizon" and raw == "end":
        return None
    try:
        return kind(raw)
    except ValueError:
        want = "a whole number" if kind is int else "a number"
        extra = " or end" if key == "horizon" else ""
        raise ValueError(f"search setting {key} takes {want}{extra}, got {raw!r}") from None


SEARCH_KEYS = tuple(f.name for f in fields(SearchParams))
