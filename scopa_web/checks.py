"""Every input of ``scopa serve`` checked at the door, each refusal one clear 4xx
(``ApiError``): the Host and Origin a request names (a page of another site, through DNS
rebinding or not, is refused), the content type and size of a body, JSON of bounded
depth whose numbers are bounded, and numbers in the query and headers as ASCII digits.
"""

from __future__ import annotations

import ipaddress
import json
from typing import Any
from urllib.parse import urlsplit

from .rooms import ApiError

MAX_BODY = 16 * 1024  # bytes of a request body
MAX_DEPTH = 8  # nesting of a body's JSON (the API's deepest is 3)
MAX_DIGITS = 20  # digits of a number in a body (a seed is under 2**63)
MAX_COUNT = 10**9  # the largest count a query takes (``since``, ``offset``)


def _show(text: str) -> str:
    return repr(text) if len(text) <= 40 else repr(text[:40]) + "…"


def host_name(value: str) -> str:
    """The host of a ``Host`` header or of a URL's authority, lower case, without the port
    or the brackets of an IPv6 address."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:].partition("]")[0]
    return value.rpartition(":")[0] if value.count(":") == 1 else value


class Door:
    """The hosts a request may name: the bound host, ``localhost``, any IP address (an
    address cannot be rebound to another site) and those of ``--allowed-origin``."""

    def __init__(self, bound: str, origins: list[str] | None = None):
        self.hosts = {"localhost", host_name(bound)}
        self.origins: set[str] = set()
        for origin in origins or []:
            parts = urlsplit(origin)
            if parts.scheme not in ("http", "https") or not parts.hostname or parts.path:
                raise ValueError(f"--allowed-origin {origin}: give a scheme and a host, e.g. "
                                 "https://scopa.example.org")
            self.hosts.add(parts.hostname.lower())
            self.origins.add(f"{parts.scheme}://{parts.netloc.lower()}")

    def _known(self, host: str) -> bool:
        if host in self.hosts:
            return True
        try:
            ipaddress.ip_address(host)
        except ValueError:
            return False
        return True

    def check(self, host: str | None, origin: str | None) -> None:
        """403 unless the ``Host`` (if sent: a browser always sends it) is one of ours and
        the ``Origin`` (if sent) too."""
        if host is not None and not self._known(host_name(host)):
            raise ApiError(403, f"this server does not answer for host {_show(host)} "
                                "(scopa serve --allowed-origin adds one)")
        if origin is None:
            return
        parts = urlsplit(origin.strip().lower())
        if origin.strip().lower() in self.origins:
            return
        if parts.scheme not in ("http", "https") or not parts.hostname or not self._known(
                parts.hostname):
            raise ApiError(403, f"requests from the page of {_show(origin)} are refused "
                                "(scopa serve --allowed-origin adds a site)")


def content_length(value: str | None) -> int:
    """The declared body size: ASCII digits up to ``MAX_BODY`` (413 past it)."""
    if value is None:
        return 0
    value = value.strip()
    if not (value.isascii() and value.isdigit()):
        raise ApiError(400, f"bad Content-Length {_show(value)}")
    if len(value) > 9 or int(value) > MAX_BODY:
        raise ApiError(413, f"request body of {value[:12]} bytes: at most {MAX_BODY}")
    return int(value)


def check_type(content_type: str | None, body: bytes) -> None:
    """A body is JSON, said so (415 otherwise: a form or ``text/plain`` of another site)."""
    if not body.strip():
        return
    kind = (content_type or "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise ApiError(415, f"the request body must be sent as application/json, not "
                            f"{_show(kind or 'none')}")


def _depth(raw: str) -> int:
    """The deepest nesting of arrays and objects in JSON text (strings skipped)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in raw:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise ApiError(400, f"a number in the body has more than {MAX_DIGITS} digits")
    return int(text)


def _constant(name: str) -> Any:
    raise ApiError(400, f"{name} is not a JSON number")


def parse_json(raw: bytes) -> dict[str, Any]:
    """A request body: a JSON object (empty: ``{}``), nested at most ``MAX_DEPTH``
    deep, numbers of at most ``MAX_DIGITS`` digits."""
    if not raw.strip():
        return {}
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ApiError(400, f"the request body is not valid JSON: {e}") from None
    if _depth(text) > MAX_DEPTH:
        raise ApiError(400, f"the request body is nested deeper than {MAX_DEPTH} levels")
    try:
        body = json.loads(text, parse_int=_int, parse_constant=_constant)
    except json.JSONDecodeError as e:
        raise ApiError(400, f"the request body is not valid JSON: {e}") from None
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object")
    return body


def count(value: str | None, name: str, default: int = 0) -> int:
    """A count from the query or a header: ASCII digits, at most ``MAX_COUNT``."""
    if value is None:
        return default
    if not (value.isascii() and value.isdigit()) or len(value) > 10 or int(value) > MAX_COUNT:
        raise ApiError(400, f"{name} must be a number of at most {MAX_COUNT} (ASCII digits), "
                            f"got {_show(value)}")
    return int(value)


def move_number(body: dict[str, Any]) -> int:
    """The ``n`` of a move: the number of moves the client saw when it chose (its view's
    ``moves``)."""
    n = body.get("n")
    if type(n) is not int or not 0 <= n <= MAX_COUNT:
        raise ApiError(400, 'a move needs "n": the number of moves played when it was chosen '
                            "(the view's \"moves\"), so that a retry is not played twice")
    return n
