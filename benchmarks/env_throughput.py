"""Environment throughput: agent-steps per second of the Scopa AEC environment, of
PettingZoo's ``texas_holdem_v4`` (the reference, measured in the same process) and
of the batched ``VectorScopaEnv`` at several batch sizes.

An agent-step is one decision: an observation read and one legal action applied.
Every environment chooses uniformly random legal moves: the AEC environments from
the observation's ``action_mask`` as a PettingZoo user would, the batched one with
vectorised sampling over ``legal_ids``/``legal_valid``. Run on one core:

    taskset -c 0 .venv/bin/python benchmarks/env_throughput.py [--json] [--seconds S]

``texas_holdem_v4`` needs ``rlcard`` (and PettingZoo's classic extras, ``pygame``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import scopa_env  # noqa: E402
from scopa_env.vector import VectorScopaEnv  # noqa: E402


class Clock:
    """Wall-clock and process CPU time together (the CPU time excludes what other
    processes sharing the core take)."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def elapsed(self) -> tuple[float, float]:
        return time.perf_counter() - self.wall, time.process_time() - self.cpu


def rates(steps: int, clock: Clock) -> dict[str, float]:
    wall, cpu = clock.elapsed()
    return {"agent_steps_per_s": steps / wall, "agent_steps_per_cpu_s": steps / cpu}


def aec_throughput(env: Any, seconds: float, seed: int = 0) -> dict[str, float]:
    """Agent-steps/s of a PettingZoo AEC environment with random legal moves (seeded
    once, then ``reset()`` per episode). Also times the user's pick from the mask
    alone (``np.flatnonzero`` + ``choice``): its cost grows with the action space,
    16,204 ids here against 4 for texas_holdem_v4, and is not the environment's. The
    pick's process CPU time is measured again afterwards on a sample of the run's masks
    (the same expression, without the clock calls around it), for a CPU-time rate of the
    environment alone that other processes on the core move less."""
    rng = np.random.default_rng(seed)
    steps = 0
    pick = 0.0
    sample: list[np.ndarray] = []
    env.reset(seed=seed)
    clock = Clock()
    while True:
        for _agent in env.agent_iter():
            obs, _, termination, truncation, _ = env.last()
            if termination or truncation:
                action = None
            else:
                t0 = time.perf_counter()
                action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
                pick += time.perf_counter() - t0
                steps += 1
                if steps % 16 == 0 and len(sample) < 2000:
                    sample.append(obs["action_mask"])
            env.step(action)
        if clock.elapsed()[0] >= seconds:
            break
        env.reset()
    out = rates(steps, clock)
    wall = steps / out["agent_steps_per_s"]
    out["pick_share_of_wall"] = pick / wall
    out["agent_steps_per_s_without_pick"] = steps / (wall - pick)
    c0 = time.process_time()
    for _ in range(5):
        for mask in sample:
            int(rng.choice(np.flatnonzero(mask)))
    pick_cpu = (time.process_time() - c0) / (5 * len(sample))
    out["pick_cpu_us"] = pick_cpu * 1e6
    out["agent_steps_per_cpu_s_without_pick"] = 1 / (
        1 / out["agent_steps_per_cpu_s"] - pick_cpu)
    return out


def mask_scan_us(env: Any, masks: int = 2000, seed: int = 0) -> dict[str, float]:
    """Microseconds to find the legal ids in one of the AEC env's ``action_mask``s: as
    the benchmark's pick does (``np.flatnonzero`` of the int8 mask, the dtype
    Gymnasium's ``Discrete.sample(mask)`` asks for) and over a bool view of the same bytes
    (numpy's fast path), on masks of random play."""
    rng = np.random.default_rng(seed)
    seen: list[np.ndarray] = []
    env.reset(seed=seed)
    while len(seen) < masks:
        for _agent in env.agent_iter():
            obs, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            seen.append(obs["action_mask"])
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        env.reset()
    out = {}
    for name, view in (("int8", lambda m: m), ("bool_view", lambda m: m.view(bool))):
        t0 = time.perf_counter()
        for m in seen:
            np.flatnonzero(view(m))
        out[name] = (time.perf_counter() - t0) / len(seen) * 1e6
    return out


