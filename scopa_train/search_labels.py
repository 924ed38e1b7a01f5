"""A search agent's move values for decisions given as observations, in worker processes.

Used by the suit-distillation stage (``distill_search``): a ``pimc`` agent (anything
with a ``scores(info)`` method giving one value per legal move, in points) scores each
decision from the information set its observation encodes
(``scopa_env.observation.decode_info``), its legal moves regenerated in the
engine's order (the order of the collected move lists). The decisions are cut into chunks of
``CHUNK``; chunk ``k`` is scored by an agent seeded with ``(seed, k)``, so the values
do not depend on the number of workers or on which worker scored a chunk, and a chunk
whose worker died is scored again to the same values (``agents.evaluate.run_in_pool``).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from scopa_env.moves import legal_actions
from scopa_env.observation import decode_info
from scopa_env.rules import Rules

CHUNK = 256  # decisions per unit of work


def search_agent(spec: str, seed: int) -> Any:
    """The agent of ``spec``; ``ValueError`` (one line) unless it gives move values."""
    from agents import check_spec, make_agent
    from agents.base import BaseAgent

    agent = make_agent(check_spec(spec), seed=seed)
    scores = getattr(type(agent), "scores", None)
    if not callable(scores) or scores is BaseAgent.scores:
        raise ValueError(f"{spec!r} gives no move values: a search teacher needs an agent "
                         f"with a scores(info) method, such as pimc:worlds=48,depth=8")
    return agent


def chunk_seed(seed: int, chunk: int) -> int:
    """The seed of the agent that scores chunk ``chunk``."""
    return int(np.random.SeedSequence((seed, chunk)).generate_state(1)[0])


@dataclass(frozen=True)
class LabelJob:
    """One chunk of decisions: observations (n, 216) and their numbers of legal moves."""

    spec: str
    rules: dict[str, Any]
    seed: int
    chunk: int
    obs: np.ndarray
    count: np.ndarray


def label_chunk(job: LabelJob) -> tuple[int, np.ndarray]:
    """(the chunk's number, the values of its decisions' legal moves, flat)."""
    agent = search_agent(job.spec, chunk_seed(job.seed, job.chunk))
    rules = Rules.from_dict(job.rules)
    out: list[float] = []
    for o, n in zip(job.obs, job.count.tolist(), strict=True):
        info = decode_info(o, rules)
        legal = tuple(legal_actions(info.hand, info.table, rules))
        if len(legal) != n:
            raise ValueError(f"a decision with {n} legal moves decodes to a position with "
                             f"{len(legal)}: the observations and move counts disagree")
        out.extend(agent.scores(dataclasses.replace(info, legal_actions=legal)))
    return job.chunk, np.asarray(out, np.float64)


def search_values(spec: str, rules: Rules, obs: np.ndarray, count: np.ndarray, seed: int,
                  workers: int, log: Callable[[str], None] = print) -> np.ndarray:
    """The values (M,) of ``spec`` for every legal move of the decisions ``obs``
    (N, 216), decision ``i`` having ``count[i]`` of them (M in all), in order."""
    from agents.evaluate import run_in_pool

    search_agent(spec, seed)  # a spec without values fails before any work
    start = np.cumsum(count) - count
    jobs = []
    for k, a in enumerate(range(0, len(obs), CHUNK)):
        b = min(a + CHUNK, len(obs))
        jobs.append(LabelJob(spec, rules.to_dict(), seed, k, obs[a:b], count[a:b]))
    out = np.empty(int(count.sum()), np.float64)
    t0, done, finished = time.perf_counter(), 0, 0
    results = (run_in_pool(label_chunk, jobs, workers, "search-label") if workers > 1
               else map(label_chunk, jobs))
    for k, values in results:
        job = jobs[k]
        m0 = start[k * CHUNK]
        out[m0:m0 + len(values)] = values
        done += len(job.count)
        finished += 1
        if done == len(obs) or finished % 20 == 0:
            log(f"search values: {done:,} of {len(obs):,} decisions, "
                f"{time.perf_counter() - t0:.0f} s")
    return out
