"""Connections of ``scopa serve``: uvicorn's HTTP/1.1 protocol (h11) with limits and
timeouts of its own, so that no client holds more than its share.

- at most ``Limits.total`` connections at once, and ``Limits.per_client`` from one
  address: past either, the new connection is answered ``503`` and closed;
- a request (its head and its body) arrives within ``REQUEST_S`` of its first byte;
  an idle connection is closed after ``IDLE_S`` (before its first request too);
- a client that stops reading is cut off once its answers have waited ``WRITE_S``
  (the transport's buffer full: nothing else waits on it, and no lock is held); the
  kernel's send buffer is kept small (``SEND_BUFFER``), so a client that pipelines
  requests and never reads gets few answers made for it before it waits;
- an unreadable request gets a JSON ``400``, as every other refusal.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections import Counter
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

REQUEST_S = 10.0  # seconds from a request's first byte to its last
IDLE_S = 120.0  # seconds a connection may stay idle
WRITE_S = 30.0  # seconds an answer may wait for a client that does not read
MAX_CONNECTIONS = 4096  # connections at once, all clients together
MAX_PER_CLIENT = 256  # connections at once from one address
SEND_BUFFER = 64 * 1024  # the kernel's send buffer of a connection (it doubles it): what a
# client that does not read can hold of its answers before the server stops answering it


class Limits:
    """The connections open now, in all and by client address (the event loop's)."""

    def __init__(self, total: int = MAX_CONNECTIONS, per_client: int = MAX_PER_CLIENT):
        self.total, self.per_client = total, per_client
        self.open: Counter[str] = Counter()

    def admit(self, client: str) -> str | None:
        """Count a new connection from ``client``; the reason it is refused, or None."""
        if sum(self.open.values()) >= self.total:
            return f"the server holds {self.total} connections already: try again later"
        if self.open[client] >= self.per_client:
            return (f"{self.per_client} connections from your address are open already: "
                    "close some")
        self.open[client] += 1
        return None

    def release(self, client: str) -> None:
        self.open[client] -= 1
        if self.open[client] <= 0:
            del self.open[client]


def _answer(status: int, reason: str, message: str) -> bytes:
    body = json.dumps({"error": message}).encode()
    return (f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body


class _Coalesced:
    """A connection's transport whose writes of one turn of the event loop are sent in one
    system call (an answer's head and body together: one send, one packet)."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop):
        self._transport, self._loop = transport, loop
        self._chunks: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not self._chunks:
            self._loop.call_soon(self.flush)
        self._chunks.append(data)

    def flush(self) -> None:
        if self._chunks:
            data, self._chunks = b"".join(self._chunks), []
            if not self._transport.is_closing():
                self._transport.write(data)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class GuardedProtocol(H11Protocol):
    """uvicorn's h11 protocol with ``Limits`` and the timeouts above (``limits`` is set
    on the subclass ``protocol_class`` makes)."""

    limits: Limits

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._counted: str | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._write_timer: asyncio.TimerHandle | None = None
        self._waiting_request = False

    # -- limits ---------------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        client = self.client[0] if self.client else "?"
        refused = self.limits.admit(client)
        if refused is not None:
            transport.write(_answer(503, "Service Unavailable", refused))
            transport.close()
            return
        self._counted = client
        self.transport = _Coalesced(transport, self.loop)  # type: ignore[assignment]
        sock = transport.get_extra_info("socket")
        if sock is not None:  # a fixed, small buffer: a client that pipelines requests and
            try:  # never reads gets few answers made for it, then waits (and is cut off)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
            except OSError:
                pass
        self._arm(IDLE_S)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._counted is not None:
            self.limits.release(self._counted)
            self._counted = None
        self._disarm()
        if self._write_timer is not None:
            self._write_timer.cancel()
            self._write_timer = None
        super().connection_lost(exc)

    # -- read timeouts --------------------------------------------------------------------------
    def _arm(self, seconds: float) -> None:
        self._disarm()
        self._timer = self.loop.call_later(seconds, self._expire)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expire(self) -> None:
        """Time is up: the connection is dropped (``abort``: what is buffered for a client
        that does not read is never sent)."""
        self._timer = None
        self.transport.abort()

    def _reading(self) -> bool:
        """Part of a request has come, not all of it."""
        if self.cycle is None or self.cycle.response_complete:
            return bool(self.conn.trailing_data[0])  # a request's head, incomplete
        return self.cycle.more_body

    def _rearm(self) -> None:
        """After bytes came or an answer ended: a request under way has ``REQUEST_S``
        from its first byte, an idle connection ``IDLE_S``; while the app answers, none."""
        if self.transport is None or self.transport.is_closing():
            return
        if self._reading():
            if not self._waiting_request:
                self._waiting_request = True
                self._arm(REQUEST_S)
            return
        self._waiting_request = False
        if self.cycle is None or self.cycle.response_complete:
            self._arm(IDLE_S)
        else:
            self._disarm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._rearm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._rearm()

    # -- write timeout --------------------------------------------------------------------------
    def pause_writing(self) -> None:
        super().pause_writing()
        if self._write_timer is None:
            self._write_timer = self.loop.call_later(WRITE_S, self._expire)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._write_timer is not None:
            self._write_timer.cancel()
            self._write_timer = None

    def shutdown(self) -> None:
        """The server stops: a connection whose client does not read is dropped now."""
        if self.flow is not None and self.flow.write_paused:
            self.transport.abort()
            return
        super().shutdown()

    # -- an unreadable request ------------------------------------------------------------------
    def send_400_response(self, msg: str) -> None:
        self.transport.write(_answer(400, "Bad Request", f"bad request: {msg}"))
        self.transport.close()


def protocol_class(limits: Limits) -> type[GuardedProtocol]:
    """A ``GuardedProtocol`` for one server (its own ``Limits``)."""
    return type("ScopaProtocol", (GuardedProtocol,), {"limits": limits})
