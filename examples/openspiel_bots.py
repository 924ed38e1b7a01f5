"""The kit's agents against OpenSpiel's own bots, in OpenSpiel's own loop.

``SpecBot(spec)`` makes any agent spec (``pretrained``, ``pimc``, ``expert``, your
``py:`` agent) a ``pyspiel.Bot`` on the ``python_scopa`` game; OpenSpiel's ISMCTS bot
plays the other seat. Each deal is played twice with the seats swapped (the kit's
duplicate-deal protocol, docs/spec/evaluation.md): the mean of the kit agent's return is
its margin in points per hand.

    .venv/bin/pip install -e .[openspiel]
    .venv/bin/python examples/openspiel_bots.py --ours pretrained --simulations 100 --deals 10
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agents.bridges.openspiel_bots import SpecBot  # noqa: E402  (registers python_scopa)


def deal_both_ways(game: pyspiel.Game, bots: list[pyspiel.Bot], seed: int) -> float:
    """The first bot's mean return over one deal played from both seats."""
    returns = []
    for seats in ((0, 1), (1, 0)):
        rng = np.random.RandomState(seed)  # the same cards both times
        state = game.new_initial_state()
        for bot in bots:  # OpenSpiel's ISMCTS keeps nothing between moves
            if isinstance(bot, SpecBot):
                bot.restart_at(state)
        while not state.is_terminal():
            if state.is_chance_node():
                cards, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(int(rng.choice(cards, p=probs)))
            else:
                seat = state.current_player()
                state.apply_action(bots[seats.index(seat)].step(state))
        returns.append(state.returns()[seats[0]])
    return statistics.mean(returns)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ours", default="pretrained", help="a kit agent spec")
    ap.add_argument("--simulations", type=int, default=100, help="ISMCTS simulations a move")
    ap.add_argument("--deals", type=int, default=10, help="deals, each played both ways")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    game = pyspiel.load_game("python_scopa")
    rs = np.random.RandomState(args.seed)
    theirs = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(1, rs), uct_c=2.0,
                              max_simulations=args.simulations, random_state=rs)
    ours = SpecBot(args.ours, seed=args.seed)
    margins = [deal_both_ways(game, [ours, theirs], args.seed * 100_003 + d)
               for d in range(args.deals)]
    mean = statistics.mean(margins)
    half = 1.96 * statistics.stdev(margins) / len(margins) ** 0.5 if len(margins) > 1 else 0
    print(f"{ours.spec} vs OpenSpiel ISMCTS ({args.simulations} simulations): "
          f"{mean:+.3f} [95% CI {mean - half:+.3f}, {mean + half:+.3f}] points per hand "
          f"over {args.deals} deals played both ways")


if __name__ == "__main__":
    main()
