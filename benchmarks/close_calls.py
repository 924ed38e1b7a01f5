"""Which decisions need the suit views averaged: the close-call cut of ``suits=close``.

    .venv/bin/python benchmarks/close_calls.py [--hands 400] [--seed 77]
        [--opponent pimc] [--gaps 0.25 0.5 1 2 3] [--json]

The shipped agent with every decision averaged over the 6 suit views
(``pretrained:suits=all``) plays ``--hands`` paired hands against ``--opponent`` (the
evaluator, one worker, no matches); every decision it meets outside the last deal with
more than one legal move is kept. For each cut ``g`` the report gives the share of those
decisions whose one view scores the best two moves within ``g`` logits (the close calls
``scopa_policy.symmetry.CloseCalls`` averages) and how often the close-call agent plays
the move of averaging every decision; the first line, one view alone, is the agreement
without any averaging. Moves are compared as ``PolicyAgent`` picks them (scores rounded
to 1e-8, the first of equal best moves).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.evaluation.evaluate import evaluate  # noqa: E402
from scopa_env.observation import InfoSet  # noqa: E402
from scopa_env.rules import make_rules  # noqa: E402
from scopa_policy.agent import PolicyAgent, decision_inputs, load_policy_agent  # noqa: E402
from scopa_policy.features import action_inputs_np  # noqa: E402
from scopa_policy.symmetry import (  # noqa: E402
    CloseCalls,
    SuitAveraged,
    decision_table,
    top_two_gap,
)


class Recording:
    """An agent that plays as ``agent`` and keeps the information sets of its decisions
    with a choice outside a 2-player last deal."""

    def __init__(self, agent: PolicyAgent) -> None:
        self.agent = agent
        self.spec = agent.spec
        self.kept: list[InfoSet] = []

    def act(self, info: InfoSet) -> int:
        return self.act_batch([info])[0]

    def act_batch(self, infos: list[InfoSet]) -> list[int]:
        self.kept += [i for i in infos if len(i.legal_actions) > 1 and i.deck_count]
        return self.agent.act_batch(infos)


def _picks(scores: np.ndarray, row: np.ndarray, n: int) -> np.ndarray:
    """Each decision's first best move (its place in the decision's legal list)."""
    return decision_table(scores, row, n).argmax(1)


def measure(hands: int, seed: int, opponent: str, gaps: list[float]) -> dict:
    agent = load_policy_agent(None, suits="all").policy(make_rules("scopa"))
    rec = Recording(agent)  # a factory hands every seating this one recorder
    evaluate(lambda _seed: rec, opponent, hands=hands, seed=seed, matches=0, workers=1)
    infos = rec.kept
    obs, ids, row = decision_inputs(infos)
    feats = action_inputs_np(obs, ids, row)
    one = agent.net.numpy_scorer()
    want = _picks(SuitAveraged(one).scores(obs, feats, row), row, len(infos))
    single = np.round(one.scores(obs, feats, row), 8)
    gap = top_two_gap(single, row, len(infos))
    out = {"decisions": len(infos), "hands": hands, "seed": seed, "opponent": opponent,
           "one_view_agreement": float((_picks(single, row, len(infos)) == want).mean()),
           "cuts": []}
    for g in gaps:
        got = _picks(CloseCalls(one, gap=g).scores(obs, feats, row), row, len(infos))
        out["cuts"].append({"gap": g, "averaged_share": float((gap < g).mean()),
                            "agreement": float((got == want).mean())})
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hands", type=int, default=400)
    p.add_argument("--seed", type=int, default=77)
    p.add_argument("--opponent", default="pimc")
    p.add_argument("--gaps", type=float, nargs="+", default=[0.25, 0.5, 1.0, 2.0, 3.0])
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = p.parse_args(argv)
    if args.hands < 1:
        p.error(f"--hands must be at least 1, got {args.hands}")
    if any(g < 0 for g in args.gaps):
        p.error("--gaps must not be negative")
    res = measure(args.hands, args.seed, args.opponent, args.gaps)
    if args.json:
        print(json.dumps(res, indent=2))
        return 0
    print(f"{res['decisions']:,} decisions with a choice outside the last deal "
          f"(pretrained:suits=all vs {res['opponent']}, {res['hands']} paired hands, "
          f"seed {res['seed']})\n")
    print("| close-call cut (logits) | decisions averaged | same move as averaging all |")
    print("|---:|---:|---:|")
    print(f"| one view alone | 0.0% | {res['one_view_agreement']:.2%} |")
    for c in res["cuts"]:
        print(f"| {c['gap']:g} | {c['averaged_share']:.1%} | {c['agreement']:.2%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