def vector_throughput(num_envs: int, seconds: float, records: bool = False,
                      rules: str = "scopa", **options: Any) -> dict[str, float]:
    """Agent-steps/s and bytes per game of ``VectorScopaEnv``: every step reads the
    observations and plays one random legal move per game."""
    env = VectorScopaEnv(num_envs, rules=rules, seed=0, records=records, **options)
    rng = np.random.default_rng(0)
    rows = np.arange(num_envs)

    def run(steps: int) -> None:
        for _ in range(steps):
            env.observe()
            pick = (rng.random(num_envs) * env.legal_count).astype(np.int64)
            env.step(env.legal_ids[rows, pick])

    run(max(1, 2000 // num_envs))  # warm up
    steps, clock = 0, Clock()
    chunk = max(1, 20000 // num_envs)
    while clock.elapsed()[0] < seconds:
        run(chunk)
        steps += chunk
    return {**rates(steps * num_envs, clock), "bytes_per_game": env.nbytes_per_game()}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--seconds", type=float, default=3.0, help="time per measurement")
    ap.add_argument("--sizes", default="1,64,1024,4096", help="batch sizes of the vector env")
    args = ap.parse_args(argv)

    res: dict[str, Any] = {
        "python": platform.python_version(), "numpy": np.__version__,
        "cpu_affinity": sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
        else None, "seconds_per_measurement": args.seconds}
    try:
        from pettingzoo.classic import texas_holdem_v4
        res["texas_holdem_v4"] = aec_throughput(texas_holdem_v4.env(), args.seconds)
    except ImportError as e:  # rlcard / pygame missing
        res["texas_holdem_v4"] = None
        res["texas_holdem_v4_error"] = f"{e} (pip install rlcard pygame)"
    texas = res["texas_holdem_v4"]

    def versus(r: dict[str, float]) -> dict[str, float]:
        if texas:
            r["vs_texas_holdem_v4"] = r["agent_steps_per_s"] / texas["agent_steps_per_s"]
            r["vs_texas_holdem_v4_cpu"] = (r["agent_steps_per_cpu_s"]
                                           / texas["agent_steps_per_cpu_s"])
            if "agent_steps_per_s_without_pick" in r:  # the environments alone
                for key in ("s", "cpu_s"):
                    r[f"vs_texas_holdem_v4_{key}_without_pick"] = (
                        r[f"agent_steps_per_{key}_without_pick"]
                        / texas[f"agent_steps_per_{key}_without_pick"])
        return r

    res["aec"] = {f"scopa_{p}p": versus(aec_throughput(
        scopa_env.env(rules="scopa", players=p), args.seconds)) for p in (2, 4)}
    res["aec_mask_scan_us"] = mask_scan_us(scopa_env.env(rules="scopa", players=2))
    sizes = [int(x) for x in args.sizes.split(",")]
    res["vector"] = {str(n): versus(vector_throughput(n, args.seconds)) for n in sizes}
    n = max(sizes)
    res["vector_with_records"] = {str(n): versus(vector_throughput(n, args.seconds,
                                                                   records=True))}
    res["vector_4p"] = {str(n): versus(vector_throughput(n, args.seconds, players=4))}

    if args.json:
        print(json.dumps(res, indent=1))
        return res
    print(f"Python {res['python']}, numpy {res['numpy']}, CPUs {res['cpu_affinity']}; "
          f"agent-steps/s by wall clock [by process CPU time]")

    def line(label: str, r: dict[str, float]) -> None:
        text = (f"{label:<34} {r['agent_steps_per_s']:>11,.0f} "
                f"[{r['agent_steps_per_cpu_s']:>11,.0f}]")
        if "vs_texas_holdem_v4" in r:
            text += (f"  {r['vs_texas_holdem_v4']:6.1f}x [{r['vs_texas_holdem_v4_cpu']:6.1f}x]"
                     " texas_holdem_v4")
        if "bytes_per_game" in r:
            text += f"  {r['bytes_per_game']:.0f} B/game"
        if "pick_share_of_wall" in r:
            text += (f"  (the mask pick is {100 * r['pick_share_of_wall']:.0f}% of it; "
                     f"{r['agent_steps_per_s_without_pick']:,.0f}/s without it")
            text += f" [{r['agent_steps_per_cpu_s_without_pick']:,.0f}]"
            if "vs_texas_holdem_v4_s_without_pick" in r:
                text += (f", {r['vs_texas_holdem_v4_s_without_pick']:.1f}x "
                         f"[{r['vs_texas_holdem_v4_cpu_s_without_pick']:.1f}x] "
                         f"texas_holdem_v4's")
            text += ")"
        print(text)

    if texas:
        line("texas_holdem_v4 (AEC)", texas)
    else:
        print(f"texas_holdem_v4: not measured ({res['texas_holdem_v4_error']})")
    for name, r in res["aec"].items():
        line(f"scopa AEC, {name}", r)
    scan = res["aec_mask_scan_us"]
    print(f"{'finding the legal ids in a mask':<34} {scan['int8']:.1f} us with np.flatnonzero "
          f"(int8), {scan['bool_view']:.1f} us over mask.view(bool)")
    for n_, r in res["vector"].items():
        line(f"VectorScopaEnv N={n_}", r)
    for n_, r in res["vector_with_records"].items():
        line(f"VectorScopaEnv N={n_}, records on", r)
    for n_, r in res["vector_4p"].items():
        line(f"VectorScopaEnv N={n_}, 4 players", r)
    return res


if __name__ == "__main__":
    main()
