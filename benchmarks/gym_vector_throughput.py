"""Throughput of the batched Gymnasium vector env (``gymnasium.make_vec("scopa/Scopa-v0")``)
against the raw ``VectorScopaEnv`` and the single Gymnasium env, measured in one run.

    taskset -c 0 .venv/bin/python benchmarks/gym_vector_throughput.py [--num-envs 1024]
        [--seconds 3] [--json]

Agent-steps are moves of every seat (a 2-player hand has 36), counted per CPU-second of
this process (``time.process_time``: other processes on the core move it less than the
wall clock) and per wall-clock second. Each row drives its env the same way: the learner
(seat 0) reads its observation and plays the first legal id of the dense catalogue mask
(``argmax`` of the (N, 16204) int8 mask), the other seat plays as the row says:

- ``raw vector env``: ``VectorScopaEnv``, every step ``observe()`` and ``action_mask()`` of
  all games, seat 0's games the first legal id, seat 1's a uniform legal id
  (``random_actions``);
- ``make_vec, random``: the batched env, opponent ``random``;
- ``make_vec, greedy``: opponent ``greedy``;
- ``make_vec, self-play``: the opponent is a callable on the batch's observations and
  masks that also plays the first legal id (a frozen copy of the learner, at no cost
  for its network);
- ``make_vec, moves=legal, greedy``: the legal-move interface (K slots of move features),
  the learner playing slot 0;
- ``single env, greedy``: one ``gymnasium.make("scopa/Scopa-v0", opponent="greedy")``.

The targets (issue: any library trains at the env's speed): ``make_vec, random`` at least
half the raw env's agent-steps per CPU-second; ``make_vec, greedy`` at least 100 times the
single env with ``greedy``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import gymnasium  # noqa: E402

import scopa_env  # noqa: E402
from agents.baselines.batching import random_actions  # noqa: E402
from scopa_env.vector import VectorScopaEnv  # noqa: E402


def timed(step: Callable[[], int], seconds: float, warmup: int = 3) -> dict[str, float]:
    """Calls ``step`` (it returns the agent-steps it made) for ``seconds`` of CPU time."""
    for _ in range(warmup):
        step()
    steps = 0
    wall, cpu = time.perf_counter(), time.process_time()
    while time.process_time() - cpu < seconds:
        steps += step()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"agent_steps": steps, "agent_steps_per_cpu_s": steps / cpu,
            "agent_steps_per_s": steps / wall}


def raw(n: int, seconds: float) -> dict[str, float]:
    env = VectorScopaEnv(n, seed=0, records=False)
    rng = np.random.default_rng(0)
    games = np.arange(n)

    def step() -> int:
        env.observe()
        first = env.action_mask().argmax(1)
        actions = np.where(env.to_move == 0, first, random_actions(env, games, rng))
        env.step(actions)
        return n

    return timed(step, seconds)


def batched(n: int, seconds: float, opponent: Any, **kw: Any) -> dict[str, float]:
    envs = gymnasium.make_vec(scopa_env.GYM_ENV_ID, num_envs=n, opponent=opponent, **kw)
    _, info = envs.reset(seed=0)
    box = {"info": info}

    def step() -> int:
        before = envs.unwrapped.env_steps
        _, _, _, _, box["info"] = envs.step(box["info"]["action_mask"].argmax(1))
        return envs.unwrapped.env_steps - before

    return timed(step, seconds)


def first_legal(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The self-play opponent: the first legal action of each game."""
    return mask.argmax(1)


def single(seconds: float, opponent: str) -> dict[str, float]:
    env = gymnasium.make(scopa_env.GYM_ENV_ID, opponent=opponent)
    _, info = env.reset(seed=0)
    box = {"info": info}

    def step() -> int:
        before = env.unwrapped.env_steps
        _, _, term, _, box["info"] = env.step(int(box["info"]["action_mask"].argmax()))
        if term:
            _, box["info"] = env.reset()
        return env.unwrapped.env_steps - before

    return timed(step, seconds)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--num-envs", type=int, default=1024)
    ap.add_argument("--seconds", type=float, default=3.0, help="CPU seconds per row")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    n, sec = args.num_envs, args.seconds
    rows = {
        "raw vector env": raw(n, sec),
        "make_vec, random": batched(n, sec, "random"),
        "make_vec, greedy": batched(n, sec, "greedy"),
        "make_vec, self-play": batched(n, sec, first_legal),
        "make_vec, moves=legal, greedy": batched(n, sec, "greedy", moves="legal"),
        "single env, greedy": single(sec, "greedy"),
    }
    base = rows["raw vector env"]["agent_steps_per_cpu_s"]
    one = rows["single env, greedy"]["agent_steps_per_cpu_s"]
    for r in rows.values():
        r["vs_raw"] = r["agent_steps_per_cpu_s"] / base
        r["vs_single_greedy"] = r["agent_steps_per_cpu_s"] / one
    res = {"num_envs": n, "seconds": sec, "python": platform.python_version(),
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "rows": rows,
           "targets": {"random_vs_raw": rows["make_vec, random"]["vs_raw"],
                       "random_vs_raw_met": rows["make_vec, random"]["vs_raw"] >= 0.5,
                       "greedy_vs_single": rows["make_vec, greedy"]["vs_single_greedy"],
                       "greedy_vs_single_met":
                           rows["make_vec, greedy"]["vs_single_greedy"] >= 100}}
    if args.json:
        print(json.dumps(res, indent=1))
    else:
        print(f"N = {n}, {sec:g} CPU-s a row")
        for name, r in rows.items():
            print(f"{name:32s} {r['agent_steps_per_cpu_s']:>12,.0f} agent-steps/CPU-s "
                  f"{r['agent_steps_per_s']:>12,.0f} /s   x{r['vs_raw']:.3f} raw   "
                  f"x{r['vs_single_greedy']:.1f} single greedy")
    return res


if __name__ == "__main__":
    main()
