"""Load on ``scopa serve``: many players at once, each playing whole matches through the
JSON API as the pages do: one person against the server's agent, and rooms of two people
playing each other through the live channel (server-sent events).

The server is started as a user starts it (``python -m scopa_cli serve --port 0
--opponent greedy --db TMP``, in its own process, every move written to SQLite); the
players are asyncio tasks in this one, each on its own keep-alive HTTP/1.1 connection
(so the machine runs both: on a 2-core machine the players' process takes part of the
CPU). A one-person player starts a match (``POST /api/new``), then, until the match is
over, waits its think time and plays a legal move (``POST /api/game/ID/move``); at the
end it downloads the record and starts the next match. A room (``--rooms``) is two
people: the first creates it (``POST /api/rooms``), the second joins by its invite, each
follows it on a live connection (``GET /api/room/ID/events``) and, when the live channel
says it is their turn, waits its think time and plays (``POST /api/room/ID/move``); at
the end the record is downloaded and the next room created. Every request is timed
from sending it to the last byte of the answer, and every room move from sending it to
its arrival on the other seat's live connection; any error status, reset or timeout
counts as a failed request.

    python benchmarks/serve_load.py --players 200 --rooms 100 --seconds 60 --think 1.0
    python benchmarks/serve_load.py --players 200 --rooms 100 --seconds 60 --hostile 20
    python benchmarks/serve_load.py --players 200 --rooms 100 --seconds 60 --idle 2000

``--hostile N`` adds N hostile connections to the rooms being played (``hostile``:
requests pipelined and never read, a live channel never read, a body shorter than its
``Content-Length`` and a head sent a byte a second), each opened again when the server
cuts it off; ``--idle N`` opens N connections at the start and leaves them idle for the
run (how many the server still holds at the end, and its threads, are reported). Every
person (and each hostile or idle group) comes from a source address of their own on a
loopback server (127.1.x.y), as people do on a network, so the server's limits per
address apply to each as to a person.

``--think`` is a player's mean pause before a move (uniform from 0.5x to 1.5x; a person
takes seconds); ``--think 0`` plays as fast as the server answers (a stress test:
the latency then is the queue of every player's requests). Players join over the first
``--ramp`` seconds, as people arrive. The server's memory is its resident set
(``VmRSS``, and its peak ``VmHWM``) at the end of the run.
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
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


class Failure(Exception):
    """A request that did not get a successful answer."""


async def close_writer(writer: asyncio.StreamWriter | None) -> None:
    """Close a connection's writer (if open), ignoring a peer that is already gone."""
    if writer is None:
        return
    writer.close()
    try:
        await writer.wait_closed()
    except OSError:
        pass


def address(k: int, host: str) -> str | None:
    """Player ``k``'s own source address on a loopback server (127.0.x.y: each person
    comes from an address of their own, as on a network, so the server's limits per
    address apply to each as to a person); None elsewhere."""
    return f"127.1.{k // 250}.{k % 250 + 1}" if host == "127.0.0.1" else None


async def connect(host: str, port: int, local: str | None
                  ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection(host, port, local_addr=(local, 0) if local else None)


class Connection:
    """One keep-alive HTTP/1.1 connection (what a browser tab holds)."""

    def __init__(self, host: str, port: int, timeout: float, local: str | None = None) -> None:
        self.host, self.port, self.timeout, self.local = host, port, timeout, local
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
        reused = self.writer is not None
        if self.writer is None:
            self.reader, self.writer = await connect(self.host, self.port, self.local)
        assert self.reader is not None and self.writer is not None
        try:
            self.writer.write(raw)
            await self.writer.drain()
            status_line = await self.reader.readline()
        except ConnectionError:
            status_line = b""
        if not status_line and reused:  # a kept-alive connection the server closed while
            await self.close()  # idle (120 s): a browser opens a new one and sends again
            return await self._exchange(raw)
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
        await close_writer(self.writer)
        self.reader = self.writer = None


class Stats:
    def __init__(self) -> None:
        self.latency: dict[str, list[float]] = {"new": [], "move": [], "record": [],
                                                "room": [], "join": [], "room_move": [],
                                                "room_record": []}
        self.reach: list[float] = []  # a room move: sent by one seat, seen by the other
        self.failures: list[str] = []
        self.matches = 0
        self.room_matches = 0
        self.sent: dict[tuple[str, int], float] = {}  # (room, move number): when sent
        self.rooms: list[str] = []  # every room made (the hostile clients' targets)
        self.hostile: dict[str, int] = {}  # hostile connections opened, by kind


async def timed(conn: Connection, stats: Stats, kind: str, method: str, path: str,
                body: Any = None) -> Any:
    t0 = time.perf_counter()
    status, payload = await conn.request(method, path, body)
    stats.latency[kind].append(time.perf_counter() - t0)
    if not 200 <= status < 300:
        raise Failure(f"{method} {path}: HTTP {status}: {payload[:200]!r}")
    return payload if kind.endswith("record") else json.loads(payload)


async def player(k: int, host: str, port: int, stats: Stats, args: argparse.Namespace,
                 stop_at: float) -> None:
    rng = random.Random(k)
    await asyncio.sleep(args.ramp * k / max(1, args.players))
    conn = Connection(host, port, args.timeout, address(k, host))
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
                                    {"action": move, "n": view["moves"]})
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


