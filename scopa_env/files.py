"""Writing files without losing data, and file errors that name the file.

- ``append_lines(path, text, ...)``: append whole lines to a file several processes may
  write at once: an exclusive ``flock`` on the file is held around the check of its last
  line and the append, so concurrent writers append one after another, never into each
  other's lines;
- ``write_atomic(data, path)``: write a temp file next to ``path``, fsync, ``os.replace``:
  readers see the old file or the new one, never half of one;
- ``file_errors(path, doing)``: a context manager that turns an ``OSError`` (no space,
  no permission, read-only file system, ...) into a ``FileProblem`` whose one line names
  the file and what was being done with it;
- ``writable_file(path)``: whether an output file can be written, checked before any
  work starts.
"""

from __future__ import annotations

import errno
import fcntl
import os
import secrets
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

TAIL = 1 << 16  # bytes read at a time from the end of a file to find its last line


class FileProblem(ValueError):
    """A file could not be read or written; the message names the file and the action."""


def _reason(e: OSError) -> str:
    name = errno.errorcode.get(e.errno or 0)
    text = e.strerror or str(e) or type(e).__name__
    return f"{text} ({name})" if name else text


@contextmanager
def file_errors(path: str | os.PathLike, doing: str) -> Iterator[None]:
    """Re-raise an ``OSError`` of the block as ``FileProblem``: ``cannot DOING PATH:
    REASON (ERRNO)``, e.g. ``cannot append records to /dev/full: No space left on device
    (ENOSPC)``. ``doing`` reads as a verb phrase whose object is the file."""
    try:
        yield
    except FileProblem:
        raise
    except OSError as e:
        other = getattr(e, "filename", None)
        where = os.fspath(path)
        extra = f" ({other})" if other is not None and os.fspath(other) != where else ""
        raise FileProblem(f"cannot {doing} {where}{extra}: {_reason(e)}") from None


def last_line(f: BinaryIO) -> tuple[bytes, bool, int]:
    """``(line, complete, start)`` of the last non-blank line of a file open for binary
    reading: its bytes (without the newline), whether a newline ends it, and the offset
    where it starts (``b"", True, 0`` for a file without one)."""
    size = f.seek(0, os.SEEK_END)
    pos, tail = size, b""
    while pos > 0 and b"\n" not in tail.rstrip():  # back to the last line's start
        step = min(pos, TAIL)
        pos -= step
        f.seek(pos)
        tail = f.read(step) + tail
    body, newline, after = tail.rpartition(b"\n")
    if after.strip():
        return after, False, pos + len(body) + len(newline)
    stripped = body.rstrip()
    head, newline, line = stripped.rpartition(b"\n")
    if not line.strip():
        return b"", True, 0
    return line, True, pos + len(head) + len(newline)


def line_number(f: BinaryIO, offset: int) -> int:
    """The 1-based number of the line that starts at byte ``offset`` of ``f``."""
    f.seek(0)
    n, left = 1, offset
    while left > 0:
        chunk = f.read(min(left, TAIL))
        if not chunk:
            break
        n += chunk.count(b"\n")
        left -= len(chunk)
    return n


class DamagedFile(FileProblem):
    """A file whose last line is incomplete: appending to it would glue lines together."""


def require_complete(f: BinaryIO, path: str | os.PathLike, doing: str) -> None:
    """``DamagedFile`` naming the file and the line if the last line of ``f`` has no
    newline at its end (its writer died mid-write)."""
    _, complete, start = last_line(f)
    if not complete:
        raise DamagedFile(f"{os.fspath(path)}:{line_number(f, start)}: the last line is "
                          f"incomplete (no newline at its end: a write was cut short?); "
                          f"remove or repair it before you {doing} this file")


def append_lines(path: str | os.PathLike, text: str, *, doing: str = "append to",
                 check: Callable[[BinaryIO], None] | None = None) -> None:
    """Append ``text`` (whole lines, each ending with a newline) to ``path``, created if
    missing, under an exclusive ``flock`` of the file: under the lock its last line is
    checked (a last line without a newline, left by a writer that died, raises
    ``DamagedFile`` naming the file and the line; ``check(f)`` may refuse more), then the
    text is written in one piece, flushed and fsynced. Other processes appending with
    this function wait for the lock, so lines of concurrent writers never mix."""
    if not text.endswith("\n"):
        raise ValueError("append_lines appends whole lines: text must end with a newline")
    data = text.encode("utf-8")
    with file_errors(path, doing):
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o666)
        with os.fdopen(fd, "r+b") as f:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX)  # released when the file is closed
            require_complete(f, path, doing)
            if check is not None:
                check(f)
            size = f.seek(0, os.SEEK_END)
            try:
                view = memoryview(data)
                while view:  # os.write may write less than asked (a full disk, a signal)
                    view = view[os.write(f.fileno(), view):]
                os.fsync(f.fileno())
            except BaseException:
                try:
                    os.ftruncate(f.fileno(), size)  # no part of a line is left behind
                except OSError:
                    pass  # not a regular file (/dev/full): nothing to cut back
                raise


@contextmanager
def shared_lock(path: str | os.PathLike, doing: str = "read") -> Iterator[BinaryIO]:
    """``path`` open for binary reading under a shared ``flock``: no ``append_lines``
    writer is mid-append while the block runs."""
    with file_errors(path, doing), open(path, "rb") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_SH)
        yield f


def write_atomic(data: bytes | memoryview, path: str | Path, doing: str = "write") -> Path:
    """Write ``data`` to a temp file in ``path``'s folder, fsync, then ``os.replace``:
    a Ctrl-C at any point leaves ``path`` as it was, removes the temp file and raises
    ``KeyboardInterrupt``; a file error leaves it too, as a ``FileProblem`` naming
    ``path`` and ``doing`` (``file_errors``)."""
    path = Path(path)
    # The name is fixed before the file exists, so a Ctrl-C at any point (even while the
    # file is being created) finds it to remove.
    tmp = path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(6)}.tmp"
    with file_errors(path, doing):
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # umask applies
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    return path


def side_file(path: str | os.PathLike, suffix: str = ".jsonl") -> Path:
    """A new file's name for what could not be appended to ``path``: next to it (in the
    current folder when ``path`` is not a regular file, e.g. ``/dev/full``), named after
    it, this process and the time, so no two runs share one."""
    p = Path(path)
    regular = p.is_file() or not p.exists()
    folder = p.parent if regular and os.access(p.parent, os.W_OK | os.X_OK) else Path(".")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return folder / f"{p.name}.unappended-{stamp}-{os.getpid()}{suffix}"


def writable_file(path: str | os.PathLike, what: str = "output file") -> Path:
    """``path`` if a file can be created or replaced there, else ``ValueError`` naming
    the problem (missing folder, a folder in the way, a read-only file system, no
    permission)."""
    p = Path(path)
    folder = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise ValueError(f"{what} {p} is a folder, not a file")
    if not folder.is_dir():
        raise ValueError(f"cannot write {what} {p}: folder {folder} does not exist")
    try:
        read_only = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False
    if read_only:
        raise ValueError(f"cannot write {what} {p}: {folder} is on a read-only file system "
                         f"(EROFS)")
    if not os.access(folder, os.W_OK | os.X_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise ValueError(f"cannot write {what} {p}: permission denied (EACCES)")
    return p
