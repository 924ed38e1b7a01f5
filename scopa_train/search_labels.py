"""A search agent's move values for decisions given as observations, in worker processes.

Used by the suit-distillation stage (``distill.search``): a ``pimc`` agent, or the
network's own search (``ckpt:PATH,search=on``: expert iteration), anything with a
``scores(info)`` method giving one value per legal move, in points (NaN where it leaves
the decision or the move to the network; ``scores_batch(infos)`` scores a chunk at once
where the agent has it), scores each
decision from the information set its observation encodes
(``scopa_env.observation.decode_info``), its legal moves regenerated in the
engine's order (the order of the collected move lists). The decisions are cut into chunks of
``CHUNK``; chunk ``k`` is scored by an agent seeded with ``(seed, k)``, so the values
do not depend on the number of workers or on which worker scored a chunk, and a chunk
whose worker died is scored again to the same values (``agents.evaluation.evaluate.run_in_pool``).

Scoring is the slow part of a stage that uses it (about 200 decisions a second on two
cores for ``pimc:worlds=48,depth=5``), so ``search_values`` can keep what it has scored in
a cache file (written atomically every ``SAVE_EVERY`` chunks and when it stops): a run
stopped while scoring (``halted``) and resumed on the same decisions scores only the
chunks it had not finished, to the same values.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from scopa_env.moves import legal_actions
from scopa_env.observation import decode_info
from scopa_env.rules import Rules
from scopa_env.vector_states import round_history_of

CHUNK = 256  # decisions per unit of work
SAVE_EVERY = 20  # finished chunks between two writes of the cache


SELF = "self"  # distill.search's name for the stage's own network: self:search=on,...


def is_self(spec: str) -> bool:
    """Whether ``spec`` names the stage's own network (``self:search=on,...``)."""
    return spec.strip().partition(":")[0].strip() == SELF


def self_spec(spec: str, path: str | Path) -> str:
    """``self:PARAMS`` as the spec of the checkpoint file ``path`` holding the stage's
    network: ``ckpt:PATH,PARAMS`` (``ValueError``, one line, unless PARAMS search)."""
    params = spec.strip().partition(":")[2].strip()
    from scopa_policy.specs import play_params

    if "search" not in play_params(SELF, params.split(","), spec):
        raise ValueError(f"{spec!r}: the stage's own network gives move values only when it "
                         f"searches: self:search=on[,worlds=N,...]")
    return f"ckpt:{path},{params}"


def search_agent(spec: str, seed: int) -> Any:
    """The agent of ``spec``; ``ValueError`` (one line) unless it gives move values."""
    from agents import check_spec, make_agent
    from agents.base import BaseAgent

    agent = make_agent(check_spec(spec), seed=seed)
    scores = getattr(type(agent), "scores", None)
    if not callable(scores) or scores is BaseAgent.scores:
        raise ValueError(f"{spec!r} gives no move values: a search teacher needs an agent "
                         f"with a scores(info) method, such as pimc:worlds=48,depth=8 or "
                         f"self:search=on (the stage's network, searching)")
    return agent


def chunk_seed(seed: int, chunk: int) -> int:
    """The seed of the agent that scores chunk ``chunk``."""
    return int(np.random.SeedSequence((seed, chunk)).generate_state(1)[0])


@dataclass(frozen=True)
class LabelJob:
    """One chunk of decisions: observations (n, 216), their numbers of legal moves and
    their round rows (n, W): the others' moves this round (W = 0: none kept)."""

    spec: str
    rules: dict[str, Any]
    seed: int
    chunk: int
    obs: np.ndarray
    count: np.ndarray
    rounds: np.ndarray


def label_chunk(job: LabelJob) -> tuple[int, np.ndarray]:
    """(the chunk's number, the values of its decisions' legal moves, flat)."""
    agent = search_agent(job.spec, chunk_seed(job.seed, job.chunk))
    rules = Rules.from_dict(job.rules)
    infos = []
    for j, (o, n) in enumerate(zip(job.obs, job.count.tolist(), strict=True)):
        info = decode_info(o, rules)  # numbered from the dealer, as the round rows are
        legal = tuple(legal_actions(info.hand, info.table, rules))
        if len(legal) != n:
            raise ValueError(f"a decision with {n} legal moves decodes to a position with "
                             f"{len(legal)}: the observations and move counts disagree")
        history = (round_history_of(job.rounds[j], rules.players) if job.rounds.shape[1]
                   else {})
        infos.append(dataclasses.replace(info, legal_actions=legal, **history))
    batch = getattr(agent, "scores_batch", None)  # the network's search: one batch a chunk
    scored = batch(infos) if callable(batch) else [agent.scores(i) for i in infos]
    flat = np.concatenate([np.asarray(v, np.float64) for v in scored]) if scored else np.zeros(0)
    return job.chunk, flat


