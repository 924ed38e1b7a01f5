"""How well a policy plays the last deal of a 2-player hand, measured exactly.

    .venv/bin/python benchmarks/endgame_regret.py [--agent pretrained] [--hands 3000]
        [--seed 10000] [--show 5] [--json]

The agent plays both seats of ``--hands`` hands (deals seeded ``seed``, ``seed + 1``,
...); at each of its last-deal decisions with a choice (deck empty: every card known)
``agents.baselines.endgame`` gives every legal move's exact final margin. Reported per number of
cards in hand: decisions, the share where the agent's move is not a best one, and the
points it loses per decision against best play. ``--show N`` prints N of its mistakes
with three cards in hand.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents import make_agent  # noqa: E402
from agents.baselines.endgame import EndgameSolver, position_from_obs  # noqa: E402
from scopa_env.cards import CODES, cards_of  # noqa: E402
from scopa_env.game import apply, new_match  # noqa: E402
from scopa_env.moves import action_text  # noqa: E402
from scopa_env.observation import encode_info, info_set  # noqa: E402
from scopa_env.rules import make_rules  # noqa: E402


def _cards(mask: int) -> str:
    return " ".join(CODES[c] for c in cards_of(mask))


def measure(spec: str, hands: int, seed: int, show: int = 0) -> dict[str, dict[str, float]]:
    rules = make_rules("scopa")
    agent = make_agent(spec, seed=seed)
    solver = EndgameSolver(rules)
    count: Counter[int] = Counter()
    wrong: Counter[int] = Counter()
    lost: Counter[int] = Counter()
    for g in range(hands):
        s = new_match(rules, seed=seed + g)
        while True:
            info = info_set(s, s.to_move)
            a = agent.act(info)
            if s.deck_count == 0 and len(info.legal_actions) > 1:
                pos = position_from_obs(encode_info(info))
                q = solver.move_values(pos, info.legal_actions)
                n = pos[0].bit_count()
                regret = max(q) - q[info.legal_actions.index(a)]
                count[n] += 1
                lost[n] += regret
                if regret:
                    wrong[n] += 1
                    if show and n == 3:
                        show -= 1
                        print(f"hand [{_cards(pos[0])}]  other [{_cards(pos[1])}]  table "
                              f"[{_cards(pos[2])}]  piles {pos[3].bit_count()}/"
                              f"{pos[4].bit_count()} cards, scope {pos[5]:+d}: played "
                              f"{action_text(a)}; values " + ", ".join(
                                  f"{action_text(x)} {v:+d}"
                                  for x, v in zip(info.legal_actions, q, strict=True)))
            if apply(s, a).hand is not None:
                break
    return {f"{n} card{'s' if n > 1 else ''}": {
        "decisions": count[n], "not_best": wrong[n] / count[n],
        "points_lost_per_decision": lost[n] / count[n]} for n in sorted(count, reverse=True)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--agent", default="pretrained")
    p.add_argument("--hands", type=int, default=3000)
    p.add_argument("--seed", type=int, default=10_000)
    p.add_argument("--show", type=int, default=0)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    res = measure(args.agent, args.hands, args.seed, args.show)
    if args.json:
        print(json.dumps(res, indent=1))
    else:
        print("| last deal | decisions | move not a best one | points lost per decision |")
        print("|---|---:|---:|---:|")
        for k, v in res.items():
            print(f"| {k} in hand | {v['decisions']:,} | {v['not_best']:.1%} | "
                  f"{v['points_lost_per_decision']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
