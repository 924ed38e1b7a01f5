"""Any kit agent as a ``pyspiel.Bot`` (``pip install -e .[openspiel]``): ``SpecBot(spec)``
plays ``python_scopa`` states (``agents.bridges.openspiel_game``) from the seat's
information set, so an OpenSpiel user can pit ``pretrained`` or ``pimc`` against their
own bots with ``evaluate_bots`` or their own loop (examples/openspiel_bots.py).

```python
import pyspiel
from agents.bridges.openspiel_bots import SpecBot
from open_spiel.python.algorithms.evaluate_bots import evaluate_bots

game = pyspiel.load_game("python_scopa")
bots = [SpecBot("pretrained", seed=1), SpecBot("pimc", seed=2)]
returns = evaluate_bots(game.new_initial_state(), bots, np.random.RandomState(3))
```
"""

from __future__ import annotations

from typing import Any

import pyspiel

from scopa_env.play import has_reset

from .. import make_agent
from .openspiel_game import SHORT_NAME, ScopaState


class SpecBot(pyspiel.Bot):
    """A kit agent (any spec: ``pretrained``, ``pimc``, ``py:...``) as a ``pyspiel.Bot``
    on ``python_scopa`` states. It sees the seat's information set only; an agent with
    ``reset()`` gets it before its first move of every deal."""

    def __init__(self, spec: str, seed: int | None = None):
        pyspiel.Bot.__init__(self)
        self.agent = make_agent(spec, seed=seed)
        self.spec = self.agent.spec
        self._deal: Any = None

    def step(self, state: pyspiel.State) -> int:
        if not isinstance(state, ScopaState):
            raise TypeError(f"SpecBot({self.spec!r}) plays {SHORT_NAME} states only, got "
                            f"{type(state).__name__}")
        if state.is_chance_node() or state.is_terminal():
            return pyspiel.INVALID_ACTION
        s = state.s
        r = s.rules
        deal = (s.hand_index, s.deck[:r.players * r.hand_size + r.table_size])
        if has_reset(self.agent) and deal != self._deal:
            self.agent.reset()
        self._deal = deal
        return int(self.agent.act(state.info_set(state.current_player())))

    def restart_at(self, state: pyspiel.State) -> None:
        self._deal = None

    def restart(self) -> None:
        self._deal = None

    def inform_action(self, state: pyspiel.State, player_id: int, action: int) -> None:
        pass

    def provides_policy(self) -> bool:
        return False


__all__ = ["SpecBot"]