def teacher_name(agent: Any, spec: str, rules: Rules) -> str:
    """What names a search in the cache's key: a learned agent's ``fingerprint`` (its
    settings and weights, not the path of the file they were read from: a stage's own
    network, ``self:``, is written into each run folder), else its spec."""
    fingerprint = getattr(agent, "fingerprint", None)
    return f"fingerprint {fingerprint(rules)}" if callable(fingerprint) else spec


def decisions_key(spec: str, rules: Rules, obs: np.ndarray, count: np.ndarray,
                  seed: int, rounds: np.ndarray | None = None) -> str:
    """A digest naming what ``search_values`` scores: a cache holds values for it alone."""
    h = hashlib.sha256(json.dumps([spec, rules.to_dict(), seed, CHUNK]).encode())
    h.update(np.ascontiguousarray(obs, np.float32).tobytes())
    h.update(np.ascontiguousarray(count, np.int64).tobytes())
    if rounds is not None and rounds.size:  # decisions without their rounds: the old key
        h.update(np.ascontiguousarray(rounds, np.int64).tobytes())
    return h.hexdigest()


def _load_cache(cache: Path, key: str, chunks: int, moves: int,
                log: Callable[[str], None]) -> tuple[np.ndarray, np.ndarray] | None:
    """(chunk done flags, flat values) from ``cache`` where it holds values for ``key``."""
    try:
        with np.load(cache, allow_pickle=False) as f:
            got_key, done, values = str(f["key"]), f["done"], f["values"]
    except (OSError, ValueError, KeyError) as e:
        log(f"search values: {cache} is unreadable ({type(e).__name__}): scoring afresh")
        return None
    if got_key != key or done.shape != (chunks,) or values.shape != (moves,):
        log(f"search values: {cache} holds values of other decisions: scoring afresh")
        return None
    return done.astype(bool), values.astype(np.float64)


def _save_cache(cache: Path, key: str, done: np.ndarray, values: np.ndarray) -> None:
    from scopa_policy.checkpoint import write_atomic

    buf = io.BytesIO()
    np.savez(buf, key=np.str_(key), done=done, values=values)
    write_atomic(buf.getbuffer(), cache)


def search_values(spec: str, rules: Rules, obs: np.ndarray, count: np.ndarray, seed: int,
                  workers: int, log: Callable[[str], None] = print,
                  halted: Callable[[], str | None] | None = None,
                  cache: str | Path | None = None, rounds: np.ndarray | None = None
                  ) -> np.ndarray | None:
    """The values (M,) of ``spec`` for every legal move of the decisions ``obs``
    (N, 216), decision ``i`` having ``count[i]`` of them (M in all) and the round row
    ``rounds[i]`` (``VectorScopaEnv.round_rows``: the others' moves this round, which a
    search reading the table weights its worlds by; None: no moves known), in order; None when
    ``halted()`` gave a reason to stop first (checked after each chunk). With ``cache``
    (a file), the chunks scored so far are kept there and a later call on the same
    decisions scores only the others (the cache's key names the search by
    ``teacher_name``)."""
    from agents.evaluation.evaluate import run_in_pool

    agent = search_agent(spec, seed)  # a spec without values fails before any work
    start = np.cumsum(count) - count
    n_chunks = -(-len(obs) // CHUNK)
    sizes = np.minimum(len(obs) - np.arange(n_chunks) * CHUNK, CHUNK)
    out = np.empty(int(count.sum()), np.float64)
    done = np.zeros(n_chunks, bool)
    key = ""
    if cache is not None:
        cache = Path(cache)
        key = decisions_key(teacher_name(agent, spec, rules), rules, obs, count, seed, rounds)
        got = _load_cache(cache, key, n_chunks, len(out), log) if cache.exists() else None
        if got is not None:
            done, out = got
            log(f"search values: {int(done.sum())} of {n_chunks} chunks already scored "
                f"({cache})")
    jobs = {}
    for k in np.flatnonzero(~done).tolist():
        a, b = k * CHUNK, min((k + 1) * CHUNK, len(obs))
        jobs[k] = LabelJob(spec, rules.to_dict(), seed, k, obs[a:b], count[a:b],
                           np.zeros((b - a, 0), np.int64) if rounds is None else rounds[a:b])
    t0, finished = time.perf_counter(), 0
    results = (run_in_pool(label_chunk, list(jobs.values()), workers, "search-label")
               if workers > 1 else map(label_chunk, jobs.values()))
    try:
        for k, values in results:
            m0 = start[k * CHUNK]
            out[m0:m0 + len(values)] = values
            done[k] = True
            finished += 1
            scored = int(sizes[done].sum())
            if cache is not None and (finished % SAVE_EVERY == 0 or done.all()):
                _save_cache(cache, key, done, out)
            if done.all() or finished % 20 == 0:
                log(f"search values: {scored:,} of {len(obs):,} decisions, "
                    f"{time.perf_counter() - t0:.0f} s")
            if halted is not None and not done.all() and halted() is not None:
                if cache is not None:
                    _save_cache(cache, key, done, out)
                return None
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()  # ends the worker processes now
    return out
