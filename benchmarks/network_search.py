"""Time per decision of the search with the network against a reference search, one
decision at a time (no batching across games).

    .venv/bin/python benchmarks/network_search.py [--hands 4] [--seed 5]
        [--search pretrained:search=on] [--reference pimc:worlds=48,depth=8] [--json]

The shipped network (``pretrained``, 2-player scopa) plays ``--hands`` hands against itself
(hand ``i`` dealt from seed ``seed * 100000 + i``); at each of its decisions with a choice,
outside the last deal (where ``search=on`` plays the exact solver), both ``--search`` and
``--reference`` choose a move with ``act`` on the seat's information set, one decision at
a time, and their wall times are taken. The report gives each one's median and 90th
percentile in ms and the ratio of the medians (search / reference, measured in the same
run, so that a busy machine slows both). ``scopa eval`` times a batched agent by its
batched calls (``act_batch``, the decisions of up to 8 games together), which spreads
the search's fixed costs over them: this script shows the cost of one decision alone.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents import check_spec, make_agent  # noqa: E402
from scopa_env.game import apply, new_match  # noqa: E402
from scopa_env.observation import info_set  # noqa: E402
from scopa_policy.agent import PretrainedAgent  # noqa: E402


def decisions(hands: int, seed: int) -> list[Any]:
    """The information sets of the shipped agent's self-play decisions with a choice,
    the deck not empty."""
    shipped = PretrainedAgent(seed=0)
    out = []
    for i in range(hands):
        s = new_match("scopa", seed=seed * 100000 + i)
        while True:
            info = info_set(s, s.to_move)
            if len(info.legal_actions) > 1 and info.deck_count:
                out.append(info)
            if apply(s, shipped.act(info)).hand is not None:
                break
    return out


def timed(agent: Any, infos: list[Any]) -> list[float]:
    """Wall ms of ``agent.act`` on each decision (after one untimed warm-up call)."""
    agent.act(infos[0])
    out = []
    for info in infos:
        t0 = time.perf_counter()
        move = agent.act(info)
        out.append((time.perf_counter() - t0) * 1e3)
        if move not in info.legal_actions:
            raise ValueError(f"{agent.spec} played an illegal move {move}")
    return out


def measure(hands: int, seed: int, search: str, reference: str) -> dict[str, Any]:
    infos = decisions(hands, seed)
    res: dict[str, Any] = {"hands": hands, "seed": seed, "decisions": len(infos)}
    for key, spec in (("search", search), ("reference", reference)):
        ms = timed(make_agent(check_spec(spec), seed=seed), infos)
        res[key] = {"spec": spec, "median_ms": float(np.median(ms)),
                    "p90_ms": float(np.percentile(ms, 90))}
    res["ratio"] = res["search"]["median_ms"] / res["reference"]["median_ms"]
    return res


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hands", type=int, default=4)
    p.add_argument("--seed", type=int, default=5)
    p.add_argument("--search", default="pretrained:search=on")
    p.add_argument("--reference", default="pimc:worlds=48,depth=8")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = p.parse_args(argv)
    if args.hands < 1:
        p.error(f"--hands must be at least 1, got {args.hands}")
    for flag, spec in (("--search", args.search), ("--reference", args.reference)):
        try:
            check_spec(spec)
        except ValueError as e:
            p.error(f"{flag}: {e}")
    res = measure(args.hands, args.seed, args.search, args.reference)
    if args.json:
        print(json.dumps(res, indent=2))
        return 0
    print(f"{res['decisions']} decisions with a choice before the last deal ({args.hands} "
          f"self-play hands, seed {args.seed}), one at a time:")
    for key in ("search", "reference"):
        r = res[key]
        print(f"  {r['spec']:<40} median {r['median_ms']:8.2f} ms   p90 {r['p90_ms']:8.2f} ms")
    print(f"  ratio of the medians (search / reference): {res['ratio']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
