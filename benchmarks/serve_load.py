"""Load on ``scopa serve``: many players at once, each playing whole matches through the
JSON API as the play page does, against the agent the server runs.

The server is started as a user starts it (``python -m scopa_cli serve --port 0
--opponent greedy``, in its own process); the players are asyncio tasks in this one,
each on its own keep-alive HTTP/1.1 connection (so the machine runs both: on a 2-core
machine the players' process takes part of the CPU). A player starts a match
(``POST /api/new``), then, until the match is over, waits its think time and plays a
legal move (``POST /api/game/ID/move``); at the end it downloads the record
(``GET /api/game/ID/record``) and starts the next match. Every request is timed from
sending it to the last byte of the answer; any error status, reset or timeout counts
as a failed request.

    python benchmarks/serve_load.py --players 200 --seconds 60 --think 1.0 [--json OUT]

``--think`` is a player's mean pause before a move (uniform from 0.5x to 1.5x; a person
takes seconds); ``--think 0`` plays as fast as the server answers (a stress test:
the latency then is the queue of every player's requests). Players join over the first
``--ramp`` seconds, as people arrive.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


class Failure(Exception):
    """A request that did not get a successful answer."""


class Connection:
    """One keep-alive HTTP/1.1 connection (what a browser tab holds)."""

    def __init__(self, host: str, port: int, timeout: float) -> None:
        self.host, self.port, self.timeout = host, port, timeout
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
        data = b"" if body is None else json.dumps(body).encode()
        head = (f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n")
        try:
            return await asyncio.wait_for(self._exchange(head.encode() + data), self.timeout)
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ValueError) as e:
            await self.close()
            raise Failure(f"{method} {path}: {type(e).__name__}: {e}") from None

    async def _exchange(self, raw: bytes) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        self.writer.write(raw)
        await self.writer.drain()
        status_line = await self.reader.readline()
        if not status_line:
            raise ConnectionResetError("the server closed the connection")
        version, status = status_line.split()[0], int(status_line.split()[1])
        length, close = 0, version == b"HTTP/1.0"  # 1.0: closed after the answer
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b"\n", b""):
                break
            name, _, value = line.decode("latin-1").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
            elif name.strip().lower() == "connection":
                close = value.strip().lower() == "close"
        payload = await self.reader.readexactly(length)
        if close:
            await self.close()
        return status, payload

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            try:
                await self.writer.wait_closed()
            except OSError:
                pass
        self.reader = self.writer = None


class Stats:
    def __init__(self) -> None:
        self.latency: dict[str, list[float]] = {"new": [], "move": [], "record": []}
        self.failures: list[str] = []
        self.matches = 0


async def timed(conn: Connection, stats: Stats, kind: str, method: str, path: str,
                body: Any = None) -> Any:
    t0 = time.perf_counter()
    status, payload = await conn.request(method, path, body)
    stats.latency[kind].append(time.perf_counter() - t0)
    if not 200 <= status < 300:
        raise Failure(f"{method} {path}: HTTP {status}: {payload[:200]!r}")
    return payload if kind == "record" else json.loads(payload)


async def player(k: int, host: str, port: int, stats: Stats, args: argparse.Namespace,
                 stop_at: float) -> None:
    rng = random.Random(k)
    await asyncio.sleep(args.ramp * k / max(1, args.players))
    conn = Connection(host, port, args.timeout)
    try:
        while time.perf_counter() < stop_at:
            try:
                r = await timed(conn, stats, "new", "POST", "/api/new")
                gid, view = r["game"], r["view"]
                while not view["done"]:
                    if args.think:
                        await asyncio.sleep(args.think * rng.uniform(0.5, 1.5))
                    move = rng.choice(view["legal"])["id"]
                    r = await timed(conn, stats, "move", "POST", f"/api/game/{gid}/move",
                                    {"action": move})
                    view = r["view"]
                    if time.perf_counter() >= stop_at and not view["done"]:
                        return  # the run is over: a match left unfinished
                await timed(conn, stats, "record", "GET", f"/api/game/{gid}/record")
                stats.matches += 1
            except Failure as e:
                stats.failures.append(str(e))
                await asyncio.sleep(0.5)
    finally:
        await conn.close()


def percentile(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(q / 100 * (len(s) - 1))))]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_server(opponent: str, host: str, root: Path) -> tuple[subprocess.Popen, int]:
    env = {**os.environ, "PYTHONPATH": str(root)}  # that checkout's scopa_web, not this one's
    proc = subprocess.Popen(
        [sys.executable, "-m", "scopa_cli", "serve", "--port", "0", "--host", host,
         "--opponent", opponent, "--seed", "1"], cwd=root, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    m = re.search(r"http://[^:/]+:(\d+)/", line)
    if m is None:
        proc.kill()
        raise SystemExit(f"the server did not start: {line}{proc.stderr.read()}")
    return proc, int(m.group(1))


async def run(args: argparse.Namespace, port: int) -> tuple[Stats, float]:
    stats = Stats()
    t0 = time.perf_counter()
    stop_at = t0 + args.seconds
    await asyncio.gather(*(player(k, args.host, port, stats, args, stop_at)
                           for k in range(args.players)))
    return stats, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--players", type=int, default=200)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--think", type=float, default=1.0,
                   help="mean pause before each move, in seconds (0: none)")
    p.add_argument("--ramp", type=float, default=5.0, help="players join over this time")
    p.add_argument("--opponent", default="greedy")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--timeout", type=float, default=30.0, help="a request's time limit")
    p.add_argument("--json", default=None, help="also write the figures to this file")
    p.add_argument("--root", type=Path, default=ROOT,
                   help="the checkout whose scopa serve is started (default: this one; "
                        "another one, e.g. a git worktree of an older commit, for a "
                        "reference measured the same way)")
    args = p.parse_args(argv)
    proc, port = start_server(args.opponent, args.host, args.root)
    try:
        cpu0 = cpu_seconds(proc.pid)
        stats, wall = asyncio.run(run(args, port))
        server_cpu = cpu_seconds(proc.pid) - cpu0
    finally:
        proc.terminate()
        proc.wait(10)
    moves = stats.latency["move"]
    out = {
        "players": args.players, "seconds": wall, "think_s": args.think,
        "opponent": args.opponent, "matches": stats.matches,
        "requests": sum(len(v) for v in stats.latency.values()),
        "failed_requests": len(stats.failures), "failures": stats.failures[:10],
        "moves": len(moves), "moves_per_s": len(moves) / wall,
        "move_ms": {q: 1000 * percentile(moves, float(q[1:]))
                    for q in ("p50", "p95", "p99")} | {"max": 1000 * max(moves, default=0)},
        "new_ms": {"p50": 1000 * percentile(stats.latency["new"], 50),
                   "p99": 1000 * percentile(stats.latency["new"], 99)},
        "server_cpu_per_move_ms": 1000 * server_cpu / max(1, len(moves)),
        "server_cpu_share": server_cpu / wall,
        "cpus": os.cpu_count(), "python": platform.python_version(),
    }
    m = out["move_ms"]
    print(f"{args.players} players, {wall:.0f} s, think {args.think:g} s, against "
          f"{args.opponent}: {out['matches']} matches, {out['requests']} requests, "
          f"{out['failed_requests']} failed; {len(moves)} moves ({out['moves_per_s']:.0f}/s): "
          f"p50 {m['p50']:.1f} ms, p95 {m['p95']:.1f} ms, p99 {m['p99']:.1f} ms, "
          f"max {m['max']:.1f} ms; server CPU {out['server_cpu_per_move_ms']:.2f} ms per "
          f"move ({100 * out['server_cpu_share']:.0f}% of a core)")
    for f in stats.failures[:5]:
        print(f"  failed: {f}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0 if not stats.failures else 1


if __name__ == "__main__":
    sys.exit(main())