class Live:
    """A live connection to a room (server-sent events): its messages, in order."""

    def __init__(self, host: str, port: int, path: str, timeout: float,
                 local: str | None = None) -> None:
        self.host, self.port, self.path, self.timeout = host, port, path, timeout
        self.local = local
        self.writer: asyncio.StreamWriter | None = None
        self.reader: asyncio.StreamReader | None = None

    async def open(self) -> None:
        self.reader, self.writer = await connect(self.host, self.port, self.local)
        self.writer.write(f"GET {self.path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
                          f"Accept: text/event-stream\r\n\r\n".encode())
        await self.writer.drain()
        status = await asyncio.wait_for(self.reader.readline(), self.timeout)
        if b" 200 " not in status:
            raise Failure(f"GET {self.path}: {status.decode().strip()}")
        while (await self.reader.readline()) not in (b"\r\n", b"\n", b""):
            pass

    async def next(self) -> tuple[str, Any] | None:
        """The next message (event name, data), None when the server ended the stream."""
        assert self.reader is not None
        kind, data = "message", []
        while True:
            line = await asyncio.wait_for(self.reader.readline(), self.timeout)
            if not line:
                return None
            text = line.decode().rstrip("\r\n")
            if text.startswith("event: "):
                kind = text[7:]
            elif text.startswith("data: "):
                data.append(text[6:])
            elif not text and data:
                return kind, json.loads("\n".join(data))
            elif text.startswith(":"):
                return "ping", None  # the caller checks whether to stop at each ping

    async def close(self) -> None:
        await close_writer(self.writer)


async def person(rid: str, token: str, seat: int, host: str, port: int, stats: Stats,
                 args: argparse.Namespace, rng: random.Random, stop_at: float,
                 stop: asyncio.Event, local: str | None = None) -> bool:
    """One seat of a room, played to the end from its live connection; False if the run
    ended first (``stop``: the other seat stopped; Python 3.11's ``wait_for`` can swallow
    a cancellation, so the flag is checked after each message, a ping at least)."""
    live = Live(host, port, f"/api/room/{rid}/events?token={token}", args.timeout, local)
    conn = Connection(host, port, args.timeout, local)
    try:
        try:
            await live.open()
        except (OSError, asyncio.TimeoutError) as e:
            raise Failure(f"live {rid}: {type(e).__name__}: {e}") from None
        while True:
            try:
                msg = await live.next()
            except (OSError, asyncio.TimeoutError, ValueError) as e:
                raise Failure(f"live {rid}: {type(e).__name__}: {e}") from None
            if msg is None:
                raise Failure(f"live {rid}: the server ended the connection before the end "
                              f"of the match")
            if stop.is_set():
                return False
            kind, data = msg
            if kind == "ping":
                continue
            if kind == "move":
                if data["event"]["seat"] != seat:  # the other seat's move reached this one
                    sent = stats.sent.pop((rid, data["event"]["n"]), None)
                    if sent is not None:
                        stats.reach.append(time.perf_counter() - sent)
                continue
            if data["done"]:
                return True
            if not data["your_turn"]:
                continue
            if time.perf_counter() >= stop_at:
                return False
            if args.think:
                await asyncio.sleep(args.think * rng.uniform(0.5, 1.5))
            move = rng.choice(data["legal"])["id"]
            stats.sent[(rid, data["moves"])] = time.perf_counter()
            await timed(conn, stats, "room_move", "POST", f"/api/room/{rid}/move",
                        {"token": token, "action": move, "n": data["moves"]})
    finally:
        await live.close()
        await conn.close()


