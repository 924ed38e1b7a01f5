"""Several processes appending to one file lose nothing: ``scopa record`` runs writing
one records file at once each append every record whole; the shared locking append
(``scopa_env.files.append_lines``) keeps large lines of concurrent writers apart; a run
that cannot append keeps its records in a side file it names."""

from __future__ import annotations

import json
import multiprocessing as mp
import subprocess
import sys
from pathlib import Path

import pytest

from scopa_cli import main as scopa
from scopa_env.files import DamagedFile, append_lines
from scopa_env.play import derive_seed
from scopa_env.records import iter_records, load_and_verify

ROOT = Path(__file__).resolve().parent.parent
WRITERS, GAMES = 4, 60


def test_concurrent_record_runs_append_every_record(tmp_path: Path) -> None:
    out = tmp_path / "shared.jsonl"
    runs = [subprocess.Popen(
        [sys.executable, "-c", "import sys, scopa_cli; sys.exit(scopa_cli.main())", "record",
         "--agents", "random", "random", "--games", str(GAMES), "--seed", str(1000 * k),
         "--out", str(out)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True) for k in range(WRITERS)]
    for r in runs:
        _, err = r.communicate(timeout=600)
        assert r.returncode == 0, err
    assert load_and_verify(out) == WRITERS * GAMES
    seeds = sorted(rec["seed"] for _, rec in iter_records(out))
    assert seeds == sorted(derive_seed(1000 * k, i) for k in range(WRITERS)
                           for i in range(GAMES))
    assert not list(tmp_path.glob("*.unappended-*"))  # nothing needed a side file


def _writer(path: str, k: int, n: int, size: int) -> None:
    for i in range(n):
        append_lines(path, json.dumps({"w": k, "i": i, "pad": str(k) * size}) + "\n")


def test_append_lines_keeps_large_lines_of_concurrent_writers_whole(tmp_path: Path) -> None:
    path = tmp_path / "lines.jsonl"
    ctx = mp.get_context("spawn")
    size = 300_000  # well above what one write() is guaranteed to append in one piece
    procs = [ctx.Process(target=_writer, args=(str(path), k, 15, size)) for k in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 4 * 15
    assert all(d["pad"] == str(d["w"]) * size for d in lines)
    for k in range(4):  # each writer's lines in its own order
        assert [d["i"] for d in lines if d["w"] == k] == list(range(15))


def test_append_lines_refuses_an_incomplete_last_line(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    path.write_text('{"a": 1}\n{"b": ')
    with pytest.raises(DamagedFile, match=rf"{path}:2: the last line is incomplete"):
        append_lines(path, '{"c": 3}\n')
    assert path.read_text() == '{"a": 1}\n{"b": '
    with pytest.raises(ValueError, match="whole lines"):
        append_lines(tmp_path / "x", "no newline")


def test_a_record_run_that_cannot_append_keeps_its_records_in_a_named_side_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.jsonl"
    assert scopa(["record", "--agents", "random", "greedy", "--games", "1", "--out",
                  str(out)]) == 0
    import scopa_env.play as play

    real = play.play_match
    calls = []

    def damage_after_first(*args, **kwargs):  # another writer dies mid-line meanwhile
        rec = real(*args, **kwargs)
        calls.append(1)
        if len(calls) == 2:
            with open(out, "a") as f:
                f.write('{"format": "scopa-rec')
        return rec

    monkeypatch.setattr(play, "play_match", damage_after_first)
    capsys.readouterr()
    status = scopa(["record", "--agents", "random", "greedy", "--games", "4", "--seed", "7",
                    "--out", str(out)])
    err = capsys.readouterr().err
    assert status == 1
    sides = list(tmp_path.glob("r.jsonl.unappended-*.jsonl"))
    assert len(sides) == 1
    assert f"{out}:3: the last line is incomplete" in err and str(sides[0]) in err
    assert "1 match record(s) appended" in err and "the other 3 kept in" in err
    assert load_and_verify(sides[0]) == 3
    assert [r["seed"] for _, r in iter_records(sides[0])] == [derive_seed(7, i)
                                                              for i in (1, 2, 3)]


def test_record_to_a_full_disk_names_the_file_and_keeps_the_records(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    monkeypatch.chdir(tmp_path)
    status = scopa(["record", "--agents", "random", "random", "--games", "2", "--out",
                    "/dev/full"])
    err = capsys.readouterr().err
    assert status == 1
    assert "cannot append records to /dev/full: No space left on device (ENOSPC)" in err
    (side,) = tmp_path.glob("full.unappended-*.jsonl")
    assert side.name in err and load_and_verify(side) == 2
