"""Strength evaluation by duplicate deals (evaluation.md): ``scopa eval A B``.

Protocol:
- **Hands.** Deal ``i`` (``0 <= i < hands``) is the first hand of a match seeded from
  (evaluation seed, ``i``); it is played twice, A's side in team 0 then in team 1 (in
  4-player games A holds seats 0 and 2, then 1 and 3), each time to the end of that
  hand. Deal ``i``'s margin is the mean over the two seatings of (A's hand points -
  B's); the primary figure is the mean margin with its 95% interval (1.96 x the
  paired standard error), and the same for every scoring category.
- **Matches.** ``matches`` paired matches (default ``hands // 10``) to the rules'
  ``target_score``, each seeded from (evaluation seed, ``j``) in a separate stream
  and played in both seatings; A's match win rate has a Wilson 95% interval.
- **Fair play.** Each seating of a unit's deals is played by fresh agent instances
  (a spec is built, a factory called, an agent object deep-copied), so no agent sees
  a deal from the other seat before it plays it; an agent is handed only its seat's
  ``InfoSet`` (never the seed, the deck or another seat's cards).
- **Determinism.** Work is cut into units of ``UNIT`` deals (or matches), each with
  its own agent instances seeded from (evaluation seed, unit, side, seating); units
  are the same whatever ``workers`` is, so every figure but the timings is identical
  for any number of worker processes. Games of a unit are played in lockstep, so an
  agent with its own ``act_batch`` (a neural network) gets one call per step of each
  seating of the unit.
- **Timing.** Wall time of each ``act`` call (or of a batched call divided by its
  size): median, 95th percentile and mean per agent, also over moves with a choice.
"""

from __future__ import annotations

import argparse
import copy
import json
import multiprocessing as mp
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scopa_env.episode import check_seed
from scopa_env.files import file_errors
from scopa_env.game import GameState, IllegalMoveError, apply, new_match
from scopa_env.observation import info_set
from scopa_env.play import derive_seed, has_reset
from scopa_env.records import MatchRecorder, append_records, check_appendable
from scopa_env.rules import Rules, parse_option, resolve_rules
from scopa_env.rules.scoring import POINT_KEYS

from ..base import Agent, BaseAgent, PerGame
from ..commands import (
    Parser,
    add_rules_args,
    ignore_interrupts,
    non_negative_int,
    positive_int,
    run,
    seed_arg,
    writable_file,
)
from .results import Category, EvalResult, Matches, PointsPerHand, Timing
from .stats import mean_ci, quantiles_ms, wilson

UNIT = 8
POOL_RESTARTS = 3  # fresh worker pools after workers died, before giving up


class WorkersDiedError(ValueError):
    """The evaluation's worker processes kept dying (a one-line error at the CLI)."""
CATEGORIES = ("carte", "denari", "settebello", "primiera", "scope", "re_bello", "napola")

AgentLike = str | Agent | Callable[[int], Agent]


def deal_seed(seed: int, i: int) -> int:
    """Seed of deal ``i`` of an evaluation seeded ``seed``."""
    return derive_seed(seed, 0, i)


def match_seed(seed: int, j: int) -> int:
    """Seed of match ``j`` of an evaluation seeded ``seed``."""
    return derive_seed(seed, 1, j)


def default_matches(hands: int) -> int:
    """Paired matches played by default alongside ``hands`` paired hands."""
    return hands // 10


def spec_of(agent: AgentLike) -> str:
    """The name an agent goes by in reports."""
    if isinstance(agent, str):
        return agent
    spec = getattr(agent, "spec", None)
    if spec is None and callable(agent):
        spec = getattr(agent, "__name__", repr(agent))
    return str(spec)


def build_agent(agent: AgentLike, seed: int) -> Agent:
    """A fresh agent for one seating of a unit of work: a spec is built with ``seed``,
    a factory is called with it, an agent object is deep-copied (so what one copy
    remembers never reaches another)."""
    if isinstance(agent, str):
        from .. import make_agent
        return make_agent(agent, seed=seed)
    if _is_object(agent):
        try:
            return copy.deepcopy(agent)
        except Exception as e:  # any object may refuse to be copied
            raise ValueError(f"agent {spec_of(agent)!r} cannot be copied for each seating "
                             f"({type(e).__name__}: {e}); pass a factory seed -> agent "
                             f"instead") from None
    if callable(agent):
        return agent(seed)
    raise TypeError(f"an agent must be a spec string, an agent (with .act) or a factory "
                    f"seed -> agent, got {agent!r}")


