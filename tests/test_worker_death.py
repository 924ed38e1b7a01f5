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
