"""The rules of Scopa, each written once: the configuration, then one module per rule,
each holding the rule's per-game form (Python ints: ``scopa_env.game``, the agents'
search) and its array form (numpy, many games at once: ``scopa_env.vector``, the batched
agents) side by side, with the rule's named constants.

- ``options``: ``Rules``, the named rule sets, options and their validation;
- ``deal``: deal order, opening table, the three-kings redeal (``REDEAL_KINGS``);
- ``capture``: which captures are legal (``legal_patterns`` / ``legal_captures``: the
  per-game move generator ``scopa_env.moves`` and the vector engine's tables ask it), the
  scopa predicate, the leftover table;
- ``scoring``: a hand's points (``CARTE_MAJORITY``, ``DENARI_MAJORITY``, primiera,
  napola);
- ``outcome``: match end and the rewards at a hand's end.

The observation encoding is ``scopa_env.observation`` (per game) and
``VectorScopaEnv.observe`` (arrays), on the one ``LAYOUT``.

``from scopa_env.rules import Rules, make_rules, NAMED_RULES, ...`` reads the
configuration.
"""

from .options import (
    FOUR_PLAYER_ONLY,
    NAMED_RULES,
    OPTION_NAMES,
    PRIMIERA_TABLES,
    Rules,
    make_rules,
    parse_option,
    resolve_rules,
)

__all__ = ["FOUR_PLAYER_ONLY", "NAMED_RULES", "OPTION_NAMES", "PRIMIERA_TABLES", "Rules",
           "make_rules", "parse_option", "resolve_rules"]