def _is_object(agent: AgentLike) -> bool:
    """An agent object (not a spec, and not a factory such as an agent class)."""
    return hasattr(agent, "act") and not isinstance(agent, (str, type))


def _batched(agent: Agent) -> bool:
    fn = getattr(type(agent), "act_batch", None)
    return fn is not None and fn is not BaseAgent.act_batch


def _canonical(agent: AgentLike) -> str:
    """A spec with every parameter spelled out (``pimc`` -> ``pimc:worlds=12,depth=5``)."""
    if isinstance(agent, str):
        from .. import check_spec
        return check_spec(agent)
    return spec_of(agent)


@dataclass(frozen=True)
class UnitJob:
    """One unit of work: deals (``kind="hand"``) or matches (``"match"``) number
    ``unit * UNIT`` up to ``count``, A against B, both seatings."""

    a: AgentLike
    b: AgentLike
    rules: Rules
    seed: int  # the evaluation seed
    kind: str
    unit: int
    count: int
    records: bool = False  # keep the game record of each match (``UnitResult.records``)


@dataclass
class UnitResult:
    """What one unit of work played: per game (both seatings of each deal or match) its
    index, A's team and result, and the move times of each side (0: A, 1: B).

    A hand's result is (A's points by ``POINT_KEYS``, B's); a match's is (A won, hands
    played, A's score, B's score)."""

    kind: str  # "hand" | "match"
    unit: int
    index: list[int]
    a_team: list[int]
    results: list[Any]
    times: list[list[float]]
    choice_times: list[list[float]]  # moves with a choice only
    cpu_times: list[list[float]]
    records: list[dict[str, Any]] = field(default_factory=list)  # matches, when kept


def play_unit(job: UnitJob) -> UnitResult:
    """Play one unit, both seatings of each deal or match, in lockstep."""
    seed, kind, unit = job.seed, job.kind, job.unit
    start, stop = unit * UNIT, min((unit + 1) * UNIT, job.count)
    kind_id = 0 if kind == "hand" else 1
    # fresh instances per seating t (A's team) and side (0: A, 1: B)
    agents = {(t, side): build_agent(x, derive_seed(seed, 2 + kind_id, unit, side, t))
              for t in (0, 1) for side, x in enumerate((job.a, job.b))}
    # an agent with reset() keeps state: one instance per game, reset before each deal
    per_game = {(t, side): PerGame(lambda g, t=t, side=side: build_agent(
                    (job.a, job.b)[side], derive_seed(seed, 2 + kind_id, unit, side, t, g)))
                for (t, side), x in agents.items() if has_reset(x)}
    batched = {key: _batched(x) and key not in per_game for key, x in agents.items()}
    states: list[GameState] = []
    a_team: list[int] = []
    index: list[int] = []
    for i in range(start, stop):
        s_ = deal_seed(seed, i) if kind == "hand" else match_seed(seed, i)
        for t in (0, 1):
            states.append(new_match(job.rules, seed=s_))
            a_team.append(t)
            index.append(i)
    results: list[Any] = [None] * len(states)
    hands_played = [0] * len(states)
    recorders: list[MatchRecorder] = []
    if job.records and kind == "match":
        names = (_canonical(job.a), _canonical(job.b))
        recorders = [MatchRecorder(s, [names[0 if seat % 2 == t else 1]
                                       for seat in range(job.rules.players)])
                     for s, t in zip(states, a_team, strict=True)]
    times: list[list[float]] = [[], []]
    choice_times: list[list[float]] = [[], []]
    cpu_times: list[list[float]] = [[], []]
    active = list(range(len(states)))
    while active:
        todo: dict[tuple[int, int], list[tuple[int, Any]]] = {key: [] for key in agents}
        for g in active:
            s = states[g]
            side = 0 if s.to_move % 2 == a_team[g] else 1
            todo[a_team[g], side].append((g, info_set(s, s.to_move)))
        for (t, side), items in todo.items():
            if not items:
                continue
            agent = agents[t, side]
            if batched[t, side]:
                t0, c0 = time.perf_counter(), time.process_time()
                acts = agent.act_batch([info for _, info in items])  # type: ignore[attr-defined]
                per = (time.perf_counter() - t0) / len(items)
                cpu_per = (time.process_time() - c0) / len(items)
                dts = [per] * len(items)
                cpus = [cpu_per] * len(items)
            else:
                acts, dts, cpus = [], [], []
                for g, info in items:
                    if (t, side) in per_game:
                        agent = per_game[t, side].get(g, states[g].hand_index)
                    t0, c0 = time.perf_counter(), time.process_time()
                    acts.append(agent.act(info))
                    dts.append(time.perf_counter() - t0)
                    cpus.append(time.process_time() - c0)
            for (g, info), act, dt, cpu in zip(items, acts, dts, cpus, strict=True):
                times[side].append(dt)
                cpu_times[side].append(cpu)
                if len(info.legal_actions) > 1:
                    choice_times[side].append(dt)
                if act not in info.legal_actions:
                    raise IllegalMoveError(
                        f"agent {agent.spec!r} (seat {info.seat}) returned {act!r}, which is "
                        f"not one of the legal ids {list(info.legal_actions)}")
                s = states[g]
                res = apply(s, int(act), check=False)
                if recorders:
                    recorders[g].observe(res, s)
                if res.hand is None:
                    continue
                hands_played[g] += 1
                if kind == "hand":
                    sc = res.hand.score
                    results[g] = ([sc[t]["points"][k] for k in POINT_KEYS],
                                  [sc[1 - t]["points"][k] for k in POINT_KEYS])
                elif res.match_over:
                    results[g] = (int(s.winner == a_team[g]), hands_played[g],
                                  s.match_score[a_team[g]], s.match_score[1 - a_team[g]])
        active = [g for g in active if results[g] is None]
    return UnitResult(kind, unit, index, a_team, results, times, choice_times, cpu_times,
                      [r.record for r in recorders])


