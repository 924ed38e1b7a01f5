"""An evaluation worker that dies is replaced and its units are played again."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agents.evaluation import evaluate as ev

KILLER = '''
import os, signal

class Killer:
    """Plays the first legal move; an instance that claims one of ``deaths`` marker
    files kills its own process (a worker dying mid-unit). Each claim is an exclusive
    create, so two workers starting together cannot both take the same death."""

    def __init__(self, seed=None, marker="", deaths=1):
        self.marker, self.deaths = marker, int(deaths)

    def act(self, info):
        os.makedirs(self.marker, exist_ok=True)
        for k in range(self.deaths):
            try:
                fd = os.open(os.path.join(self.marker, str(k)),
                             os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                continue
            os.close(fd)
            os.kill(os.getpid(), signal.SIGKILL)
        return info.legal_actions[0]
'''


@pytest.fixture
def killer(tmp_path: Path) -> Path:
    path = tmp_path / "killer.py"
    path.write_text(KILLER)
    return path


def test_a_killed_worker_is_replaced_and_the_result_unchanged(killer: Path, tmp_path: Path):
    marker = tmp_path / "deaths"
    spec = f"py:{killer}:Killer,marker={marker},deaths=1"
    died = ev.evaluate(spec, "greedy", hands=40, seed=3, workers=2, matches=8)
    assert len(os.listdir(marker)) == 1  # one worker did die
    calm = ev.evaluate(spec, "greedy", hands=40, seed=3, workers=1, matches=8)
    assert died.to_json()["points_per_hand"] == calm.to_json()["points_per_hand"]
    assert died.to_json()["matches"] == calm.to_json()["matches"]


def test_workers_that_keep_dying_stop_with_one_clear_error(killer: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(ev, "POOL_RESTARTS", 1)
    spec = f"py:{killer}:Killer,marker={tmp_path / 'deaths'},deaths=100"
    with pytest.raises(ev.WorkersDiedError,
                       match=r"evaluation worker processes died 2 times .*not done"):
        ev.evaluate(spec, "greedy", hands=16, seed=3, workers=2, matches=0)


SLOW = '''
import os, time

class Slow:
    """Plays the first legal move, slowly, after noting its process id in ``folder``."""

    def __init__(self, seed=None, folder=""):
        self.folder = folder

    def act(self, info):
        open(os.path.join(self.folder, str(os.getpid())), "w").close()
        time.sleep(0.2)
        return info.legal_actions[0]
'''


def _running(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie, dead but not reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux's /proc")
def test_workers_end_when_their_parent_is_killed(tmp_path: Path):
    import signal
    import subprocess
    import sys
    import time

    (tmp_path / "slow.py").write_text(SLOW)
    pids = tmp_path / "pids"
    pids.mkdir()
    parent = subprocess.Popen([sys.executable, "-c", (
        "from agents.evaluation import evaluate as ev\n"
        f"ev.evaluate('py:{tmp_path / 'slow.py'}:Slow,folder={pids}', 'greedy', "
        "hands=400, seed=1, workers=2, matches=0)\n")],
        cwd=Path(__file__).resolve().parents[1])
    try:
        deadline = time.monotonic() + 120
        while len(os.listdir(pids)) < 2 and time.monotonic() < deadline:
            assert parent.poll() is None, "the evaluation ended before its workers started"
            time.sleep(0.2)
        workers = [int(p) for p in os.listdir(pids)]
        assert len(workers) == 2
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    deadline = time.monotonic() + 20
    while any(map(_running, workers)) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [w for w in workers if _running(w)]
    for w in left:
        os.kill(w, signal.SIGKILL)
    assert not left, f"worker processes {left} outlived their killed parent"
