"""Where a deeper search's choices differ from the network's, outside the last deal.

    .venv/bin/python benchmarks/search_guidance.py [--hands 60] [--seed 777]
        [--search pimc:worlds=48,depth=5] [--beta 16] [--json]

The shipped network (``pretrained``, 2-player scopa) plays ``--hands`` hands against
itself (hand ``i`` is dealt from seed ``seed * 100000 + i``). At every decision with a
choice before the last deal, the search agent (``--search``: an agent with move values in
points, such as ``pimc``) scores the legal moves, and the guided choice is the best of the
network's log-probabilities plus ``--beta`` x those values: the choice of ``SearchGuided``
below. The report counts the decisions where the guided choice differs from the
network's, by deal and by kind (each move laid off or capturing), how far apart the
network's best two logits were there (a small gap is a close call), and the points a hand
the search's own values credit to the guided choices (the search's estimate, not a
measured margin: measure that with the evaluator and the agent below).

``SearchGuided`` is that guided player as an agent (the last deal is the shipped agent's),
for the evaluator:

    scopa eval "py:benchmarks/search_guidance.py:SearchGuided,worlds=48,depth=5" \\
        pretrained --hands 1000 --matches 0 --seed S --workers 2

``gap=G`` consults the search only on the network's close calls (best two logits less than
``G`` apart); ``deals=A-B`` only in deals ``A`` to ``B``. It is a probe of what a search
teacher could teach (BENCHMARKS.md, "Imitating a deeper search"), not a shipped agent:
``pimc:worlds=48,depth=5`` costs it about 6 ms a move with a choice.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scopa_env.cards import CODES, cards_of  # noqa: E402
from scopa_env.game import apply, new_match  # noqa: E402
from scopa_env.moves import action_move, action_text  # noqa: E402
from scopa_env.observation import InfoSet, info_set  # noqa: E402
from scopa_policy.agent import PretrainedAgent  # noqa: E402
from scopa_policy.search import log_probs  # noqa: E402
from scopa_policy.symmetry import top_two_gap  # noqa: E402
from scopa_train.search_labels import search_agent  # noqa: E402


def deal_of(info: InfoSet) -> int:
    """The deal (1 = the first) of a decision: from the cards left in the deck."""
    r = info.rules
    per_deal = r.players * r.hand_size
    first = 40 - r.table_size - per_deal  # the deck after the first deal
    return 1 + (first - info.deck_count) // per_deal


def logit_gap(logits: np.ndarray) -> float:
    """The network's best logit minus its next best, for one decision."""
    return float(top_two_gap(logits, np.zeros(len(logits), np.int64), 1)[0])


def guided_move(logits: np.ndarray, values: Any, beta: float) -> int:
    """The place of the best move by the log-probabilities plus ``beta`` x ``values``."""
    return int(np.argmax(log_probs(logits) + beta * np.asarray(values, np.float64)))


class SearchGuided:
    """The shipped agent, its choices outside the last deal replaced by the best of its
    log-probabilities plus ``beta`` x ``pimc:worlds=W,depth=D``'s move values (points)
    where the network's best two logits are less than ``gap`` apart (default: every
    decision), in deals ``deals`` ("A-B")."""

    def __init__(self, seed: int | None = None, worlds: int = 48, depth: int = 5,
                 beta: float = 16.0, gap: float = float("inf"), deals: str = "1-5") -> None:
        self.shipped = PretrainedAgent(seed=seed)
        self.search = search_agent(f"pimc:worlds={int(worlds)},depth={int(depth)}",
                                   0 if seed is None else seed)
        self.beta, self.gap = float(beta), float(gap)
        try:
            lo, hi = (int(x) for x in str(deals).split("-"))
        except ValueError:
            raise ValueError(f"deals must be A-B (e.g. 1-5), got {deals!r}") from None
        self.deals = (lo, hi)
        self.spec = f"search-guided(pimc:worlds={worlds},depth={depth},beta={beta:g})"

    def guided(self, info: InfoSet) -> bool:
        """Whether the search is consulted on this decision (before the network's gap)."""
        return (len(info.legal_actions) > 1 and info.deck_count > 0
                and self.deals[0] <= deal_of(info) <= self.deals[1])

    def act(self, info: InfoSet) -> int:
        policy = self.shipped.policy(info.rules)
        if not self.guided(info):
            return policy.act(info)
        logits = policy.logits(info)
        if logit_gap(logits) >= self.gap:
            return int(info.legal_actions[int(np.argmax(logits))])
        return int(info.legal_actions[guided_move(logits, self.search.scores(info), self.beta)])

    def act_batch(self, infos: list[InfoSet]) -> list[int]:
        return [self.act(i) for i in infos]


def _kind(action: int, table: int) -> str:
    return "capture" if action_move(action, table).capture else "lay off"