async def room_pair(k: int, host: str, port: int, stats: Stats, args: argparse.Namespace,
                    stop_at: float) -> None:
    """Two people playing rooms against each other, one after the other."""
    rngs = [random.Random(10_000 + 2 * k), random.Random(10_001 + 2 * k)]
    await asyncio.sleep(args.ramp * k / max(1, args.rooms))
    locals_ = [address(args.players + 2 * k + s, host) for s in (0, 1)]
    conn = Connection(host, port, args.timeout, locals_[0])
    try:
        while time.perf_counter() < stop_at:
            try:
                made = await timed(conn, stats, "room", "POST", "/api/rooms",
                                   {"seats": [None, None], "seat": 0, "name": f"p{2 * k}"})
                rid = made["room"]
                stats.rooms.append(rid)
                joined = await timed(conn, stats, "join", "POST", f"/api/room/{rid}/join",
                                     {"invite": made["invites"]["1"], "name": f"p{2 * k + 1}"})
                stop = asyncio.Event()
                seats = [asyncio.create_task(person(rid, token, seat, host, port, stats, args,
                                                    rngs[seat], stop_at, stop, locals_[seat]))
                         for seat, token in ((0, made["token"]), (1, joined["token"]))]
                first, _ = await asyncio.wait(seats, return_when=asyncio.FIRST_COMPLETED)
                if any(t.exception() is not None or not t.result() for t in first):
                    stop.set()  # a failure, or the run is over (the seat to move stopped):
                    for t in seats:  # the other seat stops waiting
                        t.cancel()
                    await asyncio.gather(*seats, return_exceptions=True)
                    for t in first:
                        if t.exception() is not None:
                            raise t.exception()
                    return  # the run is over: a room left unfinished
                try:  # the other seat sees the same end at once
                    await asyncio.wait_for(asyncio.gather(*seats), args.timeout)
                except asyncio.TimeoutError:
                    raise Failure(f"room {rid}: one seat saw the end, the other did not "
                                  f"within {args.timeout:g} s") from None
                await timed(conn, stats, "room_record", "GET", f"/api/room/{rid}/record")
                stats.room_matches += 1
            except Failure as e:
                stats.failures.append(str(e))
                await asyncio.sleep(0.5)
    finally:
        await conn.close()


HOSTILE = ("pipeline", "watcher", "slow_body", "slow_head")


async def hostile(k: int, host: str, port: int, stats: Stats, args: argparse.Namespace,
                  stop_at: float) -> None:
    """One hostile connection to a room being played, of kind ``HOSTILE[k % 4]``, opened
    again whenever the server cuts it off, until the run ends: ``pipeline`` sends
    ``GET /api/room/ID`` over and over on one connection and never reads; ``watcher``
    follows the room's live channel and never reads; ``slow_body`` sends a move whose
    ``Content-Length`` is larger than its body, one byte a second; ``slow_head`` sends a
    request's head one byte a second."""
    kind = HOSTILE[k % len(HOSTILE)]
    local = address(20_000 + k, host)
    await asyncio.sleep(args.ramp)
    while time.perf_counter() < stop_at:
        if not stats.rooms:
            await asyncio.sleep(0.2)
            continue
        rid = stats.rooms[-1 - k % min(len(stats.rooms), 10)]
        writer = None
        try:
            _, writer = await connect(host, port, local)
            stats.hostile[kind] = stats.hostile.get(kind, 0) + 1
            head = f"Host: {host}:{port}\r\n"
            if kind == "pipeline":
                ask = f"GET /api/room/{rid} HTTP/1.1\r\n{head}\r\n".encode() * 100
                while time.perf_counter() < stop_at:
                    writer.write(ask)
                    await asyncio.wait_for(writer.drain(), max(0.1, stop_at - time.perf_counter()))
            elif kind == "watcher":
                writer.write(f"GET /api/room/{rid}/events HTTP/1.1\r\n{head}\r\n".encode())
                await asyncio.sleep(max(0.0, stop_at - time.perf_counter()))
            else:
                raw = (f"POST /api/room/{rid}/move HTTP/1.1\r\n{head}Content-Type: "
                       f"application/json\r\nContent-Length: 1000\r\n\r\n{{").encode()
                if kind == "slow_head":
                    raw = f"GET /api/room/{rid} HTTP/1.1\r\n{head}X-Slow: ".encode() + b"a" * 5000
                for i in range(len(raw)):
                    if time.perf_counter() >= stop_at:
                        break
                    writer.write(raw[i:i + 1])
                    await writer.drain()
                    await asyncio.sleep(1.0)
        except (OSError, asyncio.TimeoutError):
            pass  # cut off by the server: open another
        finally:
            if writer is not None:
                writer.transport.abort()  # what it wrote is never read: not flushed
        await asyncio.sleep(0.1)


