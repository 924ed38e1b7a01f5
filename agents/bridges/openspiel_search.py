"""OpenSpiel's search bots as kit agents (``pip install -e .[openspiel]``).

- ``openspiel:ismcts[,simulations=N,uct_c=X,rollouts=R,worlds=W,final=max_visit]``:
  OpenSpiel's own information-set MCTS (``open_spiel.python.algorithms.ismcts``, its
  random-rollout evaluator) as a kit agent for ``scopa eval``, ``ladder`` and ``serve``.
  It searches the ``python_scopa`` hand (returns: points per hand) from the seat's
  information set: the root is one deal of the hidden cards consistent with it, and
  every simulation deals them again (``ScopaState.with_hidden_cards``, seeded by the
  agent's seed).
- ``openspiel:mcts[,simulations=N,uct_c=X,rollouts=R]``: OpenSpiel's MCTS on one deal of
  the hidden cards drawn from the seat's information set (determinized MCTS: it never
  sees the true hidden cards, and plans as if its sampled deal were true).

The other way, any kit agent as a ``pyspiel.Bot``, is ``agents.bridges.openspiel_bots``.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

from scopa_env.observation import InfoSet
from scopa_env.rules import Rules

from ..base import BaseAgent
from ..worlds import random_hands, world_template
from .openspiel_game import PARAMETERS, SHORT_NAME, ScopaGame, ScopaState

_FINAL = {"max_visit": ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
          "max_value": ismcts.ISMCTSFinalPolicyType.MAX_VALUE,
          "normalized": ismcts.ISMCTSFinalPolicyType.NORMALIZED_VISITED_COUNT}
_GAMES: dict[Rules, ScopaGame] = {}


def game_for(rules: Rules) -> ScopaGame:
    """The one-hand ``python_scopa`` game of ``rules`` (built once per rules)."""
    game = _GAMES.get(rules)
    if game is None:
        params: dict[str, Any] = {"rules": rules.name, "players": rules.players}
        for key in PARAMETERS:
            if key not in params and key != "episode":
                params[key] = getattr(rules, key)
        game = pyspiel.load_game(SHORT_NAME, params)
        if game.rules != rules:
            raise ValueError(f"{SHORT_NAME} cannot play rules {rules}: a true/false or text "
                             f"option at plain scopa's value keeps the named set's")
        _GAMES[rules] = game
    return game


def sampled_state(info: InfoSet, rng: random.Random) -> ScopaState:
    """A ``python_scopa`` hand at ``info``'s position: the cards hidden from the seat
    dealt at random among the other hands (the deck stays undealt: chance nodes)."""
    world = world_template(info)
    unseen = [c for c in range(40) if info.unseen >> c & 1]
    others = [(s, info.hand_sizes[s]) for s in range(info.players) if s != info.seat]
    random_hands(unseen, others, rng, world.hands)
    undealt = set(unseen[sum(h for _, h in others):])
    # a deal order of the cards dealt so far (which seat got which is all that counts)
    world.deck = tuple(c for c in range(40) if c not in undealt)
    return game_for(info.rules).state_from(world)


class OpenSpielSearchAgent(BaseAgent):
    """OpenSpiel's ISMCTS or MCTS bot playing from the seat's information set."""

    name = "openspiel"
    summary = "OpenSpiel's search bots: openspiel:ismcts or openspiel:mcts"
    ALGORITHMS: ClassVar[tuple[str, ...]] = ("ismcts", "mcts")
    PARAMS: ClassVar[dict[str, tuple[type, Any, str]]] = {
        "simulations": (int, 100, "simulations per move"),
        "uct_c": (float, 2.0, "UCT exploration constant (returns are points per hand)"),
        "rollouts": (int, 1, "random rollouts per leaf"),
        "worlds": (int, -1, "ismcts: distinct deals of the hidden cards (-1: a new one "
                            "every simulation)"),
        "final": (str, "max_visit", "ismcts: the move played: max_visit, max_value or "
                                    "normalized (visit counts as probabilities)"),
    }

    def __init__(self, algorithm: str = "ismcts", seed: int | None = None, **params: Any):
        if algorithm not in self.ALGORITHMS:
            raise ValueError(f"unknown OpenSpiel bot {algorithm!r}; known: "
                             f"{', '.join(self.ALGORITHMS)}")
        super().__init__(seed=seed, **params)
        p = self.params
        if p["simulations"] < 1:
            raise ValueError(f"openspiel:{algorithm}: simulations must be at least 1, got "
                             f"{p['simulations']}")
        if p["rollouts"] < 1:
            raise ValueError(f"openspiel:{algorithm}: rollouts must be at least 1, got "
                             f"{p['rollouts']}")
        if not p["uct_c"] > 0:
            raise ValueError(f"openspiel:{algorithm}: uct_c must be above 0, got {p['uct_c']}")
        if p["worlds"] < 1 and p["worlds"] != -1:
            raise ValueError(f"openspiel:{algorithm}: worlds must be -1 (unlimited) or at "
                             f"least 1, got {p['worlds']}")
        if p["final"] not in _FINAL:
            raise ValueError(f"openspiel:{algorithm}: final must be one of "
                             f"{', '.join(_FINAL)}, got {p['final']!r}")
        self.algorithm = algorithm
        # the spec names the budget and every parameter away from its default
        shown = {k: v for k, v in p.items()
                 if k == "simulations" or v != self.PARAMS[k][1]}
        if algorithm == "mcts" and set(shown) & {"worlds", "final"}:
            raise ValueError("openspiel:mcts takes simulations, uct_c and rollouts only "
                             "(worlds and final are ismcts's)")
        self.spec = f"openspiel:{algorithm}," + ",".join(f"{k}={v}" for k, v in shown.items())
        self._np = np.random.RandomState(self.rng.randrange(2**32))
        self._bots: dict[Rules, Any] = {}

    def _bot(self, rules: Rules) -> Any:
        bot = self._bots.get(rules)
        if bot is not None:
            return bot
        p, game = self.params, game_for(rules)
        evaluator = mcts.RandomRolloutEvaluator(n_rollouts=p["rollouts"],
                                                random_state=self._np)
        if self.algorithm == "ismcts":
            bot = ismcts.ISMCTSBot(game, evaluator, p["uct_c"], p["simulations"],
                                   max_world_samples=p["worlds"], random_state=self._np,
                                   final_policy_type=_FINAL[p["final"]])
            bot.set_resampler(lambda state, seat: state.with_hidden_cards(seat, self.rng))
        else:
            bot = mcts.MCTSBot(game, p["uct_c"], p["simulations"], evaluator,
                               random_state=self._np)
        self._bots[rules] = bot
        return bot

    def act(self, info: InfoSet) -> int:
        legal = info.legal_actions
        if len(legal) == 1:
            return legal[0]
        action = int(self._bot(info.rules).step(sampled_state(info, self.rng)))
        if action not in legal:  # never expected: the search plays the engine's moves
            raise RuntimeError(f"{self.spec} chose {action}, not a legal move of {legal}")
        return action


def parse_openspiel(spec: str) -> dict[str, Any]:
    """``openspiel:ismcts,simulations=1000`` -> ``{"algorithm": "ismcts",
    "simulations": 1000}`` (typed and checked)."""
    _, _, rest = spec.strip().partition(":")
    algorithm, _, params = rest.partition(",")
    algorithm = algorithm.strip()
    if algorithm not in OpenSpielSearchAgent.ALGORITHMS:
        raise ValueError(f"agent spec {spec!r}: unknown OpenSpiel bot {algorithm!r}; known: "
                         + ", ".join(f"openspiel:{a}" for a in OpenSpielSearchAgent.ALGORITHMS))
    out: dict[str, Any] = {"algorithm": algorithm}
    for item in filter(None, (x.strip() for x in params.split(","))):
        key, eq, raw = (x.strip() for x in item.partition("="))
        if not (eq and raw):
            raise ValueError(f"agent spec {spec!r}: parameter {item!r} must look like "
                             f"name=value")
        out[key] = OpenSpielSearchAgent.param_value(key, raw, f"agent 'openspiel:{algorithm}'")
    OpenSpielSearchAgent(seed=0, **out)  # the values' own checks, in one line
    return out


__all__ = ["OpenSpielSearchAgent", "parse_openspiel", "game_for", "sampled_state"]