def _cards(mask: int) -> str:
    return " ".join(CODES[c] for c in cards_of(mask))


def measure(hands: int, seed: int, search: str, beta: float, examples: int = 10
            ) -> dict[str, Any]:
    shipped = PretrainedAgent(seed=0)
    teacher = search_agent(search, seed)
    rows: list[dict[str, Any]] = []
    for i in range(hands):
        s = new_match("scopa", seed=seed * 100000 + i)
        while True:
            info = info_set(s, s.to_move)
            policy = shipped.policy(info.rules)
            legal = info.legal_actions
            if len(legal) > 1 and info.deck_count > 0:
                logits = policy.logits(info)
                values = np.asarray(teacher.scores(info), np.float64)
                net, guided = int(np.argmax(logits)), guided_move(logits, values, beta)
                rows.append({"deal": deal_of(info), "differ": net != guided,
                             "credit": float(values[guided] - values[net]),
                             "gap": logit_gap(logits),
                             "kinds": (_kind(legal[net], s.table), _kind(legal[guided], s.table)),
                             "text": f"hand {_cards(s.hands[s.to_move])}"
                                     f" | table {_cards(s.table)}"
                                     f" | network {action_text(legal[net])}"
                                     f" | guided {action_text(legal[guided])}"})
                move = legal[net]
            else:
                move = policy.act(info)
            if apply(s, move).hand is not None:
                break
    differ = [r for r in rows if r["differ"]]
    gaps = [r["gap"] for r in differ]
    kinds = Counter(f"{a} -> {b}" for a, b in (r["kinds"] for r in differ))
    return {
        "hands": hands, "seed": seed, "search": search, "beta": beta,
        "decisions": len(rows), "differ": len(differ),
        "differ_share": len(differ) / max(1, len(rows)),
        "credit_per_hand": sum(r["credit"] for r in differ) / hands,
        "by_deal": [{"deal": d,
                     "decisions": sum(r["deal"] == d for r in rows),
                     "differ": sum(r["deal"] == d for r in differ),
                     "credit_per_hand": sum(r["credit"] for r in differ if r["deal"] == d)
                     / hands} for d in sorted({r["deal"] for r in rows})],
        "by_kind": [{"kind": k, "differ": n,
                     "credit_per_hand": sum(r["credit"] for r in differ
                                            if f"{r['kinds'][0]} -> {r['kinds'][1]}" == k)
                     / hands} for k, n in kinds.most_common()],
        "gap_quartiles": [float(q) for q in np.percentile(gaps, [25, 50, 75])] if gaps else [],
        "close_call_share": float(np.mean([g < 1.0 for g in gaps])) if gaps else 0.0,
        "examples": [f"deal {r['deal']}, credit {r['credit']:+.2f}, gap {r['gap']:.2f}: "
                     f"{r['text']}" for r in sorted(differ, key=lambda r: -r["credit"])
                     [:examples]],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hands", type=int, default=60)
    p.add_argument("--seed", type=int, default=777)
    p.add_argument("--search", default="pimc:worlds=48,depth=5")
    p.add_argument("--beta", type=float, default=16.0)
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = p.parse_args(argv)
    if args.hands < 1:
        p.error(f"--hands must be at least 1, got {args.hands}")
    if args.beta < 0:
        p.error(f"--beta must not be negative, got {args.beta:g}")
    try:
        search_agent(args.search, 0)
    except ValueError as e:
        p.error(f"--search: {e}")
    res = measure(args.hands, args.seed, args.search, args.beta)
    if args.json:
        print(json.dumps(res, indent=2))
        return 0
    print(f"{res['decisions']:,} decisions with a choice before the last deal ({res['hands']} "
          f"self-play hands, seed {res['seed']}); the network + {res['beta']:g} x "
          f"{res['search']}'s values choose another move in {res['differ']} "
          f"({res['differ_share']:.1%}), credited {res['credit_per_hand']:+.3f} points a hand "
          f"by the search's own values\n")
    print("| deal | decisions | differ | credit a hand |\n|---:|---:|---:|---:|")
    for d in res["by_deal"]:
        print(f"| {d['deal']} | {d['decisions']} | {d['differ']} | {d['credit_per_hand']:+.3f} |")
    print("\n| network -> guided | differ | credit a hand |\n|---|---:|---:|")
    for k in res["by_kind"]:
        print(f"| {k['kind']} | {k['differ']} | {k['credit_per_hand']:+.3f} |")
    if res["gap_quartiles"]:
        q = res["gap_quartiles"]
        print(f"\nthe network's top-two logit gap where they differ: quartiles {q[0]:.2f}, "
              f"{q[1]:.2f}, {q[2]:.2f}; close calls (gap < 1): {res['close_call_share']:.1%}")
    print("\nlargest credits:")
    for line in res["examples"]:
        print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