async def idle(n: int, host: str, port: int, stop_at: float) -> tuple[int, int]:
    """``n`` connections opened and left idle for the run (100 per source address):
    how many opened, and how many the server still holds at the end."""
    writers = []
    for k in range(n):
        try:
            reader, writer = await connect(host, port, address(30_000 + k // 100, host))
        except OSError:
            break
        writers.append((reader, writer))
    await asyncio.sleep(max(0.0, stop_at - time.perf_counter()))
    held = sum(not r.at_eof() for r, _ in writers)
    for _, w in writers:
        w.close()
    return len(writers), held


def threads(pid: int) -> int:
    """The threads of a process (Linux ``/proc``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return 0


def percentile(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(q / 100 * (len(s) - 1))))]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memory_kib(pid: int) -> dict[str, int]:
    """Resident memory of a process now and at its peak (Linux ``/proc``), in KiB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0])
    return out


def start_server(opponent: str, host: str, root: Path, db: Path
                 ) -> tuple[subprocess.Popen, int]:
    env = {**os.environ, "PYTHONPATH": str(root)}  # that checkout's scopa_web, not this one's
    store = ["--db", str(db)] if (root / "scopa_web" / "store.py").exists() else []
    proc = subprocess.Popen(
        [sys.executable, "-m", "scopa_cli", "serve", "--port", "0", "--host", host,
         "--opponent", opponent, "--seed", "1", *store], cwd=root, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    m = re.search(r"http://[^:/]+:(\d+)/", line)
    if m is None:
        proc.kill()
        raise SystemExit(f"the server did not start: {line}{proc.stderr.read()}")
    return proc, int(m.group(1))


async def run(args: argparse.Namespace, port: int, pid: int
              ) -> tuple[Stats, float, dict[str, int]]:
    stats = Stats()
    t0 = time.perf_counter()
    stop_at = t0 + args.seconds
    held = asyncio.ensure_future(idle(args.idle, args.host, port, stop_at))
    await asyncio.sleep(0)
    peak = 0

    async def count_threads() -> None:
        nonlocal peak
        while time.perf_counter() < stop_at:
            peak = max(peak, threads(pid))
            await asyncio.sleep(1.0)

    await asyncio.gather(*(player(k, args.host, port, stats, args, stop_at)
                           for k in range(args.players)),
                         *(room_pair(k, args.host, port, stats, args, stop_at)
                           for k in range(args.rooms)),
                         *(hostile(k, args.host, port, stats, args, stop_at)
                           for k in range(args.hostile)), count_threads())
    opened, kept = await held
    return stats, time.perf_counter() - t0, {"idle_opened": opened, "idle_held": kept,
                                              "server_threads_peak": peak}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--players", type=int, default=200,
                   help="one-person players (each against the server's agent)")
    p.add_argument("--rooms", type=int, default=0,
                   help="rooms of two people playing each other through the live channel")
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--think", type=float, default=1.0,
                   help="mean pause before each move, in seconds (0: none)")
    p.add_argument("--ramp", type=float, default=5.0, help="players join over this time")
    p.add_argument("--opponent", default="greedy")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--timeout", type=float, default=30.0, help="a request's time limit")
    p.add_argument("--hostile", type=int, default=0,
                   help="hostile connections besides the players (slow readers of a room, "
                        "pipelined requests never read, slow bodies and heads)")
    p.add_argument("--idle", type=int, default=0,
                   help="connections opened at the start and left idle for the run")
    p.add_argument("--json", default=None, help="also write the figures to this file")
    p.add_argument("--root", type=Path, default=ROOT,
                   help="the checkout whose scopa serve is started (default: this one; "
                        "another one, e.g. a git worktree of an older commit, for a "
                        "reference measured the same way)")
    args = p.parse_args(argv)
    folder = tempfile.TemporaryDirectory(prefix="serve-load-")
    proc, port = start_server(args.opponent, args.host, args.root,
                              Path(folder.name) / "load.db")
    try:
        cpu0 = cpu_seconds(proc.pid)
        stats, wall, conns = asyncio.run(run(args, port, proc.pid))
        server_cpu = cpu_seconds(proc.pid) - cpu0
        memory = memory_kib(proc.pid)
        db_bytes = sum(f.stat().st_size for f in Path(folder.name).iterdir())
    finally:
        proc.terminate()
        proc.wait(10)
        folder.cleanup()
    moves = stats.latency["move"]
    room_moves, reach = stats.latency["room_move"], stats.reach

    def ms(xs: list[float]) -> dict[str, float]:
        return {q: 1000 * percentile(xs, float(q[1:])) for q in ("p50", "p95", "p99")} | {
            "max": 1000 * max(xs, default=0)}

    out = {
        "players": args.players, "rooms": args.rooms, "seconds": wall, "think_s": args.think,
        "opponent": args.opponent, "matches": stats.matches,
        "requests": sum(len(v) for v in stats.latency.values()),
        "failed_requests": len(stats.failures), "failures": stats.failures[:10],
        "moves": len(moves), "moves_per_s": len(moves) / wall,
        "move_ms": {q: 1000 * percentile(moves, float(q[1:]))
                    for q in ("p50", "p95", "p99")} | {"max": 1000 * max(moves, default=0)},
        "new_ms": {"p50": 1000 * percentile(stats.latency["new"], 50),
                   "p99": 1000 * percentile(stats.latency["new"], 99)},
        "room_matches": stats.room_matches, "room_moves": len(room_moves),
        "room_move_ms": ms(room_moves), "reach_ms": ms(reach), "reached": len(reach),
        "server_cpu_per_move_ms": 1000 * server_cpu / max(1, len(moves) + len(room_moves)),
        "server_cpu_share": server_cpu / wall,
        "server_rss_mib": memory.get("VmRSS", 0) / 1024,
        "server_peak_rss_mib": memory.get("VmHWM", 0) / 1024,
        "db_mib": db_bytes / 2**20, "hostile": args.hostile, "hostile_opened": stats.hostile,
        "idle": args.idle, **conns,
        "cpus": os.cpu_count(), "python": platform.python_version(),
    }
    m = out["move_ms"]
    print(f"{args.players} players, {wall:.0f} s, think {args.think:g} s, against "
          f"{args.opponent}: {out['matches']} matches, {out['requests']} requests, "
          f"{out['failed_requests']} failed; {len(moves)} moves ({out['moves_per_s']:.0f}/s): "
          f"p50 {m['p50']:.1f} ms, p95 {m['p95']:.1f} ms, p99 {m['p99']:.1f} ms, "
          f"max {m['max']:.1f} ms; server CPU {out['server_cpu_per_move_ms']:.2f} ms per "
          f"move ({100 * out['server_cpu_share']:.0f}% of a core)")
    if args.rooms:
        r, c = out["reach_ms"], out["room_move_ms"]
        print(f"{args.rooms} rooms of two people: {out['room_matches']} matches, "
              f"{len(room_moves)} moves; a move reaching the other seat: p50 {r['p50']:.1f} "
              f"ms, p95 {r['p95']:.1f} ms, p99 {r['p99']:.1f} ms, max {r['max']:.1f} ms "
              f"({len(reach)} moves); the mover's answer: p99 {c['p99']:.1f} ms")
    print(f"server memory: {out['server_rss_mib']:.0f} MiB resident at the end, peak "
          f"{out['server_peak_rss_mib']:.0f} MiB; database {out['db_mib']:.1f} MiB")
    if args.hostile or args.idle:
        print(f"{args.hostile} hostile connections (opened {stats.hostile}); {conns['idle_held']} "
              f"of {conns['idle_opened']} idle connections held at the end; server threads at "
              f"most {conns['server_threads_peak']}")
    for f in stats.failures[:5]:
        print(f"  failed: {f}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0 if not stats.failures else 1


if __name__ == "__main__":
    sys.exit(main())
