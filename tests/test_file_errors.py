"""Every file error of every command is one line naming the file and what was being done:
a full disk (the real ``/dev/full``), and no permission, a read-only file system or a
full disk injected at the system call that opens the file for writing."""

from __future__ import annotations

import builtins
import errno
import io
import os
from pathlib import Path

import pytest

from agents.evaluation.evaluate import main as scopa_eval
from agents.evaluation.ladder import main as scopa_ladder
from scopa_cli import main as scopa

GOLDEN = Path(__file__).resolve().parent / "data" / "golden-records.jsonl"


def one_line(capsys: pytest.CaptureFixture[str], status: int) -> str:
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if x.strip()]
    assert status != 0 and "Traceback" not in err and len(lines) == 1, err
    return lines[0]


def commands(out: Path) -> dict[str, tuple[object, list[str], str, str]]:
    """name: (entry point, argv, the file it writes, what it says it was doing)."""
    return {
        "record": (scopa, ["record", "--agents", "random", "greedy", "--out",
                           str(out / "r.jsonl")], str(out / "r.jsonl"), "append records to"),
        "replay --html": (scopa, ["replay", str(GOLDEN), "--html", str(out / "p.html")],
                          str(out / "p.html"), "write the replay page to"),
        "eval --save": (scopa_eval, ["random", "greedy", "--hands", "2", "--save",
                                     str(out / "e.json")], str(out / "e.json"),
                        "save the evaluation to"),
        "ladder": (scopa_ladder, ["random", "greedy", "--hands", "2", "--out",
                                  str(out / "lad")], str(out / "lad" / "pairs"),
                   "write the pair's result to"),
    }


@pytest.mark.parametrize("name", ["record", "replay --html", "eval --save"])
def test_a_full_disk_names_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str], name: str) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    monkeypatch.chdir(tmp_path)  # where scopa record leaves the records /dev/full refused
    fn, argv, target, doing = commands(tmp_path)[name]
    argv = [("/dev/full" if a == target else a) for a in argv]
    line = one_line(capsys, fn(argv))
    assert f"cannot {doing} /dev/full: No space left on device (ENOSPC)" in line, line


@pytest.mark.parametrize("code", [errno.EACCES, errno.EROFS, errno.ENOSPC])
@pytest.mark.parametrize("name", ["record", "replay --html", "eval --save", "ladder"])
def test_write_errors_name_the_file_and_the_action(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        name: str, code: int) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    fn, argv, target, doing = commands(bad)[name]

    def refuse(path: object, flags_or_mode: object) -> None:
        writing = (flags_or_mode & (os.O_WRONLY | os.O_RDWR) if isinstance(flags_or_mode, int)
                   else any(c in str(flags_or_mode) for c in "wax+"))
        if writing and os.fspath(path).startswith(str(bad)):  # type: ignore[arg-type]
            raise OSError(code, os.strerror(code), os.fspath(path))  # type: ignore[arg-type]

    real_os_open, real_open = os.open, builtins.open

    def os_open(path, flags, *a, **k):
        refuse(path, flags)
        return real_os_open(path, flags, *a, **k)

    def py_open(file, mode="r", *a, **k):
        if isinstance(file, (str, os.PathLike)):
            refuse(file, mode)
        return real_open(file, mode, *a, **k)

    monkeypatch.setattr(os, "open", os_open)
    monkeypatch.setattr(builtins, "open", py_open)
    monkeypatch.setattr(io, "open", py_open)
    line = one_line(capsys, fn(argv))
    reason = f"{os.strerror(code)} ({errno.errorcode[code]})"
    assert f"cannot {doing} {target}" in line and reason in line, line


def test_an_unreadable_records_file_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(GOLDEN.read_bytes())
    real_open = builtins.open

    def py_open(file, mode="r", *a, **k):
        if os.fspath(file) == str(path):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real_open(file, mode, *a, **k)

    monkeypatch.setattr(builtins, "open", py_open)
    for cmd in ("verify", "replay"):
        line = one_line(capsys, scopa([cmd, str(path)]))
        assert f"cannot read records from {path}: Permission denied (EACCES)" in line, line


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
def test_checkpoint_and_cache_writes_name_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    """Every atomic write (training checkpoints, policies, caches, reports) goes through
    ``write_atomic``: an error names the file it was writing, and leaves no temp file."""
    import torch

    from scopa_env.files import FileProblem
    from scopa_policy.checkpoint import save_atomic

    target = tmp_path / "run" / "checkpoints" / "latest.pt"

    def fail_fsync(fd: int) -> None:  # the data reaching the disk is what fails
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "fsync", fail_fsync)
    with pytest.raises(FileProblem) as e:
        save_atomic({"a": torch.zeros(1)}, target)
    monkeypatch.undo()
    assert str(e.value) == f"cannot write {target}: {os.strerror(code)} " \
                           f"({errno.errorcode[code]})"
    assert not target.exists() and not list(target.parent.glob(".*.tmp"))