def evaluate(spec_a: AgentLike, spec_b: AgentLike, *, hands: int, seed: int,
             rules: str | Rules = "scopa", players: int | None = 2, workers: int = 1,
             options: dict[str, Any] | None = None, progress: bool = False,
             matches: int | None = None,
             on_progress: Callable[[int, int], None] | None = None,
             backend: str = "local", records: str | os.PathLike | None = None
             ) -> EvalResult:
    """Evaluate A against B under evaluation.md's protocol.

    ``spec_a`` / ``spec_b``: spec strings, agent objects (``workers=1`` only) or
    picklable factories ``seed -> agent``. ``players=None`` keeps the rule set's.
    ``on_progress(done, total)`` is called after each unit with the paired deals and
    matches finished so far. ``backend="ray"`` plays the units as Ray tasks
    (``agents.evaluation.ray_eval``; the same results). ``records``: append the game
    record of every match (game-record.md; match by match, A's team 0 then 1; the
    players named by their specs) to this file at the end."""
    if hands < 1:
        raise ValueError(f"hands must be at least 1, got {hands}")
    seed = check_seed(seed, "the evaluation seed")
    if workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers}")
    if backend not in ("local", "ray"):
        raise ValueError(f"backend must be 'local' or 'ray', got {backend!r}")
    r = resolve_rules(rules, players, options)
    n_matches = default_matches(hands) if matches is None else matches
    if n_matches < 0:
        raise ValueError(f"matches must be non-negative, got {n_matches}")
    for x in (spec_a, spec_b):
        if workers > 1 and _is_object(x):
            raise ValueError("an agent object cannot be shared by worker processes: pass a "
                             "spec string or a picklable factory, or use workers=1")
        if isinstance(x, str) or _is_object(x):
            # fail early, in the parent: a bad spec, a missing checkpoint, rules it cannot play
            check_rules = getattr(build_agent(x, 0), "check_rules", None)
            if check_rules is not None:
                check_rules(r)
    if records is not None:
        check_appendable(records)
    jobs = [UnitJob(spec_a, spec_b, r, seed, "hand", u, hands) for u in range(-(-hands // UNIT))]
    jobs += [UnitJob(spec_a, spec_b, r, seed, "match", u, n_matches, records is not None)
             for u in range(-(-n_matches // UNIT))]
    t0 = time.perf_counter()
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=hands + n_matches, unit="deal", desc=f"{spec_of(spec_a)} vs "
                   f"{spec_of(spec_b)}", file=sys.stderr, dynamic_ncols=True)
    outs: list[UnitResult] = []
    finished = 0
    for out in run_units(jobs, workers, backend):
        outs.append(out)
        finished += len(out.index) // 2
        if bar is not None:
            bar.update(len(out.index) // 2)
        if on_progress is not None:
            on_progress(finished, hands + n_matches)
    if bar is not None:
        bar.close()
    elapsed = time.perf_counter() - t0
    outs.sort(key=lambda o: (o.kind != "hand", o.unit))
    if records is not None:
        append_records(records, [rec for o in outs for rec in o.records])
    return summarise(outs, spec_a=spec_a, spec_b=spec_b, rules=r, hands=hands,
                     n_matches=n_matches, seed=seed, workers=workers, elapsed=elapsed)


def run_units(jobs: Sequence[UnitJob], workers: int, backend: str = "local"
              ) -> Iterator[UnitResult]:
    """Play the units of work, here (``workers=1``), in a pool of worker processes or
    as Ray tasks (``backend="ray"``); each unit's result as it finishes (in any order)."""
    if backend == "ray":
        from .ray_eval import run_units as run_on_ray

        yield from run_on_ray(play_unit, jobs)
        return
    if workers == 1:
        for job in jobs:
            yield play_unit(job)
        return
    yield from run_in_pool(play_unit, list(jobs), workers, "evaluation")


def start_worker() -> None:
    """A pool worker's set-up: Ctrl-C is left to the parent; torch, where an agent uses
    it, computes on one thread (the pool's workers are the parallelism: with two threads
    in each of two workers on two cores, 100 paired hands of an OpenSpiel DQN agent took
    5.1 s instead of 3.7 s); and the worker ends itself as soon as its parent is gone
    (killed, say), rather than finishing its unit of work and then waiting for more
    forever."""
    import threading
    from multiprocessing.connection import wait

    ignore_interrupts()
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
    else:
        os.environ.setdefault("OMP_NUM_THREADS", "1")  # read when torch loads
    parent = mp.parent_process()
    if parent is None:
        return

    def watch() -> None:
        wait([parent.sentinel])
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def run_in_pool(fn: Callable[[Any], Any], jobs: list[Any], workers: int, what: str
                ) -> Iterator[Any]:
    """``fn(job)`` for each job over ``workers`` processes, each result as it finishes.
    The workers leave Ctrl-C to this process and end when it is gone (``start_worker``).
    ``fn`` must be deterministic in its job (a picklable module-level function): a worker
    that dies (killed, out of memory) breaks the pool, and the jobs not finished yet are
    run again in a fresh pool (each finished one is yielded once), up to
    ``POOL_RESTARTS`` times, then a one-line error naming ``what`` the workers were
    doing."""
    ctx = mp.get_context("spawn")
    restarts = 0
    todo = dict(enumerate(jobs))
    while todo:
        pool = ProcessPoolExecutor(min(workers, len(todo)), mp_context=ctx,
                                   initializer=start_worker)
        futures = {pool.submit(fn, job): k for k, job in todo.items()}
        try:
            for fut in as_completed(futures):
                out = fut.result()
                del todo[futures[fut]]
                yield out
        except BrokenProcessPool:
            restarts += 1
            if restarts > POOL_RESTARTS:
                raise WorkersDiedError(f"{what} worker processes died {restarts} times "
                                       f"(out of memory or killed?); {len(todo)} unit(s) "
                                       f"of work not done") from None
        finally:  # on any exit (an error, Ctrl-C, the caller stopping) end the workers now
            for proc in list(getattr(pool, "_processes", {}).values()):
                proc.terminate()
            pool.shutdown(wait=True, cancel_futures=True)


def summarise(outs: Sequence[UnitResult], *, spec_a: AgentLike, spec_b: AgentLike,
              rules: Rules, hands: int, n_matches: int, seed: int, workers: int,
              elapsed: float) -> EvalResult:
    """The result from the units' results (in unit order)."""
    pa = np.zeros((hands, 2, len(POINT_KEYS)))
    pb = np.zeros((hands, 2, len(POINT_KEYS)))
    wins = np.zeros((n_matches, 2))
    mhands = np.zeros((n_matches, 2))
    times: list[list[float]] = [[], []]
    choice: list[list[float]] = [[], []]
    cpu: list[list[float]] = [[], []]
    for o in outs:
        for side in (0, 1):
            times[side].extend(o.times[side])
            choice[side].extend(o.choice_times[side])
            cpu[side].extend(o.cpu_times[side])
        for i, t, res in zip(o.index, o.a_team, o.results, strict=True):
            if o.kind == "hand":
                pa[i, t], pb[i, t] = res
            else:
                wins[i, t], mhands[i, t] = res[0], res[1]
    tot = POINT_KEYS.index("total")
    ppm = mean_ci((pa[:, :, tot] - pb[:, :, tot]).mean(axis=1))
    cats = {}
    for k in CATEGORIES:
        if k == "re_bello" and not rules.re_bello or k == "napola" and not rules.napola:
            continue
        c = POINT_KEYS.index(k)
        m = mean_ci((pa[:, :, c] - pb[:, :, c]).mean(axis=1))
        cats[k] = Category(a=float(pa[:, :, c].mean()), b=float(pb[:, :, c].mean()),
                           margin=m["mean"], ci95=(m["low"], m["high"]))
    n_games = 2 * n_matches
    won = float(wins.sum())
    return EvalResult(
        a=_canonical(spec_a), b=_canonical(spec_b), rules=rules, seed=seed, hands=hands,
        points_per_hand=PointsPerHand(
            margin=ppm["mean"], ci95=(ppm["low"], ppm["high"]), half_width=ppm["half_width"],
            sd=ppm["sd"], a=float(pa[:, :, tot].mean()), b=float(pb[:, :, tot].mean())),
        categories=cats,
        matches=Matches(
            paired=n_matches, played=n_games, a_wins=int(won),
            win_rate=won / n_games if n_games else None,
            ci95=wilson(won, n_games) if n_games else None,
            hands_per_match=float(mhands.mean()) if n_games else None,
            target_score=rules.target_score),
        timing_a=_timing(times[0], choice[0], cpu[0]),
        timing_b=_timing(times[1], choice[1], cpu[1]),
        workers=workers, elapsed_s=elapsed)


def _timing(wall: list[float], choice: list[float], cpu: list[float]) -> Timing:
    q = quantiles_ms(wall)
    c = quantiles_ms(cpu)
    return Timing(moves=q["moves"], median_ms=q["median_ms"], p95_ms=q["p95_ms"],
                  mean_ms=q["mean_ms"],
                  median_ms_with_choice=quantiles_ms(choice)["median_ms"],
                  cpu_median_ms=c["median_ms"], cpu_p95_ms=c["p95_ms"])


def format_report(res: EvalResult) -> str:
    """The human-readable report of an ``evaluate`` result."""
    a, b = res.a, res.b
    p = res.points_per_hand
    wa, wb = max(len(a), 8), max(len(b), 8)
    lines = [
        f"{a} vs {b}: {res.rules.name}, {res.players} players, {res.hands} paired hands "
        f"({res.hand_games} hands), seed {res.seed}",
        f"points per hand, {a} - {b}: {p.margin:+.3f} "
        f"[95% CI {p.ci95[0]:+.3f}, {p.ci95[1]:+.3f}]  "
        f"({a} {p.a:.3f}, {b} {p.b:.3f} per hand)",
    ]
    m = res.matches
    if m.played:
        assert m.win_rate is not None and m.ci95 is not None and m.hands_per_match is not None
        lines.append(
            f"match win rate of {a} (to {m.target_score}): {100 * m.win_rate:.1f}% "
            f"[95% CI {100 * m.ci95[0]:.1f}%, {100 * m.ci95[1]:.1f}%] over "
            f"{m.played} matches ({m.paired} paired, {m.hands_per_match:.1f} "
            f"hands each)")
    lines.append("")
    lines.append(f"{'category':<12}{a:>{wa + 2}}{b:>{wb + 2}}{'margin':>9}   95% CI")
    for k, c in res.categories.items():
        lines.append(f"{k:<12}{c.a:>{wa + 2}.3f}{c.b:>{wb + 2}.3f}{c.margin:>+9.3f}"
                     f"   [{c.ci95[0]:+.3f}, {c.ci95[1]:+.3f}]")
    lines.append("")
    w = max(wa, wb) + 2
    lines.append(f"{'time per move':<{w}}{'median':>10}{'p95':>10}{'mean':>10}"
                 f"{'median*':>10}{'cpu med':>10}{'cpu p95':>10}")
    for t, name in ((res.timing_a, a), (res.timing_b, b)):
        lines.append(f"{name:<{w}}{t.median_ms:>10.3f}{t.p95_ms:>10.3f}"
                     f"{t.mean_ms:>10.3f}{t.median_ms_with_choice:>10.3f}"
                     f"{t.cpu_median_ms:>10.3f}{t.cpu_p95_ms:>10.3f}")
    lines.append("(ms of wall time, cpu = process CPU time; * = moves with a choice)")
    lines.append(f"({res.elapsed_s:.1f} s, {res.workers} worker(s))")
    return "\n".join(lines)


def add_common_args(p: argparse.ArgumentParser) -> None:
    """Options shared by ``scopa eval`` and ``scopa ladder``."""
    p.add_argument("--hands", type=positive_int, default=1000,
                   help="paired hands (deals, each played in both seatings; default 1000)")
    p.add_argument("--matches", type=non_negative_int, default=None,
                   help="paired matches for the win rate (default: hands // 10; 0: none)")
    p.add_argument("--seed", type=seed_arg, default=0,
                   help="evaluation seed (default 0); 'fresh': one no agent can have "
                        "prepared for, drawn now and reported with the results")
    add_rules_args(p)
    p.add_argument("--workers", type=positive_int, default=1,
                   help="worker processes (results are identical for any number)")
    p.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="'ray': play the deals as Ray tasks on the cluster of RAY_ADDRESS or "
                        "of `ray start` on this machine, else a local one (pip install -e "
                        ".[ray]; the same results); --workers is then unused")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: when stderr is a terminal)")


def options_from_args(args: argparse.Namespace) -> dict[str, Any]:
    return dict(parse_option(o) for o in args.option)


def main(argv: Sequence[str] | None = None) -> int:
    """``scopa eval SPEC_A SPEC_B --hands N --seed S [...]``."""
    p = Parser(
        prog="scopa eval", description="Evaluate agent A against agent B on paired, "
        "seat-swapped deals (evaluation.md).")
    p.add_argument("spec_a", metavar="SPEC_A", help="agent spec, e.g. pimc:worlds=12,depth=5")
    p.add_argument("spec_b", metavar="SPEC_B", help="agent spec, e.g. greedy")
    add_common_args(p)
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.add_argument("--save", metavar="PATH", help="also write the JSON object to PATH")
    p.add_argument("--records", metavar="FILE.jsonl", default=None,
                   help="append the game record of every match to FILE (game-record.md: "
                        "scopa replay, scopa review read it)")

    def command() -> int:
        args = p.parse_args(list(sys.argv[1:] if argv is None else argv))
        if args.save:
            writable_file(args.save, "--save file")  # before the evaluation, not after
        progress = sys.stderr.isatty() if args.progress is None else args.progress
        res = evaluate(args.spec_a, args.spec_b, hands=args.hands, seed=args.seed,
                       rules=args.rules, players=args.players, workers=args.workers,
                       options=options_from_args(args), progress=progress,
                       matches=args.matches, backend=args.backend, records=args.records)
        text = json.dumps(res.to_json(), indent=2)
        print(text if args.json else format_report(res))
        if args.save:
            with file_errors(args.save, "save the evaluation to"), \
                    open(args.save, "w", encoding="utf-8") as f:
                f.write(text + "\n")
        return 0

    return run("scopa eval", command, top_level=argv is None)


if __name__ == "__main__":
    sys.exit(main())
