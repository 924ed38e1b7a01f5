"""How a learned agent plays its decisions: the ``endgame`` and ``suits`` modes
(``pretrained:endgame=...,suits=...``), named once for the agent and its spec."""

from __future__ import annotations

ENDGAME_MODES = ("net", "exact")  # net: the network alone; exact: agents.baselines.endgame's solver
SUIT_MODES = ("close", "last_deal", "all", "none")  # the first is the default
DEFAULT_SUITS = SUIT_MODES[0]
PLAY_MODES = {"endgame": ENDGAME_MODES, "suits": SUIT_MODES}


def check_modes(endgame: str, suits: str) -> None:
    """``ValueError`` unless both are known modes."""
    if endgame not in ENDGAME_MODES:
        raise ValueError(f"endgame must be one of {', '.join(ENDGAME_MODES)}, got {endgame!r}")
    if suits not in SUIT_MODES:
        raise ValueError(f"suits must be one of {', '.join(SUIT_MODES)}, got {suits!r}")
