"""How well the inference sampler reads the table: the probability it gives the true
hidden hand, against the uniform sampler's, and what it costs a decision.

    .venv/bin/python benchmarks/world_inference.py [--hands 600] [--seed 21]
        [--opponent pretrained] [--temperature 1] [--floor 0.1] [--json OUT]

2-player scopa. The shipped network (``pretrained``) plays ``--hands`` hands (hand ``i``
dealt from seed ``seed * 100000 + i``) against ``--opponent``, each side on either seat
in turn. At every decision of the network where the opponent has already moved this
round (``info.round_moves``) and still holds cards, before the last deal (where every
card is known), the opponent's hand is unknown to it: ``C(n, k)`` hands are
possible (its ``k`` cards among the ``n`` unseen). The uniform sampler gives each
``1 / C(n, k)``. The inference sampler's model (``scopa_policy.inference``: the network
as a model of the opponent's play, ``--temperature``, ``--floor``) gives each the
likelihood of the opponent's moves this round; normalised over every possible hand
(enumerated exactly), that is the probability it gives the true hand. Reported, over
all positions and by how many moves the opponent has made this round and by round of
the hand:

- ``loglik gain``: the mean log-probability of the true hand, inference minus uniform
  (nats; > 0: the inference puts more weight on the truth);
- ``held prob``: the mean probability each sampler gives each card the opponent truly
  holds (uniform: k / n);
- ``top1``: how often the single most probable hand is the true one.

Then the cost: the process CPU time of drawing 128 worlds with each sampler (median ms)
on the positions, in the same run.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents import make_agent  # noqa: E402
from agents.worlds import (  # noqa: E402
    UniformSampler,
    log_uniform_hands,
    past_decisions,
)
from scopa_env.cards import cards_of  # noqa: E402
from scopa_env.game import apply, new_match  # noqa: E402
from scopa_env.observation import InfoSet, info_set  # noqa: E402
from scopa_policy.agent import PretrainedAgent  # noqa: E402
from scopa_policy.inference import PolicyMoveModel, policy_sampler  # noqa: E402
from scopa_policy.search import RolloutPolicy, value_scale  # noqa: E402


def positions(hands: int, seed: int, opponent: str) -> list[tuple[InfoSet, int, int]]:
    """(the network's information set, the opponent's true hand, the hand's round) at each
    of the network's decisions where the opponent has moved this round."""
    net = PretrainedAgent(seed=0)
    other = make_agent(opponent, seed=1)
    out = []
    for i in range(hands):
        s = new_match("scopa", seed=seed * 100000 + i)
        net_seat = i % 2
        rnd = 0
        while True:
            info = info_set(s, s.to_move)
            if not s.round_moves:
                rnd += 1
            if s.to_move == net_seat:
                if info.deck_count and info.hand_sizes[1 - net_seat] and any(
                        seat != net_seat for seat, _ in info.round_moves):
                    out.append((info, s.hands[1 - net_seat], rnd))
                a = net.act(info)
            else:
                a = other.act(info)
            if apply(s, a).hand is not None:
                break
    return out


def every_hand(info: InfoSet) -> np.ndarray:
    """Every possible current deal (C, 2) of the opponent's hand among the unseen cards."""
    opp = 1 - info.seat
    k = info.hand_sizes[opp]
    rows = []
    for combo in itertools.combinations(cards_of(info.unseen), k):
        h = [0, 0]
        h[info.seat] = info.hand
        for c in combo:
            h[opp] |= 1 << c
        rows.append(h)
    return np.array(rows, np.uint64)


def measure(pos: list[tuple[InfoSet, int, int]], model: PolicyMoveModel) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    for info, truth, rnd in pos:
        hands = every_hand(info)
        opp = 1 - info.seat
        decisions = past_decisions(info, [int(h) for h in hands[0]])
        logw = model.log_likelihood(decisions, hands)
        logp = logw - np.logaddexp.reduce(logw)
        true_row = int(np.flatnonzero(hands[:, opp] == np.uint64(truth))[0])
        p = np.exp(logp)
        held = [float(p[(hands[:, opp] >> np.uint64(c)) & np.uint64(1) == 1].sum())
                for c in cards_of(truth)]
        k, n = info.hand_sizes[opp], info.unseen.bit_count()
        rows.append({
            "moves": len(decisions), "round": rnd,
            "gain": float(logp[true_row] - log_uniform_hands(info)),
            "held": float(np.mean(held)), "held_uniform": k / n,
            "top1": float(int(np.argmax(logp)) == true_row),
            "top1_uniform": 1.0 / len(hands)})
    return {"all": summarise(rows),
            "by_moves": {m: summarise([r for r in rows if r["moves"] == m])
                         for m in sorted({r["moves"] for r in rows})},
            "by_round": {r: summarise([x for x in rows if x["round"] == r])
                         for r in sorted({x["round"] for x in rows})}}


def summarise(rows: list[dict[str, Any]]) -> dict[str, float]:
    g = np.array([r["gain"] for r in rows])
    return {"positions": len(rows), "loglik_gain": float(g.mean()),
            "loglik_gain_se": float(g.std(ddof=1) / np.sqrt(len(g))) if len(g) > 1 else 0.0,
            "held_prob": float(np.mean([r["held"] for r in rows])),
            "held_prob_uniform": float(np.mean([r["held_uniform"] for r in rows])),
            "top1": float(np.mean([r["top1"] for r in rows])),
            "top1_uniform": float(np.mean([r["top1_uniform"] for r in rows]))}


def cost(pos: list[tuple[InfoSet, int, int]], policy: RolloutPolicy, worlds: int,
         temperature: float, floor: float, limit: int = 300) -> dict[str, float]:
    """Median process CPU ms of drawing ``worlds`` worlds, uniform and inference, on the
    same positions (CPU time: a busy machine inflates it less than wall time)."""
    inference = policy_sampler(policy, temperature=temperature, floor=floor)
    uniform = UniformSampler()
    times: dict[str, list[float]] = defaultdict(list)
    for info, _, _ in pos[:limit]:
        for name, sampler in (("uniform", uniform), ("policy", inference)):
            t = time.process_time()
            sampler.sample(info, worlds, random.Random(0))
            times[name].append((time.process_time() - t) * 1e3)
    return {f"{k}_median_cpu_ms": float(np.median(v)) for k, v in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hands", type=int, default=600)
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--opponent", default="pretrained")
    ap.add_argument("--temperature", type=float, nargs="+", default=[1.0])
    ap.add_argument("--floor", type=float, nargs="+", default=[0.1])
    ap.add_argument("--worlds", type=int, default=128)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    t0 = time.time()
    pos = positions(args.hands, args.seed, args.opponent)
    net = PretrainedAgent(seed=0).policy(pos[0][0].rules)
    policy = RolloutPolicy(net.net, value_scale(net.meta))
    print(f"{len(pos)} positions from {args.hands} hands against {args.opponent} "
          f"(seed {args.seed}, {time.time() - t0:.0f} s)")
    report: dict[str, Any] = {"opponent": args.opponent, "hands": args.hands,
                              "seed": args.seed, "positions": len(pos), "settings": {}}
    for temp, floor in itertools.product(args.temperature, args.floor):
        res = measure(pos, PolicyMoveModel(policy, temp, floor))
        a = res["all"]
        print(f"temperature {temp:g}, floor {floor:g}: loglik gain {a['loglik_gain']:+.3f} "
              f"(se {a['loglik_gain_se']:.3f}) nats; held prob {a['held_prob']:.3f} "
              f"(uniform {a['held_prob_uniform']:.3f}); top1 {a['top1']:.3f} "
              f"(uniform {a['top1_uniform']:.3f})")
        for key in ("by_moves", "by_round"):
            for k, v in res[key].items():
                print(f"   {key[3:]} {k}: {v['positions']:5d} positions, gain "
                      f"{v['loglik_gain']:+.3f}, held {v['held_prob']:.3f} "
                      f"(uniform {v['held_prob_uniform']:.3f}), top1 {v['top1']:.3f} "
                      f"(uniform {v['top1_uniform']:.3f})")
        report["settings"][f"temperature={temp:g},floor={floor:g}"] = res
    report["cost"] = cost(pos, policy, args.worlds, args.temperature[0], args.floor[0])
    print(f"cost of drawing {args.worlds} worlds: "
          + ", ".join(f"{k} {v:.2f}" for k, v in report["cost"].items()))
    print(f"({time.time() - t0:.0f} s)")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
