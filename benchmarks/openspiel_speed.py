"""Random-play speed of ``python_scopa`` through OpenSpiel's API, against the AEC env and
the engine itself, measured in one run.

Every game plays uniformly random legal moves and deals its cards by its own chance
(OpenSpiel: ``chance_outcomes`` then ``apply_action`` per card; the engine and the AEC env
shuffle once a hand). Per *decision* (agent-step) figures compare like with like; OpenSpiel
also applies one chance action per card dealt. The reference for OpenSpiel's own cost per
call is its ``python_kuhn_poker`` (a Python game of a few lines) through the same loop:
what ``python_scopa`` costs beyond it is the bridge and the engine.

    .venv/bin/python benchmarks/openspiel_speed.py [--seconds S] [--json]
    .venv/bin/python benchmarks/openspiel_speed.py --search openspiel:ismcts,simulations=1000 \
        pimc --positions 12

``--search SPEC ...`` times agents instead: CPU time per decision of each spec on the same
positions (decisions with a choice, drawn from random play of seeded matches).

Needs ``pip install -e .[openspiel]``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import pyspiel  # noqa: E402
from env_throughput import Clock, aec_throughput  # noqa: E402
from open_spiel.python.games import kuhn_poker  # noqa: E402, F401  (registers it)

import agents.bridges.openspiel_game  # noqa: E402, F401  (registers python_scopa)
import scopa_env  # noqa: E402
from agents import make_agent  # noqa: E402
from scopa_env.game import apply, new_match  # noqa: E402
from scopa_env.observation import info_set  # noqa: E402


def openspiel_throughput(name: str, seconds: float, seed: int = 0) -> dict[str, float]:
    """Decisions and actions (decisions + chance outcomes) per second of random play
    through OpenSpiel's API: ``legal_actions`` / ``chance_outcomes``, ``apply_action``,
    a new ``new_initial_state`` per episode."""
    game, rng = pyspiel.load_game(name), random.Random(seed)
    decisions = actions = 0
    clock = Clock()
    while clock.elapsed()[0] < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                cards, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(rng.choices(cards, probs)[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
                decisions += 1
            actions += 1
    wall, cpu = clock.elapsed()
    return {"decisions_per_s": decisions / wall, "decisions_per_cpu_s": decisions / cpu,
            "actions_per_s": actions / wall, "actions_per_cpu_s": actions / cpu}


def engine_throughput(seconds: float, seed: int = 0) -> dict[str, float]:
    """Decisions per second of the engine alone (``legal_actions`` + ``apply``, one
    seeded shuffle per hand), one-hand episodes as ``python_scopa``'s default."""
    rng = random.Random(seed)
    decisions, k = 0, 0
    clock = Clock()
    while clock.elapsed()[0] < seconds:
        s = new_match("scopa", k)
        k += 1
        while True:
            r = apply(s, rng.choice(s.legal_actions()), check=False, deal_next=False)
            decisions += 1
            if r.hand is not None:
                break
    wall, cpu = clock.elapsed()
    return {"decisions_per_s": decisions / wall, "decisions_per_cpu_s": decisions / cpu}


def search_times(specs: list[str], positions: int, seed: int = 0) -> dict[str, Any]:
    """CPU milliseconds per decision (median, mean) of each agent on the same
    ``positions`` decisions with a choice, taken every few plies of random play."""
    rng, infos = random.Random(seed), []
    k = 0
    while len(infos) < positions:
        s = new_match("scopa", seed * 1000 + k)
        k += 1
        ply = 0
        while not s.done and len(infos) < positions:
            legal = s.legal_actions()
            if len(legal) > 1 and ply % 7 == 3:
                infos.append(info_set(s, s.to_move))
            apply(s, rng.choice(legal))
            ply += 1
    out: dict[str, Any] = {}
    for spec in specs:
        agent = make_agent(spec, seed=seed)
        ms = []
        for info in infos:
            t = time.process_time()
            agent.act(info)
            ms.append(1e3 * (time.process_time() - t))
        out[agent.spec] = {"cpu_ms_median": statistics.median(ms),
                           "cpu_ms_mean": statistics.mean(ms), "decisions": len(ms)}
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=5.0, help="time per measurement")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--search", nargs="+", metavar="SPEC",
                    help="time these agents per decision instead")
    ap.add_argument("--positions", type=int, default=12, help="decisions timed (--search)")
    args = ap.parse_args(argv)
    if args.search:
        times = search_times(args.search, args.positions)
        if args.json:
            print(json.dumps(times, indent=1))
        for spec, t in times.items():
            print(f"{spec:<40} CPU ms per decision: median {t['cpu_ms_median']:9.1f}, "
                  f"mean {t['cpu_ms_mean']:9.1f} ({t['decisions']} decisions)")
        return times
    res: dict[str, Any] = {
        "python_scopa": openspiel_throughput("python_scopa", args.seconds),
        "python_kuhn_poker": openspiel_throughput("python_kuhn_poker", args.seconds),
        "engine": engine_throughput(args.seconds),
        "aec_env": aec_throughput(scopa_env.env(rules="scopa", episode="hand"), args.seconds),
    }
    ours = res["python_scopa"]
    # by process CPU time: the figures hold on a machine other jobs share
    us = {k: 1e6 / v.get("decisions_per_cpu_s", v.get("agent_steps_per_cpu_s"))
          for k, v in res.items()}
    kuhn_action_us = 1e6 / res["python_kuhn_poker"]["actions_per_cpu_s"]
    scopa_action_us = 1e6 / ours["actions_per_cpu_s"]
    res["ratios"] = {
        "python_scopa_vs_aec_env": us["aec_env"] / us["python_scopa"],
        "python_scopa_vs_engine": us["engine"] / us["python_scopa"],
        "us_per_action_python_scopa": scopa_action_us,
        "us_per_action_python_kuhn_poker": kuhn_action_us,
    }
    if args.json:
        print(json.dumps(res, indent=1))
        return res
    print(f"random play, {args.seconds:g} s each; decisions/s by wall clock "
          f"[by process CPU time], CPU µs per decision")
    for name, v in res.items():
        if name == "ratios":
            continue
        rate = v.get("decisions_per_s", v.get("agent_steps_per_s"))
        cpu = v.get("decisions_per_cpu_s", v.get("agent_steps_per_cpu_s"))
        print(f"  {name:<18} {rate:>10,.0f} [{cpu:>10,.0f}]  {us[name]:8.1f} µs")
    r = res["ratios"]
    print(f"decisions per CPU second, python_scopa / AEC env: "
          f"{r['python_scopa_vs_aec_env']:.2f}x; / engine: {r['python_scopa_vs_engine']:.2f}x")
    print(f"CPU per action applied (moves and cards dealt): python_scopa {scopa_action_us:.1f} "
          f"µs, python_kuhn_poker {kuhn_action_us:.1f} µs (OpenSpiel's own cost per call)")
    return res


if __name__ == "__main__":
    main()
