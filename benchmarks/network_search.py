"""Time per decision of the search with the network against a reference search, one
decision at a time (no batching across games).

    .venv/bin/python benchmarks/network_search.py [--hands 4] [--seed 5]
        [--search pretrained:search=on] [--reference pimc:worlds=48,depth=8] [--json]
    .venv/bin/python benchmarks/network_search.py --noise [--hands 3] [--seed 7]
        [--decisions 40] [--search pretrained:search=on,...]

The shipped network (``pretrained``, 2-player scopa) plays ``--hands`` hands against itself
(hand ``i`` dealt from seed ``seed * 100000 + i``); at each of its decisions with a choice,
outside the last deal (where ``search=on`` plays the exact solver), both ``--search`` and
``--reference`` choose a move with ``act`` on the seat's information set, one decision at
a time, and their wall times are taken. The report gives each one's median and 90th
percentile in ms, the median over the decisions it searched (the search plays the
network's sure calls without rolling out: ``gap``), and the ratio of the medians
(search / reference, measured in the same run, so that a busy machine slows both).
``scopa eval`` times a batched agent by its batched calls (``act_batch``, the decisions
of up to 8 games together), which spreads the search's fixed costs over them: this
script shows the cost of one decision alone.

``--noise``: how much of the search's move values is noise. On the first ``--decisions``
of those decisions, two ``--search`` agents seeded 1 and 2 (independent draws of worlds)
give every move's value (``SearchAgent.move_values``); the report gives how often the
two pick the same move, the per-move noise (the standard deviation of a move's value
between the draws, divided by sqrt 2, averaged) and the spread of the values between
the moves of a decision (their standard deviation, averaged).
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


def timed(agent: Any, infos: list[Any]) -> tuple[list[float], list[bool]]:
    """Wall ms of ``agent.act`` on each decision (after one untimed warm-up call), and
    whether the agent searched it (a ``SearchAgent``'s ``searched`` count went up; every
    decision for other agents)."""
    agent.act(infos[0])
    out, searched = [], []
    for info in infos:
        before = getattr(agent, "searched", None)
        t0 = time.perf_counter()
        move = agent.act(info)
        out.append((time.perf_counter() - t0) * 1e3)
        searched.append(before is None or agent.searched > before)
        if move not in info.legal_actions:
            raise ValueError(f"{agent.spec} played an illegal move {move}")
    return out, searched


def measure(hands: int, seed: int, search: str, reference: str) -> dict[str, Any]:
    infos = decisions(hands, seed)
    res: dict[str, Any] = {"hands": hands, "seed": seed, "decisions": len(infos)}
    for key, spec in (("search", search), ("reference", reference)):
        ms, searched = timed(make_agent(check_spec(spec), seed=seed), infos)
        deep = [t for t, s in zip(ms, searched, strict=True) if s]
        res[key] = {"spec": spec, "median_ms": float(np.median(ms)),
                    "p90_ms": float(np.percentile(ms, 90)), "searched": len(deep),
                    "searched_median_ms": float(np.median(deep)) if deep else None}
    res["ratio"] = res["search"]["median_ms"] / res["reference"]["median_ms"]
    return res


def noise(hands: int, seed: int, search: str, n: int) -> dict[str, Any]:
    """Agreement, per-move noise and spread of two draws of ``search``'s move values."""
    from scopa_policy.specs import PRETRAINED, parse_pretrained

    params = parse_pretrained(search)
    if "search" not in params:
        raise ValueError(f"--noise needs a pretrained:search=on spec, got {search!r}")
    infos = decisions(hands, seed)[:n]
    draws = []
    for s in (1, 2):
        agent = PRETRAINED(seed=s, **params)
        draws.append([np.nan_to_num(agent.move_values(i), nan=-np.inf) for i in infos])
    same = [int(np.argmax(a) == np.argmax(b)) for a, b in zip(*draws, strict=True)]
    noise_sd, spread = [], []
    for a, b in zip(*draws, strict=True):
        keep = np.isfinite(a)
        noise_sd.append(float(np.std(a[keep] - b[keep]) / np.sqrt(2)))
        spread.append(float(np.std(a[keep])))
    return {"search": search, "decisions": len(infos), "same_choice": float(np.mean(same)),
            "noise_sd": float(np.mean(noise_sd)), "spread": float(np.mean(spread))}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hands", type=int, default=4)
    p.add_argument("--seed", type=int, default=5)
    p.add_argument("--search", default="pretrained:search=on")
    p.add_argument("--reference", default="pimc:worlds=48,depth=8")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--noise", action="store_true",
                   help="measure the noise of --search's move values instead of times")
    p.add_argument("--decisions", type=int, default=40,
                   help="--noise: how many decisions (default 40)")
    args = p.parse_args(argv)
    if args.hands < 1:
        p.error(f"--hands must be at least 1, got {args.hands}")
    if args.decisions < 1:
        p.error(f"--decisions must be at least 1, got {args.decisions}")
    if args.noise:
        try:
            res = noise(args.hands, args.seed, args.search, args.decisions)
        except ValueError as e:
            p.error(f"--search: {e}")
        if args.json:
            print(json.dumps(res, indent=2))
        else:
            print(f"{res['search']}: {res['decisions']} decisions, same choice in two draws "
                  f"{res['same_choice']:.0%}, noise sd {res['noise_sd']:.3f}, spread of the "
                  f"move values {res['spread']:.3f}")
        return 0
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
        deep = (f"   searched {r['searched']}: median {r['searched_median_ms']:.2f} ms"
                if r["searched"] else "   searched none")
        print(f"  {r['spec']:<40} median {r['median_ms']:8.2f} ms   p90 {r['p90_ms']:8.2f} ms"
              + deep)
    print(f"  ratio of the medians (search / reference): {res['ratio']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
